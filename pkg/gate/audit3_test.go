package gate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/history"
)

// The edge cases of audit3-gate (findings 1, 2, 5, 6 and 11), built as the
// audit built them: a suite of 100 tests, pkg.mod::t000 … t099, 5 base and
// 5 head runs, and 50 clean base-branch history runs where it says so.

// suite100 is one run of the audit's suite; fails says which tests fail,
// extra adds test cases.
func suite100(fails func(i int) bool, extra ...string) string {
	var b strings.Builder
	b.WriteString(`<testsuite name="s">`)
	for i := range 100 {
		if fails(i) {
			fmt.Fprintf(&b, `<testcase classname="pkg.mod" name="t%03d"><failure message="boom">boom</failure></testcase>`, i)
		} else {
			fmt.Fprintf(&b, `<testcase classname="pkg.mod" name="t%03d"/>`, i)
		}
	}
	b.WriteString(strings.Join(extra, ""))
	b.WriteString(`</testsuite>`)
	return b.String()
}

var (
	none = func(int) bool { return false }
	all  = func(int) bool { return true }
	t000 = func(i int) bool { return i == 0 }
)

// runs100 is n runs of the audit's suite, run r (1-based) failing the
// tests fails(r) says.
func runs100(n int, fails func(run int) func(int) bool) []string {
	docs := make([]string, n)
	for r := range n {
		docs[r] = suite100(fails(r + 1))
	}
	return docs
}

func every(f func(int) bool) func(int) func(int) bool { return func(int) func(int) bool { return f } }

