package gate

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkEvaluate gates one clean PR of population B (2,347 tests, 150
// history runs each, 20 pairs): the prior's fit, the calibration and the
// decisions.
//
//	go test -run '^$' -bench Evaluate -benchmem ./pkg/gate/
func BenchmarkEvaluate(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	in := drawPR(r, drawSuite(r, popB, prClean), 150, 20)
	b.ResetTimer()
	for range b.N {
		if _, err := Evaluate(in, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// drawPR draws the input of one PR of a suite: history runs, then pairs of
// interleaved base and head runs, test by test.
func drawPR(r *rand.Rand, suite []simTest, history, pairs int) Input {
	in := Input{Tests: make([]TestInput, len(suite))}
	for i, st := range suite {
		ti := TestInput{Name: st.name}
		if st.base >= 0 {
			ti.History.Runs = history
			for range history {
				if bernoulli(r, st.base) {
					ti.History.Failures++
				}
			}
		}
		for range pairs {
			addRuns(r, st, &ti)
		}
		in.Tests[i] = ti
	}
	return in
}

// addRuns draws one base run and one head run of a test, on the sides it
// has.
func addRuns(r *rand.Rand, st simTest, ti *TestInput) {
	if st.base >= 0 {
		ti.Base.Runs++
		if bernoulli(r, st.base) {
			ti.Base.Failures++
		}
	}
	if st.head >= 0 {
		ti.Head = append(ti.Head, !bernoulli(r, st.head))
	}
}
