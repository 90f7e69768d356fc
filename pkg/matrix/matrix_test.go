package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// The tests drive real git repositories made in t.TempDir(). Each commit
// holds run.sh, a test runner in sh that writes out/junit.xml. The script
// counts its own runs in $COUNTER_DIR/<side> (outside the worktrees, so the
// count survives between runs), logs "<side> <n> <TMPDIR>" to
// $COUNTER_DIR/log, and reports:
//
//   - env::TZ=… LC_ALL=… PYTHONHASHSEED=… GOFLAGS=… fresh=yes|no, a
//     passing test whose name shows the environment the run saw, fresh=yes
//     when its TMPDIR existed and was empty;
//   - one test per case, failing on the runs where the case's shell
//     condition on $n (this side's run number) holds.

type tcase struct {
	name  string
	fails string // shell condition on $n; "" never fails
}

// script is run.sh for one side. pre runs before the report is written.
func script(side string, cases []tcase, pre string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `set -u
side=%s
c="$COUNTER_DIR/$side"
n=$(( $(cat "$c" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$c"
echo "$side $n $TMPDIR" >> "$COUNTER_DIR/log"
fresh=yes
if [ ! -d "$TMPDIR" ] || [ -n "$(ls -A "$TMPDIR")" ]; then fresh=no; fi
echo leftover > "$TMPDIR/leftover"
echo "run $side $n"
%s
mkdir -p out
status=0
{
echo '<?xml version="1.0"?>'
echo '<testsuite name="suite">'
echo "<testcase classname=\"env\" name=\"TZ=$TZ LC_ALL=$LC_ALL PYTHONHASHSEED=$PYTHONHASHSEED GOFLAGS=${GOFLAGS-unset} fresh=$fresh\"/>"
`, side, pre)
	for _, c := range cases {
		cond := c.fails
		if cond == "" {
			cond = "false"
		}
		fmt.Fprintf(&b, `if %s; then echo '<testcase classname="suite" name="%s"><failure message="boom">run %s</failure></testcase>'; status=1
else echo '<testcase classname="suite" name="%s"/>'; fi
`, cond, c.name, "$n", c.name)
	}
	b.WriteString("echo '</testsuite>'\n} > out/junit.xml\nexit $status\n")
	return b.String()
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=flakegate", "-c", "user.email=t@example.com",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// repo makes a repository with a base and a head commit; the script lives
// in sub (a path inside the repository, "" for the top).
type repo struct {
	dir, base, head string
	counters        string // COUNTER_DIR
}

func newRepo(t *testing.T, sub, baseScript, headScript string) repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q")
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, sub, "run.sh"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-q", "-m", "commit")
	}
	write(baseScript)
	base := gitT(t, dir, "rev-parse", "HEAD")
	write(headScript)
	head := gitT(t, dir, "rev-parse", "HEAD")
	return repo{dir: dir, base: base, head: head, counters: t.TempDir()}
}

// options are the options every test starts from.
func (r repo) options(t *testing.T) Options {
	return Options{
		Repo:       r.dir,
		Base:       r.base,
		Head:       r.head,
		JUnit:      "out/junit.xml",
		Command:    []string{"sh", "run.sh"},
		Env:        append(os.Environ(), "COUNTER_DIR="+r.counters, "TZ=Europe/Paris", "LC_ALL=POSIX", "GOFLAGS=-mod=mod", "TMPDIR=/nonexistent"),
		ResultsDir: filepath.Join(t.TempDir(), "results"),
		WorkDir:    t.TempDir(),
		Grace:      200 * time.Millisecond,
	}
}

// log returns the script's log: one "<side> <n>" per run, and the TMPDIRs.
func (r repo) log(t *testing.T) (runs, tmps []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.counters, "log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		runs = append(runs, f[0]+" "+f[1])
		tmps = append(tmps, f[2])
	}
	return runs, tmps
}

// checkClean asserts that no worktree and no temporary directory is left.
func (r repo) checkClean(t *testing.T, opt Options) {
	t.Helper()
	if got := gitT(t, r.dir, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("git worktree list after Run: want only the main worktree, got:\n%s", got)
	}
	entries, err := os.ReadDir(opt.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("work directory after Run: want empty, got %d entries (%s …)", len(entries), entries[0].Name())
	}
}

// interleaved is the run order of n pairs: base 1, head 1, base 2, …
func interleaved(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("base %d", i), fmt.Sprintf("head %d", i))
	}
	return out
}

// envTest is the env test's id as every run sees it: the caller's GOFLAGS
// (-mod=mod) gets -count=1.
const envTest = "env::TZ=UTC LC_ALL=C.UTF-8 PYTHONHASHSEED=0 GOFLAGS=-mod=mod -count=1 fresh=yes"

type want struct {
	pairs     int
	verdict   gate.Verdict
	decisions map[string]string // test → "decision/bucket"
	stop      string            // substring of Report.Stop
	looks     int               // "before the next look" lines in the log
}

