package gate

import (
	"math"
	"slices"
)

// The PR-level guarantee.
//
// A required check is judged by how often it fails a PR that changed
// nothing. With thousands of tests and dozens of flaky ones, per-test error
// rates add up: a per-test α of 0.05 over 40 flaky tests fails most clean
// PRs. So the gate controls the family: the chance that any compared test
// blocks when the patch changed nothing is at most alpha-pr.
//
//   - Null model, per test. Head runs fail independently at the test's
//     baseline rate p, with p drawn from the test's posterior under the
//     suite's fitted prior (prior.go). That is exactly what "the patch
//     changed nothing" predicts, uncertainty about p included.
//   - Statistic. After m head runs with h failures, the tail probability
//     P(H_m ≥ h) under that predictive: small when the head fails more often
//     than the test's base rate allows. Any rate increase counts, so a test
//     made flakier (3% → 30%) is caught as well as a regression (→ 100%).
//   - Looks. Every head run from the first look to the head-run budget is
//     a look at the head: the matrix driver evaluates after 5, 10 and 20
//     pairs and reads the looks its runs reached, `gate` reads a batch the
//     same way. A test blocks when the statistic crossed its boundary at
//     any look reached: so one procedure serves both, and the same runs
//     give the same verdict.
//   - Calibration (discrete Bonferroni). For a threshold τ, a test's
//     boundary at look m is the fewest failures whose tail is ≤ τ, and its
//     cost F(τ) is the exact null probability of crossing at any look, by
//     counting paths through the schedule. Each group of tests gets its
//     own τ, chosen from its base side alone to buy the most power per
//     unit of cost, with Σ F(τ) ≤ alpha-pr over all compared tests
//     (allocate.go). The union bound then gives P(any test blocks |
//     nothing changed) ≤ alpha-pr, under optional stopping too, since
//     every look is counted.
//   - Own runs. A test that crosses blocks only if its own base-side runs
//     make the count unlikely too (Fisher's exact test, below): a filter
//     that holds tests back where the fitted prior misleads, and so leaves
//     the bound standing.
//   - Evaluations. The bound is for one evaluation of a PR. A driver that
//     evaluates again once more base runs are in splits alpha-pr over its
//     evaluations (sequential.go).
//
// Why exact costs and not e-values with Bonferroni (Markov's 1/threshold):
// counts are discrete, and most tests almost never fail. A stable test's
// cost of "block on one early failure" is the tiny chance that it fails at
// all; Markov's bound would charge it α/N regardless. Summing exact costs
// gives the budget to the tests that can use it (Tarone's idea), and that is
// what lets one head failure of a test clean in a suite with no rare flakes
// block, while the same failure in a suite with a tail of rarely failing
// tests does not.

// nullGroup is the tests that share one null model and one look schedule:
// the same base-side tally and the same head-run count outside the common
// schedule.
type nullGroup struct {
	size  int
	post  posterior
	mean  float64
	looks []int       // ascending
	seq   [][]float64 // seq[i][h]: ln P(one given head sequence with h failures in looks[i] runs)
	seqP  [][]float64 // exp(seq)
	tail  [][]float64 // tail[i][h]: P(H ≥ h) after looks[i] runs; h = 0..looks[i]+1
	// least[i] is the fewest failures in looks[i] head runs that the test's
	// own base-side runs make unlikely: Fisher's exact p-value at most
	// alpha (looks[i]+1 when none is). The calibration does not read it:
	// it is made on first use (leastAt), for groups with head failures.
	least []int
	base  Tally
	alpha float64
	cache map[float64]float64
	// altP[i][h]: P(one given head sequence with h failures in looks[i]
	// runs) if the patch made the test fail more (allocate.go).
	altP [][]float64
	// tau is the group's calibrated tail threshold (0: it never blocks),
	// and steps the thresholds the allocation gives it as the budget grows,
	// each with the family's cost when it is reached.
	tau      float64
	steps    []step
	points   []point // every threshold it can take (allocate.go)
	vertices []point // of them, its hull's
}

type groupKey struct {
	base  Tally
	extra int // head runs outside [first, last], or 0
}

// family is the set of compared tests with the calibration over them.
type family struct {
	prior       *prior
	first, last int     // the common schedule: looks first..last
	budget      int     // the head-run budget (≤ last): looks past it never come
	margin      float64 // alpha over alpha-pr (fitMargin × familyShare); 1 unless Evaluate sets it
	ledger      bool    // the ledger's test takes a share of alpha-pr too (ledgerShare)
	fitted      float64 // fitMargin's part of it
	read        int     // the most head runs a member has, which set the margin
	groups      map[groupKey]*nullGroup
	order       []*nullGroup // deterministic iteration
	alpha       float64
	tau         float64 // calibrated tail threshold; 0 when nothing can block
	spent       float64 // the family's cost at the groups' thresholds
	members     int
	sources     map[[2]Tally]string
}

