package gate

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// load reads JUnit documents as one run each, run i being documents[i].
func load(t *testing.T, sha string, documents ...string) *history.History {
	t.Helper()
	var srcs []history.Source
	for i, doc := range documents {
		srcs = append(srcs, history.Source{
			Name: sha + "-" + strconv.Itoa(i+1),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil },
			Run:  &model.Run{CommitSHA: sha, RunID: strconv.Itoa(i + 1)},
		})
	}
	h, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Skipped) > 0 {
		t.Fatalf("skipped: %+v", h.Skipped)
	}
	return h
}

func suite(cases ...string) string {
	return `<testsuite name="s">` + strings.Join(cases, "") + `</testsuite>`
}

const (
	passA = `<testcase classname="c" name="a" file="a_test.py"/>`
	failA = `<testcase classname="c" name="a" file="a_test.py"><failure message="AssertionError: 1 != 2"/></testcase>`
	skipA = `<testcase classname="c" name="a"><skipped/></testcase>`
	passB = `<testcase classname="c" name="b"/>`
	failB = `<testcase classname="c" name="b"><failure message="boom"/></testcase>`
	// A rerun inside one run: failed, then passed (pytest-rerunfailures).
	flakyB = `<testcase classname="c" name="b"><failure message="boom"/></testcase><testcase classname="c" name="b"/>`
	passH  = `<testcase classname="c" name="history-only"/>`
)

