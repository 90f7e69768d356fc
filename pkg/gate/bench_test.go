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
	suite := drawSuite(r, popB, prClean)
	in := Input{Tests: make([]TestInput, len(suite))}
	for i, st := range suite {
		ti := TestInput{Name: st.name}
		if st.base >= 0 {
			ti.History.Runs = 150
			for range 150 {
				if bernoulli(r, st.base) {
					ti.History.Failures++
				}
			}
		}
		for range 20 {
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
		in.Tests[i] = ti
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Evaluate(in, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
