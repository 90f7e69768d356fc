package gate

import (
	"math"
	"slices"
)

// The suite's prior over failure rates (empirical Bayes).
//
// Five clean base runs do not make a test stable, and neither do 150: a
// test that fails once in 500 runs is clean in 150 runs three times out of
// four. Whether one head failure of such a test is news depends on the
// suite: in a suite where no test ever fails at random it is, in a suite with
// a tail of hundreds of rarely failing tests it is not. So the gate does not
// pick a prior; it fits one to the suite's own base-side evidence.
//
//   - Model. Each test has a baseline failure rate p, drawn from a
//     distribution G common to the suite; its base-side runs (the K base
//     repetitions and base-branch history) are independent Bernoulli(p).
//   - Fit. G is the nonparametric maximum-likelihood estimate (NPMLE) on a
//     grid of rates, by EM over every compared test's base-side tally. The
//     NPMLE needs no shape assumption and puts mass where the tallies say.
//   - Floor. The lowest rate the grid holds is the pooled rate of the tests
//     never seen failing, (0 + ½) / (their runs + 1): Jeffreys' posterior mean
//     for their common rate. With 2,000 tests × 150 clean runs it is 1.7e-6;
//     with no history, 2,000 × 5 base runs, it is 5e-5, so that a suite
//     with little history cannot claim its clean tests never fail.
//   - Uncertainty of the fit. An NPMLE fitted to 35 tests of 5 runs each
//     is itself a guess: which of the 30 tests never seen failing hide a
//     flake, and at what rate, rests on the few that did fail, and the
//     NPMLE, a maximum-likelihood fit, puts its mass on exactly the rates
//     they showed. The calibration then trusts it as if it were the
//     suite's true distribution, and a small project without history had
//     8.1% of its clean PRs blocked against a bound of 5%. So the prior is
//     the NPMLE mixed with a reference prior, Jeffreys' Beta(½, ½), at
//     weight 1/(tests + 1): the predictive of a Dirichlet process with
//     concentration 1 and that base measure, given the fitted rates (the
//     next test is new to the fit with probability 1/(tests + 1)). With 35
//     tests the reference carries 2.8% of the mass, with 2,000 tests 0.05%:
//     the guarantee costs a large suite one test's worth of budget, and a
//     small one stops overrating its own fit (the same clean PRs, K = 5:
//     4.8% blocked; in suites of 2,000 tests and more it changed no verdict
//     on 300 paired draws of each kind of PR).
//   - Posterior. A test's rate given its own tally is G reweighted by the
//     tally's likelihood. Its predictive is what the null hypothesis "the
//     patch changed nothing" says about the head runs.

// maxStatRuns caps the head runs a test's statistics look at; beyond it the
// path counts of the calibration would overflow. A test given more runs is
// judged on its first maxStatRuns.
const maxStatRuns = 1000

// floorHalf is Jeffreys' half failure in the floor (0 + ½) / (runs + 1).
const floorHalf = 0.5

// prior is the fitted distribution of baseline failure rates: weights on a
// grid of rates.
type prior struct {
	rates   []float64
	logR    []float64 // ln rate
	log1mR  []float64 // ln(1 − rate)
	weights []float64
	floor   float64
	tests   int // tallies fitted
	runs    int // base-side runs over them
	// reference is the weight of the Jeffreys reference prior in the
	// mixture: 1/(tests+1).
	reference float64
}

// referenceConcentration is the Dirichlet process's concentration: the
// reference prior counts as this many tests.
const referenceConcentration = 1

// rateGrid returns the grid above floor: the floor itself, ten points a
// decade from 1e-6 to 0.5, then steps of 0.05 to 0.95 and 0.975, 0.99, 0.999.
func rateGrid(floor float64) []float64 {
	g := []float64{floor}
	for e := -60; e <= -3; e++ {
		if p := math.Pow(10, float64(e)/10); p > floor*1.05 {
			g = append(g, p)
		}
	}
	for _, p := range []float64{0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.975, 0.99, 0.999} {
		if p > floor*1.05 {
			g = append(g, p)
		}
	}
	return g
}

// EM stopping rule: at most emMaxIter iterations, or until no weight moves by
// more than emTol.
const (
	emMaxIter = 500
	emTol     = 1e-9
)

