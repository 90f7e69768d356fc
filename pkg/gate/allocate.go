package gate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Allocating the budget by power.
//
// One threshold τ for every test spends the budget where tests are many:
// 2,000 stable tests blocking on one early failure use nearly all of it,
// and a rare flake made ten times flakier gets what is left, a boundary of
// 7 failures in 20 runs. Any allocation fixed before the head runs are
// seen keeps the bound, as long as the costs sum to at most alpha-pr: a
// test's threshold may depend on its base side, which the head's null
// distribution is conditioned on. So each group of tests gets its own
// threshold, chosen to buy the most power per unit of cost. In A the
// stable tests keep 96% of the budget (97% with one threshold) and their
// early boundaries, which buy the most; the flakes' share, 0.0016 → 0.0019,
// goes where each buys power: for a rare flake, a lower boundary late in
// the runs, where a test made flakier shows.
//
// Power is measured against a stated alternative: the patch adds failures
// at a rate δ on top of the test's own, q = p + (1 − p)δ, with δ spread
// evenly over altDeltas (induced flakes, tests made flakier, and
// regressions). For each group, every threshold its tails offer gives a
// (cost, power) point; the upper concave hull of those points, from
// (0, 0), is what a group can buy, segment by segment, each at its price
// Δpower/Δcost (the likelihood ratio of the region it adds). The segments
// of all groups are bought in order of price, best first, while the summed
// cost, size × Δcost, stays within alpha-pr: the greedy solution of the
// knapsack. A group whose next segment does not fit takes the largest of
// its points that does, and stops there, so that the budget is spent.
//
// Every prefix of the purchases is itself an allocation, within its summed
// cost; so a test's PR-level p-value is the summed cost at the purchase
// that first makes its threshold reach its smallest tail, and it blocks at
// alpha-pr exactly when that is at most alpha-pr. Past alpha-pr the
// purchases go on in the same order, for the PR-level p-values of tests
// that do not block.
//
// On the PR experiment's seeded PRs (README), against one threshold: a
// rare flake made flakier (0.03 → 0.3) blocked 39.3% → 51.3% of the time,
// every other row of A and B within 0.4 points, clean PRs within the bound.
// A first version, without the regressions' 0.95 in altDeltas (and
// without taking the points short of a segment), thought a stable test's
// boundary at 5 failures in 5 runs worth little: it blocked 73% of
// regressions without history, against 90%.

// altDeltas are the alternative's added failure rates.
var altDeltas = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.95}

// point is one threshold a group can take: its cost and power per test.
type point struct{ c, p, tau float64 }

// step is a threshold a group takes as the budget is spent, and the
// family's cost once it has.
type step struct {
	tau, cum float64
}

// segment is one piece of a group's hull: from the group's point before it
// to end, at price Δpower/Δcost, for size × Δcost of the budget.
type segment struct {
	g           *nullGroup
	price, cost float64
	end         point
	order       int // the group's place, for a deterministic sort
}

// alternative fills altP: the predictive probability of one head sequence
// under the alternative, averaged over altDeltas.
func (g *nullGroup) alternative() {
	// Per added rate and posterior rate: the weight times (1 − q)^m, for
	// the look m reached, and q/(1 − q).
	type term struct{ start, q1, r, lstart, l1q, lr float64 }
	var terms []term
	w := 1 / float64(len(altDeltas))
	for _, d := range altDeltas {
		for j, lw := range g.post.logW {
			p := math.Exp(g.post.logR[j])
			q := p + (1-p)*d
			terms = append(terms, term{start: w * math.Exp(lw), q1: 1 - q, r: q / (1 - q),
				lstart: math.Log(w) + lw, l1q: math.Log1p(-q), lr: math.Log(q / (1 - q))})
		}
	}
	g.altP = make([][]float64, len(g.looks))
	m := 0
	for i, L := range g.looks {
		row := make([]float64, L+1)
		for k := range terms {
			t := &terms[k]
			for range L - m {
				t.start *= t.q1
			}
			t.lstart += float64(L-m) * t.l1q
			// q^h (1−q)^(L−h) = (1−q)^L (q/(1−q))^h, in logarithms where
			// (1−q)^L is too small for a float64 (a thousand runs).
			v := t.start
			for h := 0; h <= L; h++ {
				if t.start < 1e-250 {
					v = math.Exp(t.lstart + float64(h)*t.lr)
				}
				row[h] += v
				v *= t.r
			}
		}
		m = L
		g.altP[i] = row
	}
}

