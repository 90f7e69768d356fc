package gate

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/sprt"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// runs builds a head sequence from "P" (pass) and "F" (fail).
func runs(s string) []bool {
	out := make([]bool, len(s))
	for i, c := range s {
		out[i] = c == 'P'
	}
	return out
}

func TestClassifyAndBuckets(t *testing.T) {
	tests := []struct {
		base, head Tally
		want       Bucket
	}{
		{Tally{0, 0}, Tally{5, 0}, NewOK},
		{Tally{0, 0}, Tally{5, 2}, NewFlaky},
		{Tally{0, 0}, Tally{5, 5}, NewFailing},
		{Tally{0, 0}, Tally{0, 0}, NotRun},
		{Tally{5, 0}, Tally{5, 0}, OK},
		{Tally{5, 0}, Tally{5, 1}, PatchInducedFlake},
		{Tally{5, 0}, Tally{5, 5}, Regression},
		{Tally{5, 0}, Tally{0, 0}, Removed},
		{Tally{5, 2}, Tally{5, 0}, FlakeNotReproduced},
		{Tally{5, 2}, Tally{5, 2}, PreExistingFlake},
		{Tally{5, 2}, Tally{5, 5}, FlakyToBroken},
		{Tally{5, 2}, Tally{0, 0}, Removed},
		{Tally{5, 5}, Tally{5, 0}, Fixed},
		{Tally{5, 5}, Tally{5, 3}, BaseRed},
		{Tally{5, 5}, Tally{5, 5}, BaseRed},
		{Tally{5, 5}, Tally{0, 0}, Removed},
	}
	for _, tc := range tests {
		if got := BucketOf(Classify(tc.base), Classify(tc.head)); got != tc.want {
			t.Errorf("BucketOf(%v, %v) = %q, want %q", Classify(tc.base), Classify(tc.head), got, tc.want)
		}
	}
}

func TestWilsonUpperMatchesSeed(t *testing.T) {
	tests := []struct {
		fails, runs int
		want        float64
	}{{1, 5, 0.62}, {1, 20, 0.24}, {2, 5, 0.77}, {2, 20, 0.30}, {0, 5, 0.43}}
	for _, tc := range tests {
		if got := WilsonUpper(tc.fails, tc.runs); round2(got) != tc.want {
			t.Errorf("WilsonUpper(%d, %d) = %.4f, want %.2f", tc.fails, tc.runs, got, tc.want)
		}
	}
	if WilsonUpper(0, 0) != 1 {
		t.Errorf("WilsonUpper with no runs should be 1")
	}
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

func TestEstimateP0(t *testing.T) {
	tests := []struct {
		name          string
		base, history Tally
		want          float64
		floor         bool
		source        string
	}{
		{"five clean runs are not zero", Tally{5, 0}, Tally{}, 0.5 / 6, false, "no base-branch history"},
		{"long clean history hits the floor", Tally{5, 0}, Tally{150, 0}, P0Floor, true, "floor 0.05"},
		{"rare flake seen in history", Tally{5, 0}, Tally{150, 5}, P0Floor, true, "5/150 history"},
		{"flaky base pooled with history", Tally{5, 2}, Tally{150, 45}, 47.5 / 156, false, "Jeffreys"},
		{"history only", Tally{}, Tally{20, 10}, 10.5 / 21, false, "no base repetitions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := EstimateP0(tc.base, tc.history)
			if d := p.Estimate - tc.want; d > 1e-12 || d < -1e-12 {
				t.Errorf("estimate %v, want %v", p.Estimate, tc.want)
			}
			if p.Runs != tc.base.Runs+tc.history.Runs || p.Failures != tc.base.Failures+tc.history.Failures {
				t.Errorf("pooled %d/%d", p.Failures, p.Runs)
			}
			if !strings.Contains(p.Source, tc.source) {
				t.Errorf("source %q does not mention %q", p.Source, tc.source)
			}
			if (p.Mean < P0Floor) != tc.floor {
				t.Errorf("mean %v: floor applied = %v, want %v", p.Mean, p.Mean < P0Floor, tc.floor)
			}
			if p.Upper < p.Mean {
				t.Errorf("upper bound %v below the mean %v", p.Upper, p.Mean)
			}
		})
	}
}