// auditCase runs the gate on base, head and history documents as the CLI
// does: Join, the unread files, Evaluate.
func auditCase(t *testing.T, base, head, hist []string, opt Options) Result {
	t.Helper()
	b, h := load(t, "base", base...), load(t, "head", head...)
	var hh = load(t, "hist", hist...)
	if len(hist) == 0 {
		hh = nil
	}
	res, err := Evaluate(Input{Tests: Join(b, h, hh), Unread: unread(b, h)}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func testNamed(t *testing.T, res Result, name string) TestResult {
	t.Helper()
	for _, tr := range res.Tests {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no test %s", name)
	return TestResult{}
}

func reasonsContain(res Result, s string) bool {
	return strings.Contains(strings.Join(res.Reasons, "\n"), s)
}

// TestRedBaseIsNeverAPass: audit3-gate, finding 1. DESIGN.md: "Red base:
// when the base is broken for a test, attribution is undefined. Report
// that; never call it the patch's fault or a pass."
func TestRedBaseIsNeverAPass(t *testing.T) {
	hist := runs100(50, every(none))

	t.Run("baseoutage_regress", func(t *testing.T) {
		// Every test fails all 5 base runs (the base job's database was
		// down); history is clean; t000 is a real regression on head. The
		// base runs are outages, left out: t000 is judged against its
		// history and blocks.
		for _, policy := range []Policy{PolicyNeutral, PolicyFail} {
			res := auditCase(t, runs100(5, every(all)), runs100(5, every(t000)), hist, Options{OnInconclusive: policy})
			if res.Verdict != VerdictBlock {
				t.Fatalf("%s: verdict %s, want block; reasons:\n%s", policy, res.Verdict, strings.Join(res.Reasons, "\n"))
			}
			if tr := testNamed(t, res, "pkg.mod::t000"); tr.Decision != Block || tr.Bucket != Regression {
				t.Errorf("t000: %s %s, want a blocking regression: %s", tr.Bucket, tr.Decision, tr.Reason)
			}
			if n := len(res.Outages); n != 5 || !reasonsContain(res, "every base run failed more than 50% of the tests") {
				t.Errorf("%d outages, want the 5 base runs, said; reasons:\n%s", n, strings.Join(res.Reasons, "\n"))
			}
		}
	})

	t.Run("redall", func(t *testing.T) {
		// Every test red on both sides, no history: nothing can be
		// attributed, and nothing is a pass.
		docs := runs100(5, every(all))
		for policy, want := range map[Policy]Verdict{PolicyNeutral: VerdictInconclusive, PolicyFail: VerdictBlock, PolicyPass: VerdictPass} {
			res := auditCase(t, docs, docs, nil, Options{OnInconclusive: policy})
			if res.Verdict != want || !strings.HasPrefix(res.Reasons[0], "every base run and every head run failed") {
				t.Errorf("%s: verdict %s, want %s; reasons:\n%s", policy, res.Verdict, want, strings.Join(res.Reasons, "\n"))
			}
			if reasonsContain(res, "no test blocks") {
				t.Errorf("%s: says no test blocks", policy)
			}
		}
	})

	t.Run("red in every base run, clean history", func(t *testing.T) {
		// Three tests red in all 5 base runs, too few for an outage run, but
		// clean in 50 history runs: the base runs are the problem. Red on
		// head too, nothing else fails.
		red := func(i int) bool { return i < 3 }
		for policy, want := range map[Policy]Verdict{PolicyNeutral: VerdictInconclusive, PolicyFail: VerdictBlock} {
			res := auditCase(t, runs100(5, every(red)), runs100(5, every(red)), hist, Options{OnInconclusive: policy})
			if res.Verdict != want || !strings.HasPrefix(res.Reasons[0], "3 test(s) red on base") {
				t.Errorf("%s: verdict %s, want %s; reasons:\n%s", policy, res.Verdict, want, strings.Join(res.Reasons, "\n"))
			}
			tr := testNamed(t, res, "pkg.mod::t000")
			if tr.Decision != Invalid || !strings.Contains(tr.Reason, "the base runs look like an outage") {
				t.Errorf("t000: %s: %s", tr.Decision, tr.Reason)
			}
		}
	})

	t.Run("compared counts compared tests", func(t *testing.T) {
		// t000 red on base and fixed on head: 99 tests compared.
		res := auditCase(t, runs100(5, every(t000)), runs100(5, every(none)), nil, Options{})
		if res.Verdict != VerdictPass || res.Reasons[0] != "no test blocks: 99 test(s) compared, no property or ledger violation" {
			t.Errorf("verdict %s; reasons:\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
		}
	})
}

// TestBaseOutageRunIsLeftOut: audit3-gate, finding 2. One base run in which
// every test failed must not turn a patch-induced flake into a
// pre-existing one, nor give every test base failures.
func TestBaseOutageRunIsLeftOut(t *testing.T) {
	hist := runs100(50, every(none))
	head := runs100(5, func(r int) func(int) bool {
		if r == 1 || r == 4 {
			return t000
		}
		return none
	})
	base := runs100(5, func(r int) func(int) bool {
		if r == 3 {
			return all
		}
		return none
	})
	res := auditCase(t, base, head, hist, Options{})
	if res.Verdict != VerdictBlock {
		t.Fatalf("verdict %s, want block; reasons:\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
	}
	tr := testNamed(t, res, "pkg.mod::t000")
	if tr.Bucket != PatchInducedFlake || tr.Decision != Block || tr.Base.Runs != 4 || tr.Base.Failures != 0 {
		t.Errorf("t000: %s %s, base %+v: %s", tr.Bucket, tr.Decision, tr.Base, tr.Reason)
	}
	for _, tr := range res.Tests {
		if tr.Base.Failures > 0 || tr.SPRT != nil {
			t.Errorf("%s: base %+v, SPRT %v: the outage run counted", tr.Name, tr.Base, tr.SPRT != nil)
		}
	}
	want := Outage{Side: "base", Run: 3, Runs: 5, ID: "3", Tests: 100, Failed: 100, Threshold: 0.5}
	if len(res.Outages) != 1 || res.Outages[0] != want {
		t.Errorf("outages %+v, want %+v", res.Outages, want)
	}
	if !reasonsContain(res, "left out of the base tallies as infrastructure failures (runs in which more than 50% of the tests failed): base run 3 of 5 (3) failed 100 of 100 tests") {
		t.Errorf("the outage is not said; reasons:\n%s", strings.Join(res.Reasons, "\n"))
	}
}

// TestHeadOutageRun: audit3-gate, finding 5. One head run in which every
// test failed is an outage or a crash the patch causes: left out, and the
// verdict is inconclusive, not 100 patch-induced flakes. Every head run so
// is the patch breaking the suite: one reason that blocks.
func TestHeadOutageRun(t *testing.T) {
	hist := runs100(50, every(none))
	base := runs100(5, every(none))

	t.Run("one run", func(t *testing.T) {
		head := runs100(5, func(r int) func(int) bool {
			if r == 5 {
				return all
			}
			return none
		})
		for policy, want := range map[Policy]Verdict{PolicyNeutral: VerdictInconclusive, PolicyFail: VerdictBlock} {
			res := auditCase(t, base, head, hist, Options{OnInconclusive: policy, AlphaPR: 0.5})
			const say = "head run 5 of 5 (5) failed 100 of 100 tests: an infrastructure failure or a crash the patch causes; re-run to tell"
			if res.Verdict != want || !strings.HasPrefix(res.Reasons[0], say) {
				t.Errorf("%s: verdict %s, want %s opening %q; reasons:\n%s", policy, res.Verdict, want, say, strings.Join(res.Reasons, "\n"))
			}
			if n := len(res.named(Block)); n > 0 {
				t.Errorf("%s: %d tests block", policy, n)
			}
			if tr := testNamed(t, res, "pkg.mod::t042"); tr.Head.Runs != 4 || tr.Head.Failures != 0 || tr.Decision != Pass {
				t.Errorf("t042: head %+v, %s", tr.Head, tr.Decision)
			}
		}
	})

	// Some head runs crash, far more than base runs beside them: the
	// patch's doing (it was inconclusive, exit 0 under the default policy,
	// with 10 of 20 head runs crashing against none of 20 base runs).
	t.Run("some runs, far more than base", func(t *testing.T) {
		crashAt := func(runs ...int) func(int) func(int) bool {
			return func(r int) func(int) bool {
				if slices.Contains(runs, r) {
					return all
				}
				return none
			}
		}
		for _, tc := range []struct {
			name         string
			base, head   []int
			block, more  bool
			baseN, headN int
		}{
			{"10 of 20 against 0 of 20", nil, []int{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, true, false, 20, 20},
			{"2 of 20 against 1 of 20", []int{3}, []int{4, 11}, false, false, 20, 20},
			{"2 of 5 against 0 of 5", nil, []int{2, 4}, false, true, 5, 5},
		} {
			res := auditCase(t, runs100(tc.baseN, crashAt(tc.base...)), runs100(tc.headN, crashAt(tc.head...)), hist, Options{MaxRuns: 20})
			c := res.Crashes
			if c == nil || c.Block != tc.block || c.More != tc.more || c.HeadOutages != len(tc.head) || c.BaseOutages != len(tc.base) || c.BaseRuns != tc.baseN {
				t.Errorf("%s: crashes %+v, want block %v, more %v", tc.name, c, tc.block, tc.more)
				continue
			}
			const say = "the patch crashes the suite now and then"
			if tc.block {
				if res.Verdict != VerdictBlock || !strings.HasPrefix(res.Reasons[0], say) {
					t.Errorf("%s: verdict %s; reasons:\n%s", tc.name, res.Verdict, strings.Join(res.Reasons, "\n"))
				}
				if b := res.Blocking(); len(b) != 1 || !strings.HasPrefix(b[0], say) {
					t.Errorf("%s: blocking %q", tc.name, b)
				}
				continue
			}
			if res.Verdict != VerdictInconclusive || !strings.Contains(strings.Join(res.Reasons, "\n"), "too even a split to call the patch's") {
				t.Errorf("%s: verdict %s; reasons:\n%s", tc.name, res.Verdict, strings.Join(res.Reasons, "\n"))
			}
		}
	})

	t.Run("every run", func(t *testing.T) {
		res := auditCase(t, base, runs100(5, every(all)), hist, Options{})
		if res.Verdict != VerdictBlock || !strings.HasPrefix(res.Reasons[0], "the patch breaks the suite: every head run failed more than 50% of the tests") {
			t.Fatalf("verdict %s; reasons:\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
		}
		if len(res.Reasons) > 5 {
			t.Errorf("%d reasons, want one for the suite and a few notes:\n%s", len(res.Reasons), strings.Join(res.Reasons, "\n"))
		}
		if b := res.Blocking(); len(b) != 1 || !strings.HasPrefix(b[0], "the patch breaks the suite") {
			t.Errorf("blocking %q", b)
		}
		if len(res.Properties) > 0 {
			t.Errorf("properties %v: the tests still ran on head", res.Properties)
		}
	})
}

// TestUnstableIDsAreNotRemovals: audit3-gate, finding 6. Parametrized ids
// that change every run (test_prop[seed=<random>]) are each in one base
// run and no head run: no evidence of removal.
func TestUnstableIDsAreNotRemovals(t *testing.T) {
	seed := 1000
	props := func() []string {
		var out []string
		for range 10 {
			seed++
			out = append(out, fmt.Sprintf(`<testcase classname="pkg.mod" name="test_prop[seed=%d]"/>`, seed))
		}
		return out
	}
	var base, head []string
	for range 5 {
		base = append(base, suite100(none, props()...))
	}
	for range 5 {
		head = append(head, suite100(none, props()...))
	}
	res := auditCase(t, base, head, nil, Options{})
	if res.Verdict == VerdictBlock {
		t.Fatalf("verdict block; reasons:\n%s", strings.Join(res.Reasons, "\n"))
	}
	if tr := testNamed(t, res, "pkg.mod::test_prop[seed=1001]"); tr.Bucket != Unstable || tr.Decision != Pass {
		t.Errorf("test_prop[seed=1001]: %s %s: %s", tr.Bucket, tr.Decision, tr.Reason)
	}
	if !reasonsContain(res, "50 test id(s) collected in only some base runs and in no head run were not compared") {
		t.Errorf("not said once; reasons:\n%s", strings.Join(res.Reasons, "\n"))
	}

	// A test in every base run and in no head run is still removed.
	var gone []string
	for range 5 {
		gone = append(gone, suite100(func(i int) bool { return false }, `<testcase classname="pkg.mod" name="gone"/>`))
	}
	res = auditCase(t, gone, runs100(5, every(none)), nil, Options{})
	if tr := testNamed(t, res, "pkg.mod::gone"); tr.Bucket != Removed || tr.Decision != Block || res.Verdict != VerdictBlock {
		t.Errorf("gone: %s %s, verdict %s", tr.Bucket, tr.Decision, res.Verdict)
	}
}

// TestMaxRunsBound: audit3-gate, finding 11. The calibration costs
// (distinct tallies) × max-runs²: 1000 took 2.5 minutes and 7.6 GB on 600
// tests; 100 takes 2 s and 150 MB.
func TestMaxRunsBound(t *testing.T) {
	for _, n := range []int{1, 20, 100} {
		if err := (Options{MaxRuns: n}).Validate(); err != nil {
			t.Errorf("max-runs %d: %v", n, err)
		}
	}
	for _, n := range []int{101, 300, 1000} {
		err := (Options{MaxRuns: n}).Validate()
		if err == nil || !strings.Contains(err.Error(), "an integer up to 100") {
			t.Errorf("max-runs %d: %v, want refused", n, err)
		}
	}
}

// TestRedBaseOfAFlake: a flake that failed every base run is red on base
// (never blocked, never a pass for the test), but when its history makes
// that a flake's chance the PR's verdict does not wait on it; a test whose
// history rarely failed leaves the PR inconclusive, as any red base.
func TestRedBaseOfAFlake(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history Tally
		want    Verdict
	}{
		{"history 70 of 150", Tally{150, 70}, VerdictPass},
		{"history 3 of 150", Tally{150, 3}, VerdictInconclusive},
		{"history clean", Tally{150, 0}, VerdictInconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Tests: []TestInput{
				{Name: "pkg::flaky", Base: Tally{5, 5}, History: tc.history, Head: []bool{false, true, false, true, true}},
				{Name: "pkg::stable", Base: Tally{5, 0}, History: Tally{150, 0}, Head: []bool{true, true, true, true, true}},
			}}
			res, err := Evaluate(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want || res.Tests[0].Decision != Invalid {
				t.Errorf("verdict %s, the flake's decision %s; want %s and invalid\n%s", res.Verdict, res.Tests[0].Decision, tc.want, strings.Join(res.Reasons, "\n"))
			}
		})
	}
}

// TestNewSkipOnHead: a test that passed on base and was skipped in every
// head run is a new skip, not a removal: it blocks, and a Test-Changes
// declaration, which would let a declared removal pass, does not waive it,
// as it does not waive a new skip marker. A test absent from head is still
// a removal the declaration covers.
func TestNewSkipOnHead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base      Tally
		skipped   int
		want      Decision
		wantWords string
		violation string
	}{
		{"skipped in every head run", Tally{5, 0}, 5, Block, "newly skipped", ""},
		{"gone from head", Tally{5, 0}, 0, Pass, "removed: no results on head", ""},
		// Red on base: a skip on head is no more a removal than above.
		{"red on base, skipped in every head run", Tally{5, 5}, 5, Block, "newly skipped: red on base (5 of 5 runs failed) and skipped in every head run it was collected in (5)",
			"red on base (5 of 5 runs failed) and skipped in every head run it was collected in (5)"},
		{"red on base, gone from head", Tally{5, 5}, 0, Block, "removed: red on base", "no longer runs on head"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{PRBody: "Tidy up.\n\nTest-Changes: tidy up fixtures\n", Tests: []TestInput{
				{Name: "pkg::t", Base: tc.base, HeadSkipped: tc.skipped},
				{Name: "pkg::other", Base: Tally{5, 0}, Head: []bool{true, true, true, true, true}},
			}}
			res, err := Evaluate(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Tests[1]; got.Name != "pkg::t" || got.Decision != tc.want || !strings.Contains(got.Reason, tc.wantWords) {
				t.Errorf("%s: %s, %q; want %s with %q", got.Name, got.Decision, got.Reason, tc.want, tc.wantWords)
			}
			if tc.violation != "" && !slices.ContainsFunc(res.Properties, func(v Violation) bool {
				return v.Check == CheckRedTestRemoved && strings.Contains(v.Message, tc.violation)
			}) {
				t.Errorf("properties %+v; want %s saying %q", res.Properties, CheckRedTestRemoved, tc.violation)
			}
		})
	}
}

// TestPassReasonsSayWhatHappened: a test that passes need not be
// "consistent" with its rate, nor "exemption eligible" when its recorded
// SPRT says regression.
func TestPassReasonsSayWhatHappened(t *testing.T) {
	ffff := []bool{false, false, false, false, false}
	// Retried-flaky on base (2 of 5 runs failed, then passed), red in
	// every head run: the SPRT says REGRESSION, which no ledger exempts.
	res, err := Evaluate(Input{Tests: []TestInput{
		{Name: "pkg::t", Base: Tally{5, 2}, BaseRetried: 2, History: Tally{150, 60}, Head: ffff},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Tests[0]; r.Decision == Pass && (strings.Contains(r.Reason, "exemption eligible") || !strings.Contains(r.Reason, "SPRT says REGRESSION")) {
		t.Errorf("reason %q: a pass whose SPRT says REGRESSION must say no ledger entry can exempt it", r.Reason)
	}
	// Unusual for the test, short of a PR-level bound of 1e-9.
	res, err = Evaluate(Input{Tests: []TestInput{
		{Name: "pkg::u", Base: Tally{5, 0}, History: Tally{150, 1}, Head: []bool{false, true, false, true, true}},
	}}, Options{AlphaPR: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Tests[0]; r.Decision == Pass && strings.Contains(r.Reason, "consistent with") {
		t.Errorf("reason %q: failures unusual for the test read as consistent with its rate", r.Reason)
	}
}

// unread is UnreadFiles' unread files.
func unread(base, head *history.History) []Unread {
	u, _ := UnreadFiles(base, head)
	return u
}