func TestJoin(t *testing.T) {
	base := load(t, "base", suite(passA, passB), suite(failA, passB), suite(skipA, passB))
	head := load(t, "head",
		suite(passA, failB), suite(failA, flakyB), suite(skipA, passB), suite(passA, passB),
		suite(passA, passB), suite(passA, passB), suite(passA, passB), suite(passA, passB),
		suite(passA, passB), suite(failA, passB)) // run 10 sorts after run 9, not after run 1
	hist := load(t, "hist", suite(failA, passH), suite(passA, passH), suite(passA, passH))

	got := Join(base, head, hist)
	sigA := head.Tests[0].Sigs[0].Hash
	sigB := head.Tests[1].Sigs[0].Hash
	want := []TestInput{{
		Name:              "c::a",
		File:              "a_test.py",
		Base:              Tally{Runs: 2, Failures: 1}, // the skip is no evidence
		Head:              []bool{true, false, true, true, true, true, true, true, false},
		History:           Tally{Runs: 3, Failures: 1},
		HistoryCleanSince: 2,
		Signatures:        []string{sigA},
		BaseSkipped:       1, // the skipped base run
		HeadSkipped:       1, // head run 3
	}, {
		Name:        "c::b",
		Base:        Tally{Runs: 3},
		Head:        []bool{false, false, true, true, true, true, true, true, true, true}, // the rerun in run 2 is one failed run
		HeadRetried: 1,                                                                    // in which the test passed too
		Signatures:  []string{sigB},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Join (-want +got):\n%s", diff)
	}

	if got := Join(nil, nil, hist); len(got) != 0 {
		t.Errorf("Join with history only = %+v, want no tests: history alone is not this experiment", got)
	}
	got = Join(nil, load(t, "head", suite(passB)), nil)
	if diff := cmp.Diff([]TestInput{{Name: "c::b", Head: []bool{true}}}, got); diff != "" {
		t.Errorf("Join with head only (-want +got):\n%s", diff)
	}
}

// TestRetriedRunsAreNotBroken: a test that failed, then passed on a retry
// inside every run (flakyFailure, pytest-rerunfailures) is flaky on that
// side, not broken: a patch that makes a clean test do so is a
// patch-induced flake, not a regression; on base it is a pre-existing
// flake, not a red base; removed, it is no red test removed. Its runs
// still count as failed for the rates.
func TestRetriedRunsAreNotBroken(t *testing.T) {
	retried := `<testcase classname="c" name="r"><flakyFailure message="timeout"/></testcase>`
	passR := `<testcase classname="c" name="r"/>`
	other := `<testcase classname="c" name="other"/>`
	repeat := func(doc string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = doc
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		base, head []string
		bucket     Bucket
		baseClass  Class
		headClass  Class
		decision   Decision
		violations int
	}{
		{"retried on head", repeat(suite(passR, other), 5), repeat(suite(retried, other), 5), PatchInducedFlake, Clean, Flaky, Block, 0},
		{"retried on base, clean head", repeat(suite(retried, other), 5), repeat(suite(passR, other), 5), FlakeNotReproduced, Flaky, Clean, Pass, 0},
		{"retried on both", repeat(suite(retried, other), 5), repeat(suite(retried, other), 5), PreExistingFlake, Flaky, Flaky, Pass, 0},
		{"retried on base, removed", repeat(suite(retried, other), 5), repeat(suite(other), 5), Removed, Flaky, Untested, Block, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Tests: Join(load(t, "base", tc.base...), load(t, "head", tc.head...), nil), Collected: &Counts{Base: 2, Head: 2}, ChangesKnown: true}
			res, err := Evaluate(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var r *TestResult
			for i := range res.Tests {
				if res.Tests[i].Name == "c::r" {
					r = &res.Tests[i]
				}
			}
			if r == nil || r.Bucket != tc.bucket || r.Base.Class != tc.baseClass || r.Head.Class != tc.headClass || r.Decision != tc.decision {
				t.Fatalf("%+v; want bucket %q, classes %s → %s, decision %s", r, tc.bucket, tc.baseClass, tc.headClass, tc.decision)
			}
			if r.Base.Failures != len(tc.base)*bool2int(strings.Contains(tc.base[0], "flakyFailure")) {
				t.Errorf("base failures %d: a retried run still counts as failed", r.Base.Failures)
			}
			for _, v := range res.Properties {
				if v.Check == CheckRedTestRemoved {
					t.Errorf("a test that passed on retry in every base run reported as a red test removed: %+v", v)
				}
			}
		})
	}
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestJoinPoolsLegs: the history read from a matrix's artifacts tells a
// test held by two legs apart ("c::a [junit-windows]"), while the
// experiment's runs, on one runner, name it "c::a". Its baseline is then
// every leg's runs, a run failing when any leg failed: here it fails on
// Windows in 2 of 3 runs, so 2 of 3. "c::ab", whose name begins with the
// other's, is another test.
func TestJoinPoolsLegs(t *testing.T) {
	var srcs []history.Source
	for run := 1; run <= 3; run++ {
		for _, leg := range []struct{ name, doc string }{
			{"junit-ubuntu", suite(passA, passB, `<testcase classname="c" name="ab"><failure/></testcase>`)},
			{"junit-windows", suite(map[bool]string{true: failA, false: passA}[run < 3], passB)},
		} {
			srcs = append(srcs, history.Source{
				Name: leg.name, Leg: leg.name,
				Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(leg.doc)), nil },
				Run:  &model.Run{CommitSHA: "hist" + strconv.Itoa(run), RunID: strconv.Itoa(run)},
			})
		}
	}
	hist, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ht := range hist.Tests {
		ids = append(ids, ht.ID)
	}
	if want := []string{"c::a [junit-ubuntu]", "c::a [junit-windows]", "c::ab", "c::b [junit-ubuntu]", "c::b [junit-windows]"}; !cmp.Equal(want, ids) {
		t.Fatalf("history's tests %q, want %q", ids, want)
	}
	got := Join(load(t, "base", suite(passA, passB)), load(t, "head", suite(passA, passB)), hist)
	want := []TestInput{
		{Name: "c::a", File: "a_test.py", Base: Tally{Runs: 1}, Head: []bool{true}, History: Tally{Runs: 3, Failures: 2}, HistoryCleanSince: 1},
		{Name: "c::b", Base: Tally{Runs: 1}, Head: []bool{true}, History: Tally{Runs: 3}, HistoryCleanSince: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Join (-want +got):\n%s", diff)
	}
}