// fitPrior fits the NPMLE to base-side tallies, given as counts of tests per
// tally. With no tally it returns nil.
func fitPrior(counts map[Tally]int) *prior {
	type group struct {
		t Tally
		n float64
	}
	var groups []group
	zeroRuns, total, runs := 0, 0, 0
	for t, n := range counts {
		if t.Runs == 0 || n == 0 {
			continue
		}
		groups = append(groups, group{t, float64(n)})
		total += n
		runs += n * t.Runs
		if t.Failures == 0 {
			zeroRuns += n * t.Runs
		}
	}
	if total == 0 {
		return nil
	}
	// Map iteration order is random; EM's floating-point sums are not
	// associative. Sort so that a fit is reproducible.
	slices.SortFunc(groups, func(a, b group) int {
		if a.t.Runs != b.t.Runs {
			return a.t.Runs - b.t.Runs
		}
		return a.t.Failures - b.t.Failures
	})
	floor := floorHalf / float64(zeroRuns+1)
	if zeroRuns == 0 {
		floor = floorHalf / float64(runs+1)
	}
	pr := &prior{rates: rateGrid(floor), floor: floor, tests: total, runs: runs}
	J := len(pr.rates)
	pr.logR, pr.log1mR = make([]float64, J), make([]float64, J)
	for j, p := range pr.rates {
		pr.logR[j], pr.log1mR[j] = math.Log(p), math.Log1p(-p)
	}
	// lik[g][j]: the likelihood of group g's tally at rate j, scaled per group
	// so that its largest value is 1 (scaling cancels in EM's ratios).
	lik := make([][]float64, len(groups))
	for g, gr := range groups {
		row := make([]float64, J)
		top := math.Inf(-1)
		for j := range row {
			row[j] = float64(gr.t.Failures)*pr.logR[j] + float64(gr.t.Passes())*pr.log1mR[j]
			top = max(top, row[j])
		}
		for j := range row {
			row[j] = math.Exp(row[j] - top)
		}
		lik[g] = row
	}
	// Start EM near the answer: each tally's mass at the grid rate nearest
	// its observed rate (a test never seen failing at the floor), with 1%
	// spread evenly so that EM can move mass anywhere. Started evenly, EM
	// would crawl: below about 1/runs the likelihood is nearly flat, and mass
	// there drains by a fraction of a percent per iteration.
	w := make([]float64, J)
	for _, gr := range groups {
		obs := float64(gr.t.Failures) / float64(gr.t.Runs)
		j := 0
		if obs > 0 {
			j, _ = slices.BinarySearch(pr.rates, obs)
			if j == J || (j > 0 && math.Log(obs/pr.rates[j-1]) < math.Log(pr.rates[j]/obs)) {
				j--
			}
		}
		w[j] += 0.99 * gr.n / float64(total)
	}
	for j := range w {
		w[j] += 0.01 / float64(J)
	}
	next := make([]float64, J)
	for range emMaxIter {
		clear(next)
		for g, row := range lik {
			den := 0.0
			for j, l := range row {
				den += w[j] * l
			}
			if den == 0 {
				continue
			}
			f := groups[g].n / den
			for j, l := range row {
				next[j] += f * l
			}
		}
		moved := 0.0
		for j := range next {
			nw := w[j] * next[j] / float64(total)
			moved = max(moved, math.Abs(nw-w[j]))
			w[j] = nw
		}
		if moved < emTol {
			break
		}
	}
	// The fit's own uncertainty: mix in the reference prior at weight
	// 1/(tests+1).
	pr.reference = referenceConcentration / (float64(total) + referenceConcentration)
	for j, h := range jeffreysCells(pr.rates) {
		w[j] = (1-pr.reference)*w[j] + pr.reference*h
	}
	pr.weights = w
	return pr
}

// jeffreysCells returns the Beta(½, ½) mass of each grid cell: the rates
// between the midpoints of it and its neighbours (geometric midpoints below
// 0.1, where the grid is logarithmic; arithmetic above), the floor's cell
// reaching down to 0 and the top's up to 1. The masses sum to 1.
func jeffreysCells(rates []float64) []float64 {
	cdf := func(p float64) float64 { return 2 / math.Pi * math.Asin(math.Sqrt(p)) }
	h := make([]float64, len(rates))
	prev := 0.0
	for j := range rates {
		edge := 1.0
		if j+1 < len(rates) {
			a, b := rates[j], rates[j+1]
			edge = (a + b) / 2
			if b < 0.1 {
				edge = math.Sqrt(a * b)
			}
		}
		c := cdf(edge)
		h[j] = c - prev
		prev = c
	}
	return h
}

// posterior is one test's rate distribution given its base-side tally:
// weights over the prior's rates, the negligible ones dropped.
type posterior struct {
	logR, log1mR, logW []float64
}

// negligible is the posterior weight below which a rate is dropped, relative
// to the largest.
const negligible = 1e-12

func (pr *prior) posterior(t Tally) posterior {
	J := len(pr.rates)
	lw := make([]float64, J)
	top := math.Inf(-1)
	for j := range lw {
		if pr.weights[j] <= 0 {
			lw[j] = math.Inf(-1)
			continue
		}
		lw[j] = math.Log(pr.weights[j]) + float64(t.Failures)*pr.logR[j] + float64(t.Passes())*pr.log1mR[j]
		top = max(top, lw[j])
	}
	sum := 0.0
	for _, v := range lw {
		sum += math.Exp(v - top)
	}
	norm := top + math.Log(sum)
	var po posterior
	for j, v := range lw {
		if v-top < math.Log(negligible) {
			continue
		}
		po.logR = append(po.logR, pr.logR[j])
		po.log1mR = append(po.log1mR, pr.log1mR[j])
		po.logW = append(po.logW, v-norm)
	}
	return po
}

// mean is the posterior mean rate.
func (po posterior) mean() float64 {
	m := 0.0
	for j, lw := range po.logW {
		m += math.Exp(lw + po.logR[j])
	}
	return m
}

// logSeq returns ln P(one given sequence of m head runs with h failures)
// under the posterior predictive: ln Σ w p^h (1−p)^(m−h).
func (po posterior) logSeq(m, h int) float64 {
	top := math.Inf(-1)
	terms := make([]float64, len(po.logW))
	for j, lw := range po.logW {
		v := lw + float64(h)*po.logR[j] + float64(m-h)*po.log1mR[j]
		terms[j] = v
		top = max(top, v)
	}
	if math.IsInf(top, -1) {
		return top
	}
	s := 0.0
	for _, v := range terms {
		s += math.Exp(v - top)
	}
	return top + math.Log(s)
}

// lnChoose is ln C(n, k).
func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// bands summarises the prior as shares of tests per band of rates.
func (pr *prior) bands() []Band {
	edges := []float64{0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0000001}
	out := make([]Band, len(edges)-1)
	for i := range out {
		out[i] = Band{From: edges[i], To: min(edges[i+1], 1)}
	}
	for j, p := range pr.rates {
		for i := range out {
			if p >= edges[i] && p < edges[i+1] {
				out[i].Share += pr.weights[j]
				break
			}
		}
	}
	return out
}
