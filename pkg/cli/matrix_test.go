package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestMatrixCLI runs the sequential driver on a real repository whose head
// commit breaks a test.
func TestMatrixCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	script := func(login string) string {
		return "#!/bin/sh\nmkdir -p out\nprintf '%s' '<testsuite name=\"s\"><testcase classname=\"t\" name=\"stable\"/><testcase classname=\"t\" name=\"login\"" + login + "</testsuite>' > out/junit.xml\n"
	}
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("/>")), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script(`><failure message="KeyError"/></testcase>`)), 0o755)
	git(t, repo, "commit", "-q", "-am", "break login")

	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	results := filepath.Join(t.TempDir(), "results")
	r := run(t, fixedClock, "matrix", "--base", "base", "--head", "HEAD", "-k", "3", "--junit", "out/junit.xml", "--results", results, "--", "sh", "run.sh")
	if r.code != 1 || !strings.Contains(r.stdout, "verdict: block") || !strings.Contains(r.stdout, "t::login") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*.xml"))
	if len(files) != 6 {
		t.Errorf("results = %v, want 3 base and 3 head files", files)
	}
	if r := run(t, nil, "matrix", "--base", "base", "--junit", "x.xml"); r.code != 2 || !strings.Contains(r.stderr, "a command after -- are required") {
		t.Errorf("no command: exit %d: %s", r.code, r.stderr)
	}
	// What was asked is wrong: bad usage, exit 2.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--base", "nosuchrev", "--junit", "out/junit.xml"}, `base revision "nosuchrev": not a commit`},
		{[]string{"--base", "base", "--junit", "/etc/passwd"}, `junit path "/etc/passwd": must be relative`},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--results", results}, "not empty: give an empty or new directory"},
	} {
		args := append(append([]string{"matrix"}, tc.args...), "--", "sh", "run.sh")
		if r := run(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, tc.msg) || strings.Contains(r.stderr, "bad usage") {
			t.Errorf("%v: exit %d: %s", tc.args, r.code, r.stderr)
		}
	}
	// A command that writes no JUnit file fails the first run; the
	// temporary results directory it made is removed, not named.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r = run(t, nil, "matrix", "--base", "base", "--junit", "out/none.xml", "--", "true")
	left, _ := filepath.Glob(filepath.Join(tmp, "flakegate-matrix-results-*"))
	if r.code != 1 || len(left) != 0 || strings.Contains(r.stderr, "JUnit files are in") {
		t.Errorf("a run with no JUnit file: exit %d, left %v: %s", r.code, left, r.stderr)
	}
	// Nor when the first run's file is refused (its copy was kept to
	// check it), and no cleanup note says otherwise.
	os.WriteFile(filepath.Join(repo, "bad.sh"), []byte("#!/bin/sh\nmkdir -p out\necho '<testsuite' > out/junit.xml\n"), 0o755)
	r = run(t, nil, "matrix", "--base", "HEAD", "--junit", "out/junit.xml", "--", "sh", filepath.Join(repo, "bad.sh"))
	left, _ = filepath.Glob(filepath.Join(tmp, "flakegate-matrix-results-*"))
	if r.code != 1 || len(left) != 0 || strings.Contains(r.stderr, "cleanup") {
		t.Errorf("a run whose file is refused: exit %d, left %v: %s", r.code, left, r.stderr)
	}
}

// TestShellQuote: a path with a quote in it stays one word.
func TestShellQuote(t *testing.T) {
	out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(`/tmp/it's "x" $HOME`)).Output()
	if err != nil || string(out) != `/tmp/it's "x" $HOME` {
		t.Errorf("sh read %q, %v", out, err)
	}
}