func TestRun(t *testing.T) {
	// base fails suite::x on runs 1, 4 and 6; head fails it on runs 1 to
	// 5: 5 of 5 head runs against 2 of 5 base runs is worth another pair
	// but far from blocking; with 5 of 6 against 3 of 6 it is within what
	// the flake does, and passes. (Every run's file holds the run's own
	// test case too, RunTest, which passes here: one more clean test in the
	// suite's prior.) A test clean on base with no history that fails once on head is
	// undecided (a rare pre-existing flake would look the same): the driver
	// runs more pairs, until it blocks (head fails again on run 6) or
	// the budget is spent (head never fails again).
	baseFlaky := []tcase{{"a", ""}, {"x", "[ $((n % 3)) -eq 1 ] || [ $n -eq 6 ]"}}
	headFlaky := []tcase{{"a", ""}, {"x", "[ $n -le 5 ]"}}
	clean := []tcase{{"a", ""}, {"b", ""}}

	tests := []struct {
		name       string
		sub        string
		base, head []tcase
		opt        func(*Options)
		want       want
	}{{
		name: "regression blocks after the initial pairs",
		base: clean,
		head: []tcase{{"a", ""}, {"b", "true"}},
		want: want{pairs: 5, verdict: gate.VerdictBlock, stop: "every test failing on either side (1) has a verdict after 5 pairs",
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "block/regression", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		// A block is final: the pending flake gets no more pairs.
		name: "regression stops the matrix though another test is pending",
		base: []tcase{{"a", ""}, {"b", ""}, {"c", ""}},
		head: []tcase{{"a", ""}, {"b", "true"}, {"c", "[ $n -eq 2 ]"}},
		want: want{pairs: 5, verdict: gate.VerdictBlock, stop: "a test blocks after 5 pairs, which more pairs cannot undo; 1 test(s) left pending: suite::c",
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "block/regression", "suite::c": "inconclusive/patch-induced flake", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		name: "clean head passes at the initial pairs",
		base: clean,
		head: append(clean, tcase{"c", ""}),
		want: want{pairs: 5, verdict: gate.VerdictPass, stop: "no test failed on either side in 5 pairs",
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "pass/ok", "suite::c": "pass/new test ok", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		name: "initial pairs are capped at k, from a subdirectory",
		sub:  "nested/dir",
		base: clean,
		head: clean,
		opt:  func(o *Options) { o.K = 3 },
		want: want{pairs: 3, verdict: gate.VerdictPass, stop: "no test failed on either side in 3 pairs",
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "pass/ok", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		// With 30 clean history runs, 2 of 5 head runs decide at the
		// first look.
		name: "patch-induced flake blocks",
		base: clean,
		head: []tcase{{"a", ""}, {"b", "[ $((n % 2)) -eq 0 ]"}},
		opt: func(o *Options) {
			for i := range 30 {
				o.History = append(o.History, junitSource(fmt.Sprintf("hist-%d", i), "suite", "b", false))
			}
		},
		// 2 of 5 head runs failing, against 30 clean history runs, is short
		// of the first look's share of alpha-pr (5/35) in a suite of 4
		// tests: 5 more pairs settle it.
		want: want{pairs: 10, verdict: gate.VerdictBlock, stop: "has a verdict after 10 pairs", looks: 1,
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "block/patch-induced flake", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		name: "pre-existing flake: more pairs, then it passes",
		base: baseFlaky,
		head: headFlaky,
		want: want{pairs: 10, verdict: gate.VerdictPass, stop: "every test failing on either side (1) has a verdict after 10 pairs", looks: 1,
			decisions: map[string]string{"suite::a": "pass/ok", "suite::x": "pass/pre-existing flake", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		// on-inconclusive=fail makes the first look's verdict a block
		// while the flake is undecided: no block yet, as more pairs decide
		// it (the driver stopped there, blocked).
		name: "head failures without history, on-inconclusive fail: more pairs until the test blocks",
		base: clean,
		head: []tcase{{"a", ""}, {"b", "[ $n -eq 2 ] || [ $n -eq 4 ] || [ $n -ge 6 ]"}},
		opt:  func(o *Options) { o.Gate.OnInconclusive = gate.PolicyFail },
		want: want{pairs: 10, verdict: gate.VerdictBlock, stop: "every test failing on either side (1) has a verdict after 10 pairs", looks: 1,
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "block/patch-induced flake", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		// Without history 2 of 5 head runs against 0 of 5 base runs are
		// undecided; at the next look, 7 of 10 against 0 of 10 block.
		name: "head failures without history: more pairs until it blocks",
		base: clean,
		head: []tcase{{"a", ""}, {"b", "[ $n -eq 2 ] || [ $n -eq 4 ] || [ $n -ge 6 ]"}},
		want: want{pairs: 10, verdict: gate.VerdictBlock, stop: "every test failing on either side (1) has a verdict after 10 pairs", looks: 1,
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "block/patch-induced flake", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		// Looks after 5 and 8 pairs: 3 of 5 head runs could still block
		// at 6 of 8, but the next three pass.
		name: "head failures without history: budget spent, undecided",
		base: []tcase{{"a", ""}, {"b", ""}, {"c", ""}, {"d", ""}, {"e", ""}, {"f", ""}},
		head: []tcase{{"a", ""}, {"b", "[ $n -eq 2 ] || [ $n -eq 3 ] || [ $n -eq 5 ]"}, {"c", ""}, {"d", ""}, {"e", ""}, {"f", ""}},
		opt:  func(o *Options) { o.K = 8 },
		want: want{pairs: 8, verdict: gate.VerdictInconclusive, stop: "the budget of 8 pairs is spent with 1 test(s) still undecided: suite::b", looks: 1,
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "inconclusive/patch-induced flake", "suite::c": "pass/ok",
				"suite::d": "pass/ok", "suite::e": "pass/ok", "suite::f": "pass/ok", envTest: "pass/ok", RunTest: "pass/ok"}},
	}, {
		name: "history makes a clean base flaky",
		base: clean,
		head: []tcase{{"a", ""}, {"b", "true"}},
		opt: func(o *Options) {
			for i := range 30 {
				o.History = append(o.History, junitSource(fmt.Sprintf("hist-%d", i), "suite", "b", i%3 == 0))
			}
		},
		want: want{pairs: 10, verdict: gate.VerdictBlock, stop: "after 10 pairs", looks: 1,
			decisions: map[string]string{"suite::a": "pass/ok", "suite::b": "block/flaky base, broken head", envTest: "pass/ok", RunTest: "pass/ok"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t, tc.sub, script("base", tc.base, ""), script("head", tc.head, ""))
			opt := r.options(t)
			opt.Repo = filepath.Join(r.dir, tc.sub)
			var out, log bytes.Buffer
			opt.Stdout, opt.Stderr, opt.Log = &out, &out, &log
			if tc.opt != nil {
				tc.opt(&opt)
			}
			rep, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatalf("Run: %v\nlog:\n%s", err, log.String())
			}

			if rep.Pairs != tc.want.pairs {
				t.Errorf("pairs = %d, want %d", rep.Pairs, tc.want.pairs)
			}
			if rep.Result.Verdict != tc.want.verdict {
				t.Errorf("verdict = %s, want %s; reasons:\n%s", rep.Result.Verdict, tc.want.verdict, strings.Join(rep.Result.Reasons, "\n"))
			}
			got := map[string]string{}
			for _, tr := range rep.Result.Tests {
				got[tr.Name] = fmt.Sprintf("%s/%s", tr.Decision, tr.Bucket)
			}
			if diff := cmp.Diff(tc.want.decisions, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if !strings.Contains(rep.Stop, tc.want.stop) {
				t.Errorf("stop = %q, want it to contain %q", rep.Stop, tc.want.stop)
			}
			if n := strings.Count(log.String(), "before the next look"); n != tc.want.looks {
				t.Errorf("extra pairs announced %d times, want %d; log:\n%s", n, tc.want.looks, log.String())
			}

			// Interleaving, as recorded and as the scripts saw it.
			wantOrder := interleaved(tc.want.pairs)
			var recorded []string
			width := len(strconv.Itoa(opt.withDefaults().K))
			for _, rec := range rep.Runs {
				recorded = append(recorded, fmt.Sprintf("%s %d", rec.Side, rec.Index))
				wantFile := filepath.Join(rep.ResultsDir, fmt.Sprintf("%s-%0*d.xml", rec.Side, width, rec.Index))
				if rec.JUnit != wantFile {
					t.Errorf("%s: junit %s, want %s", rec.Name(), rec.JUnit, wantFile)
				}
				if _, err := os.Stat(rec.JUnit); err != nil {
					t.Errorf("%s: %v", rec.Name(), err)
				}
				if rec.Start.IsZero() || rec.Duration <= 0 {
					t.Errorf("%s: start %v, duration %v: want both set", rec.Name(), rec.Start, rec.Duration)
				}
			}
			if diff := cmp.Diff(wantOrder, recorded); diff != "" {
				t.Errorf("recorded run order (-want +got):\n%s", diff)
			}
			ran, tmps := r.log(t)
			if diff := cmp.Diff(wantOrder, ran); diff != "" {
				t.Errorf("executed run order (-want +got):\n%s", diff)
			}
			entries, err := os.ReadDir(rep.ResultsDir)
			if err != nil || len(entries) != 2*tc.want.pairs+2 || rep.DiffFile != filepath.Join(rep.ResultsDir, DiffFile) {
				t.Errorf("results dir %s: %d files (err %v), diff %q; want %d, the manifest and the diff", rep.ResultsDir, len(entries), err, rep.DiffFile, 2*tc.want.pairs)
			}
			// The manifest names the commits the runs were of, which the
			// runs' files do not.
			k := opt.K
			if k == 0 {
				k = gate.DefaultMaxRuns
			}
			looks := len(gate.SequentialLooks(5, k))
			var m model.MatrixManifest
			if b, err := os.ReadFile(filepath.Join(rep.ResultsDir, model.MatrixManifestFile)); err != nil || json.Unmarshal(b, &m) != nil ||
				m.Base.SHA != r.base || m.Head.SHA != r.head || m.Base.Rev != opt.Base || m.Looks != looks || m.K != k {
				t.Errorf("manifest %+v (%v): want base %s, head %s, %d looks and k %d", m, err, r.base, r.head, looks, k)
			}
			if !strings.Contains(out.String(), "run head 1\n") {
				t.Errorf("command output not passed on: %q", out.String())
			}

			// A fresh TMPDIR per run, under the work directory.
			seen := map[string]bool{}
			for _, d := range tmps {
				if seen[d] || !strings.HasPrefix(d, opt.WorkDir+string(filepath.Separator)) {
					t.Errorf("TMPDIR %s: want a new directory under %s per run", d, opt.WorkDir)
				}
				seen[d] = true
			}
			r.checkClean(t, opt)
		})
	}
}

func TestRunExitCodes(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", "true"}}, ""))
	// An uncommitted edit is not tested, and the report says so.
	if err := os.WriteFile(filepath.Join(r.dir, "run.sh"), []byte("exit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := r.options(t)
	opt.K = 2
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "uncommitted changes; they are not tested") {
		t.Errorf("notes = %q, want one about the uncommitted changes", rep.Notes)
	}
	var got []string
	for _, rec := range rep.Runs {
		got = append(got, fmt.Sprintf("%s=%d", rec.Name(), rec.ExitCode))
	}
	want := []string{"base run 1=0", "head run 1=1", "base run 2=0", "head run 2=1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
	if rep.Base.SHA != r.base || rep.Head.SHA != r.head || rep.Base.Rev != r.base {
		t.Errorf("revisions %+v %+v, want %s and %s", rep.Base, rep.Head, r.base, r.head)
	}
}

// TestRunCrashes: a run that crashed leaves evidence the gate reads like
// any other test result: every run's file holds the run's own test case,
// RunTest, failing when the command exited non-zero with no failing test
// in its JUnit file, or left no usable JUnit file, and passing otherwise.
// The driver goes on to the next run. Before, a run with no JUnit file
// stopped the matrix with its earlier runs' files left to be gated, and an
// exit status was not looked at: a head crashing in 3 of 5 runs passed.
func TestRunCrashes(t *testing.T) {
	clean := []tcase{{"a", ""}, {"b", ""}}
	headRuns := func(cond string) string { return "if " + cond + "; then " }
	// Crashes of the audit's reproductions, on the runs where cond holds.
	emptySuite := func(cond string) string { // exit 139, an empty report, as pytest and jest write
		return headRuns(cond) + `mkdir -p out; echo '<testsuite name="s" tests="0" errors="1"/>' > out/junit.xml; exit 139; fi`
	}
	noReport := func(cond string) string { // no report at all: the previous run's file must not pass for it
		return headRuns(cond) + `echo "fatal error: concurrent map writes" >&2; exit 2; fi`
	}
	truncated := func(cond string) string {
		return headRuns(cond) + `mkdir -p out; printf '<testsuite name="s">\n<testcase classname="suite" name="a"/>\n' > out/junit.xml; exit 139; fi`
	}
	signal := func(cond string) string { return headRuns(cond) + `kill -SEGV $$; fi` }
	passesButFails := func(cond string) string { // a passing report, then a crash in teardown
		return headRuns(cond) + `trap 'exit 3' EXIT; fi`
	}
	tests := []struct {
		name       string
		base, head string // the scripts' pre
		headCases  []tcase
		opt        func(*Options)
		verdict    gate.Verdict
		decisions  map[string]string // test → "decision/bucket head failures/runs"
		failures   map[string]string // run → a substring of its Failure; the other runs have none
		note       string            // a substring of the one note
		wantErr    string
	}{{
		name:      "head crashes at start-up in 3 of 5 runs: blocks",
		head:      emptySuite("[ $n -eq 1 ] || [ $n -eq 3 ] || [ $n -eq 4 ]"),
		verdict:   gate.VerdictBlock,
		decisions: map[string]string{RunTest: "block/patch-induced flake 3/5", "suite::a": "pass/ok 0/2"},
		failures: map[string]string{
			"head run 1": "exited with status 139 (128+11: how a shell reports a process killed by signal 11, segmentation fault), but no test failed in its JUnit file (0 test cases)",
			"head run 3": "status 139", "head run 4": "status 139"},
	}, {
		name:      "head writes no report in 3 of 5 runs: blocks, and goes on",
		head:      noReport("[ $n -ge 2 ] && [ $n -le 4 ]"),
		verdict:   gate.VerdictBlock,
		decisions: map[string]string{RunTest: "block/patch-induced flake 3/5", "suite::a": "pass/ok 0/2"},
		failures: map[string]string{
			"head run 2": "exited with status 2 and wrote no JUnit file at out/junit.xml",
			"head run 3": "no JUnit file", "head run 4": "no JUnit file"},
	}, {
		name:      "head cuts its report short in 3 of 5 runs: blocks",
		head:      truncated("[ $n -le 3 ]"),
		verdict:   gate.VerdictBlock,
		decisions: map[string]string{RunTest: "block/patch-induced flake 3/5", "suite::a": "pass/ok 0/2"},
		failures: map[string]string{
			"head run 1": "segmentation fault) and its JUnit file at out/junit.xml is not usable (line 3: unexpected end of file",
			"head run 2": "not usable", "head run 3": "not usable"},
	}, {
		name:      "head is killed by a signal in every run: a regression",
		head:      signal("true"),
		verdict:   gate.VerdictBlock,
		decisions: map[string]string{RunTest: "block/regression 5/5"},
		failures: map[string]string{
			"head run 1": "was killed by signal 11 (segmentation fault) and wrote no JUnit file",
			"head run 2": "signal 11", "head run 3": "signal 11", "head run 4": "signal 11", "head run 5": "signal 11"},
	}, {
		name:      "head exits 3 after passing tests in 4 of 5 runs: blocks",
		head:      passesButFails("[ $n -ne 2 ]"),
		verdict:   gate.VerdictBlock,
		decisions: map[string]string{RunTest: "block/patch-induced flake 4/5", "suite::a": "pass/ok 0/5"},
		failures: map[string]string{
			"head run 1": "exited with status 3, but no test failed in its JUnit file (3 test cases)",
			"head run 3": "status 3", "head run 4": "status 3", "head run 5": "status 3"},
	}, {
		name:      "a failing test with exit status 1 is no failure of the run",
		headCases: []tcase{{"a", ""}, {"b", "true"}},
		verdict:   gate.VerdictBlock,
		decisions: map[string]string{RunTest: "pass/ok 0/5", "suite::b": "block/regression 5/5"},
	}, {
		// The gate's rule for a test red on base: attribution undefined,
		// counted neither as pass nor as block, and said in a note.
		name:      "both sides crash in every run: base red",
		base:      emptySuite("true"),
		head:      emptySuite("true"),
		decisions: map[string]string{RunTest: "invalid/base red: attribution undefined 5/5"},
		note:      "the test command failed as a whole in every base run (base run 1: the test command exited with status 139",
		failures: map[string]string{
			"base run 1": "status 139", "base run 2": "status 139", "base run 3": "status 139", "base run 4": "status 139", "base run 5": "status 139",
			"head run 1": "status 139", "head run 2": "status 139", "head run 3": "status 139", "head run 4": "status 139", "head run 5": "status 139"},
	}, {
		name:    "neither side's first run writes a report: stops, nothing to compare",
		base:    noReport("true"),
		head:    noReport("true"),
		wantErr: "neither side's first run left a usable JUnit file: check the JUnit path out/junit.xml, and that the command runs in a fresh checkout of each side (head run 1: the test command exited with status 2 and wrote no JUnit file",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			headCases := tc.headCases
			if headCases == nil {
				headCases = clean
			}
			r := newRepo(t, "", script("base", clean, tc.base), script("head", headCases, tc.head))
			opt := r.options(t)
			opt.K = 5
			var log bytes.Buffer
			opt.Log = &log
			rep, err := Run(context.Background(), opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run error = %v, want one containing %q", err, tc.wantErr)
				}
				if len(rep.Runs) != 2 {
					t.Errorf("%d runs, want the first pair", len(rep.Runs))
				}
				r.checkClean(t, opt)
				return
			}
			if err != nil {
				t.Fatalf("Run: %v\nlog:\n%s", err, log.String())
			}
			if tc.note == "" && len(rep.Notes) > 0 || tc.note != "" && (len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], tc.note)) {
				t.Errorf("notes = %q, want %q", rep.Notes, tc.note)
			}
			if rep.Pairs != 5 {
				t.Errorf("pairs = %d, want 5: the driver goes on after a failed run", rep.Pairs)
			}
			if tc.verdict != "" && rep.Result.Verdict != tc.verdict {
				t.Errorf("verdict = %s, want %s; reasons:\n%s", rep.Result.Verdict, tc.verdict, strings.Join(rep.Result.Reasons, "\n"))
			}
			got := map[string]string{}
			for _, tr := range rep.Result.Tests {
				if _, ok := tc.decisions[tr.Name]; ok {
					got[tr.Name] = fmt.Sprintf("%s/%s %d/%d", tr.Decision, tr.Bucket, tr.Head.Failures, tr.Head.Runs)
				}
			}
			if diff := cmp.Diff(tc.decisions, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s\nlog:\n%s", diff, log.String())
			}
			for _, rec := range rep.Runs {
				want := tc.failures[rec.Name()]
				if want == "" && rec.Failure != "" || !strings.Contains(rec.Failure, want) {
					t.Errorf("%s: failure %q, want %q", rec.Name(), rec.Failure, want)
				}
				if want != "" && !strings.Contains(log.String(), rec.Name()+": the command ") {
					t.Errorf("log does not report %s", rec.Name())
				}
				if _, err := os.Stat(rec.JUnit); err != nil {
					t.Errorf("%s: %v", rec.Name(), err)
				}
			}
			if len(rep.Runs) != 10 {
				t.Errorf("%d runs recorded, want 10", len(rep.Runs))
			}
			r.checkClean(t, opt)
		})
	}
}

func TestRunBadJUnit(t *testing.T) {
	// Base run 1 writes a broken file and exits 0: the run fails as a
	// whole, and its file in the results holds the run's test case alone,
	// not the broken one.
	garbage := `if [ $n -eq 1 ]; then mkdir -p out; echo '<testsuite><testcase' > out/junit.xml; exit 0; fi`
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, garbage), script("head", []tcase{{"a", ""}}, ""))
	opt := r.options(t)
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	first := rep.Runs[0]
	if first.Name() != "base run 1" || !strings.Contains(first.Failure, "exited with status 0 and its JUnit file at out/junit.xml is not usable (line ") {
		t.Errorf("%s: failure %q, want the broken file", first.Name(), first.Failure)
	}
	h, err := history.Load(context.Background(), []history.Source{{Name: first.JUnit, Open: func() (io.ReadCloser, error) { return os.Open(first.JUnit) }}}, history.Options{})
	if err != nil || len(h.Skipped) > 0 || len(h.Tests) != 1 || h.Tests[0].ID != RunTest || h.Totals.Failed != 1 {
		t.Errorf("%s's file: %v %+v: want the run's failing test case alone", first.Name(), err, h)
	}
	r.checkClean(t, opt)
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitDead(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to check processes")
	}
	for deadline := time.Now().Add(3 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("process %d (the command's child) still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunCancel(t *testing.T) {
	// Head run 1 hangs in a child process; cancelling stops it, child and
	// all, and cleans up.
	hang := `if [ $n -eq 1 ]; then sleep 30 & echo $! > "$COUNTER_DIR/pid.tmp" && mv "$COUNTER_DIR/pid.tmp" "$COUNTER_DIR/pid"; wait; fi`
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, hang))
	opt := r.options(t)
	ctx, cancelCause := context.WithCancelCause(context.Background())
	interrupt := errors.New("interrupt")
	cancel := func() { cancelCause(interrupt) }
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(r.counters, "pid")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	rep, err := Run(ctx, opt)
	wg.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Run took %v after cancellation: the command was not stopped", el)
	}
	if !strings.Contains(err.Error(), "head run 1") || !strings.Contains(err.Error(), "context canceled (interrupt)") {
		t.Errorf("error %q does not name the run and what cancelled it", err)
	}
	if rep == nil || len(rep.Runs) != 1 {
		t.Errorf("report = %+v, want base run 1 only", rep)
	}
	waitDead(t, filepath.Join(r.counters, "pid"))
	r.checkClean(t, opt)
}

func TestRunKillsLeftovers(t *testing.T) {
	// The command exits but leaves a child holding its output open. The run
	// ends within the grace period and the child is killed: the next run
	// starts clean.
	stray := `if [ $n -eq 1 ]; then sleep 30 & echo $! > "$COUNTER_DIR/pid.tmp" && mv "$COUNTER_DIR/pid.tmp" "$COUNTER_DIR/pid"; fi`
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, stray), script("head", []tcase{{"a", ""}}, ""))
	opt := r.options(t)
	opt.K = 1
	var out bytes.Buffer
	opt.Stdout = &out
	start := time.Now()
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Run took %v: it waited for the leftover process", el)
	}
	if rep.Runs[0].ExitCode != 0 || rep.Result.Verdict != gate.VerdictPass {
		t.Errorf("base run 1 exit %d, verdict %s: want 0 and pass", rep.Runs[0].ExitCode, rep.Result.Verdict)
	}
	waitDead(t, filepath.Join(r.counters, "pid"))
	r.checkClean(t, opt)
}