// TestEvaluateDecisions walks DESIGN.md's table, one test per row.
func TestEvaluateDecisions(t *testing.T) {
	tests := []struct {
		name     string
		in       TestInput
		opt      Options
		declared bool
		bucket   Bucket
		decision Decision
		sprt     sprt.Decision // "" when no SPRT is expected
		pending  bool
		reason   string // a substring of the reason
	}{
		{name: "ok", in: TestInput{Base: Tally{5, 0}, Head: runs("PPPPP")}, bucket: OK, decision: Pass},
		{name: "new test ok", in: TestInput{Head: runs("PPPPP")}, bucket: NewOK, decision: Pass},
		{name: "new flaky test", in: TestInput{Head: runs("PFPPP")}, bucket: NewFlaky, decision: Block},
		{name: "new failing test", in: TestInput{Head: runs("FFFFF")}, bucket: NewFailing, decision: Block},
		{name: "patch-induced flake, no history: undecided, more runs", in: TestInput{Base: Tally{5, 0}, Head: runs("PPFPP")},
			bucket: PatchInducedFlake, decision: Inconclusive, pending: true, reason: "no base-branch history"},
		{name: "patch-induced flake, no history, budget spent", in: TestInput{Base: Tally{5, 0}, Head: runs("PPFPP")}, opt: Options{MaxRuns: 5},
			bucket: PatchInducedFlake, decision: Inconclusive, reason: "give base-branch history"},
		{name: "patch-induced flake, clean history", in: TestInput{Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PPFPP")},
			bucket: PatchInducedFlake, decision: Block, reason: "0/150 history runs failed"},
		{name: "regression", in: TestInput{Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("FFFFF")},
			bucket: Regression, decision: Block},
		{name: "rare pre-existing flake: history, not the patch", in: TestInput{Base: Tally{5, 0}, History: Tally{150, 4}, Head: runs("PPFPP")},
			bucket: PreExistingFlake, decision: Pass, sprt: sprt.Flake, reason: "failed 4 of 150 history runs"},
		{name: "rare pre-existing flake, two early reds: the look after 2 runs convicts", in: TestInput{Base: Tally{5, 0}, History: Tally{150, 4}, Head: runs("FFPPP")},
			bucket: PreExistingFlake, decision: Block, sprt: sprt.Regression, reason: "at the look after 2 head runs"},
		{name: "pre-existing flake", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("PFPFP")},
			bucket: PreExistingFlake, decision: Pass, sprt: sprt.Flake, reason: "exemption eligible"},
		{name: "flaky test made much worse", in: TestInput{Base: Tally{5, 1}, History: Tally{150, 30}, Head: runs("FFFFP")},
			bucket: PreExistingFlake, decision: Block, sprt: sprt.Regression},
		{name: "flaky then broken: regression", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("FFFFF")},
			bucket: FlakyToBroken, decision: Block, sprt: sprt.Regression},
		{name: "3 of 5 at a base rate of 0.3: consistent, though the SPRT continues", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("FPFFP")},
			bucket: PreExistingFlake, decision: Pass, sprt: sprt.Continue, reason: "exemption eligible"},
		// Three reds first reach the REGRESSION bound (LLR 3.297): the
		// passes after it do not undo that (rerun-until-green).
		{name: "3 of 5 at a base rate of 0.3, three reds first: the SPRT says regression", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("FFFPP")},
			bucket: PreExistingFlake, decision: Pass, sprt: sprt.Regression, reason: "its recorded SPRT says REGRESSION, so no ledger entry can exempt it"},
		{name: "4 of 5 at a base rate of 0.3: undecided, more runs", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("PFFFF")},
			bucket: PreExistingFlake, decision: Inconclusive, sprt: sprt.Continue, pending: true, reason: "more head runs decide: it blocks if"},
		{name: "12 of 20 at a base rate of 0.3, one look in a one-test suite: its own alpha, halved at the schedule's end", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("PFFFFPPFPFPFFPFPFPFF")},
			opt: Options{MaxRuns: 20, FirstLook: 20}, bucket: PreExistingFlake, decision: Block, sprt: sprt.Continue, reason: "over a margin of 0.47: for the error of the fitted prior"},
		{name: "11 of 20 at a base rate of 0.3, P 0.026: above half its alpha", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("PFFFFPPFPFPFFPFPFPFP")},
			opt: Options{MaxRuns: 20, FirstLook: 20}, bucket: PreExistingFlake, decision: Inconclusive, sprt: sprt.Flake, reason: "PR-level p of 0.054 (the chance of any block, 0.026, over a margin of 0.47"},
		{name: "11 of 20 at a base rate of 0.3, a budget of 40: more head runs decide", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("PFFFFPPFPFPFFPFPFPFP")},
			opt: Options{MaxRuns: 40, FirstLook: 20}, bucket: PreExistingFlake, decision: Inconclusive, sprt: sprt.Flake, pending: true, reason: "more head runs decide"},
		{name: "4 of 5 at a base rate of 0.3, a budget of 5: the calibration still covers 20 runs", in: TestInput{Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("PFFFF")},
			opt: Options{MaxRuns: 5, FirstLook: 5}, bucket: PreExistingFlake, decision: Inconclusive, sprt: sprt.Continue, reason: "undecided with the budget of 5 head runs spent"},
		{name: "too flaky to gate", in: TestInput{Base: Tally{5, 5}, History: Tally{150, 140}, Head: runs("FFPFF")},
			bucket: BaseRed, decision: Invalid},
		{name: "too flaky to gate: no count can block", in: TestInput{Base: Tally{5, 4}, History: Tally{150, 140}, Head: runs("FFFFF")},
			bucket: FlakyToBroken, decision: Pass, reason: "too flaky to gate"},
		{name: "flake not reproduced", in: TestInput{Base: Tally{5, 2}, Head: runs("PPPPP")},
			bucket: FlakeNotReproduced, decision: Pass, sprt: sprt.Flake},
		{name: "patch fixes it", in: TestInput{Base: Tally{5, 5}, Head: runs("PPPPP")}, bucket: Fixed, decision: Pass},
		{name: "base red, head red", in: TestInput{Base: Tally{5, 5}, Head: runs("FFFFF")}, bucket: BaseRed, decision: Invalid, reason: "attribution is undefined"},
		{name: "base red, head flaky", in: TestInput{Base: Tally{5, 5}, History: Tally{150, 3}, Head: runs("FPFPF")}, bucket: BaseRed, decision: Invalid},
		{name: "removed, undeclared", in: TestInput{Base: Tally{5, 0}}, bucket: Removed, decision: Block, reason: "does not declare"},
		{name: "removed, declared", in: TestInput{Base: Tally{5, 0}}, declared: true, bucket: Removed, decision: Pass, reason: "declared by"},
		{name: "removed flaky, undeclared", in: TestInput{Base: Tally{5, 2}}, bucket: Removed, decision: Block},
		{name: "removed red test, even declared", in: TestInput{Base: Tally{5, 5}}, declared: true, bucket: Removed, decision: Block, reason: "must still exist"},
		{name: "not run on either side", in: TestInput{}, bucket: NotRun, decision: Pass},
		{name: "not in base runs, classed by history", in: TestInput{History: Tally{100, 0}, Head: runs("PFPPP")},
			bucket: PatchInducedFlake, decision: Block, reason: "0/100 history runs failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Name = "pkg::test"
			in := Input{Tests: []TestInput{tc.in}}
			if tc.declared {
				in.PRBody = "Fixes things.\n\nTest-Changes: drop pkg::test\n"
			}
			res, err := Evaluate(in, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Tests[0]
			if got.Bucket != tc.bucket || got.Decision != tc.decision || got.Pending != tc.pending {
				t.Errorf("bucket %q, decision %q, pending %v; want %q, %q, %v\nreason: %s",
					got.Bucket, got.Decision, got.Pending, tc.bucket, tc.decision, tc.pending, got.Reason)
			}
			gotSPRT := sprt.Decision("")
			if got.SPRT != nil {
				gotSPRT = got.SPRT.Decision
			}
			if gotSPRT != tc.sprt {
				t.Errorf("SPRT %q, want %q", gotSPRT, tc.sprt)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tc.reason)
			}
			if got.Reason == "" {
				t.Errorf("empty reason")
			}
		})
	}
}