// newFamily fits the suite prior to the base-side tallies and prepares one
// null model per distinct tally.
func newFamily(base []Tally, first, last int, alpha float64) *family {
	counts := map[Tally]int{}
	for _, t := range base {
		counts[t]++
	}
	return &family{prior: fitPrior(counts), first: first, last: last, budget: last, margin: 1, fitted: 1, alpha: alpha,
		groups: map[groupKey]*nullGroup{}, sources: map[[2]Tally]string{}}
}

// add makes a test with base-side tally b and n head runs a member and
// returns its null model.
func (f *family) add(b Tally, n int) *nullGroup {
	g := f.group(b, n)
	g.size++
	f.members++
	return g
}

// group returns the null model of a test with base-side tally b and n head
// runs, making it on first use.
func (f *family) group(b Tally, n int) *nullGroup {
	n = min(n, maxStatRuns)
	k := groupKey{base: b}
	if n < f.first || n > f.last {
		k.extra = n
	}
	if g := f.groups[k]; g != nil {
		return g
	}
	// Fisher's test (leastAt) holds a test back at alpha-pr itself: it only
	// ever vetoes a block, so the margin is not needed there.
	g := &nullGroup{post: f.prior.posterior(b), base: b, alpha: f.alpha / f.margin, cache: map[float64]float64{}}
	g.mean = g.post.mean()
	for m := f.first; m <= f.last; m++ {
		g.looks = append(g.looks, m)
	}
	if k.extra > 0 {
		g.looks = append(g.looks, k.extra)
		slices.Sort(g.looks)
	}
	for _, m := range g.looks {
		seq := make([]float64, m+1)
		tail := make([]float64, m+2)
		for h := 0; h <= m; h++ {
			seq[h] = g.post.logSeq(m, h)
		}
		for h := m; h >= 0; h-- {
			tail[h] = tail[h+1] + math.Exp(lnChoose(m, h)+seq[h])
		}
		tail[0] = 1
		seqP := make([]float64, m+1)
		for h, v := range seq {
			seqP[h] = math.Exp(v)
		}
		g.seq, g.seqP, g.tail = append(g.seq, seq), append(g.seqP, seqP), append(g.tail, tail)
	}
	f.groups[k] = g
	f.order = append(f.order, g)
	return g
}

// boundary is the fewest failures at look i whose tail is ≤ tau, or
// looks[i]+1 when no count is that rare.
func (g *nullGroup) boundary(i int, tau float64) int {
	m := g.looks[i]
	for h := 1; h <= m; h++ {
		if g.tail[i][h] <= tau {
			return h
		}
	}
	return m + 1
}

// blockAt is the fewest failures at look i that block: over the boundary,
// and unlikely given the test's own base-side runs.
func (g *nullGroup) blockAt(i int, tau float64) int {
	return max(g.boundary(i, tau), g.leastAt(i))
}

// leastAt is least[i], making least on first use.
func (g *nullGroup) leastAt(i int) int {
	if g.least == nil {
		g.least = make([]int, len(g.looks))
		for j, m := range g.looks {
			g.least[j] = leastFailures(g.base, m, g.alpha)
		}
	}
	return g.least[i]
}

// The test's own evidence.
//
// The calibration borrows from the suite: a test clean in its base runs is
// judged by what the suite's other tests say such a test is. That is what
// lets one head failure of a test clean in 150 history runs block. But the
// prior is fitted, and where it rests on few tests or few runs it can miss
// the flakes that happened to pass every base run: in a project of 35 tests
// without history, a flake at 0.15 that passed its 10 base runs and failed
// 3 of 10 head runs was judged against the never-failing majority and
// blocked. So a test blocks only where its own base-side runs
// also make the head's failures unlikely: under the null hypothesis the
// patch changed nothing, so its base-side and head runs are runs of one
// test, and given how many of them failed, every split of the failures
// between the sides is equally likely. Fisher's exact test (one-sided: the
// head failed more) gives the chance of a split at least this lopsided; it
// must be at most alpha-pr. It assumes nothing about the suite: 0/150
// history runs against 1 of 5 head runs is 0.031, and blocks as before;
// 0/10 against 3/10 is 0.11, and does not. On the same draws of such
// projects' clean PRs at 10 and 20 pairs it blocked 24 of 400 where the
// calibration alone blocked 30; on suites of 2,000 tests it changed no
// verdict. The calibration's costs leave it out: it only ever holds a test
// back, so the bound stands.

// fisherTail is the one-sided p-value of Fisher's exact test: with f of
// the base side's runs failing and h of the head's m, the chance that m
// runs drawn from all of them hold h or more of the f+h failures.
func fisherTail(b Tally, m, h int) float64 {
	T, N := b.Failures+h, b.Runs+m
	lo, hi := max(h, m-(N-T)), min(m, T)
	if lo > hi {
		return 0
	}
	den := lnChoose(N, m)
	term := math.Exp(lnChoose(T, lo) + lnChoose(N-T, m-lo) - den)
	if term == 0 {
		// Too small to start the recurrence from: term by term.
		p := 0.0
		for x := lo; x <= hi; x++ {
			p += math.Exp(lnChoose(T, x) + lnChoose(N-T, m-x) - den)
		}
		return min(p, 1)
	}
	// P(x+1)/P(x) = (T−x)(m−x) / ((x+1)(N−T−m+x+1)).
	p := term
	for x := lo; x < hi; x++ {
		term *= float64(T-x) * float64(m-x) / (float64(x+1) * float64(N-T-m+x+1))
		p += term
	}
	return min(p, 1)
}