func TestRunErrors(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "base-1.xml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opt  func(*Options)
		want string
	}{
		{"no command", func(o *Options) { o.Command = nil }, "command: required"},
		{"no junit", func(o *Options) { o.JUnit = "" }, "junit path: required"},
		{"absolute junit", func(o *Options) { o.JUnit = "/tmp/junit.xml" }, `junit path "/tmp/junit.xml": must be relative`},
		{"junit outside", func(o *Options) { o.JUnit = "../junit.xml" }, "stay inside the worktree"},
		{"junit pattern", func(o *Options) { o.JUnit = "out/*.xml" }, `junit path "out/*.xml": a pattern`},
		{"junit the checkout", func(o *Options) { o.JUnit = "." }, `junit path ".": names the checkout itself`},
		{"k and max runs differ", func(o *Options) { o.K = 5; o.Gate.MaxRuns = 6 }, "k = 5 and gate max runs = 6"},
		{"initial over k", func(o *Options) { o.K = 3; o.Initial = 4 }, "initial pairs = 4: must be at most k = 3"},
		{"bad gate option", func(o *Options) { o.Gate.P1 = 2 }, "gate options: p1 = 2"},
		{"unknown base", func(o *Options) { o.Base = "no-such-branch" }, `base revision "no-such-branch": not a commit`},
		{"option-like head", func(o *Options) { o.Head = "--all" }, `head revision "--all": a revision may not start with '-'`},
		{"not a repository", func(o *Options) { o.Repo = t.TempDir() }, "not a git repository"},
		{"results dir not empty", func(o *Options) { o.ResultsDir = full }, "not empty"},
		{"no such program", func(o *Options) { o.Command = []string{"./no-such-program"} }, `base run 1: command "./no-such-program" did not start`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := r.options(t)
			tc.opt(&opt)
			_, err := Run(context.Background(), opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run error = %v, want one containing %q", err, tc.want)
			}
			r.checkClean(t, opt)
			// No run completed: the results directory is left as it
			// was, empty (the manifest goes again), so it can be given
			// again.
			if entries, _ := os.ReadDir(opt.ResultsDir); opt.ResultsDir != full && len(entries) != 0 {
				t.Errorf("results directory %s holds %d entries (%s) after a failed start, want none", opt.ResultsDir, len(entries), entries[0].Name())
			}
		})
	}
}

