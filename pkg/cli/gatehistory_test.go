package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSuite writes n runs of a 100-test suite in dir, each with commit
// sha and, when runID is set, that run_id property; fails says how many
// of the runs (the first ones) each test fails, "*" for every test.
func writeSuite(t *testing.T, dir, sha, runID string, n int, fails map[string]int) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="%s"/>`, sha)
		if runID != "" {
			fmt.Fprintf(&b, `<property name="run_id" value="%s"/>`, runID)
		}
		b.WriteString(`</properties>`)
		for j := range 100 {
			name := fmt.Sprintf("t%03d", j)
			if i < fails[name] || i < fails["*"] {
				fmt.Fprintf(&b, `<testcase classname="pkg.mod" name="%s"><failure message="boom"/></testcase>`, name)
			} else {
				fmt.Fprintf(&b, `<testcase classname="pkg.mod" name="%s"/>`, name)
			}
		}
		b.WriteString(`</testsuite>`)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.xml", filepath.Base(dir), i)), []byte(b.String()), 0o644)
	}
}

// TestGateCLIHistoryAsTheActionReadsIt: `gate --history` leaves out what
// the action's gate leaves out, and says so: an infrastructure run (every
// test failed) and the head commit's own runs, either of which made a
// patch-induced flake (t000 fails 2 of 5 head runs) pass.
func TestGateCLIHistoryAsTheActionReadsIt(t *testing.T) {
	const base, head, main = "bbbbbbbbbbbb", "hhhhhhhhhhhh", "mmmmmmmmmmmm"
	for _, tc := range []struct {
		name  string
		extra func(t *testing.T, hist string)
		note  string
	}{
		{"an outage run", func(t *testing.T, hist string) {
			writeSuite(t, filepath.Join(hist, "outage"), main, "", 1, map[string]int{"*": 1})
		}, "history: left out 1 runs in which more than 50% of the tests failed (infrastructure failures)"},
		{"the head's own runs", func(t *testing.T, hist string) {
			writeSuite(t, filepath.Join(hist, "head"), head, "", 5, map[string]int{"t000": 2})
		}, "history: left out 5 runs of the head's commits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSuite(t, filepath.Join(dir, "base"), base, "", 5, nil)
			writeSuite(t, filepath.Join(dir, "head"), head, "", 5, map[string]int{"t000": 2})
			writeSuite(t, filepath.Join(dir, "hist", "main"), main, "", 30, nil)
			tc.extra(t, filepath.Join(dir, "hist"))
			r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"), "--history", filepath.Join(dir, "hist"))
			if r.code != 1 || !strings.Contains(r.stdout, "verdict: block") || !strings.Contains(r.stdout, "pkg.mod::t000: patch-induced flake") {
				t.Errorf("exit %d; want the patch-induced flake blocked\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.note) {
				t.Errorf("stderr does not say %q:\n%s", tc.note, r.stderr)
			}
		})
	}
}

// TestGateCLICollapsedRepetitions: repetitions that all carry one run_id
// (a job stamping GITHUB_RUN_ID into each) are read as one run a side:
// the gate says so rather than judge 1 run as if it were 5.
func TestGateCLICollapsedRepetitions(t *testing.T) {
	dir := t.TempDir()
	writeSuite(t, filepath.Join(dir, "base"), "bbbbbbbbbbbb", "777", 5, nil)
	writeSuite(t, filepath.Join(dir, "head"), "hhhhhhhhhhhh", "778", 5, map[string]int{"t000": 5})
	r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"))
	for _, side := range []string{"--base", "--head"} {
		if !strings.Contains(r.stderr, "warning: "+side+": 100 of the 100 tests of run") || !strings.Contains(r.stderr, "give each repetition its own run_id, or none") {
			t.Errorf("no warning for %s:\n%s", side, r.stderr)
		}
	}
}
