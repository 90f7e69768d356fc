package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// familyOf calibrates a family over the given base-side tallies, each test
// with n head runs.
func familyOf(base []Tally, first, last, n int, alpha float64) (*family, []*nullGroup) {
	f := newFamily(base, first, last, alpha)
	gs := make([]*nullGroup, len(base))
	for i, b := range base {
		gs[i] = f.add(b, n)
	}
	f.calibrate()
	return f, gs
}

// suiteA is the base side of population A with 150 history runs: 2,000
// tests that never failed, 20 rare flakes and 20 flakes, their failures
// drawn at their rates.
func suiteA(r *rand.Rand) []Tally {
	var base []Tally
	draw := func(p float64) Tally {
		t := Tally{Runs: 155}
		for range t.Runs {
			if r.Float64() < p {
				t.Failures++
			}
		}
		return t
	}
	for range 2000 {
		base = append(base, Tally{Runs: 155})
	}
	for range 20 {
		base = append(base, draw(0.03))
		base = append(base, draw(0.1+0.4*r.Float64()))
	}
	return base
}

// TestAllocationSpendsWithinBudget: whatever the suite, the thresholds'
// summed cost is within alpha-pr and is what the family reports; each
// group's steps grow in threshold and in cost; and a test's PR-level
// p-value is at most alpha-pr exactly when its smallest tail is within its
// group's threshold, for every tail the group can show.
func TestAllocationSpendsWithinBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	suites := map[string][]Tally{"A": suiteA(r)}
	var small []Tally
	for i := range 35 {
		tl := Tally{Runs: 5}
		if i >= 30 && r.Float64() < 0.5 {
			tl.Failures = 1 + r.IntN(3)
		}
		small = append(small, tl)
	}
	suites["S"] = small
	for name, base := range suites {
		for _, sched := range [][3]int{{1, 20, 5}, {1, 20, 20}, {5, 5, 5}, {1, 5, 5}} {
			for _, alpha := range []float64{0.05, 0.01} {
				t.Run(fmt.Sprintf("%s/looks%d-%d/alpha%g", name, sched[0], sched[1], alpha), func(t *testing.T) {
					f, _ := familyOf(base, sched[0], sched[1], sched[2], alpha)
					sum := 0.0
					for _, g := range f.order {
						if g.tau > 0 {
							sum += float64(g.size) * g.crossing(g.tau)
						}
					}
					if f.spent > alpha || math.Abs(sum-f.spent) > 1e-12 {
						t.Errorf("spent %g, thresholds' cost %g, alpha %g", f.spent, sum, alpha)
					}
					if f.spent < alpha/2 {
						t.Errorf("spent %g of %g", f.spent, alpha)
					}
					for _, g := range f.order {
						for k := 1; k < len(g.steps); k++ {
							if g.steps[k].tau <= g.steps[k-1].tau || g.steps[k].cum < g.steps[k-1].cum {
								t.Fatalf("base %v: steps out of order: %v", g.base, g.steps)
							}
						}
						for i := range g.looks {
							for _, tail := range g.tail[i][1:] {
								if tail <= 0 || tail > alpha {
									continue
								}
								if blocks, p := tail <= g.tau, f.prLevel(g, tail); blocks != (p <= alpha) {
									t.Fatalf("base %v: tail %g, threshold %g, PR-level %g", g.base, tail, g.tau, p)
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestAllocationByPower: against one threshold for all, the allocation
// lowers a flake's boundary in 20 runs and keeps a test that never failed
// blocking on its first failure in the first runs.
func TestAllocationByPower(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := suiteA(r)
	rare := Tally{Runs: 155, Failures: 5} // 0.032
	base = append(base, rare)
	bounds := func(byPower bool) (stable, flake []int, spent float64) {
		f, gs := familyOf(base, 1, 20, 20, 0.05)
		if !byPower {
			uniformThreshold(f)
		}
		s, fl := gs[0], gs[len(gs)-1]
		for i := range s.looks {
			stable = append(stable, s.boundary(i, s.tau))
			flake = append(flake, fl.boundary(i, fl.tau))
		}
		return stable, flake, f.spent
	}
	s0, f0, c0 := bounds(false)
	s1, f1, c1 := bounds(true)
	t.Logf("one threshold: stable %v, the rare flake %v, spent %.4f", s0, f0, c0)
	t.Logf("by power:      stable %v, the rare flake %v, spent %.4f", s1, f1, c1)
	if f1[19] >= f0[19] {
		t.Errorf("the rare flake's boundary after 20 runs: %d by power, %d with one threshold", f1[19], f0[19])
	}
	if !slices.Equal(s1[:5], s0[:5]) {
		t.Errorf("a stable test's boundaries in the first 5 runs: %v by power, %v with one threshold", s1[:5], s0[:5])
	}
	if c1 < c0 || c1 > 0.05 {
		t.Errorf("spent %g by power, %g with one threshold", c1, c0)
	}
}

// uniformThreshold gives every group of f one threshold, the largest tail
// value whose summed cost is within alpha: the calibration before the
// allocation by power.
func uniformThreshold(f *family) {
	cost := func(tau float64) float64 {
		c := 0.0
		for _, g := range f.order {
			c += float64(g.size) * g.crossing(tau)
		}
		return c
	}
	var cands []float64
	for _, g := range f.order {
		for i := range g.looks {
			for _, t := range g.tail[i][1:] {
				if t > 0 && t <= f.alpha {
					cands = append(cands, t)
				}
			}
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	lo, hi := 0, len(cands) // cands[:lo] within alpha, cands[hi:] not
	for lo < hi {
		mid := (lo + hi) / 2
		if cost(cands[mid]) <= f.alpha {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	f.tau = 0
	if lo > 0 {
		f.tau = cands[lo-1]
	}
	for _, g := range f.order {
		g.tau = f.tau
	}
	f.spent = cost(f.tau)
}

// TestAlternative: the alternative's sequence probabilities, made by
// ratios from look to look, match the sum term by term, on the schedule
// and at an extra look of a thousand runs, where (1 − q)^1000 is too small
// for a float64.
func TestAlternative(t *testing.T) {
	base := []Tally{{Runs: 155}, {Runs: 155}, {Runs: 155, Failures: 5}, {Runs: 155, Failures: 40}}
	f := newFamily(base, 1, 20, 0.05)
	for _, b := range base[1:] {
		for _, n := range []int{20, 1000} {
			g := f.group(b, n)
			g.alternative()
			for i, m := range g.looks {
				for _, h := range []int{0, 1, 2, m / 2, m - 1, m} {
					if h < 0 || h > m {
						continue
					}
					want := 0.0
					for _, d := range altDeltas {
						for j, lw := range g.post.logW {
							p := math.Exp(g.post.logR[j])
							q := p + (1-p)*d
							want += math.Exp(lw+float64(h)*math.Log(q)+float64(m-h)*math.Log1p(-q)) / float64(len(altDeltas))
						}
					}
					if got := g.altP[i][h]; math.Abs(got-want) > 1e-9*want {
						t.Errorf("base %v, %d runs, %d failures: %g, want %g", b, m, h, got, want)
					}
				}
			}
		}
	}
}

// TestBudgetKeepsTheSchedule: a budget of 5 head runs (`matrix -k 5`,
// `gate --max-runs 5`) is calibrated over the same 20 runs as the default,
// so the same runs block the same tests. Calibrated over 5 alone, clean PRs
// of a small project without history failed 7.3% of the time (1,000
// seeded PRs) against the bound of 5%.
func TestBudgetKeepsTheSchedule(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 0))
	differ, blocks := 0, 0
	for range 200 {
		in := drawPR(r, drawSuite(r, popS, prClean), 0, 5)
		short, err := Evaluate(in, Options{MaxRuns: 5})
		if err != nil {
			t.Fatal(err)
		}
		long, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if short.Family.Cost != long.Family.Cost || !slices.Equal(short.Blocking(), long.Blocking()) {
			differ++
		}
		if len(short.Blocking()) > 0 {
			blocks++
		}
	}
	if differ > 0 {
		t.Errorf("%d of 200 PRs: a budget of 5 blocked other tests than the default budget", differ)
	}
	t.Logf("clean PRs blocked: %d of 200", blocks)
}

// TestFitMargin: all of alpha-pr while the runs read are at most a quarter
// of the schedule, half of it from half on, and in a PR read to the end the
// PR-level p-value is the cost over the margin: a test blocks only where
// it is at most alpha-pr, and the family's cost stays within the half.
func TestFitMargin(t *testing.T) {
	for _, c := range []struct {
		read, last int
		want       float64
	}{{1, 20, 1}, {5, 20, 1}, {6, 20, 0.9}, {8, 20, 0.7}, {10, 20, 0.5}, {15, 20, 0.5}, {20, 20, 0.5}, {30, 20, 0.5}, {10, 40, 1}, {20, 40, 0.5}, {1, 1, 0.5}} {
		if got := fitMargin(c.read, c.last); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("fitMargin(%d, %d) = %v, want %v", c.read, c.last, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	blocks := 0
	for range 20 {
		in := drawPR(r, drawSuite(r, popA, prInducedFlake), 150, 20)
		res, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := 0.5 * familyShare; math.Abs(res.Family.Margin-want) > 1e-15 || res.Family.Cost > want*DefaultAlphaPR+1e-12 || res.Family.Cost < 0.4*DefaultAlphaPR {
			t.Fatalf("family margin %v, cost %v; want %v (half, and the outage checks' share) and a cost within and near it", res.Family.Margin, res.Family.Cost, want)
		}
		for _, tr := range res.Tests {
			if tr.Stat == nil {
				continue
			}
			if tr.Decision == Block {
				blocks++
				if tr.Stat.PRLevel > DefaultAlphaPR || !strings.Contains(tr.Reason, "over a margin of 0.47: for the error of the fitted prior") {
					t.Errorf("%s blocks at PR-level p %v: %s", tr.Name, tr.Stat.PRLevel, tr.Reason)
				}
			} else if tr.Stat.PRLevel <= DefaultAlphaPR && !strings.Contains(tr.Reason, "Fisher") {
				t.Errorf("%s has PR-level p %v within alpha-pr and does not block: %s", tr.Name, tr.Stat.PRLevel, tr.Reason)
			}
		}
	}
	if blocks < 15 {
		t.Errorf("%d blocks in 20 PRs with an induced flake; want most of them blocked", blocks)
	}
	in := drawPR(r, drawSuite(r, popA, prClean), 150, 5)
	if res, err := Evaluate(in, Options{}); err != nil || res.Family.Margin != familyShare {
		t.Errorf("5 pairs of a 20-run schedule: margin %v, %v; want %v (the outage checks' share alone)", res.Family.Margin, err, familyShare)
	}
}