func TestRunEnv(t *testing.T) {
	pinned := []string{"TZ=UTC", "LC_ALL=C.UTF-8", "PYTHONHASHSEED=0", "TMPDIR=/w/tmp/base-1", "PWD=/w/base"}
	// GOFLAGS gets -count=1, so that go test does not replay cached
	// results across the runs, and keeps the caller's flags.
	for _, tc := range []struct {
		name, goflags, want string
	}{
		{"unset", "", "GOFLAGS=-count=1"},
		{"empty", "GOFLAGS=", "GOFLAGS=-count=1"},
		{"kept", "GOFLAGS=-race -mod=mod", "GOFLAGS=-race -mod=mod -count=1"},
		{"a count of the caller's", "GOFLAGS=-count=3 -race", "GOFLAGS=-count=3 -race"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := []string{"PATH=/bin", "TZ=Asia/Tokyo", "GIT_DIR=/repo/.git", "TMPDIR=/var/tmp", "LC_ALL=fr_FR.UTF-8", "PWD=/elsewhere"}
			if tc.goflags != "" {
				base = append(base, tc.goflags)
			}
			got := runEnv(base, "/w/base", "/w/tmp/base-1")
			want := append([]string{"PATH=/bin"}, append(pinned, tc.want)...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("runEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// junitSource is a one-test JUnit document as a history source.
func junitSource(name, class, test string, failed bool) history.Source {
	body := fmt.Sprintf(`<testcase classname=%q name=%q/>`, class, test)
	if failed {
		body = fmt.Sprintf(`<testcase classname=%q name=%q><failure message="boom"/></testcase>`, class, test)
	}
	doc := fmt.Sprintf(`<testsuite name="s">%s</testsuite>`, body)
	return history.Source{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil }}
}

// TestRunInAGitHook: git runs a pre-commit hook with GIT_INDEX_FILE set to
// a path relative to the repository's top (.git/index). The driver's own
// git calls (worktree add) must not take it, or they fail with "index file
// open failed: Not a directory".
func TestRunInAGitHook(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	t.Setenv("GIT_INDEX_FILE", ".git/index")
	opt := r.options(t)
	opt.K = 1
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("matrix in a hook: %v", err)
	}
	if rep.Result.Verdict != gate.VerdictPass {
		t.Errorf("verdict %s, want pass", rep.Result.Verdict)
	}
}

// TestRunTimeout: a patch that makes the suite hang in head runs 2 to 5.
// With a run timeout each hung run is killed and counted as a failed run
// (its test case fails, naming the timeout), the matrix goes on, and the
// gate blocks, where the matrix once waited until CI killed the job.
func TestRunTimeout(t *testing.T) {
	hang := `if [ $n -ge 2 ]; then sleep 30; fi`
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, hang))
	opt := r.options(t)
	opt.K, opt.Initial, opt.RunTimeout = 5, 5, 500*time.Millisecond
	start := time.Now()
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("Run took %v: the hung runs were not cut at the timeout", el)
	}
	var cut []string
	for _, rr := range rep.Runs {
		if strings.Contains(rr.Failure, "did not finish within the run timeout (500ms)") {
			cut = append(cut, rr.Name())
		}
	}
	if len(cut) != 4 || rep.Result.Verdict != gate.VerdictBlock {
		t.Errorf("runs cut %v, verdict %s; want head runs 2 to 5 cut and a block", cut, rep.Result.Verdict)
	}
}

