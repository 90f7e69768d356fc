package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestPriorCarriesItsOwnUncertainty: the fitted prior is the NPMLE mixed
// with Jeffreys' Beta(½, ½) at weight 1/(tests + 1) (prior.go), so that a
// suite of a few dozen tests does not trust its fit as if it were the
// truth.
func TestPriorCarriesItsOwnUncertainty(t *testing.T) {
	rates := rateGrid(5e-5)
	h := jeffreysCells(rates)
	sum, below := 0.0, 0.0
	for j, m := range h {
		if m <= 0 {
			t.Fatalf("cell %d (rate %g) has mass %g", j, rates[j], m)
		}
		sum += m
		if rates[j] < 0.01 {
			below += m
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("Jeffreys cells sum to %.15f, want 1", sum)
	}
	// The cells below 0.01 end at the geometric midpoint of 10^-2.1 and
	// 10^-2: 10^-2.05. Beta(½, ½) puts 2/π·asin(√x) below x: 0.0602 there.
	if want := 2 / math.Pi * math.Asin(math.Sqrt(math.Pow(10, -2.05))); math.Abs(below-want) > 1e-12 || fmt.Sprintf("%.4f", below) != "0.0602" {
		t.Errorf("Jeffreys mass below 0.01: %.6f, want %.6f", below, want)
	}
	for _, tc := range []struct {
		counts map[Tally]int
		ref    float64
	}{
		{map[Tally]int{{5, 0}: 1}, 1.0 / 2},
		{map[Tally]int{{5, 0}: 30, {5, 1}: 2, {5, 2}: 2, {5, 3}: 1}, 1.0 / 36},
		{map[Tally]int{{155, 0}: 2000, {155, 5}: 40}, 1.0 / 2041},
	} {
		pr := fitPrior(tc.counts)
		total := 0.0
		for _, w := range pr.weights {
			total += w
		}
		if math.Abs(pr.reference-tc.ref) > 1e-15 || math.Abs(total-1) > 1e-9 {
			t.Errorf("%v: reference weight %g (want %g), weights sum to %.12f", tc.counts, pr.reference, tc.ref, total)
		}
		// Every rate keeps at least the reference's share of its cell.
		cells := jeffreysCells(pr.rates)
		for j, w := range pr.weights {
			if w < tc.ref*cells[j]*(1-1e-9) {
				t.Errorf("%v: rate %g has weight %g, below the reference's %g", tc.counts, pr.rates[j], w, tc.ref*cells[j])
			}
		}
	}
}

// TestSmallSuiteFlakeNotShrunk is the shape of the real-tool audit's Go
// suite: 35 tests, K = 5, no history, and of its 5 flakes only one failed a
// base run (1 of 5). That flake fails 3 of 5 head runs. The NPMLE alone,
// fitted to 34 clean tallies and this one, shrinks its rate to 0.018 and
// blocked the PR (P = 0.00019); 35 tests cannot pin their prior that
// tightly, and with the reference prior mixed in its rate is 0.047, so
// that the suite's calibration does not call 3 of 5 rare. (Its own runs
// would hold it back too, TestOwnRunsHoldABlock: 1 of 5 against 3 of 5 is
// 0.26.)
func TestSmallSuiteFlakeNotShrunk(t *testing.T) {
	tallies := map[string]Tally{"pkg::TestFlakeE": {5, 1}}
	for i := range 34 {
		tallies[fmt.Sprintf("pkg::Test%02d", i)] = Tally{5, 0}
	}
	in := suiteOf(tallies, map[string]string{"pkg::TestFlakeE": "PPFFF"})
	res, err := Evaluate(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := resultOf(res, "pkg::TestFlakeE")
	if got := fmt.Sprintf("%.3f", tr.P0.Estimate); got != "0.047" || res.Verdict == VerdictBlock || tr.Stat == nil || tr.Stat.PRLevel <= DefaultAlphaPR {
		t.Errorf("rate %s (want 0.047), verdict %s, %s: %s", got, res.Verdict, tr.Decision, tr.Reason)
	}
}

// suiteOf makes an input of tests with the given base tallies, passing
// every head run unless heads gives them (P pass, F fail), one head run
// per base run.
func suiteOf(base map[string]Tally, heads map[string]string) Input {
	var in Input
	for name, b := range base {
		h := heads[name]
		if h == "" {
			h = strings.Repeat("P", b.Runs)
		}
		in.Tests = append(in.Tests, TestInput{Name: name, Base: b, Head: runs(h)})
	}
	slices.SortFunc(in.Tests, func(a, b TestInput) int { return strings.Compare(a.Name, b.Name) })
	return in
}

// resultOf is the named test's result.
func resultOf(res Result, name string) TestResult {
	for _, tr := range res.Tests {
		if tr.Name == name {
			return tr
		}
	}
	return TestResult{}
}

// TestFisherTail pins the one-sided p-value of Fisher's exact test: given
// the failures of both sides, the chance that the head's runs hold at
// least the failures they did.
func TestFisherTail(t *testing.T) {
	for _, tc := range []struct {
		base  Tally
		m, h  int
		want  string
		exact float64
	}{
		{Tally{155, 0}, 5, 1, "0.031", 5.0 / 160},                   // 5 of the 160 runs
		{Tally{155, 0}, 5, 2, "0.001", 10.0 / 12720},                // C(5,2)/C(160,2)
		{Tally{10, 0}, 10, 3, "0.105", 120.0 / 1140},                // C(10,3)/C(20,3)
		{Tally{10, 0}, 10, 4, "0.043", 210.0 / 4845},                // C(10,4)/C(20,4)
		{Tally{5, 0}, 5, 5, "0.004", 1.0 / 252},                     // C(5,5)/C(10,5)
		{Tally{5, 1}, 5, 3, "0.262", (10*5 + 5*1) / 210.0},          // T = 4: C(5,3)C(5,1) + C(5,4)C(5,0) over C(10,4)
		{Tally{20, 6}, 20, 12, "0.055", fisherBrute(20, 6, 20, 12)}, // S: a 0.35 flake at 6/20 base, 12/20 head
	} {
		got := fisherTail(tc.base, tc.m, tc.h)
		if math.Abs(got-tc.exact) > 1e-12 || fmt.Sprintf("%.3f", got) != tc.want {
			t.Errorf("base %v, %d of %d head runs: %.6f, want %.6f (%s)", tc.base, tc.h, tc.m, got, tc.exact, tc.want)
		}
	}
	// More head failures against the same base side never make it likelier,
	// so leastFailures' first count is a threshold.
	for _, b := range []Tally{{5, 0}, {5, 2}, {20, 0}, {20, 7}, {155, 0}, {155, 30}} {
		for m := 1; m <= 20; m++ {
			prev := 1.0
			for h := 1; h <= m; h++ {
				p := fisherTail(b, m, h)
				if p > prev+1e-12 {
					t.Errorf("base %v, m %d: p(%d) = %g above p(%d) = %g", b, m, h, p, h-1, prev)
				}
				prev = p
			}
			least := leastFailures(b, m, 0.05)
			if least <= m && fisherTail(b, m, least) > 0.05 || least > 1 && fisherTail(b, m, least-1) <= 0.05 {
				t.Errorf("base %v, m %d: leastFailures %d is not the first count at 0.05", b, m, least)
			}
		}
	}
}

// fisherBrute sums the tail the other way round: every choice of which
// f+h of the n+m runs failed is equally likely, and x of them among the m
// head runs is C(m, x)·C(n, f+h−x) of the C(n+m, f+h) choices.
func fisherBrute(n, f, m, h int) float64 {
	T, N := f+h, n+m
	choose := func(a, b int) float64 {
		if b < 0 || b > a {
			return 0
		}
		r := 1.0
		for i := 1; i <= b; i++ {
			r = r * float64(a-b+i) / float64(i)
		}
		return r
	}
	p := 0.0
	for x := h; x <= min(T, m); x++ {
		p += choose(m, x) * choose(n, T-x)
	}
	return p / choose(N, T)
}

// TestOwnRunsHoldABlock: a small project without history, 10 pairs. A
// flake that passed its 10 base runs fails 3 of 10 head runs. The suite
// prior, fitted to 30 tests never failing and 4 flakes, calls that rare,
// but under the null hypothesis its 20 runs are runs of one test, and 3
// failures all landing on head has probability 0.105: the test is
// undecided, not blocked. At 6 of 10 against 0 of 10 (0.005) it blocks.
func TestOwnRunsHoldABlock(t *testing.T) {
	tallies := map[string]Tally{"pkg::TestFlakeA": {10, 3}, "pkg::TestFlakeB": {10, 4}, "pkg::TestFlakeC": {10, 5}, "pkg::TestFlakeD": {10, 4}, "pkg::TestHidden": {10, 0}}
	for i := range 30 {
		tallies[fmt.Sprintf("pkg::TestStable%02d", i)] = Tally{10, 0}
	}
	flakes := map[string]string{"pkg::TestFlakeA": "PFPPFPPPFP", "pkg::TestFlakeB": "FPFPPFPPPP", "pkg::TestFlakeC": "PPFPFFPFPF", "pkg::TestFlakeD": "PPPFPPFPPF"}
	for _, tc := range []struct {
		head   string
		want   Decision
		reason string
	}{
		{"PPFPFPPFPP", Inconclusive, "3 of 10 head runs failing against 0 of 10 base-side runs has probability 0.11"},
		{"FFPFFPPFFP", Block, "patch-induced flake: 6 of 10 head runs failed"},
	} {
		flakes["pkg::TestHidden"] = tc.head
		// A budget of 40 head runs: 10 are a quarter of the schedule,
		// where the calibration spends all of alpha-pr (fitMargin).
		res, err := Evaluate(suiteOf(tallies, flakes), Options{MaxRuns: 40})
		if err != nil {
			t.Fatal(err)
		}
		tr := resultOf(res, "pkg::TestHidden")
		if tr.Decision != tc.want || !strings.Contains(tr.Reason, tc.reason) {
			t.Errorf("head %s: %s: %s\nwant %s, reason containing %q", tc.head, tr.Decision, tr.Reason, tc.want, tc.reason)
		}
		// The p-value the rule read: 3 of 10 against 0 of 10 held back at
		// 0.105; blocked, the first look that blocked, within alpha-pr.
		if own := tr.Stat.OwnRuns; tc.want == Inconclusive && fmt.Sprintf("%.3f", own) != "0.105" || tc.want == Block && (own <= 0 || own > DefaultAlphaPR) {
			t.Errorf("head %s: own runs %g", tc.head, own)
		}
	}
}

func TestSequentialLooks(t *testing.T) {
	for _, tc := range []struct {
		initial, budget int
		want            []int
	}{
		{5, 20, []int{5, 10, 20}},
		{5, 5, []int{5}},
		{5, 6, []int{5, 6}},
		{5, 12, []int{5, 10, 12}},
		{5, 100, []int{5, 10, 20, 40, 80, 100}},
		{3, 2, []int{2}},
		{0, 4, []int{1, 2, 4}},
	} {
		if got := SequentialLooks(tc.initial, tc.budget); !slices.Equal(got, tc.want) {
			t.Errorf("SequentialLooks(%d, %d) = %v, want %v", tc.initial, tc.budget, got, tc.want)
		}
	}
}

// TestLookAlpha: a driver's looks take shares of alpha-pr that grow with
// the pairs read, each look its own, and together at most alpha-pr.
func TestLookAlpha(t *testing.T) {
	looks := []int{5, 10, 20}
	for _, tc := range []struct {
		pairs int
		want  float64
	}{
		{5, 0.05 * 5 / 35}, {10, 0.05 * 10 / 35}, {20, 0.05 * 20 / 35},
		{3, 0.05 * 5 / 35},   // before the first look: the first's share
		{13, 0.05 * 20 / 35}, // between looks (a time limit stopped it): the next one's
		{25, 0.05 * 20 / 35}, // past the last
	} {
		if got := LookAlpha(0.05, looks, tc.pairs); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("LookAlpha(0.05, %v, %d) = %g, want %g", looks, tc.pairs, got, tc.want)
		}
	}
	if got := LookAlpha(0.05, []int{5}, 5); got != 0.05 {
		t.Errorf("one look: %g, want all of alpha-pr", got)
	}
	// The looks a driver takes fall each to its own share: their sum is
	// alpha-pr, whatever the schedule.
	for _, sched := range [][]int{{5, 10, 20}, {5, 10, 12}, {5, 10, 20, 40, 80, 100}, {1, 2, 4}} {
		sum := 0.0
		for _, n := range sched {
			sum += LookAlpha(0.05, sched, n)
		}
		if math.Abs(sum-0.05) > 1e-15 {
			t.Errorf("%v: shares sum to %g, want 0.05", sched, sum)
		}
	}
}
