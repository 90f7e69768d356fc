package score

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/synth"
)

var experimentFull = flag.Bool("experiment.full", false, "run the detection-quality experiment at full size (8 histories of 100 commits × 2,000 tests)")

// Truth classes of the detection experiment.
const (
	clsFlaky      = "flaky"
	clsBroken     = "broken"           // from a commit on, to the end
	clsFixed      = "broken, fixed"    // 8–40 commits, then fixed
	clsRegression = "short regression" // one regression of 1–3 commits
	clsTwoRegress = "two regressions"  // two of 1–3 commits
	clsBlips      = "one or two blips" // one-commit regressions
	clsStableHit  = "stable, outage-hit"
	clsStable     = "stable"
)

// population is one generated history with its truth.
type population struct {
	spec  synth.Spec
	hit   map[string]bool    // suites hit by a partial outage
	class map[string]string  // test name -> truth class
	rate  map[string]float64 // test name -> true failure rate (flakes)
}

// experimentSuites are the suite sizes, cycled: large, small and tiny
// suites, as real repositories have.
var experimentSuites = []int{50, 7, 20, 3, 120, 12, 35, 2, 80, 9, 25, 5}

// newPopulation draws a single-run history of commits × tests: 5% flakes
// (p 0.05–0.5, uniform), broken, fixed-later, regressed and blipping tests,
// one whole-run outage, partial outages hitting 25% and 45% of the suites,
// small outages hitting 2%, and the rest stable.
func newPopulation(seed uint64, commits, tests int) population {
	rng := rand.New(rand.NewPCG(seed, 0xf1a4e))
	spec := synth.Spec{Commits: commits, RunsPerCommit: 1, Tests: tests, Seed: seed,
		Start: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), SuiteSizes: experimentSuites,
		Behaviors: map[int]synth.Behavior{}}
	pop := population{class: map[string]string{}, rate: map[string]float64{}, hit: map[string]bool{}}
	perm := rng.Perm(tests)
	next := 0
	take := func(n int) []int {
		out := perm[next:min(tests, next+n)]
		next = min(tests, next+n)
		return out
	}
	short := func() int { return 1 + rng.IntN(3) }
	for _, i := range take(tests / 20) {
		spec.Behaviors[i] = synth.Behavior{Kind: synth.Flaky, P: 0.05 + 0.45*rng.Float64()}
	}
	for _, i := range take(tests / 100) {
		spec.Behaviors[i] = synth.Behavior{Kind: synth.Broken, From: 5 + rng.IntN(commits-6)}
	}
	for _, i := range take(tests / 100) {
		from := 2 + rng.IntN(commits-45)
		spec.Behaviors[i] = synth.Behavior{Kind: synth.Regression, From: from, To: from + 8 + rng.IntN(33)}
	}
	for _, i := range take(tests / 100) {
		from := 1 + rng.IntN(commits-5)
		spec.Behaviors[i] = synth.Behavior{Kind: synth.Regression, From: from, To: from + short()}
	}
	for _, i := range take(tests / 100) {
		a := 1 + rng.IntN(commits/2-5)
		b := commits/2 + rng.IntN(commits/2-4)
		spec.Behaviors[i] = synth.Behavior{Kind: synth.Regression, From: a, To: a + short(), Blocks: [][2]int{{b, b + short()}}}
	}
	for _, i := range take(tests / 100) {
		a := rng.IntN(commits)
		b := spec.Behaviors[i]
		b.Kind, b.From, b.To = synth.Regression, a, a+1
		if rng.IntN(2) == 0 {
			c := rng.IntN(commits)
			b.Blocks = [][2]int{{c, c + 1}}
		}
		spec.Behaviors[i] = b
	}
	// Outages, on distinct runs: 1 whole, 4 at 25% of suites, 10 at 45%,
	// 6 at 2%.
	runs := rng.Perm(commits)
	spec.InfraRuns = runs[:1]
	for k, r := range runs[1:21] {
		frac := 0.02
		switch {
		case k < 4:
			frac = 0.25
		case k < 14:
			frac = 0.45
		}
		spec.Outages = append(spec.Outages, synth.Outage{Run: r, Suites: frac})
	}
	for i := range spec.Outages {
		for k := range spec.OutageSuites(i) {
			for t := 0; t < tests; t++ {
				if spec.Suite(t) == k {
					cls, _ := spec.Name(t)
					pop.hit[cls] = true
					break
				}
			}
		}
	}
	for i := 0; i < tests; i++ {
		cls, name := spec.Name(i)
		id := cls + "::" + name
		b, ok := spec.Behaviors[i]
		switch {
		case !ok:
			pop.class[id] = clsStable
		case b.Kind == synth.Flaky:
			pop.class[id], pop.rate[id] = clsFlaky, b.P
		case b.Kind == synth.Broken:
			pop.class[id] = clsBroken
		case b.Kind == synth.Regression && b.To-b.From >= 8:
			pop.class[id] = clsFixed
		case b.Kind == synth.Regression && len(b.Blocks) > 0 && b.To-b.From > 1:
			pop.class[id] = clsTwoRegress
		case b.Kind == synth.Regression && b.To-b.From == 1:
			pop.class[id] = clsBlips
		default:
			pop.class[id] = clsRegression
		}
	}
	pop.spec = spec
	return pop
}