// TestRunSaysWhatIsNotTested: untracked files, submodules and ignored
// dependency directories (node_modules) do not reach the worktrees, so what
// they hold is not tested or not there; the report says so.
func TestRunSaysWhatIsNotTested(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	os.WriteFile(filepath.Join(r.dir, "new_test.py"), []byte("def test_x(): pass\n"), 0o644)
	os.WriteFile(filepath.Join(r.dir, ".gitmodules"), []byte("[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n"), 0o644)
	os.WriteFile(filepath.Join(r.dir, ".gitignore"), []byte("node_modules/\n"), 0o644)
	os.MkdirAll(filepath.Join(r.dir, "node_modules", "jest"), 0o755)
	os.MkdirAll(filepath.Join(r.dir, ".venv"), 0o755) // not ignored: one more untracked file's directory, no note
	os.WriteFile(filepath.Join(r.dir, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	gitT(t, r.dir, "add", ".gitmodules", ".gitignore")
	gitT(t, r.dir, "commit", "-q", "-m", "submodules")
	r.head = gitT(t, r.dir, "rev-parse", "HEAD")
	opt := r.options(t)
	opt.K = 1
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"has 2 untracked file(s); they are not tested", "head declares submodules (.gitmodules); they are not initialised",
		"the working tree has node_modules/, which git ignores, so the worktrees lack it"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", rep.Notes, want)
		}
	}
}