func TestVerdictPolicy(t *testing.T) {
	pending := TestInput{Name: "a::pending", Base: Tally{5, 0}, Head: runs("PPFPP")}
	invalid := TestInput{Name: "b::red", Base: Tally{5, 5}, Head: runs("FFFFF")}
	blocking := TestInput{Name: "c::regress", Base: Tally{5, 0}, Head: runs("FFFFF")}
	clean := TestInput{Name: "d::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	tests := []struct {
		name   string
		tests  []TestInput
		policy Policy
		want   Verdict
		first  string // prefix of the first reason
	}{
		{"all clean", []TestInput{clean}, "", VerdictPass, "no test blocks"},
		// DESIGN.md: a red base is never a pass (audit3-gate, finding 1).
		{"invalid alone is inconclusive", []TestInput{clean, invalid}, "", VerdictInconclusive, "1 test(s) red on base"},
		{"invalid alone, fail", []TestInput{clean, invalid}, PolicyFail, VerdictBlock, "1 test(s) red on base"},
		{"invalid and a block", []TestInput{invalid, blocking}, "", VerdictBlock, "c::regress: regression"},
		{"inconclusive, default neutral", []TestInput{clean, pending}, "", VerdictInconclusive, "1 test(s) inconclusive"},
		{"inconclusive, fail", []TestInput{pending}, PolicyFail, VerdictBlock, "1 test(s) inconclusive"},
		{"inconclusive, pass", []TestInput{pending}, PolicyPass, VerdictPass, "1 test(s) inconclusive"},
		{"inconclusive, neutral", []TestInput{pending}, PolicyNeutral, VerdictInconclusive, "1 test(s) inconclusive"},
		{"block wins over policy", []TestInput{pending, blocking}, PolicyPass, VerdictBlock, "c::regress: regression"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(Input{Tests: tc.tests, Collected: &Counts{Base: 4, Head: 4}}, Options{OnInconclusive: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want {
				t.Errorf("verdict %q, want %q; reasons:\n%s", res.Verdict, tc.want, strings.Join(res.Reasons, "\n"))
			}
			if len(res.Reasons) == 0 || !strings.HasPrefix(res.Reasons[0], tc.first) {
				t.Errorf("first reason %q, want prefix %q", res.Reasons, tc.first)
			}
		})
	}
}

// TestUnreadFilesLeaveTheVerdictPartial: result files of the base or head
// runs that could not be read, or results with no test in them, make the
// evidence partial. Nothing blocks
// is then not a pass: the verdict follows the on-inconclusive policy, a
// block stays a block, and the reasons and the result name every file,
// the reasons up to maxUnreadReasons.
func TestUnreadFilesLeaveTheVerdictPartial(t *testing.T) {
	clean := TestInput{Name: "d::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	blocking := TestInput{Name: "c::regress", Base: Tally{5, 0}, Head: runs("FFFFF")}
	one := []Unread{{Side: "head", Path: "h/head-2.xml", Error: "line 5: unexpected end of file inside a tag (truncated file?)"}}
	var many []Unread
	for i := range maxUnreadReasons + 3 {
		many = append(many, Unread{Side: "base", Path: fmt.Sprintf("b/%d.xml", i), Error: "artifact expired (410 Gone)"})
	}
	for _, tc := range []struct {
		name   string
		tests  []TestInput
		unread []Unread
		policy Policy
		want   Verdict
		first  string
	}{
		{"nothing unread", []TestInput{clean}, nil, "", VerdictPass, "no test blocks"},
		// A head file not read may hold a failure: whatever
		// on-inconclusive says, the check does not pass (it did, under the
		// default neutral, with a failing shard's artifact unreadable).
		{"head unread, neutral", []TestInput{clean}, one, "", VerdictBlock, "head results missing: 1 head result file(s) or run(s) were not read"},
		{"head unread, fail", []TestInput{clean}, one, PolicyFail, VerdictBlock, "head results missing: 1 head result file(s) or run(s) were not read"},
		{"head unread, pass", []TestInput{clean}, one, PolicyPass, VerdictBlock, "head results missing: 1 head result file(s) or run(s) were not read"},
		{"head unread and blocking", []TestInput{clean, blocking}, one, PolicyPass, VerdictBlock, "c::regress: regression"},
		// Base files not read can only make the gate stricter: the policy
		// decides.
		{"base unread, neutral", []TestInput{clean}, many, "", VerdictInconclusive, "13 result file(s) of the base runs could not be read"},
		{"base unread, pass", []TestInput{clean}, many, PolicyPass, VerdictPass, "13 result file(s) of the base runs"},
		{"base unread, fail", []TestInput{clean}, many, PolicyFail, VerdictBlock, "13 result file(s) of the base runs"},
		// Results that hold no test compare nothing: not a pass either.
		{"nothing compared", nil, nil, "", VerdictInconclusive, "no test was compared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(Input{Tests: tc.tests, Collected: &Counts{Base: 4, Head: 4}, Unread: tc.unread}, Options{OnInconclusive: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			reasons := strings.Join(res.Reasons, "\n")
			if res.Verdict != tc.want || !strings.HasPrefix(res.Reasons[0], tc.first) {
				t.Errorf("verdict %q, want %q with first reason %q; reasons:\n%s", res.Verdict, tc.want, tc.first, reasons)
			}
			if diff := cmp.Diff(append([]Unread{}, tc.unread...), res.Unread); diff != "" {
				t.Errorf("result's unread files (-want +got):\n%s", diff)
			}
			named := 0
			for _, u := range tc.unread {
				if strings.Contains(reasons, u.Side+": not read: "+u.Path+": "+u.Error) {
					named++
				}
			}
			if want := min(len(tc.unread), maxUnreadReasons); named != want {
				t.Errorf("%d of %d unread files named in the reasons:\n%s", named, want, reasons)
			}
			if len(tc.unread) > maxUnreadReasons && !strings.Contains(reasons, "… and 3 more file(s) not read") {
				t.Errorf("no count of the files not named:\n%s", reasons)
			}
		})
	}
}

// A test missing from head while head files went unread may be in them:
// not compared, not "removed" (which told the author to declare a deletion
// never made, and with the declaration, passed the test).
func TestMissingFromHeadWithHeadUnread(t *testing.T) {
	gone := TestInput{Name: "c::in_the_lost_shard", Base: Tally{5, 0}}
	clean := TestInput{Name: "d::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	unread := []Unread{{Side: "head", Path: "shard1/junit.xml", Error: "download failed: 503"}}
	for _, body := range []string{"", "Test-Changes: removed a flaky test"} {
		res, err := Evaluate(Input{Tests: []TestInput{gone, clean}, Collected: &Counts{Base: 5, Head: 5}, Unread: unread, PRBody: body}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Tests[0]
		if tr.Decision != Inconclusive || !strings.Contains(tr.Reason, "not compared: no results on head, and 1 head result file(s) could not be read") {
			t.Errorf("body %q: %s: %s, want inconclusive, not compared", body, tr.Decision, tr.Reason)
		}
		if res.Verdict != VerdictBlock {
			t.Errorf("body %q: verdict %s, want block (head results unread)", body, res.Verdict)
		}
	}
	// Without unread files the same test is removed, and blocks undeclared.
	res, err := Evaluate(Input{Tests: []TestInput{gone, clean}, Collected: &Counts{Base: 5, Head: 5}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Tests[0]; tr.Decision != Block || !strings.HasPrefix(tr.Reason, "removed:") {
		t.Errorf("no unread files: %s: %s, want block, removed", tr.Decision, tr.Reason)
	}
}

// TestHeadRanNoTest: every test of base gone from head (a collection the
// patch broke), in a PR that declares test changes: each test read as
// removed and declared, and the check passed. Now the head running no
// test blocks; removing some tests, declared, still passes.
func TestHeadRanNoTest(t *testing.T) {
	gone := func(name string) TestInput { return TestInput{Name: name, Base: Tally{5, 0}} }
	body := "Test-Changes: refactor"
	res, err := Evaluate(Input{Tests: []TestInput{gone("c::a"), gone("c::b"), gone("c::c")}, PRBody: body}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const say = "head ran no test: none of the 3 tests with results on base has a pass or a failure on head"
	if res.Verdict != VerdictBlock || !strings.HasPrefix(res.Reasons[0], say) {
		t.Errorf("verdict %s; reasons:\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
	}
	if b := res.Blocking(); len(b) != 1 || !strings.HasPrefix(b[0], say) {
		t.Errorf("blocking %q", b)
	}
	res, err = Evaluate(Input{Tests: []TestInput{gone("c::a"), gone("c::b"), {Name: "c::c", Base: Tally{5, 0}, Head: runs("PPPPP")}}, PRBody: body}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictPass {
		t.Errorf("two tests removed, declared: verdict %s; reasons:\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
	}
}

func TestEvaluateRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		opt  Options
		want string
	}{
		{"duplicate", Input{Tests: []TestInput{{Name: "a"}, {Name: "a"}}}, Options{}, `test "a": listed twice`},
		{"empty name", Input{Tests: []TestInput{{}}}, Options{}, "empty name"},
		{"impossible tally", Input{Tests: []TestInput{{Name: "a", Base: Tally{2, 3}}}}, Options{}, "3 failures in 2 runs"},
		{"bad p1", Input{}, Options{P1: 1.5}, "p1 = 1.5"},
		{"bad policy", Input{}, Options{OnInconclusive: "maybe"}, "want one of neutral, fail, pass"},
		{"bad glob", Input{}, Options{ProtectedPaths: []string{"tests/[x"}}, "malformed glob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Evaluate(tc.in, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestExemption(t *testing.T) {
	const sig = "sha256:9f2c4e1a"
	entry := ledger.Entry{
		Test: "tests/test_upload.py::test_retry_after_429", Signature: sig, Owner: "@storage-team",
		Issue: "https://github.com/acme/shop/issues/12", Replacement: "tests/test_upload.py::test_retry_header_parsed",
		Expires:         ledger.Date{Year: 2027, Month: 1, Day: 31},
		Evidence:        ledger.Evidence{PFlakeBaseline: 0.3, PRegression: 0.9, Alpha: 0.05, Beta: 0.05, Decision: sprt.Flake},
		ReleaseTriggers: []ledger.Trigger{ledger.ScopeFileChanged, ledger.SignatureChanged},
	}
	base := &ledger.Ledger{Version: 1, Entries: []ledger.Entry{entry}}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ti := TestInput{Name: entry.Test, Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PFPPF"), Signatures: []string{sig}}
	tests := []struct {
		name    string
		ti      TestInput
		changes []FileChange
		now     time.Time
		want    Decision
		reason  string
	}{
		{"live entry, matching signature", ti, nil, now, Exempt, "exempt: live ledger entry"},
		{"signature changed", func() TestInput { t := ti; t.Signatures = []string{"sha256:00000000"}; return t }(), nil, now, Block, "released by signature_changed"},
		{"scope file changed", ti, []FileChange{{Path: "tests/test_upload.py", Status: "modified"}}, now, Block, "released by scope_file_changed"},
		{"expired", ti, nil, time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), Block, "expired on 2027-01-31"},
		{"no signature observed", func() TestInput { t := ti; t.Signatures = nil; return t }(), nil, now, Block, "no failure signature was observed"},
		// New evidence beats the entry: a regression, or far above its rate.
		{"head broken: the entry hides a regression", func() TestInput { t := ti; t.Head = runs("FFFFF"); return t }(), nil, now, Block,
			"head failed 5 of 5 runs, which the rate of 0.30 the entry records gives probability 0.0024, at most alpha 0.05, and the gate blocks as worse than the base"},
		{"far above the recorded rate", func() TestInput { t := ti; t.Head = runs("FFFFFFFFFFFFPFFFFFFF"); return t }(), nil, now, Block,
			"head failed 19 of 20 runs, which the rate of 0.30 the entry records gives probability 1.7e-09"},
		{"within the recorded rate", func() TestInput { t := ti; t.Head = runs("FFPPPPFPPP"); return t }(), nil, now, Exempt, "exempt: live ledger entry"},
		// The gate blocks 3 of 5 against a clean base, but the entry's
		// rate explains them: what a quarantine promises.
		{"blocked, but as flaky as the entry says", func() TestInput {
			t := ti
			t.Head = runs("FFPFP")
			return t
		}(), nil, now, Exempt, "without it: block: patch-induced flake"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Tests: []TestInput{tc.ti}, BaseLedger: base, HeadLedger: base, Now: tc.now,
				Changes: tc.changes, ChangesKnown: true, PRBody: "Test-Changes: touch upload tests"}
			res := wantFirst(t, in, tc.want, tc.reason)
			released := slices.ContainsFunc(res.Ledger, func(f ledger.Finding) bool { return f.Rule == "contradicted" && f.Test == ti.Name })
			if want := strings.Contains(tc.reason, "the entry records") || strings.Contains(tc.reason, "far above"); released != want {
				t.Errorf("ledger finding \"contradicted\" reported = %v, want %v: %+v", released, want, res.Ledger)
			}
		})
	}
	// The head ledger cannot exempt: only the base's counts.
	res, err := Evaluate(Input{Tests: []TestInput{ti}, HeadLedger: base, Now: now}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tests[0].Decision != Block || res.Verdict != VerdictBlock {
		t.Errorf("head-only ledger entry exempted the test: %+v", res.Tests[0])
	}
}

// TestLedgerContradiction: in a suite of 300 stable tests beside it, a
// quarantined test that failed every head run is refused its exemption only
// by the gate's own tests, each within its share of alpha-pr.
func TestLedgerContradiction(t *testing.T) {
	const sig = "sha256:1"
	tests := []struct {
		name          string
		p0            float64
		base, history Tally
		head          string
		want          Decision
		reason        string
	}{
		// Before, "failed every head run" refused the exemption whatever
		// the rates: a quarantined test at 0.3 fails 5 of 5 in 1 PR of
		// 400, and 27% on base says it may.
		{"failed every run, as flaky as its base", 0.3, Tally{5, 0}, Tally{150, 45}, "FFFFF", Exempt,
			"without it: inconclusive: undecided"},
		// The entry's rate is stale: neither it nor the base explains the
		// head, the ledger's share of alpha-pr blocks where the family
		// cannot.
		{"far above the entry and the base", 0.05, Tally{5, 0}, Tally{150, 40}, "FFFFF", Block,
			"far above the rate of 0.05 the entry records (probability 3.1e-07) and above its 40 of 155 base-side runs (0.0015, Fisher's exact test), each at most 0.0025 (the ledger's share of alpha-pr, 0.05, over the 1 test its entries may exempt)"},
		{"the family blocks it, the entry does not explain it", 0.3, Tally{5, 0}, Tally{150, 15}, "FFFFF", Block,
			"which the rate of 0.30 the entry records gives probability 0.0024, at most alpha 0.05, and the gate blocks as worse than the base"},
		{"the family blocks it, the entry explains it", 0.5, Tally{5, 0}, Tally{}, "FFFPF", Exempt,
			"without it: block: patch-induced flake"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := ledger.Entry{Test: "a::b", Signature: sig, Evidence: ledger.Evidence{PFlakeBaseline: tc.p0, PRegression: 0.9, Alpha: 0.05, Beta: 0.05, Decision: sprt.Flake}}
			l := &ledger.Ledger{Version: 1, Entries: []ledger.Entry{e}}
			in := Input{Tests: []TestInput{{Name: "a::b", Base: tc.base, History: tc.history, Head: runs(tc.head), Signatures: []string{sig}}},
				BaseLedger: l, HeadLedger: l, Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
			for i := range 300 {
				in.Tests = append(in.Tests, TestInput{Name: fmt.Sprintf("z::%03d", i), Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PPPPP")})
			}
			res := wantFirst(t, in, tc.want, tc.reason)
			if want := 0.9; math.Abs(res.Family.Margin-want) > 1e-12 {
				t.Errorf("family margin %v, want %v: the ledger's share is not the family's", res.Family.Margin, want)
			}
		})
	}
}

// wantFirst evaluates in with the default options and checks the first
// test's decision and that its reason holds reason.
func wantFirst(t *testing.T, in Input, want Decision, reason string) Result {
	t.Helper()
	res, err := Evaluate(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tests[0]; got.Decision != want || !strings.Contains(got.Reason, reason) {
		t.Errorf("decision %q, reason %q; want %q with %q", got.Decision, got.Reason, want, reason)
	}
	return res
}

// TestGolden pins the JSON contract on a PR that exercises every part.
func TestGolden(t *testing.T) {
	diff, err := os.ReadFile(filepath.Join("testdata", "pr.diff"))
	if err != nil {
		t.Fatal(err)
	}
	changes, err := ParseUnifiedDiff(string(diff))
	if err != nil {
		t.Fatal(err)
	}
	in := Input{
		Tests: []TestInput{
			{Name: "tests/test_api.py::test_list", Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PPPPP")},
			{Name: "tests/test_api.py::test_cache", Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PFPPF")},
			{Name: "tests/test_upload.py::test_retry_after_429", Base: Tally{5, 0}, History: Tally{150, 4}, Head: runs("FPPPP"),
				Signatures: []string{"sha256:9f2c4e1a"}},
			{Name: "tests/test_db.py::test_migrate", Base: Tally{5, 5}, Head: runs("FFFFF")},
			{Name: "tests/test_ws.py::test_reconnect", Base: Tally{5, 2}, History: Tally{150, 45}, Head: runs("FPFPP")},
		},
		Changes:      changes,
		ChangesKnown: true,
		PRBody:       "Adds a response cache.",
		Now:          time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
	}
	res, err := Evaluate(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "gate.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("JSON report (-want +got):\n%s", diff)
	}
	// The contract's field names.
	var generic map[string]any
	if err := json.Unmarshal(got, &generic); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verdict", "reasons", "tests", "properties", "ledger"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	test0 := generic["tests"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "base", "head", "bucket", "decision", "p0", "reason"} {
		if _, ok := test0[k]; !ok {
			t.Errorf("test entry lacks %q", k)
		}
	}
	for _, k := range []string{"estimate", "source", "runs", "failures"} {
		if _, ok := test0["p0"].(map[string]any)[k]; !ok {
			t.Errorf("p0 lacks %q", k)
		}
	}
}

// TestLedgerFindingsBlock checks that ledger rule errors reach the verdict:
// a PR that freezes its own new failure, seen only on head, is blocked.
func TestLedgerFindingsBlock(t *testing.T) {
	test := "tests/test_cache.py::test_hit"
	tr := sprt.Test{P0: 0.3, P1: 0.9, Alpha: 0.05, Beta: 0.05}
	entry := ledger.Entry{
		Test: test, Signature: "sha256:abcdef012345", Owner: "@me", Issue: "#1", Replacement: "tests/test_cache.py::test_miss",
		Evidence:        ledger.EvidenceFrom(tr, tr.Run(runs("FPPP"), 1)),
		ReleaseTriggers: []ledger.Trigger{ledger.SignatureChanged},
	}
	in := Input{
		Tests:      []TestInput{{Name: test, Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("FPPPP"), Signatures: []string{entry.Signature}}},
		BaseLedger: &ledger.Ledger{Version: 1},
		HeadLedger: &ledger.Ledger{Version: 1, Entries: []ledger.Entry{entry}},
		PRBody:     "Test-Changes: quarantine test_hit",
		Labels:     []string{"flaky-ledger-approved"},
	}
	res, err := Evaluate(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range res.Ledger {
		rules = append(rules, f.Rule)
	}
	if diff := cmp.Diff([]string{ledger.RuleNoBaseEvidence}, rules); diff != "" {
		t.Errorf("ledger findings (-want +got):\n%s", diff)
	}
	if res.Verdict != VerdictBlock || res.Tests[0].Decision != Block {
		t.Errorf("verdict %q, test %q: want block (the head ledger cannot exempt)", res.Verdict, res.Tests[0].Decision)
	}
	if !slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "ledger no-base-evidence:") }) {
		t.Errorf("reasons lack the ledger finding: %q", res.Reasons)
	}
}

// TestReasonStatesTheTablesP: a test's reason gives the probability the
// report's table shows for it (Stat.Best, from which the PR-level figure
// comes), blocked or not. It gave the last look's instead for a test that
// did not block: P = 0.5 in the text beside 0.32 in the table.
func TestReasonStatesTheTablesP(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	checked := 0
	for range 300 {
		var in Input
		for i := range 6 {
			seq := make([]byte, 5+rng.IntN(6))
			for j := range seq {
				seq[j] = "PPPF"[rng.IntN(4)]
			}
			hist := Tally{Runs: 150, Failures: rng.IntN(60)}
			in.Tests = append(in.Tests, TestInput{Name: fmt.Sprintf("t%d", i), Base: Tally{5, rng.IntN(3)}, History: hist, Head: runs(string(seq))})
		}
		in.Now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		res, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Tests {
			if tr.Stat == nil {
				continue
			}
			checked++
			p := fmt.Sprintf("%.2g", tr.Stat.Best)
			if !strings.Contains(tr.Reason, "P = "+p) && !strings.Contains(tr.Reason, "probability "+p) {
				t.Fatalf("%s: the table says P %s, the reason: %s", tr.Name, p, tr.Reason)
			}
		}
	}
	if checked < 100 {
		t.Errorf("%d tests with a statistic checked", checked)
	}
}

// TestRecordedSPRTReplays: the SPRT the gate records for a test with a
// flaky base carries the p0 and p1 it weighed (p0 floored at P0Floor even
// where the test's estimate is below it), so a ledger entry made from it
// replays: ledger.Verify finds no problem.
func TestRecordedSPRTReplays(t *testing.T) {
	for _, tc := range []struct {
		base, history Tally
		head          string
	}{
		{Tally{5, 1}, Tally{200, 0}, "PPPPP"}, // estimate below the floor
		{Tally{10, 3}, Tally{}, "PPPPP"},
	} {
		in := Input{Tests: []TestInput{{Name: "c::t", Base: tc.base, History: tc.history, Head: runs(tc.head)}}, Collected: &Counts{Base: 1, Head: 1}}
		res, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Tests[0]
		if r.SPRT == nil || r.SPRT.Decision != sprt.Flake || r.SPRT.P0 != max(r.P0.Estimate, P0Floor) || r.SPRT.P1 != res.Params.P1 {
			t.Fatalf("%+v: recorded SPRT %+v, want FLAKE at p0 max(%v, %v) and p1 %v", tc, r.SPRT, r.P0.Estimate, P0Floor, res.Params.P1)
		}
		l := &ledger.Ledger{Version: 1, Entries: []ledger.Entry{{
			Test: r.Name, Signature: "sha256:0123456789abcdef", Owner: "@team", Issue: "https://example.com/1", Replacement: "c::t2",
			Evidence:        ledger.Evidence{PFlakeBaseline: r.SPRT.P0, PRegression: r.SPRT.P1, Alpha: res.Params.Alpha, Beta: res.Params.Beta, Trace: r.SPRT.Trace, Decision: r.SPRT.Decision},
			ReleaseTriggers: []ledger.Trigger{ledger.ScopeFileChanged},
		}}}
		if ps := ledger.Verify(l); len(ps) > 0 {
			t.Errorf("%+v: a ledger entry from the recorded SPRT does not replay: %v", tc, ps)
		}
	}
}

// TestResultSignatures: a test's result carries the signatures of its head
// failures, which a ledger entry names; a test that did not fail on head
// carries none.
func TestResultSignatures(t *testing.T) {
	tests := []TestInput{
		{Name: "a::flaky", Base: Tally{Runs: 5, Failures: 2}, Head: []bool{false, true, true, true, true}, Signatures: []string{"sha256:0123456789ab"}},
		{Name: "a::ok", Base: Tally{Runs: 5}, Head: []bool{true, true, true, true, true}},
	}
	res, err := Evaluate(Input{Tests: tests, Collected: &Counts{Base: 2, Head: 2}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, tr := range res.Tests {
		got[tr.Name] = tr.Signatures
	}
	if diff := cmp.Diff(map[string][]string{"a::flaky": {"sha256:0123456789ab"}, "a::ok": nil}, got); diff != "" {
		t.Errorf("signatures (-want +got):\n%s", diff)
	}
}

// TestHistoryOfATestFixedSince: a test broken on the branch (its first 20
// history runs failed), fixed since (the last 10 and the 5 base runs
// passed), broken again by the patch (5 of 5 head runs): it read as a flake
// of rate 0.55 and passed. Its history is cut to the runs since the fix, and
// it blocks. A flake whose failures are spread is not cut.
func TestHistoryOfATestFixedSince(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    TestInput
		want  Decision
		cut   bool
		extra string
	}{
		{"broken, fixed, broken again", TestInput{Base: Tally{5, 0}, History: Tally{30, 20}, HistoryCleanSince: 10, Head: runs("FFFFF")}, Block, true, "history cut to the 10 runs since it was fixed: it failed 20 of its first 20 history runs"},
		{"red in every history run, clean base", TestInput{Base: Tally{5, 0}, History: Tally{30, 30}, Head: runs("FFFFF")}, Block, true, ""},
		{"a flake of 0.3, its last failure 3 runs ago", TestInput{Base: Tally{5, 0}, History: Tally{30, 9}, HistoryCleanSince: 3, Head: runs("FPFPP")}, Pass, false, ""},
		{"a flake of 0.5, clean lately", TestInput{Base: Tally{5, 0}, History: Tally{30, 12}, HistoryCleanSince: 4, Head: runs("FPPFP")}, Pass, false, ""},
		// 3 of its first 4 of 10 history runs failed, then 6 and 5 base
		// runs clean: a flake of 0.5 does that in 0.9% of draws; not cut.
		{"a short history's early failures", TestInput{Base: Tally{5, 0}, History: Tally{10, 3}, HistoryCleanSince: 6, Head: runs("FPPPP")}, Pass, false, ""},
		{"two old failures: too few to call it broken", TestInput{Base: Tally{5, 0}, History: Tally{30, 2}, HistoryCleanSince: 28, Head: runs("PPPPP")}, Pass, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Name = "c::t"
			ok := TestInput{Name: "c::ok", Base: Tally{5, 0}, History: Tally{30, 0}, HistoryCleanSince: 30, Head: runs("PPPPP")}
			tests := []TestInput{tc.in, ok}
			res, err := Evaluate(Input{Tests: tests}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tests[0].History != tc.in.History {
				t.Errorf("the caller's history became %+v", tests[0].History)
			}
			tr := res.Tests[slices.IndexFunc(res.Tests, func(r TestResult) bool { return r.Name == "c::t" })]
			if tr.Decision != tc.want || strings.Contains(tr.Reason, "history cut") != tc.cut || !strings.Contains(tr.Reason, tc.extra) {
				t.Errorf("%s: %s, want %s (cut %v)", tr.Decision, tr.Reason, tc.want, tc.cut)
			}
		})
	}
}

// TestDeclarationCoversWhatThePRChanges: with the PR's files known, a
// declaration waives the removal of a test whose file the PR changes, or
// that it names; a test whose known file the PR leaves as it was, and does
// not name, stopped running (a module that no longer collects): it blocks.
// A declaration adding one test waived ten that vanished.
func TestDeclarationCoversWhatThePRChanges(t *testing.T) {
	gone := func(name, file string) TestInput { return TestInput{Name: name, File: file, Base: Tally{5, 0}} }
	ok := TestInput{Name: "tests/test_app.py::test_ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	edit := []FileChange{{Path: "tests/test_app.py", Status: "modified", Patch: "@@ -1 +1 @@\n-a\n+b\n", Changes: 2}}
	for _, tc := range []struct {
		name    string
		test    TestInput
		body    string
		changes []FileChange
		known   bool
		want    Decision
	}{
		{"its file unchanged, not named", gone("tests/test_billing.py::test_invoice", ""), "Test-Changes: adds test_ok", edit, true, Block},
		{"its file (the JUnit attribute) unchanged", gone("tests.test_billing::test_invoice", "/home/runner/work/shop/tests/test_billing.py"), "Test-Changes: adds test_ok", edit, true, Block},
		{"its file deleted", gone("tests/test_billing.py::test_invoice", ""), "Test-Changes: drops billing", append(edit, FileChange{Path: "tests/test_billing.py", Status: "removed"}), true, Pass},
		{"its file changed (the JUnit attribute, absolute)", gone("tests.test_app::test_old", "/home/runner/work/shop/tests/test_app.py"), "Test-Changes: drops test_old", edit, true, Pass},
		{"named by its function", gone("tests/test_billing.py::test_invoice[eur]", ""), "Test-Changes: test_invoice is now parametrised from data/cases.json", edit, true, Pass},
		{"named by its file", gone("tests/test_billing.py::test_invoice", ""), "Test-Changes: test_billing.py loses its cases", edit, true, Pass},
		{"no file known", gone("tests.test_billing::test_invoice", ""), "Test-Changes: adds test_ok", edit, true, Pass},
		{"no diff", gone("tests/test_billing.py::test_invoice", ""), "Test-Changes: adds test_ok", nil, false, Pass},
		{"not declared", gone("tests/test_billing.py::test_invoice", ""), "", edit, true, Block},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(Input{Tests: []TestInput{tc.test, ok}, PRBody: tc.body, Changes: tc.changes, ChangesKnown: tc.known}, Options{AllowNewProtected: true})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tests[slices.IndexFunc(res.Tests, func(r TestResult) bool { return r.Name == tc.test.Name })]
			if tr.Decision != tc.want {
				t.Errorf("%s: %s", tr.Decision, tr.Reason)
			}
			if tc.want == Block && tc.body != "" && !strings.HasPrefix(tr.Reason, "removed, but not as declared") {
				t.Errorf("reason %q", tr.Reason)
			}
		})
	}
}

// A declared PR deleting a test from the file it changes must pass, whatever
// the runner's naming: gotestsum names Go tests "<import path>::TestX" (no
// file attribute), and a monorepo's JUnit file attribute is relative to the
// directory the tool ran in.
func TestDeclaredDeletionWhateverTheNaming(t *testing.T) {
	for _, tc := range []struct {
		name, test, file, changed string
	}{
		{"go package path", "github.com/acme/shop/pkg/cart::TestOldTotal", "", "pkg/cart/cart_test.go"},
		{"go package path with a dot", "gopkg.in/yaml.v3::TestOldDecode", "", "decode_test.go"},
		{"monorepo relative file attr", "tests.test_billing::test_invoice", "tests/test_billing.py", "backend/tests/test_billing.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gone := TestInput{Name: tc.test, File: tc.file, Base: Tally{5, 0}}
			ok := TestInput{Name: "github.com/acme/shop/pkg/cart::TestOK", Base: Tally{5, 0}, Head: runs("PPPPP")}
			ch := []FileChange{{Path: tc.changed, Status: "modified", Patch: "@@ -1,3 +1 @@\n-func x() {}\n-\n-\n+\n", Changes: 4}}
			res, err := Evaluate(Input{Tests: []TestInput{gone, ok}, PRBody: "Test-Changes: removes an obsolete test", Changes: ch, ChangesKnown: true}, Options{AllowNewProtected: true})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tests[slices.IndexFunc(res.Tests, func(r TestResult) bool { return r.Name == tc.test })]
			if tr.Decision != Pass || res.Verdict == VerdictBlock {
				t.Errorf("%s (%s): %s", res.Verdict, tr.Decision, tr.Reason)
			}
		})
	}
}

// A history cut at a fix must read as if the history had been the cut one:
// the family's prior and margin included.
func TestHistoryCutAsIfGivenCut(t *testing.T) {
	head := runs("PPPPPPPPPFPPPPPPPPPP")
	cut := TestInput{Name: "c::fixed", Base: Tally{10, 0}, History: Tally{68, 6}, HistoryCleanSince: 60, Head: head}
	same := cut
	same.History, same.HistoryCleanSince = Tally{60, 0}, 60
	for _, others := range [][]TestInput{{{Name: "c::other", Base: Tally{10, 0}, History: Tally{68, 1}, Head: runs("PPPPPPPPPPPPPPPPPPPP")}}} {
		a, err := Evaluate(Input{Tests: append([]TestInput{cut}, others...)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Evaluate(Input{Tests: append([]TestInput{same}, others...)}, Options{})
		if a.Family.Margin != b.Family.Margin || a.Family.Threshold != b.Family.Threshold || a.Tests[0].Decision != b.Tests[0].Decision {
			t.Errorf("with %d other(s): cut: margin %v tau %v %s (%s); given cut: margin %v tau %v %s", len(others), a.Family.Margin, a.Family.Threshold, a.Tests[0].Decision, a.Tests[0].Reason, b.Family.Margin, b.Family.Threshold, b.Tests[0].Decision)
		}
	}
}

// Every compared test's history cut at a fix: no side reached the prior,
// and the gate panicked.
func TestHistoryCutOfEveryMember(t *testing.T) {
	cut := TestInput{Name: "c::fixed", Base: Tally{10, 0}, History: Tally{68, 6}, HistoryCleanSince: 60, Head: runs("PPPPPPPPPP")}
	res, err := Evaluate(Input{Tests: []TestInput{cut}}, Options{})
	if err != nil || res.Verdict != VerdictPass {
		t.Errorf("%v %s %q", err, res.Verdict, res.Reasons)
	}
}

// Inline triple backticks are code spans, not fences (CommonMark: a
// backtick fence's info string holds no backtick), and a fence closes only
// at a line of at least its own length with nothing after.
func TestDeclaredFences(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"Run ```make test``` locally.\nTest-Changes: removes test_old", true},
		{"````md\n```\nTest-Changes: adds test_x\n```\n````\n", false},
		{"```\n```go\nTest-Changes: adds test_x\n```\n", false},
		// Hidden from the rendered body, so from its reviewers (an audit):
		// none declares.
		{"[//]: # (\nTest-Changes: deleted the payment tests\n)\n", false},
		{"<img src=\"x.png\" alt=\"\nTest-Changes: deleted the payment tests\n\">", false},
		// GitHub's sanitizer drops the hidden attribute: the text shows.
		{"<p hidden>\nTest-Changes: everything\n</p>\n", true},
		{"Describe it:\n\n    Test-Changes: <describe the change>\n", false},
		{"Test-Changes: <describe the change>\n", false},
		{"<details>\n<summary>Checklist</summary>\n\nTest-Changes: adds test_x\n\n</details>\n", true},
	} {
		if got, _ := Declared(tc.body, nil, DefaultDeclareLabel); got != tc.want {
			t.Errorf("%q: declared %v, want %v", tc.body, got, tc.want)
		}
	}
}

// An intermittent collection error (pytest's error case for a module whose
// import fails now and then, JUnit's initializationError, Jest's "Test suite
// failed to run") is a test id present only in the runs where it fails: red
// whenever present. Seen in 2 of 5 base runs and, by chance, in none of 5
// head runs (probability 0.33 at a 20% rate), a clean PR was blocked as
// "red test removed" by a first version of redInSeveral: about 8.6% of
// clean PRs at a 20% rate. It is an unstable id.
func TestCollectionErrorInSomeBaseRunsIsNoRemoval(t *testing.T) {
	collErr := `<testcase classname="tests.test_x" name="collection"><error message="ImportError: flaky"/></testcase>`
	base := []string{suite(passA, passB, collErr), suite(passA, passB), suite(passA, passB, collErr), suite(passA, passB), suite(passA, passB)}
	head := []string{suite(passA, passB), suite(passA, passB), suite(passA, passB), suite(passA, passB), suite(passA, passB)}
	b, h := load(t, "base", base...), load(t, "head", head...)
	res, err := Evaluate(Input{Tests: Join(b, h, nil), Collected: CollectedCounts(b, h, model.DefaultInfra), ChangesKnown: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == VerdictBlock {
		t.Errorf("clean PR blocked: %q", res.Blocking())
	}
}

// TestLedgerCandidates: the ledger's share is spent over the tests its
// entries may exempt, a test's legs each one (an entry for c::n covers
// c::n [leg]), not over its entries.
func TestLedgerCandidates(t *testing.T) {
	in := Input{BaseLedger: &ledger.Ledger{Version: 1, Entries: []ledger.Entry{{Test: "c::n"}, {Test: "d::m [junit-windows]"}, {Test: "gone::x"}}}}
	for i := range 10 {
		in.Tests = append(in.Tests, TestInput{Name: fmt.Sprintf("c::n [leg%d]", i)})
	}
	in.Tests = append(in.Tests, TestInput{Name: "d::m"}, TestInput{Name: "c::other"})
	if got := ledgerCandidates(in); got != 11 {
		t.Errorf("ledgerCandidates = %d, want 11 (10 legs of c::n, and d::m whose leg an entry names)", got)
	}
	in.BaseLedgerUnknown = true
	if got := ledgerCandidates(in); got != 0 {
		t.Errorf("with the base ledger unknown: %d, want 0", got)
	}
}