// TestMatrixAndGateAgree runs the sequential driver, then `flakegate gate`
// on the files it kept, with the command line it prints: the same runs must
// give the same verdict and the same decision for every test (one decision
// procedure). The head's failures come early and stop, so a reader that lost
// the run order, or looked only at the end, would disagree.
func TestMatrixAndGateAgree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	counters := t.TempDir()
	t.Setenv("COUNTER_DIR", counters)
	repo := t.TempDir()
	// n counts this side's runs; tests fail by their conditions on n.
	script := func(side string, fails map[string]string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/sh\nc=\"$COUNTER_DIR/%s\"\nn=$(( $(cat \"$c\" 2>/dev/null || echo 0) + 1 ))\necho \"$n\" > \"$c\"\nmkdir -p out\n{\necho '<testsuite name=\"s\">'\n", side)
		for i := range 12 {
			name := fmt.Sprintf("t%02d", i)
			cond := fails[name]
			if cond == "" {
				cond = "false"
			}
			fmt.Fprintf(&b, "if %s; then echo '<testcase classname=\"c\" name=\"%s\"><failure message=\"boom\"/></testcase>'; else echo '<testcase classname=\"c\" name=\"%s\"/>'; fi\n", cond, name, name)
		}
		b.WriteString("echo '</testsuite>'\n} > out/junit.xml\n")
		return b.String()
	}
	flaky := "[ $((n % 3)) -eq 1 ]"
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("base", map[string]string{"t01": flaky})), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("head", map[string]string{
		"t01": flaky,                          // the pre-existing flake, as on base
		"t02": "[ $n -le 3 ]",                 // fails early, then passes
		"t03": "[ $n -eq 2 ] || [ $n -eq 7 ]", // a new flake, seen twice
	})), 0o755)
	git(t, repo, "commit", "-q", "-am", "patch")

	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	results := filepath.Join(t.TempDir(), "results")
	mjson := filepath.Join(t.TempDir(), "matrix.json")
	m := run(t, fixedClock, "matrix", "--base", "base", "-k", "10", "--junit", "out/junit.xml", "--results", results, "--json", mjson,
		"--on-inconclusive", "fail", "--p1", "0.8", "--", "sh", "run.sh")
	if m.code == 2 {
		t.Fatalf("matrix: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
	_, line, ok := strings.Cut(m.stdout, "the same verdict from the files: flakegate ")
	if !ok {
		t.Fatalf("matrix printed no gate command:\n%s", m.stdout)
	}
	line, _, _ = strings.Cut(line, "\n")
	// Every option that is not gate's default is in it.
	if !strings.Contains(line, " --p1 0.8") || !strings.Contains(line, " --on-inconclusive fail") {
		t.Errorf("the gate command lacks matrix's options: %s", line)
	}
	var args []string
	for _, f := range strings.Fields(line) {
		args = append(args, strings.Trim(f, "'"))
	}
	gjson := filepath.Join(t.TempDir(), "gate.json")
	g := run(t, fixedClock, append(args, "--json", gjson)...)
	if g.code != m.code {
		t.Errorf("exit: matrix %d, gate %d\nmatrix:\n%s\ngate:\n%s", m.code, g.code, m.stdout, g.stdout)
	}
	decisions := func(path string) map[string]string {
		var res struct {
			Verdict string
			Tests   []struct {
				Name, Decision, Bucket string
				Head                   struct{ Runs, Failures int }
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{"verdict": res.Verdict}
		for _, tr := range res.Tests {
			out[tr.Name] = fmt.Sprintf("%s/%s %d/%d", tr.Decision, tr.Bucket, tr.Head.Failures, tr.Head.Runs)
		}
		return out
	}
	md, gd := decisions(mjson), decisions(gjson)
	if diff := cmp.Diff(md, gd); diff != "" {
		t.Errorf("matrix and gate disagree on the same files (-matrix +gate):\n%s\nmatrix:\n%s", diff, m.stdout)
	}
	// The early failures of c::t02 are seen at the first look, whoever reads.
	if got := md["c::t02"]; !strings.HasPrefix(got, "block/") {
		t.Errorf("c::t02 (failed head runs 1-3, then passed): %s, want block\n%s", got, m.stdout)
	}
	if got := md["c::t01"]; !strings.HasPrefix(got, "pass/") {
		t.Errorf("c::t01 (the same flake on both sides): %s, want pass\n%s", got, m.stdout)
	}
}