// TestRunHeadBehindBase: a pull request's base.sha is its base branch's
// tip, which may have moved on since the branch left it. A test added on
// the base since is then not on head: compared with the tip it read as
// removed by the patch, and a clean pull request was blocked. The base side
// runs at the merge base, and says so; --exact-base runs the tip itself.
func TestRunHeadBehindBase(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	branched := r.base
	gitT(t, r.dir, "checkout", "-q", "--detach", r.base)
	os.WriteFile(filepath.Join(r.dir, "run.sh"), []byte(script("base", []tcase{{"a", ""}, {"added_on_main", ""}}, "")), 0o644)
	gitT(t, r.dir, "commit", "-q", "-am", "main adds a test")
	tip := gitT(t, r.dir, "rev-parse", "HEAD")
	r.base = tip
	for _, tc := range []struct {
		name    string
		exact   bool
		verdict gate.Verdict
		ran     string
	}{
		{"merge base", false, gate.VerdictPass, branched},
		{"exact base", true, gate.VerdictBlock, tip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := r.options(t)
			opt.K, opt.ExactBase = 5, tc.exact
			rep, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result.Verdict != tc.verdict || rep.Base.SHA != tc.ran {
				t.Errorf("verdict %s, base run at %s; want %s at %s\n%v", rep.Result.Verdict, rep.Base.SHA, tc.verdict, tc.ran, rep.Result.Reasons)
			}
			said := strings.Contains(strings.Join(rep.Notes, "\n"), "is 1 commit(s) behind base")
			if tc.exact == said || (!tc.exact && rep.Base.Tip != tip) {
				t.Errorf("notes %q, tip %q: the merge base is said and recorded only when it is run", rep.Notes, rep.Base.Tip)
			}
		})
	}
}

// TestRunHeadAncestorOfBase: --base HEAD --head HEAD~1 ran the base side at
// their merge base, HEAD~1, and so compared HEAD~1 with itself, with only a
// note: whatever the commit between did, nothing could block. It is an
// error now, before any run; --exact-base compares the two as given.
func TestRunHeadAncestorOfBase(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", "broken"}}, ""))
	opt := r.options(t)
	opt.Base, opt.Head, opt.K = r.head, r.base, 1
	rep, err := Run(context.Background(), opt)
	if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "is an ancestor of base") || !strings.Contains(err.Error(), "were --base and --head swapped?") || len(rep.Runs) != 0 {
		t.Fatalf("head an ancestor of base: err %v, %d runs", err, len(rep.Runs))
	}
	opt = r.options(t)
	opt.Base, opt.Head, opt.K, opt.ExactBase = r.head, r.base, 1, true
	if rep, err = Run(context.Background(), opt); err != nil || rep.Base.SHA != r.head {
		t.Errorf("--exact-base: err %v, base run at %s, want %s", err, rep.Base.SHA, r.head)
	}
	// The same commit on both sides (an A/A run) is allowed.
	opt = r.options(t)
	opt.Base, opt.K = r.head, 1
	if _, err = Run(context.Background(), opt); err != nil {
		t.Errorf("head = base: %v", err)
	}
}

// TestRunUnrelatedBase: a base with no common ancestor with head (here an
// orphan commit; on CI, a shallow clone) is run as given, saying what that
// risks.
func TestRunUnrelatedBase(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	gitT(t, r.dir, "checkout", "-q", "--orphan", "other")
	gitT(t, r.dir, "commit", "-q", "-m", "unrelated")
	r.base = gitT(t, r.dir, "rev-parse", "HEAD")
	opt := r.options(t)
	opt.K = 1
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Base.SHA != r.base || !strings.Contains(strings.Join(rep.Notes, "\n"), "have no common ancestor here") {
		t.Errorf("base run at %s (want %s), notes %q", rep.Base.SHA, r.base, rep.Notes)
	}
}

// TestRunPathsInNames: base and head run in worktrees of their own, and
// some tools write where a test is into its name (doctest's classname is
// the source file's full path, pytest ids built from paths). The paths
// inside the worktree are made relative to it, so a clean patch compares
// each test with itself (before: every test "removed" on head, and block).
func TestRunPathsInNames(t *testing.T) {
	sh := `mkdir -p out sub
printf '<testsuite name="s"><testcase classname="%s/tests/math_test.cpp" name="adds" file="%s/tests/math_test.cpp"/><testcase classname="c" name="reads[%s/sub/data.json]"/></testsuite>' "$PWD" "$PWD" "$PWD" > out/junit.xml
`
	r := newRepo(t, "", sh, sh+"\n# head\n")
	opt := r.options(t)
	opt.K = 3
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Verdict != gate.VerdictPass {
		t.Errorf("verdict %s, want pass\n%v", rep.Result.Verdict, rep.Result.Reasons)
	}
	b, err := os.ReadFile(filepath.Join(opt.ResultsDir, "head-1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`classname="tests/math_test.cpp"`)) || !bytes.Contains(b, []byte(`name="reads[sub/data.json]"`)) || bytes.Contains(b, []byte(opt.WorkDir)) {
		t.Errorf("head-1.xml keeps the worktree's path:\n%s", b)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "they are kept relative to it") {
		t.Errorf("notes %q do not say the paths were made relative", rep.Notes)
	}
}

// TestRunResetsSavedExamples: Hypothesis saves a failing example in
// .hypothesis/ and replays it first in the next run, so once a run found
// one, every later run of its side failed (the audit: a flaky property
// test blocked about a third of clean patches). The directory is put back
// as committed before each run: only the run that found it fails.
func TestRunResetsSavedExamples(t *testing.T) {
	sh := `mkdir -p out
c="$COUNTER_DIR/n"; n=$(( $(cat "$c" 2>/dev/null || echo 0) + 1 )); echo $n > "$c"
if [ -f .hypothesis/examples/x ] || [ $n -eq 1 ]; then
  mkdir -p .hypothesis/examples; touch .hypothesis/examples/x
  echo '<testsuite name="s"><testcase classname="c" name="prop"><failure message="Falsifying example"/></testcase></testsuite>' > out/junit.xml; exit 1
fi
echo '<testsuite name="s"><testcase classname="c" name="prop"/></testsuite>' > out/junit.xml
`
	r := newRepo(t, "", sh, sh+"\n# head\n")
	opt := r.options(t)
	opt.K, opt.Initial = 5, 5
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(opt.ResultsDir, "*.xml"))
	failed := 0
	for _, f := range files {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte("Falsifying")) {
			failed++
		}
	}
	if failed != 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), ".hypothesis is put back as committed") {
		t.Errorf("%d of %d runs failed, want 1; notes %q", failed, len(files), rep.Notes)
	}
}

// TestRunPathsResolvedAndBare: the worktree's resolved path may end with
// the path it was made at (macOS: /var is /private/var), and a tool may
// write the worktree itself, with no path after it (a rootdir in an id):
// both become relative, so a clean patch passes (the review: the resolved
// path was left as ".../private" plus the rest, and the bare one blocked).
func TestRunPathsResolvedAndBare(t *testing.T) {
	sh := `mkdir -p out
printf '<testsuite name="s"><testcase classname="%s/tests/math_test.py" name="adds"/><testcase classname="c" name="root[%s]"/></testsuite>' "$(pwd -P)" "$PWD" > out/junit.xml
`
	r := newRepo(t, "", sh, sh+"\n# head\n")
	opt := r.options(t)
	opt.K = 2
	top := t.TempDir()
	link := filepath.Join(top, "tmp", "w")
	real := filepath.Join(top, "private", top, "tmp", "w") // ends with link
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	opt.WorkDir = link
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(opt.ResultsDir, "head-1.xml"))
	if rep.Result.Verdict != gate.VerdictPass || !bytes.Contains(b, []byte(`classname="tests/math_test.py"`)) || !bytes.Contains(b, []byte(`name="root[.]"`)) {
		t.Errorf("verdict %s, head-1.xml:\n%s", rep.Result.Verdict, b)
	}
}

