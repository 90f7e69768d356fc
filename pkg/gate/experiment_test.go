package gate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The accuracy experiment: synthetic PRs, one test each, run through the gate
// the way the `matrix` driver would run them.
//
// Assumptions, stated:
//   - K = 5 interleaved base/head pairs run first, always (article B: K for
//     detection). Runs are independent Bernoulli draws with the scenario's
//     failure rate on each side.
//   - About 150 base-branch history runs per existing test (exactly 150),
//     drawn with the base failure rate: the test's rate is steady over the
//     window. New tests have no history; the "no history" rows have none.
//   - Sequential reruns: while the gate reports the test pending (its SPRT
//     says CONTINUE with budget left), the driver runs one more base/head
//     pair and asks again, up to 20 head runs (Options.MaxRuns). The SPRT
//     takes its first look after the K = 5 head runs (Options.FirstLook = 5)
//     and then one per run. p0 is re-estimated from all base runs each time.
//   - A test with no head failure is never rerun: the driver only waits for
//     tests failing on either side, and they need no verdict.
//   - The PR declares nothing and carries no labels, unless the row says
//     "declared". No ledger, no diff.
//   - "Detectable" (for must-block rows): the head showed at least one
//     failure in the runs it got; a removal is always detectable. A
//     patch-induced flake that never failed on head cannot be told from a
//     clean patch by any gate that reads these runs.
//   - The seed's plain head/base matrix reads the same first K = 5 pairs with
//     no history and no reruns, and blocks clean→flaky, clean→broken,
//     flaky→broken, new flaky or failing tests and removals; it passes
//     flaky→flaky and ignores a red base.
//
// Run it with:
//
//	go test -run TestAccuracyExperiment -v ./pkg/gate/
//	go test -run '^$' -bench BenchmarkAccuracyExperiment -benchtime 1x ./pkg/gate/

type truth int

const (
	truthPass     truth = iota // the patch is innocent: blocking is a false block
	truthBlock                 // the patch broke it: must block
	truthInvalid               // red base: must be invalid
	truthPreFlake              // a pre-existing flake: innocent, and the hard case
)

type scenario struct {
	name  string
	truth truth
	// draw returns the failure rates of the case: base < 0 means the test does
	// not exist on base (new), head < 0 that it is gone from head (removed).
	draw     func(r *rand.Rand) (base, head float64)
	history  int
	declared bool
}

func uniform(lo, hi float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() }
}

func same(f func(r *rand.Rand) float64) func(r *rand.Rand) (float64, float64) {
	return func(r *rand.Rand) (float64, float64) { p := f(r); return p, p }
}

func pair(b, h func(r *rand.Rand) float64) func(r *rand.Rand) (float64, float64) {
	return func(r *rand.Rand) (float64, float64) { return b(r), h(r) }
}

var scenarios = []scenario{
	{name: "stable test", truth: truthPass, draw: same(uniform(0, 0)), history: 150},
	{name: "pre-existing flake p 0.1-0.5", truth: truthPreFlake, draw: same(uniform(0.1, 0.5)), history: 150},
	{name: "rare pre-existing flake p 0.03", truth: truthPreFlake, draw: same(uniform(0.03, 0.03)), history: 150},
	{name: "patch-induced flake 0 -> 0.2-0.6", truth: truthBlock, draw: pair(uniform(0, 0), uniform(0.2, 0.6)), history: 150},
	{name: "regression 0 -> 0.95-1", truth: truthBlock, draw: pair(uniform(0, 0), uniform(0.95, 1)), history: 150},
	{name: "flaky 0.1-0.5 -> 0.95-1", truth: truthBlock, draw: pair(uniform(0.1, 0.5), uniform(0.95, 1)), history: 150},
	{name: "red base 1 -> 1", truth: truthInvalid, draw: same(uniform(1, 1)), history: 150},
	{name: "red base 1 -> 0.3-0.7", truth: truthInvalid, draw: pair(uniform(1, 1), uniform(0.3, 0.7)), history: 150},
	{name: "fixed 1 -> 0", truth: truthPass, draw: pair(uniform(1, 1), uniform(0, 0)), history: 150},
	{name: "removed, undeclared", truth: truthBlock, draw: pair(uniform(0, 0.3), uniform(-1, -1)), history: 150},
	{name: "removed, declared", truth: truthPass, draw: pair(uniform(0, 0.3), uniform(-1, -1)), history: 150, declared: true},
	{name: "new test, fine", truth: truthPass, draw: pair(uniform(-1, -1), uniform(0, 0))},
	{name: "new test, flaky 0.2-0.6", truth: truthBlock, draw: pair(uniform(-1, -1), uniform(0.2, 0.6))},
	{name: "new test, failing", truth: truthBlock, draw: pair(uniform(-1, -1), uniform(1, 1))},
	// Without history the gate rests on the K base runs alone: shown, not targeted.
	{name: "no history: flake p 0.1-0.5", truth: truthPreFlake, draw: same(uniform(0.1, 0.5))},
	{name: "no history: rare flake p 0.03", truth: truthPreFlake, draw: same(uniform(0.03, 0.03))},
	{name: "no history: patch flake 0.2-0.6", truth: truthBlock, draw: pair(uniform(0, 0), uniform(0.2, 0.6))},
}