// quality is what one experiment measures.
type quality struct {
	flakes, found    int
	bandN, bandFound [3]int // p < 0.1, 0.1–0.2, ≥ 0.2
	flagged          int
	falseBy          map[string]int
	spearman         []float64
	// plain is the Spearman of the flagged tests' plain failure rates
	// (failed attempts over attempts) against the true rate: what binomial
	// noise over the history's commits allows.
	plain []float64
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x / float64(len(xs))
	}
	return s
}

func (q *quality) recall() float64 { return float64(q.found) / float64(q.flakes) }
func (q *quality) precision() float64 {
	return float64(q.found) / float64(max(1, q.flagged))
}
func (q *quality) falseFlags() int {
	n := 0
	for _, v := range q.falseBy {
		n += v
	}
	return n
}

// measure scores a population and tallies the report against the truth.
// It reads only the seed-era fields (IsFlaky and the order of Tests), so
// the same code measures older versions of the scorer.
func (q *quality) measure(pop population, rep *Report) {
	if q.falseBy == nil {
		q.falseBy = map[string]int{}
	}
	var order, plain []float64
	for _, x := range rep.Tests {
		cls := pop.class[x.Name]
		if cls == clsStable && pop.hit[suiteOf(x.Name)] {
			cls = clsStableHit
		}
		if cls == clsFlaky {
			q.flakes++
			band := 0
			switch p := pop.rate[x.Name]; {
			case p >= 0.2:
				band = 2
			case p >= 0.1:
				band = 1
			}
			q.bandN[band]++
			if x.IsFlaky {
				q.found++
				q.bandFound[band]++
			}
		}
		if !x.IsFlaky {
			continue
		}
		q.flagged++
		order = append(order, pop.rate[x.Name]) // 0 for a false flag
		plain = append(plain, x.FailureRate)
		if cls != clsFlaky {
			q.falseBy[cls]++
		}
	}
	// The report lists flagged tests first, in rank order: rank 1 should
	// have the highest true rate.
	pos := make([]float64, len(order))
	for i := range pos {
		pos[i] = float64(len(order) - i)
	}
	q.spearman = append(q.spearman, spearman(pos, order))
	q.plain = append(q.plain, spearman(plain, order))
}

// spearman is the rank correlation of x and y, ties given their mean rank.
func spearman(x, y []float64) float64 {
	rx, ry := ranks(x), ranks(y)
	n := float64(len(x))
	var mx, my float64
	for i := range rx {
		mx += rx[i] / n
		my += ry[i] / n
	}
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j+1) / 2
		}
		i = j
	}
	return r
}

// TestDetectionQuality is the seeded Monte-Carlo experiment of the README's
// "Detection quality": single-run histories with partial outages, broken,
// fixed-later, regressed and blipping tests. The default size keeps
// go test fast; -experiment.full runs 8 histories of 100 commits × 2,000
// tests.
func TestDetectionQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte-Carlo")
	}
	seeds, commits, tests := []uint64{11, 12}, 100, 1000
	if *experimentFull {
		seeds, tests = []uint64{1, 2, 3, 4, 5, 6, 7, 8}, 2000
	}
	var q quality
	for _, seed := range seeds {
		pop := newPopulation(seed, commits, tests)
		rep := synthReport(t, pop.spec, Defaults())
		q.measure(pop, rep)
	}
	t.Logf("%d histories of %d commits × %d tests", len(seeds), commits, tests)
	t.Logf("recall %.3f (%d of %d flakes); p 0.05–0.1: %d of %d, 0.1–0.2: %d of %d, 0.2–0.5: %d of %d",
		q.recall(), q.found, q.flakes, q.bandFound[0], q.bandN[0], q.bandFound[1], q.bandN[1], q.bandFound[2], q.bandN[2])
	t.Logf("precision %.3f (%d flagged, %d false)", q.precision(), q.flagged, q.falseFlags())
	var cls []string
	for k, v := range q.falseBy {
		cls = append(cls, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(cls)
	t.Logf("false flags by class: %s", strings.Join(cls, ", "))
	var sp, pl []string
	for i, r := range q.spearman {
		sp = append(sp, fmt.Sprintf("%.3f", r))
		pl = append(pl, fmt.Sprintf("%.3f", q.plain[i]))
	}
	t.Logf("Spearman of the order against the true rate: mean %.3f (%s); of the plain failure rate: mean %.3f (%s)",
		mean(q.spearman), strings.Join(sp, " "), mean(q.plain), strings.Join(pl, " "))

	// Targets of issue 9, at every size.
	for _, cls := range []string{clsBroken, clsFixed, clsRegression, clsTwoRegress, clsBlips} {
		if n := q.falseBy[cls]; n > 0 {
			t.Errorf("%d %s tests flagged, want 0", n, cls)
		}
	}
	if p := q.precision(); p < 0.97 {
		t.Errorf("precision %.3f, want >= 0.97", p)
	}
	if r := q.recall(); r < 0.97 {
		t.Errorf("recall %.3f, want >= 0.97", r)
	}
	// The order can be no better than the plain failure rate, which
	// binomial noise over 100 commits limits to about 0.95 here.
	if m := mean(q.spearman); m < 0.92 || m < mean(q.plain)-0.01 {
		t.Errorf("Spearman of the order %.3f, want >= 0.92 and within 0.01 of the plain failure rate's %.3f", m, mean(q.plain))
	}
}