// TestRunCrashedBaseRunDeletion: one base run crashes before it writes
// its report, and the patch deletes c::c: every test is missing from one
// base run, so c::c is no removal by the per-test rule, and the test count,
// a median over runs, blocks it (the review: it passed).
func TestRunCrashedBaseRunDeletion(t *testing.T) {
	base := `c="$COUNTER_DIR/base"; n=$(( $(cat "$c" 2>/dev/null || echo 0) + 1 )); echo $n > "$c"
[ $n -eq 2 ] && kill -SEGV $$
mkdir -p out
echo '<testsuite name="s"><testcase classname="c" name="a"/><testcase classname="c" name="b"/><testcase classname="c" name="c"/></testsuite>' > out/junit.xml
`
	head := `mkdir -p out
echo '<testsuite name="s"><testcase classname="c" name="a"/><testcase classname="c" name="b"/></testsuite>' > out/junit.xml
`
	r := newRepo(t, "", base, head)
	opt := r.options(t)
	opt.K, opt.Initial = 5, 5
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Verdict != gate.VerdictBlock {
		t.Errorf("verdict %s: the undeclared deletion of c::c passes; properties %v", rep.Result.Verdict, rep.Result.Properties)
	}
}

// TestRunPathsEscaped: a work directory whose path holds "&" is written
// escaped in the JUnit file ("&amp;"), and is made relative as well.
func TestRunPathsEscaped(t *testing.T) {
	sh := `mkdir -p out
p=$(printf '%s' "$PWD" | sed 's/&/\&amp;/g')
printf '<testsuite name="s"><testcase classname="%s/t.py" name="x"/></testsuite>' "$p" > out/junit.xml
`
	r := newRepo(t, "", sh, sh+"\n# head\n")
	opt := r.options(t)
	opt.K = 2
	opt.WorkDir = filepath.Join(t.TempDir(), "a&b")
	os.MkdirAll(opt.WorkDir, 0o755)
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(opt.ResultsDir, "head-1.xml"))
	if rep.Result.Verdict != gate.VerdictPass || !bytes.Contains(b, []byte(`classname="t.py"`)) {
		t.Errorf("verdict %s, head-1.xml:\n%s", rep.Result.Verdict, b)
	}
}

// TestRunTimeLimit: a suite of 10-minute base and 12-minute head runs under
// a job limit. Five pairs take 110 minutes; a CI job with timeout-minutes:
// 60 was cancelled in the third pair, and a required check reads a
// cancelled job as a failure, whatever the runs showed. With a time limit
// the driver starts no pair that would end past it, and the gate looks at
// the pairs done. The clock is the scripts' own: each run adds its minutes
// to a file that Options.Now reads.
func TestRunTimeLimit(t *testing.T) {
	clockRepo := func(t *testing.T, baseMin, headMin int) (repo, Options) {
		tick := func(m int) string { return fmt.Sprintf(`printf '%%*s' %d '' >> "$COUNTER_DIR/clock"`, m) }
		r := newRepo(t, "", script("base", []tcase{{"a", ""}, {"b", "[ $n -eq 1 ]"}}, tick(baseMin)),
			script("head", []tcase{{"a", "true"}, {"b", ""}}, tick(headMin)))
		opt := r.options(t)
		t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
		opt.Now = func() time.Time {
			fi, err := os.Stat(filepath.Join(r.counters, "clock"))
			if err != nil {
				return t0
			}
			return t0.Add(time.Duration(fi.Size()) * time.Minute)
		}
		opt.K, opt.Initial = 5, 5
		return r, opt
	}

	t.Run("stops before the pair that would end past it", func(t *testing.T) {
		r, opt := clockRepo(t, 10, 12)
		opt.TimeLimit = time.Hour
		rep, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if runs, _ := r.log(t); rep.Pairs != 2 || !cmp.Equal(runs, interleaved(2)) {
			t.Errorf("pairs %d, runs %v; want 2 pairs: a third would end at 66 of 60 minutes", rep.Pairs, runs)
		}
		for _, want := range []string{"the time limit (1h0m0s) leaves no room for pair 3: 44m0s gone, the longest pair took 22m0s",
			"after 2 pairs"} {
			if !strings.Contains(rep.Stop, want) {
				t.Errorf("stop %q lacks %q", rep.Stop, want)
			}
		}
		if r := strings.Join(rep.Result.Reasons, "\n"); !strings.Contains(r, "flakegate matrix stopped after 2 of at most 5 pairs: the time limit (1h0m0s)") {
			t.Errorf("reasons %q do not say the verdict rests on 2 of 5 pairs", r)
		}
		// The gate looked at the two pairs, before the five it waits for
		// without a limit.
		if len(rep.Result.Tests) == 0 || rep.Result.Verdict == "" {
			t.Errorf("no verdict on the pairs done: %+v", rep.Result)
		}
		for _, tr := range rep.Result.Tests {
			if tr.Name == "suite::a" && tr.Head.Runs != 2 {
				t.Errorf("suite::a read in %d head runs, want 2", tr.Head.Runs)
			}
		}
		r.checkClean(t, opt)
	})

	t.Run("a limit that holds every pair changes nothing", func(t *testing.T) {
		_, opt := clockRepo(t, 10, 12)
		opt.TimeLimit = 110 * time.Minute
		rep, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Pairs != 5 || strings.Contains(rep.Stop, "time limit") {
			t.Errorf("pairs %d, stop %q; want the 5 pairs, not stopped by the limit", rep.Pairs, rep.Stop)
		}
	})

	t.Run("one pair does not fit", func(t *testing.T) {
		r, opt := clockRepo(t, 35, 35)
		opt.TimeLimit = time.Hour
		rep, err := Run(context.Background(), opt)
		want := "the time limit (1h0m0s) cannot hold one pair: base run 1 took 35m0s and 35m0s of the limit is gone"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err %v; want %q", err, want)
		}
		if runs, _ := r.log(t); !cmp.Equal(runs, []string{"base 1"}) || len(rep.Runs) != 1 {
			t.Errorf("runs %v (report %d); want base run 1 only", runs, len(rep.Runs))
		}
	})

	// A run that hangs, with no --run-timeout: the limit kills it, as it
	// holds whatever the runs do, and its pair is left out (the matrix
	// ran on, past the limit, until CI cancelled the job).
	t.Run("a run still going at the limit is cut", func(t *testing.T) {
		r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, `[ "$n" -eq 2 ] && exec sleep 60`))
		opt := r.options(t)
		opt.K, opt.Initial, opt.TimeLimit = 5, 5, 3*time.Second
		start := time.Now()
		rep, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("took %s: the hung run was not cut at the limit", took)
		}
		if rep.Pairs != 1 || len(rep.Runs) != 2 || !strings.Contains(rep.Stop, "the time limit (3s) ended while head run 2 was running") ||
			!strings.Contains(rep.Stop, "--run-timeout") {
			t.Errorf("pairs %d, runs %d, stop %q; want 1 pair, the cut said, and --run-timeout named", rep.Pairs, len(rep.Runs), rep.Stop)
		}
		files, _ := filepath.Glob(filepath.Join(rep.ResultsDir, "*.xml"))
		if len(files) != 2 {
			t.Errorf("results %v: want the first pair's two files, not the cut pair's base run", files)
		}
		r.checkClean(t, opt)
	})

	t.Run("negative", func(t *testing.T) {
		_, opt := clockRepo(t, 1, 1)
		opt.TimeLimit = -time.Minute
		if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "time limit = -1m0s: must not be negative") {
			t.Errorf("err %v", err)
		}
	})
}