// leastFailures is the fewest of m head runs failing whose Fisher p-value
// against the base side b is at most level, or m+1.
func leastFailures(b Tally, m int, level float64) int {
	for h := 1; h <= m; h++ {
		if fisherTail(b, m, h) <= level {
			return h
		}
	}
	return m + 1
}

// crossing is the null probability that a test of the group crosses its
// boundary at some look: the number of head sequences that first reach a
// count at or over the boundary at each look, times the predictive
// probability of one such sequence.
func (g *nullGroup) crossing(tau float64) float64 {
	if v, ok := g.cache[tau]; ok {
		return v
	}
	p, _ := g.crossings(tau, false)
	g.cache[tau] = p
	return p
}

// crossings is the probability of crossing at some look under the null
// model and, when alt is set, under the alternative (altP): one pass over
// the paths serves both.
func (g *nullGroup) crossings(tau float64, alt bool) (null, power float64) {
	last := g.looks[len(g.looks)-1]
	cnt := make([]float64, last+2)
	cnt[0] = 1
	m := 0
	for i, L := range g.looks {
		for ; m < L; m++ {
			for h := m + 1; h >= 1; h-- {
				cnt[h] += cnt[h-1]
			}
		}
		for h := g.boundary(i, tau); h <= L; h++ {
			if cnt[h] > 0 {
				null += cnt[h] * g.seqP[i][h]
				if alt {
					power += cnt[h] * g.altP[i][h]
				}
				cnt[h] = 0
			}
		}
	}
	return null, power
}

// evidence is what the statistic says of one test's head runs.
type evidence struct {
	tail    float64 // P(H_n ≥ h) after all n head runs
	best    float64 // the smallest tail at any look reached
	bestAt  int     // the look where it was smallest
	blocked bool    // crossed the boundary at some look
	// held: the tail was within tau at some look, but the test's own
	// base-side runs made the count likely at every such look: at the
	// last of them, heldFails of heldAt head runs had failed, with
	// Fisher's p-value fisher. Blocked, fisher is the p-value at the first
	// look that blocked.
	held              bool
	heldAt, heldFails int
	fisher            float64
}

// judge reads a test's head runs against its group's boundaries.
func (f *family) judge(g *nullGroup, head []bool) evidence {
	head = head[:min(len(head), maxStatRuns)]
	n := len(head)
	ev := evidence{best: 1}
	fails := 0
	li := 0
	for m, passed := range head {
		if !passed {
			fails++
		}
		for li < len(g.looks) && g.looks[li] < m+1 {
			li++
		}
		if li < len(g.looks) && g.looks[li] == m+1 {
			t := g.tail[li][fails]
			if t < ev.best {
				ev.best, ev.bestAt = t, m+1
			}
			if fails == 0 || g.tau <= 0 || t > g.tau {
				continue
			}
			if fails >= g.leastAt(li) {
				if !ev.blocked {
					ev.fisher = fisherTail(g.base, m+1, fails)
				}
				ev.blocked = true
			} else if !ev.blocked {
				ev.held, ev.heldAt, ev.heldFails, ev.fisher = true, m+1, fails, fisherTail(g.base, m+1, fails)
			}
		}
	}
	ev.tail = g.tailAt(n, fails)
	if ev.bestAt == 0 {
		ev.best, ev.bestAt = ev.tail, n
	}
	ev.held = ev.held && !ev.blocked
	return ev
}

// tailAt is P(H_m ≥ h) under the group's predictive, for any m. Off the
// schedule it sums the shorter side: 1 − P(H_m < h) when h is small, unless
// that leaves too few significant digits.
func (g *nullGroup) tailAt(m, h int) float64 {
	if i, ok := slices.BinarySearch(g.looks, m); ok {
		return g.tail[i][h]
	}
	if h <= 0 {
		return 1
	}
	if h < m-h {
		below := 0.0
		for k := range h {
			below += math.Exp(lnChoose(m, k) + g.post.logSeq(m, k))
		}
		if t := 1 - below; t > 1e-6 {
			return t
		}
	}
	t := 0.0
	for k := m; k >= h; k-- {
		t += math.Exp(lnChoose(m, k) + g.post.logSeq(m, k))
	}
	return min(t, 1)
}

// toBlock says what more head runs would do to an undecided test with h
// failures in n runs: the fewest further failures that block within the
// budget (and in how many runs), or ok = false when none do.
func (f *family) toBlock(g *nullGroup, n, h int) (fails, within int, ok bool) {
	for i, L := range g.looks {
		if L <= n || L > f.budget {
			continue
		}
		need := g.blockAt(i, g.tau) - h
		if g.tau > 0 && need <= L-n {
			if !ok || need < fails {
				fails, within, ok = need, L-n, true
			}
		}
	}
	return fails, within, ok
}
