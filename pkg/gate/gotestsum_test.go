package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// gotestsumRuns reads testdata/gotestsum-timeout (real gotestsum v1.13.0
// output, see its README) and gives n runs, those timeout says being the
// run in which the package hit -timeout.
func gotestsumRuns(t *testing.T, n int, timeout func(run int) bool) []string {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "gotestsum-timeout", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pass, out := read("pass.xml"), read("timeout.xml")
	docs := make([]string, n)
	for r := range n {
		docs[r] = pass
		if timeout(r + 1) {
			docs[r] = out
		}
	}
	return docs
}

// TestGotestsumTestMain: gotestsum writes a TestMain case (empty classname,
// so the package's suite names it) only in a run where the package failed
// outside any test, here a -timeout panic. A package that times out now and
// then on the base branch did so in 1 of 5 head runs and in none of 5 base
// runs: before, TestMain was a "new failing test" (no base run had the case)
// and a clean PR blocked (the audit of the Go quickstart: 6 of 20 clean PRs,
// by this reason alone). With base-branch history in which the package timed
// out 3 times in 20 runs, it was "base red" (3 of 3 history runs failed) and
// made clean PRs inconclusive. The case's absence from a run that ran the
// package is a pass: the package did not fail so.
func TestGotestsumTestMain(t *testing.T) {
	const id = "example.com/fixmod/slowpkg::TestMain"
	never := func(int) bool { return false }
	once := func(r int) bool { return r == 2 }

	res := auditCase(t, gotestsumRuns(t, 5, never), gotestsumRuns(t, 5, once), nil, Options{})
	tr := testNamed(t, res, id)
	if tr.Decision == Block || res.Verdict == VerdictBlock {
		t.Errorf("a package that timed out in 1 of 5 head runs blocks a clean PR: %s: %s (%s); verdict %s %q", tr.Bucket, tr.Decision, tr.Reason, res.Verdict, res.Reasons)
	}
	if tr.Base.Runs != 5 || tr.Base.Failures != 0 || tr.Head.Runs != 5 || tr.Head.Failures != 1 {
		t.Errorf("TestMain tallied base %d/%d, head %d/%d; want 0/5 and 1/5 (a run of the package without the case passed it)",
			tr.Base.Failures, tr.Base.Runs, tr.Head.Failures, tr.Head.Runs)
	}

	hist := gotestsumRuns(t, 20, func(r int) bool { return r%7 == 3 }) // 3 of 20
	res = auditCase(t, gotestsumRuns(t, 5, never), gotestsumRuns(t, 5, once), hist, Options{})
	tr = testNamed(t, res, id)
	if tr.History.Runs != 20 || tr.History.Failures != 3 {
		t.Errorf("TestMain's history is %d/%d failed, want 3/20", tr.History.Failures, tr.History.Runs)
	}
	if tr.Decision != Pass || res.Verdict == VerdictBlock {
		t.Errorf("with history: %s: %s (%s); verdict %s %q; want a pre-existing flake's pass (the verdict is inconclusive: TestZ did not run in the head run that timed out)", tr.Bucket, tr.Decision, tr.Reason, res.Verdict, res.Reasons)
	}

	// A patch that makes the package time out in every head run still blocks.
	res = auditCase(t, gotestsumRuns(t, 5, never), gotestsumRuns(t, 5, func(int) bool { return true }), hist, Options{})
	if tr := testNamed(t, res, id); tr.Decision != Block || res.Verdict != VerdictBlock {
		t.Errorf("a timeout in every head run: %s: %s (%s); verdict %s, want block", tr.Bucket, tr.Decision, tr.Reason, res.Verdict)
	}
}
