package gate

import (
	"fmt"
	"math"
	"testing"
)

// TestHistoryFromAnotherHost measures what the PR-level bound assumes: that
// base-branch history describes the host the base and head runs are on. One
// test fails at rate p on the gate's host, in a suite of 200 stable tests
// and 10 pre-existing flakes, all with 150 history runs. Its chance of
// blocking a clean PR, exact over its base and head failure counts (K = 5):
// when its history shows the same rate, at most 0.1%; when its
// history never saw it fail (the runs that wrote the history ran elsewhere,
// or otherwise), 18–39%, and no rule on one PR's runs can tell, since its
// base runs show no failure in most of those PRs (0.95^5 = 77% at p =
// 0.05). README, "How the gate decides", says so.
func TestHistoryFromAnotherHost(t *testing.T) {
	binom := func(k, n int, p float64) float64 {
		c := 1.0
		for i := range k {
			c = c * float64(n-i) / float64(i+1)
		}
		return c * math.Pow(p, float64(k)) * math.Pow(1-p, float64(n-k))
	}
	block := func(hist Tally, p float64) float64 {
		total := 0.0
		for b := 0; b <= 5; b++ {
			for h := 0; h <= 5; h++ {
				var tests []TestInput
				for i := range 200 {
					tests = append(tests, TestInput{Name: fmt.Sprintf("c::stable%03d", i), Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PPPPP")})
				}
				for i := range 10 {
					tests = append(tests, TestInput{Name: fmt.Sprintf("c::flake%02d", i), Base: Tally{5, 0}, History: Tally{150, 6}, Head: runs("PPPPP")})
				}
				head := make([]bool, 5)
				for j := range head {
					head[j] = j >= h
				}
				tests = append(tests, TestInput{Name: "c::t", Base: Tally{5, b}, History: hist, Head: head})
				res, err := Evaluate(Input{Tests: tests, ChangesKnown: true}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict == VerdictBlock {
					total += binom(b, 5, p) * binom(h, 5, p)
				}
			}
		}
		return total
	}
	for _, c := range []struct {
		p              float64
		matched, never float64 // P(block) with history at rate p, and with 0 of 150
	}{
		{0.05, 0.001, 0.175},
		{0.10, 0.000, 0.245},
		{0.20, 0.000, 0.259},
		{0.30, 0.000, 0.275},
	} {
		matched := block(Tally{150, int(math.Round(150 * c.p))}, c.p)
		never := block(Tally{150, 0}, c.p)
		t.Logf("rate %.2f on the gate's host: P(block) %.3f with history at that rate, %.3f with history that never saw it fail", c.p, matched, never)
		if math.Abs(matched-c.matched) > 0.0005 || math.Abs(never-c.never) > 0.0005 {
			t.Errorf("rate %.2f: P(block) %.3f and %.3f, want %.3f and %.3f", c.p, matched, never, c.matched, c.never)
		}
	}
}