// TestLooksShareAlphaPR: the driver looks after 5, 10 and 20 pairs at
// most, at shares of alpha-pr that grow with the pairs read (the look after
// 5 pairs at 5/35), and says so; with k = 5 it looks once, at alpha-pr.
func TestLooksShareAlphaPR(t *testing.T) {
	for _, tc := range []struct {
		k      int
		alpha  float64
		reason string
	}{
		{20, 0.05 * 5 / 35, "flakegate matrix looks at most 3 times (after 5, 10 and 20 pairs, fewer when nothing is pending), at shares of alpha-pr 0.05 that grow with the pairs read (5/35, 10/35, 20/35), this look after 5 pairs at 0.00714"},
		{12, 0.05 * 5 / 27, "(after 5, 10 and 12 pairs"},
		{5, 0.05, ""},
	} {
		r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", "true"}}, ""))
		opt := r.options(t)
		opt.K = tc.k
		rep, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		reasons := strings.Join(rep.Result.Reasons, "\n")
		if math.Abs(rep.Result.Params.AlphaPR-tc.alpha) > 1e-15 || tc.reason != "" && !strings.Contains(reasons, tc.reason) ||
			tc.reason == "" && strings.Contains(reasons, "looks at most") {
			t.Errorf("k %d: alpha-pr %g, want %g; reasons:\n%s", tc.k, rep.Result.Params.AlphaPR, tc.alpha, reasons)
		}
		if rep.Result.Verdict != gate.VerdictBlock || rep.Pairs != 5 {
			t.Errorf("k %d: %s after %d pairs, want a block after 5", tc.k, rep.Result.Verdict, rep.Pairs)
		}
	}
}

// TestRunCrashesNowAndThen: on even head runs most of the suite fails (a
// race in a shared fixture the patch added), never on base. Each such run
// is left out as an infrastructure failure; before, the driver stopped
// after 5 pairs, "no test failed on either side", inconclusive, exit 0.
// Now it runs pairs while the split could still be told, and blocks.
func TestRunCrashesNowAndThen(t *testing.T) {
	even := "[ $((n % 2)) -eq 0 ]"
	var base, head []tcase
	for _, name := range []string{"a", "b", "c", "d"} {
		base = append(base, tcase{name, ""})
		head = append(head, tcase{name, even})
	}
	r := newRepo(t, "", script("base", base, ""), script("head", head, ""))
	opt := r.options(t)
	opt.K = 20
	var log bytes.Buffer
	opt.Log = &log
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", err, log.String())
	}
	c := rep.Result.Crashes
	if rep.Result.Verdict != gate.VerdictBlock || c == nil || !c.Block || rep.Pairs <= 5 {
		t.Fatalf("verdict %s after %d pairs, crashes %+v; want block after more than 5 pairs\nreasons:\n%s\nlog:\n%s",
			rep.Result.Verdict, rep.Pairs, c, strings.Join(rep.Result.Reasons, "\n"), log.String())
	}
	if !strings.HasPrefix(rep.Result.Reasons[0], "the patch crashes the suite now and then") {
		t.Errorf("first reason %q", rep.Result.Reasons[0])
	}
	if !strings.Contains(log.String(), "head runs failed most of the suite against 0 of 5 base runs; running") ||
		!strings.Contains(rep.Stop, "the patch crashes the suite now and then") {
		t.Errorf("stop %q; log:\n%s", rep.Stop, log.String())
	}
}

// A test blocks after 5 of 20 pairs, with one head run of five an outage:
// the driver stopped for the block, not for a budget that cannot tell.
func TestStopReasonBlockWithAnOutage(t *testing.T) {
	res := gate.Result{
		Tests:   []gate.TestResult{{Name: "c::t", Decision: gate.Block, Head: gate.Side{Runs: 4, Failures: 4}}},
		Crashes: &gate.CrashSplit{BaseRuns: 5, HeadRuns: 5, HeadOutages: 1, More: true},
	}
	got := stopReason(res, 5, 20)
	if strings.Contains(got, "cannot tell apart") {
		t.Errorf("stop reason %q", got)
	}
}

// TestRunTimeoutShorterThanAStart: a run timeout that ends before the
// command can start says so (it said "context deadline exceeded").
func TestRunTimeoutShorterThanAStart(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	opt := r.options(t)
	opt.K, opt.RunTimeout = 1, time.Nanosecond
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), `command "sh" did not start within the run timeout (1ns): give --run-timeout at least the time a run takes`) {
		t.Errorf("Run error = %v", err)
	}
}

// TestRunSmallInitialStillBlocks: with --initial 1 or 2 and no history, a
// test that fails every head run and no base run read, at the first look's
// small share of alpha-pr, as one no more runs could settle: the driver
// stopped after 1 or 2 pairs, inconclusive, exit 0, while --initial 3
// blocked after 6. More pairs decide it, so the driver runs them.
func TestRunSmallInitialStillBlocks(t *testing.T) {
	for _, initial := range []int{1, 2} {
		r := newRepo(t, "", script("base", []tcase{{"a", ""}, {"b", ""}}, ""), script("head", []tcase{{"a", ""}, {"b", "true"}}, ""))
		opt := r.options(t)
		opt.K, opt.Initial = 20, initial
		rep, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Result.Verdict != gate.VerdictBlock || rep.Pairs <= initial {
			t.Errorf("--initial %d: %s after %d pairs (%s), want a block after more pairs", initial, rep.Result.Verdict, rep.Pairs, rep.Stop)
		}
		r.checkClean(t, opt)
	}
}

// TestRunJUnitDirectory: --junit naming the directory the runner writes
// its reports in. The error said the file was "not a regular file: it
// crashed while writing it, or wrote something else", and, had a run come
// after, "removing the previous run's JUnit file: directory not empty".
func TestRunJUnitDirectory(t *testing.T) {
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, ""))
	opt := r.options(t)
	opt.JUnit = "out"
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "a directory, not a file") {
		t.Errorf("Run error = %v, want one saying the JUnit path is a directory", err)
	}
	r.checkClean(t, opt)
}

// TestRunKillsWhatATestLeftInItsOwnSession: a test that starts a server
// with setsid (Python's start_new_session=True) puts it out of reach of
// the kill of the command's group; it ran on into the next runs and past
// flakegate. On Linux flakegate adopts such processes (a child subreaper),
// kills them after the run, and says so.
func TestRunKillsWhatATestLeftInItsOwnSession(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only: a child subreaper")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pids := filepath.Join(t.TempDir(), "pids")
	daemon := `setsid sh -c 'echo $$ >> "` + pids + `"; exec sleep 300' </dev/null >/dev/null 2>&1 &
sleep 0.2`
	r := newRepo(t, "", script("base", []tcase{{"a", ""}}, ""), script("head", []tcase{{"a", ""}}, daemon))
	opt := r.options(t)
	opt.K, opt.Initial = 1, 1
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the process %d the test started with setsid still runs after the matrix", pid)
		}
	}
	if n := strings.Join(rep.Notes, "\n"); !strings.Contains(n, "head run 1 left 1 process(es) running in a session of its own (setsid)") {
		t.Errorf("notes do not say what was killed:\n%s", n)
	}
}