const (
	expK       = 5
	expMaxRuns = 20
)

type row struct {
	name                      string
	truth                     truth
	cases, detectable         int
	block, blockDetectable    int // test decision block
	pass, inconclusive        int
	invalid                   int
	prBlock                   int // PR verdict block under the default policy (on-inconclusive=fail)
	plainBlock                int
	headRuns                  int
	failedOnHead, blockFailed int // cases where head failed, and those blocked (pre-existing flakes)
	invalidFailed             int // red base: invalid among the cases where head failed
	blockBaseRed              int // blocked cases whose K base runs all failed (red-test-removed)
}

func bern(r *rand.Rand, p float64, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = r.Float64() >= p
	}
	return out
}

// plainMatrix is the seed's head/base matrix on the first K pairs.
func plainMatrix(base Tally, head []bool) bool {
	switch BucketOf(Classify(base), Classify(TallyOf(head))) {
	case PatchInducedFlake, Regression, FlakyToBroken, NewFlaky, NewFailing:
		return true
	case Removed:
		return Classify(base) != Broken
	}
	return false
}

func runCase(sc scenario, r *rand.Rand) (TestResult, Result, bool) {
	pBase, pHead := sc.draw(r)
	ti := TestInput{Name: "pkg::test_case"}
	var baseRuns []bool
	if pBase >= 0 {
		baseRuns = bern(r, pBase, expK)
		if sc.history > 0 {
			ti.History = TallyOf(bern(r, pBase, sc.history))
		}
	}
	if pHead >= 0 {
		ti.Head = bern(r, pHead, expK)
	}
	ti.Base = TallyOf(baseRuns)
	plain := plainMatrix(ti.Base, ti.Head)
	in := Input{Tests: []TestInput{ti}}
	if sc.declared {
		in.PRBody = "Test-Changes: remove the obsolete test"
	}
	opt := Options{MaxRuns: expMaxRuns, FirstLook: expK}
	for {
		res, err := Evaluate(in, opt)
		if err != nil {
			panic(err) // test helper: a bad synthetic input is a bug in the experiment
		}
		if len(res.Pending()) == 0 || len(in.Tests[0].Head) >= expMaxRuns {
			return res.Tests[0], res, plain
		}
		t := &in.Tests[0]
		if pBase >= 0 {
			baseRuns = append(baseRuns, bern(r, pBase, 1)...)
			t.Base = TallyOf(baseRuns)
		}
		t.Head = append(t.Head, bern(r, pHead, 1)...)
	}
}

func runExperiment(n int, seed uint64) []row {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	rows := make([]row, 0, len(scenarios))
	for _, sc := range scenarios {
		rw := row{name: sc.name, truth: sc.truth}
		for range n {
			tr, res, plain := runCase(sc, r)
			rw.cases++
			rw.headRuns += tr.Head.Runs
			detectable := tr.Head.Failures > 0 || tr.Bucket == Removed
			if detectable {
				rw.detectable++
			}
			switch tr.Decision {
			case Block:
				rw.block++
				if detectable {
					rw.blockDetectable++
				}
			case Pass:
				rw.pass++
			case Inconclusive:
				rw.inconclusive++
			case Invalid:
				rw.invalid++
			}
			if res.Verdict == VerdictBlock {
				rw.prBlock++
			}
			if plain {
				rw.plainBlock++
			}
			if tr.Head.Failures > 0 {
				rw.failedOnHead++
				if res.Verdict == VerdictBlock {
					rw.blockFailed++
				}
				if tr.Decision == Invalid {
					rw.invalidFailed++
				}
			}
			if tr.Decision == Block && tr.Base.Class == Broken {
				rw.blockBaseRed++
			}
		}
		rows = append(rows, rw)
	}
	return rows
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func formatTable(rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-34s %-8s %6s %7s %8s %8s %7s %7s %7s %8s %8s %6s\n",
		"scenario", "truth", "cases", "detect", "block", "blk|det", "pass", "incon", "invalid", "PR block", "plain", "runs")
	names := map[truth]string{truthPass: "pass", truthBlock: "BLOCK", truthInvalid: "invalid", truthPreFlake: "preflake"}
	for _, r := range rows {
		fmt.Fprintf(&b, "%-34s %-8s %6d %7s %8s %8s %7s %7s %7s %8s %8s %6.1f\n",
			r.name, names[r.truth], r.cases, pct(r.detectable, r.cases), pct(r.block, r.cases),
			pct(r.blockDetectable, r.detectable), pct(r.pass, r.cases), pct(r.inconclusive, r.cases),
			pct(r.invalid, r.cases), pct(r.prBlock, r.cases), pct(r.plainBlock, r.cases),
			float64(r.headRuns)/float64(r.cases))
	}
	s := summarize(rows)
	fmt.Fprintf(&b, "\nmust-block (with history or new): blocked %d of %d detectable = %s (test decision); %d of %d undetectable cases never failed on head\n",
		s.mustBlocked, s.mustDetectable, pct(s.mustBlocked, s.mustDetectable), s.mustCases-s.mustDetectable, s.mustCases)
	fmt.Fprintf(&b, "pre-existing flakes with history: PR blocked %d of %d = %s (policy fail: inconclusive counts); of those that failed on head: %d of %d = %s\n",
		s.preBlocked, s.preCases, pct(s.preBlocked, s.preCases), s.preBlockedFailed, s.preFailed, pct(s.preBlockedFailed, s.preFailed))
	fmt.Fprintf(&b, "seed's plain matrix on the same pre-existing flakes: blocked %d of %d = %s\n",
		s.prePlain, s.preCases, pct(s.prePlain, s.preCases))
	fmt.Fprintf(&b, "red base, head still failing: invalid %d of %d = %s; %d partly fixed heads passed every run: \"patch fixes it\" (the table's broken -> clean)\n",
		s.redInvalid, s.redCases, pct(s.redInvalid, s.redCases), s.redHeadClean)
	for _, r := range rows {
		if r.truth == truthPass && r.blockBaseRed > 0 {
			fmt.Fprintf(&b, "%s: %d blocked because the test failed all %d base runs: a test red on base must still exist (red-test-removed)\n",
				r.name, r.blockBaseRed, expK)
		}
	}
	return b.String()
}