// hull fills the group's points, one per tail value from floor to limit
// (each distinct tail gives other boundaries), and returns their upper
// concave hull from (0, 0) as segments. Tails below floor cost so little
// that the first point above it takes them all in.
func (g *nullGroup) hull(floor, limit float64, order int) []segment {
	var taus []float64
	for i := range g.looks {
		for _, t := range g.tail[i][1:] {
			if t > 0 && t <= limit {
				taus = append(taus, t)
			}
		}
	}
	slices.Sort(taus)
	taus = slices.Compact(taus)
	for len(taus) > 1 && taus[1] < floor {
		taus = taus[1:]
	}
	if len(taus) == 0 {
		return nil
	}
	g.alternative()
	for _, t := range taus {
		c, p := g.crossings(t, true)
		g.cache[t] = c
		g.points = append(g.points, point{c: c, p: p, tau: t})
	}
	h := []point{{}}
	for _, q := range g.points {
		for len(h) >= 2 {
			a, b := h[len(h)-2], h[len(h)-1]
			if (b.p-a.p)*(q.c-a.c) > (q.p-a.p)*(b.c-a.c) {
				break
			}
			h = h[:len(h)-1] // b is on or under the chord from a to q
		}
		h = append(h, q)
	}
	g.vertices = h[1:]
	return g.segments(h, order)
}

// segments are the pieces of the path through pts, from its first point,
// each priced no higher than the one before, so that a sort by price keeps
// them in order.
func (g *nullGroup) segments(pts []point, order int) []segment {
	var segs []segment
	price := math.Inf(1)
	for k := 1; k < len(pts); k++ {
		dc, dp := pts[k].c-pts[k-1].c, pts[k].p-pts[k-1].p
		if dc > 0 {
			price = min(price, dp/dc)
		}
		segs = append(segs, segment{g: g, price: price, cost: float64(g.size) * dc, end: pts[k], order: order})
	}
	return segs
}

// byPrice sorts segments best first.
func byPrice(segs []segment) {
	slices.SortStableFunc(segs, func(a, b segment) int {
		if c := cmp.Compare(b.price, a.price); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
}

// calibrate gives every group its threshold. The hulls' segments are bought
// by price, best first, while the summed cost stays within alpha. A group
// whose next segment does not fit takes the largest of its points short of
// the segment's end that does, and buys nothing more. The rest of the
// segments, bought on past alpha in the same order, give the PR-level
// p-values of the tests the allocation does not block.
func (f *family) calibrate() {
	var segs []segment
	for k, g := range f.order {
		// A threshold τ costs at most τ per look, so tails below floor
		// together cost at most a millionth of alpha.
		floor := 1e-6 * f.alpha / float64(len(g.looks)*f.members)
		segs = append(segs, g.hull(floor, min(1, undecidedFactor*f.alpha), k)...)
	}
	byPrice(segs)
	spent := 0.0
	at := map[*nullGroup]point{} // each group's point so far
	frozen := map[*nullGroup]bool{}
	take := func(g *nullGroup, p point, cost float64) {
		spent += cost
		at[g], g.tau = p, p.tau
		g.steps = append(g.steps, step{tau: p.tau, cum: spent})
		f.tau = max(f.tau, p.tau)
	}
	for _, s := range segs {
		g := s.g
		switch {
		case frozen[g]:
		case spent+s.cost <= f.alpha:
			take(g, s.end, s.cost)
		default:
			frozen[g] = true
			for _, p := range g.points {
				cost := float64(g.size) * (p.c - at[g].c)
				if p.tau > g.tau && p.tau < s.end.tau && spent+cost <= f.alpha {
					take(g, p, cost)
				}
			}
		}
	}
	f.spent = spent
	// Past alpha: each frozen group from its point on, along its hull.
	var rest []segment
	for k, g := range f.order {
		if !frozen[g] {
			continue
		}
		pts := []point{at[g]}
		for _, p := range g.vertices {
			if p.tau > g.tau {
				pts = append(pts, p)
			}
		}
		rest = append(rest, g.segments(pts, k)...)
	}
	byPrice(rest)
	cum := spent
	for _, s := range rest {
		cum += s.cost
		s.g.steps = append(s.g.steps, step{tau: s.end.tau, cum: cum})
	}
}

// prLevel is the PR-level p-value of a test of group g whose smallest tail
// was best: the family's cost when the allocation first makes the group's
// threshold reach best, over the margin; 1 when it never does. The
// allocation blocks the test exactly when it is at most alpha-pr.
func (f *family) prLevel(g *nullGroup, best float64) float64 {
	for _, s := range g.steps {
		if s.tau >= best {
			return min(1, s.cum/f.margin)
		}
	}
	return 1
}

// withMargin writes a PR-level p-value, with the cost it comes from when
// the margin is less than 1.
func (f *family) withMargin(p float64) string {
	m := f.margin
	switch {
	case m >= 1 || p >= 1:
		return fmt.Sprintf("%.2g", p)
	case f.fitted < 1:
		return fmt.Sprintf("%.2g (the chance of any block, %.2g, over a margin of %.2g: for the error of the fitted prior, at %d head runs of a %d-run schedule, and the %s share of alpha-pr)", p, p*m, m, f.read, f.last, f.rest())
	}
	return fmt.Sprintf("%.2g (the chance of any block, %.2g, over a margin of %.2g: the rest of alpha-pr is the %s)", p, p*m, m, f.rest())
}

// rest names the tests beside the family's that take a share of alpha-pr.
func (f *family) rest() string {
	if f.ledger {
		return "outage checks' and the ledger's"
	}
	return "outage checks'"
}
