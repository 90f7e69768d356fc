package gate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCrossingMatchesEnumeration checks the path-counting DP against brute
// force: every head sequence of up to 10 runs, its predictive probability,
// and whether it crossed the boundary at some look.
func TestCrossingMatchesEnumeration(t *testing.T) {
	counts := map[Tally]int{{40, 0}: 30, {40, 1}: 5, {40, 6}: 4, {40, 20}: 2}
	for _, tc := range []struct {
		base        Tally
		first, last int
		tau         float64
	}{
		{Tally{40, 0}, 1, 10, 1e-3},
		{Tally{40, 1}, 3, 8, 0.02},
		{Tally{40, 6}, 5, 10, 0.005},
		{Tally{40, 20}, 1, 9, 0.05},
	} {
		fam := newFamily(nil, tc.first, tc.last, 0.05)
		fam.prior = fitPrior(counts)
		g := fam.group(tc.base, tc.last)
		got := g.crossing(tc.tau)

		want := 0.0
		n := tc.last
		for mask := range 1 << n {
			fails := 0
			crossed := false
			for m := 1; m <= n; m++ {
				if mask>>(m-1)&1 == 1 {
					fails++
				}
				for i, L := range g.looks {
					if L == m && fails >= g.boundary(i, tc.tau) {
						crossed = true
					}
				}
			}
			if crossed {
				want += math.Exp(g.post.logSeq(n, fails))
			}
		}
		if math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Errorf("base %v, looks %d..%d, tau %g: crossing %.15g, enumeration %.15g", tc.base, tc.first, tc.last, tc.tau, got, want)
		}
	}
}

// TestTailIsBinomialForAKnownRate: when every test has the same tally the
// prior has a single atom at the floor or near the rate, and the tail is the
// binomial tail at the posterior's rate, to the digits.
func TestTailIsBinomialForAKnownRate(t *testing.T) {
	pr := &prior{rates: []float64{0.3}, logR: []float64{math.Log(0.3)}, log1mR: []float64{math.Log(0.7)}, weights: []float64{1}}
	fam := &family{prior: pr, first: 1, last: 5, groups: map[groupKey]*nullGroup{}, sources: map[[2]Tally]string{}}
	g := fam.group(Tally{100, 30}, 5)
	for _, tc := range []struct {
		m, h int
		want float64
	}{
		{5, 1, 1 - math.Pow(0.7, 5)}, // 0.832
		{5, 3, 0.16308},
		{5, 5, 0.00243},
		{3, 2, 0.216},
	} {
		if got := g.tailAt(tc.m, tc.h); math.Abs(got-tc.want) > 5e-6 {
			t.Errorf("P(H_%d >= %d | p = 0.3) = %.5f, want %.5f", tc.m, tc.h, got, tc.want)
		}
	}
	if got := g.tailAt(30, 20); math.Abs(got-binomTail(30, 20, 0.3)) > 1e-12 {
		t.Errorf("off the schedule: %.12g, want %.12g", got, binomTail(30, 20, 0.3))
	}
}

// TestFitPriorRecovers: the NPMLE finds a two-group suite's groups.
func TestFitPriorRecovers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[Tally]int{}
	for range 1000 {
		counts[Tally{150, 0}]++
	}
	for range 200 {
		f := 0
		for range 150 {
			if r.Float64() < 0.2 {
				f++
			}
		}
		counts[Tally{150, f}]++
	}
	pr := fitPrior(counts)
	if want := 0.5 / (1000*150 + 1); math.Abs(pr.floor-want) > 1e-15 {
		t.Errorf("floor %g, want the pooled Jeffreys rate %g", pr.floor, want)
	}
	var low, mid float64
	for j, p := range pr.rates {
		switch {
		case p < 1e-3:
			low += pr.weights[j]
		case p > 0.1 && p < 0.3:
			mid += pr.weights[j]
		}
	}
	if math.Abs(low-1000.0/1200) > 0.01 || math.Abs(mid-200.0/1200) > 0.01 {
		t.Errorf("prior mass below 1e-3: %.4f (want %.4f); in 0.1-0.3: %.4f (want %.4f)", low, 1000.0/1200, mid, 200.0/1200)
	}
	// A clean test's predictive rate: the floor, plus what leaks from the
	// 0.2 group (0.8^150 is 3e-15: nothing).
	if m := pr.posterior(Tally{150, 0}).mean(); m > 2*pr.floor {
		t.Errorf("clean test's posterior mean %g, want about the floor %g", m, pr.floor)
	}
}

// TestGuaranteeUnderTheModel is a seeded Monte-Carlo check of the PR-level
// bound on the gate's own null model: suites whose rates are drawn from a
// known mixture, head runs at the base rate, every look from 1 to 20 read.
// The share of PRs with any block must stay within alpha-pr.
func TestGuaranteeUnderTheModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	prs := 400
	switch {
	case raceEnabled:
		prs = 40
	case testing.Short():
		prs = 100
	}
	rate := func() float64 {
		switch u := r.Float64(); {
		case u < 0.80:
			return 0
		case u < 0.92:
			return 0.002 + 0.008*r.Float64()
		case u < 0.97:
			return 0.03
		default:
			return 0.1 + 0.4*r.Float64()
		}
	}
	blocked := 0
	for range prs {
		var in Input
		for i := range 300 {
			p := rate()
			ti := TestInput{Name: "t::" + string(rune('a'+i/26)) + string(rune('a'+i%26))}
			ti.History.Runs = 100
			for range 100 {
				if r.Float64() < p {
					ti.History.Failures++
				}
			}
			for range 20 {
				ti.Base.Runs++
				if r.Float64() < p {
					ti.Base.Failures++
				}
				ti.Head = append(ti.Head, r.Float64() >= p)
			}
			in.Tests = append(in.Tests, ti)
		}
		res, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Family.Cost > DefaultAlphaPR+1e-12 {
			t.Fatalf("calibrated cost %g over alpha-pr", res.Family.Cost)
		}
		if res.Verdict == VerdictBlock {
			blocked++
		}
	}
	// Two standard errors of slack over 0.05.
	if limit := 0.05 + 2*math.Sqrt(0.05*0.95/float64(prs)); float64(blocked)/float64(prs) > limit {
		t.Errorf("clean PRs blocked: %d of %d, want at most %.3f", blocked, prs, limit)
	}
	t.Logf("clean PRs blocked: %d of %d with every look from 1 to 20 read", blocked, prs)
}