type summary struct {
	mustCases, mustDetectable, mustBlocked int
	preCases, preBlocked, preFailed        int
	preBlockedFailed, prePlain             int
	redCases, redInvalid, redHeadClean     int
}

// summarize aggregates the targeted rows: those with history (or new tests,
// which have none by nature).
func summarize(rows []row) summary {
	var s summary
	for _, r := range rows {
		if strings.HasPrefix(r.name, "no history") {
			continue
		}
		switch r.truth {
		case truthBlock:
			s.mustCases += r.cases
			s.mustDetectable += r.detectable
			s.mustBlocked += r.blockDetectable
		case truthPreFlake:
			s.preCases += r.cases
			s.preBlocked += r.prBlock
			s.preFailed += r.failedOnHead
			s.preBlockedFailed += r.blockFailed
			s.prePlain += r.plainBlock
		case truthInvalid:
			s.redCases += r.failedOnHead
			s.redInvalid += r.invalidFailed
			s.redHeadClean += r.cases - r.failedOnHead
		}
	}
	return s
}

const expSeed = 20240611

// expCases is the number of cases per row; fewer under the race detector,
// which slows the experiment tenfold (see race_test.go).
var expCases = map[bool]int{false: 10000, true: 1000}[raceEnabled]

func TestAccuracyExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("accuracy experiment skipped under -short")
	}
	rows := runExperiment(expCases, expSeed)
	t.Logf("accuracy experiment, %d cases per row, seed %d:\n%s", expCases, expSeed, formatTable(rows))

	s := summarize(rows)
	if got := float64(s.mustBlocked) / float64(s.mustDetectable); got < 0.98 {
		t.Errorf("must-block: blocked %.4f of detectable cases, want >= 0.98", got)
	}
	if got := float64(s.preBlocked) / float64(s.preCases); got > 0.05 {
		t.Errorf("pre-existing flakes: PR blocked in %.4f of cases, want <= 0.05", got)
	}
	if s.redInvalid != s.redCases {
		t.Errorf("red base with failing head: %d of %d invalid, want all", s.redInvalid, s.redCases)
	}
	for _, r := range rows {
		switch {
		case r.truth == truthPass && r.block-r.blockBaseRed+r.inconclusive > 0:
			t.Errorf("%s: %d blocked (%d red on base) and %d inconclusive of %d innocent cases, want none but red-on-base removals",
				r.name, r.block, r.blockBaseRed, r.inconclusive, r.cases)
		case r.truth == truthPreFlake && !strings.HasPrefix(r.name, "no history") && r.prBlock*20 > r.cases:
			t.Errorf("%s: PR blocked %s, want <= 5%%", r.name, pct(r.prBlock, r.cases))
		case r.truth == truthBlock && r.blockDetectable*50 < r.detectable*49:
			t.Errorf("%s: blocked %s of detectable, want >= 98%%", r.name, pct(r.blockDetectable, r.detectable))
		}
	}
	// The comparison the design promises: the plain matrix blocks far more
	// pre-existing flakes, because five base runs are often clean.
	if s.prePlain <= 2*s.preBlocked {
		t.Errorf("plain matrix blocked %d pre-existing flakes, the gate %d: expected the gate to do much better", s.prePlain, s.preBlocked)
	}
}

// BenchmarkAccuracyExperiment prints the experiment's table; run with
// -benchtime 1x.
func BenchmarkAccuracyExperiment(b *testing.B) {
	var rows []row
	for b.Loop() {
		rows = runExperiment(expCases, expSeed)
	}
	b.Logf("accuracy experiment, %d cases per row, seed %d:\n%s", expCases, expSeed, formatTable(rows))
}