// TestHeadRunsMissing: c::b, collected in every base run, has no result in
// head runs 2 to 4 (its shard crashed and wrote no file), while c::a ran
// in all 5. Join counts those runs (HeadMissing), and the verdict, clean
// as the head is, is not a pass: the evidence is partial, as for a file
// not read, under on-inconclusive=neutral an inconclusive that does not
// fail the check. A test missing from base runs too (an unstable id) is no
// such sign.
func TestHeadRunsMissing(t *testing.T) {
	passC := `<testcase classname="c" name="c"/>`
	base := load(t, "base", suite(passA, passB, passC), suite(passA, passB), suite(passA, passB, passC), suite(passA, passB), suite(passA, passB, passC))
	for _, tc := range []struct {
		name    string
		head    *history.History
		missing map[string]int
		verdict Verdict
	}{
		{"shard of c::b missing in 3 head runs", load(t, "head", suite(passA, passB), suite(passA), suite(passA), suite(passA), suite(passA, passB)),
			map[string]int{"c::b": 3}, VerdictInconclusive},
		{"every test in every head run", load(t, "head", suite(passA, passB), suite(passA, passB), suite(passA, passB)), nil, VerdictPass},
		// c::c, in 3 of 5 base runs, is in 1 of 2 head runs: not a sign.
		{"a test missing on both sides", load(t, "head", suite(passA, passB, passC), suite(passA, passB)), map[string]int{"c::c": 1}, VerdictPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tests := Join(base, tc.head, nil)
			got := map[string]int{}
			for _, ti := range tests {
				if ti.HeadMissing > 0 {
					got[ti.Name] = ti.HeadMissing
				}
			}
			if diff := cmp.Diff(tc.missing, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("HeadMissing (-want +got):\n%s", diff)
			}
			hist := load(t, "hist", suite(passA, passB, passC), suite(passA, passB, passC))
			res, err := Evaluate(Input{Tests: Join(base, tc.head, hist), ChangesKnown: true, Collected: &Counts{Base: 3, Head: 3}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %q", res.Verdict, tc.verdict, res.Reasons)
			}
			if tc.verdict == VerdictInconclusive && !strings.Contains(strings.Join(res.Reasons, "\n"), "1 test(s) collected in every base run have no result in some head runs (c::b in 2 of 5)") {
				t.Errorf("reasons do not say c::b ran in 2 of 5 head runs: %q", res.Reasons)
			}
		})
	}
}

// TestHeadRunsMissingMostly: a shard's results missing in 9 of 20 head
// runs, against none of 20 base runs, is the patch's doing (a crash in that
// shard now and then): it blocks; it was inconclusive, exit 0 under the
// default policy.
func TestHeadRunsMissingMostly(t *testing.T) {
	var base, head []string
	for i := range 20 {
		base = append(base, suite(passA, passB))
		if i%2 == 1 && i < 18 {
			head = append(head, suite(passA))
		} else {
			head = append(head, suite(passA, passB))
		}
	}
	res, err := Evaluate(Input{Tests: Join(load(t, "base", base...), load(t, "head", head...), nil), ChangesKnown: true}, Options{MaxRuns: 20})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Missing
	if m == nil || !m.Block || m.HeadOutages != 9 || m.HeadRuns != 20 || m.BaseRuns != 20 || res.Verdict != VerdictBlock {
		t.Fatalf("missing %+v, verdict %s: %q", m, res.Verdict, res.Reasons)
	}
	if b := res.Blocking(); len(b) != 1 || !strings.HasPrefix(b[0], "part of the suite vanishes on head now and then: tests collected in every base run (20) have no result in 9 of 20 head runs") {
		t.Errorf("blocking %q", b)
	}
}
