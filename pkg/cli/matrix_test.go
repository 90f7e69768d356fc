package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/matrix"
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
	// Runs without --results keep theirs in a directory of TMPDIR.
	t.Setenv("TMPDIR", t.TempDir())
	results := filepath.Join(t.TempDir(), "results")
	// --block-exit-code: the same block, with the exit status asked for (0
	// in the quickstarts, whose flakegate step gives the verdict).
	for _, code := range []int{0, 3} {
		b := run(t, fixedClock, "matrix", "--base", "base", "-k", "3", "--junit", "out/junit.xml", "--block-exit-code", strconv.Itoa(code), "--", "sh", "run.sh")
		if b.code != code || !strings.Contains(b.stdout, "verdict: block") {
			t.Errorf("--block-exit-code %d: exit %d\n%s%s", code, b.code, b.stdout, b.stderr)
		}
	}
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
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--results", filepath.Join(repo, "run.sh")}, "is a file: give an empty or new directory"},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--time-limit", "-5m"}, "time limit = -5m0s: must not be negative (0: no limit)"},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--block-exit-code", "300"}, "--block-exit-code 300: want 0 to 125"},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--run-timeout", "-1s"}, "run timeout = -1s: must not be negative"},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "-k", "1e3"}, `invalid value "1e3" for flag -k: want a whole number: -k must be 1 to 100`},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "-k", "99999999999"}, `invalid value "99999999999" for flag -k: -k must be 1 to 100`},
		// Said before any pair runs (it was said after all of them, and
		// the verdict was not printed).
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--json", "/nonexistent/dir/x.json"}, "--json: the directory of /nonexistent/dir/x.json: stat /nonexistent/dir: no such file or directory"},
		{[]string{"--base", "base", "--junit", "out/junit.xml", "--json", repo}, "is a directory: want a file path"},
	} {
		args := append(append([]string{"matrix"}, tc.args...), "--", "sh", "run.sh")
		if r := run(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, tc.msg) || strings.Contains(r.stderr, "bad usage") {
			t.Errorf("%v: exit %d: %s", tc.args, r.code, r.stderr)
		}
	}
	// A command that writes no JUnit file on either side (here a wrong
	// --junit path) stops after the first pair, saying so; the pair's
	// files, each the run's failing test case, are kept and named.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r = run(t, nil, "matrix", "--base", "base", "--junit", "out/none.xml", "--", "true")
	left, _ := filepath.Glob(filepath.Join(tmp, "flakegate-matrix-results-*", "*.xml"))
	if r.code != 1 || len(left) != 2 || !strings.Contains(r.stderr, "neither side's first run left a usable JUnit file: check the JUnit path out/none.xml") ||
		!strings.Contains(r.stderr, "the files of the 2 runs done are in") {
		t.Errorf("no run with a JUnit file: exit %d, left %v: %s", r.code, left, r.stderr)
	}
	// So does one whose files are refused.
	os.WriteFile(filepath.Join(repo, "bad.sh"), []byte("#!/bin/sh\nmkdir -p out\necho '<testsuite' > out/junit.xml\n"), 0o755)
	r = run(t, nil, "matrix", "--base", "HEAD", "--junit", "out/junit.xml", "--", "sh", filepath.Join(repo, "bad.sh"))
	if r.code != 1 || !strings.Contains(r.stderr, "its JUnit file at out/junit.xml is not usable (line 1") || strings.Contains(r.stderr, "cleanup") {
		t.Errorf("runs whose files are refused: exit %d: %s", r.code, r.stderr)
	}
}

// TestShellQuote: a path with a quote in it stays one word.
func TestShellQuote(t *testing.T) {
	out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(`/tmp/it's "x" $HOME`)).Output()
	if err != nil || string(out) != `/tmp/it's "x" $HOME` {
		t.Errorf("sh read %q, %v", out, err)
	}
}

// TestGateCommandWarnsOfListCharacters: gate splits --base and --head at
// commas and newlines, so a results directory named with one gives a
// printed command that reads no files; it says so, as for glob characters.
func TestGateCommandWarnsOfListCharacters(t *testing.T) {
	for dir, warn := range map[string]bool{"/tmp/res": false, "/tmp/res,comma": true, "/tmp/res[1]": true, "/tmp/a\nb": true} {
		cmd := gateCommand(&matrix.Report{ResultsDir: dir}, matrix.Options{}, nil, "")
		if got := strings.Contains(cmd, "holds glob or list characters"); got != warn {
			t.Errorf("%q: warned %v, want %v: %s", dir, got, warn, cmd)
		}
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
	// matrix's JSON also says what was run: the commits, the pairs and why
	// it stopped (it held the gate's answer alone).
	if b, _ := os.ReadFile(mjson); !strings.Contains(string(b), `"flakegate matrix: base base (`) || !strings.Contains(string(b), " pairs: ") {
		t.Errorf("matrix JSON does not say what was run:\n%s", b)
	}
	// The early failures of c::t02 are seen at the first look, whoever reads.
	if got := md["c::t02"]; !strings.HasPrefix(got, "block/") {
		t.Errorf("c::t02 (failed head runs 1-3, then passed): %s, want block\n%s", got, m.stdout)
	}
	if got := md["c::t01"]; !strings.HasPrefix(got, "pass/") {
		t.Errorf("c::t01 (the same flake on both sides): %s, want pass\n%s", got, m.stdout)
	}
}

// TestMatrixCrashesGatedFromFiles: a head that crashes in 3 of 5 runs (no
// report, an empty report with exit 139, a kill by a signal) blocks, and
// `flakegate gate` on the files the matrix kept, with the command line it
// prints, reads each run's file as one run and gives the same verdict and
// decisions: the run's test case is read with the run the command's
// report belongs to (a <testsuites> root, suite timestamps), and a run's
// file that holds that case alone takes its place in the run order. This
// is the audit's flow: before, the first crash stopped the matrix, and the
// gate on the files it left passed.
func TestMatrixCrashesGatedFromFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	counters := t.TempDir()
	t.Setenv("COUNTER_DIR", counters)
	repo := t.TempDir()
	script := func(side, crash string) string {
		return "#!/bin/sh\nc=\"$COUNTER_DIR/" + side + "\"\nn=$(( $(cat \"$c\" 2>/dev/null || echo 0) + 1 ))\necho \"$n\" > \"$c\"\nmkdir -p out\n" + crash +
			"ts=$(date -u +%Y-%m-%dT%H:%M:%S.%N)\n" + // the runs take milliseconds: order them by time as the matrix ran them
			"printf '%s\\n' '<?xml version=\"1.0\" encoding=\"UTF-8\"?>' '<testsuites name=\"all\">' \"<testsuite name=\\\"s\\\" timestamp=\\\"$ts\\\">\" '<testcase classname=\"c\" name=\"a\"/>' '<testcase classname=\"c\" name=\"b\"/>' '</testsuite>' '</testsuites>' '<!-- written by run.sh -->' > out/junit.xml\n"
	}
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("base", "")), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	crash := "case $n in\n2) echo 'fatal error: concurrent map writes' >&2; exit 2;;\n" +
		"3) echo '<testsuite name=\"s\" tests=\"0\" errors=\"1\"/>' > out/junit.xml; exit 139;;\n" +
		"4) kill -SEGV $$;;\nesac\n"
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("head", crash)), 0o755)
	git(t, repo, "commit", "-q", "-am", "patch")

	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	results := filepath.Join(t.TempDir(), "results")
	mjson := filepath.Join(t.TempDir(), "matrix.json")
	m := run(t, fixedClock, "matrix", "--base", "base", "-k", "5", "--junit", "out/junit.xml", "--results", results, "--json", mjson, "--", "sh", "run.sh")
	if m.code != 1 || !strings.Contains(m.stdout, "verdict: block") {
		t.Fatalf("matrix: exit %d, want 1 and a block\n%s%s", m.code, m.stdout, m.stderr)
	}
	if !strings.Contains(m.stderr, "head run 4: the command was killed by signal 11 (segmentation fault) after") || strings.Contains(m.stderr, "status -1") {
		t.Errorf("the log does not report head run 4's signal:\n%s", m.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(results, "*"))
	if len(files) != 12 || !slices.Contains(files, filepath.Join(results, "flakegate-matrix.json")) || !slices.Contains(files, filepath.Join(results, matrix.DiffFile)) {
		t.Errorf("results = %v, want one file per run, the manifest and the diff", files)
	}
	_, line, ok := strings.Cut(m.stdout, "the same verdict from the files: flakegate ")
	if !ok {
		t.Fatalf("matrix printed no gate command:\n%s", m.stdout)
	}
	line, _, _ = strings.Cut(line, "\n")
	var args []string
	for _, f := range strings.Fields(line) {
		args = append(args, strings.Trim(f, "'"))
	}
	gjson := filepath.Join(t.TempDir(), "gate.json")
	g := run(t, fixedClock, append(args, "--json", gjson)...)
	if g.code != m.code {
		t.Errorf("exit: matrix %d, gate %d\nmatrix:\n%s\ngate:\n%s%s", m.code, g.code, m.stdout, g.stdout, g.stderr)
	}
	decisions := func(path string) map[string]string {
		var res struct {
			Verdict string
			Tests   []struct {
				Name, Decision, Bucket string
				Base, Head             struct{ Runs, Failures int }
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
			out[tr.Name] = fmt.Sprintf("%s/%s base %d/%d head %d/%d", tr.Decision, tr.Bucket, tr.Base.Failures, tr.Base.Runs, tr.Head.Failures, tr.Head.Runs)
		}
		return out
	}
	want := map[string]string{
		"verdict":                            "block",
		"c::a":                               "pass/ok base 0/5 head 0/2",
		"c::b":                               "pass/ok base 0/5 head 0/2",
		"flakegate.matrix::the test command": "block/patch-induced flake base 0/5 head 3/5",
	}
	for name, path := range map[string]string{"matrix": mjson, "gate": gjson} {
		if diff := cmp.Diff(want, decisions(path)); diff != "" {
			t.Errorf("%s's decisions (-want +got):\n%s", name, diff)
		}
	}
	if strings.Contains(g.stderr, "warning") {
		t.Errorf("gate warned on the matrix's files:\n%s", g.stderr)
	}
}

// TestMatrixHistoryAsGateReadsIt: base-branch history with outage runs
// (every test failed: the database was down). gate leaves them out of the
// baseline; matrix counted them, so every test had a base rate of 4/20, and
// the patch's new flake (failing head runs 1 and 3) passed as "consistent
// with its base rate", while the gate command matrix printed as "the same
// verdict from the files" blocked it. A --history that matches nothing is
// refused, as gate refuses it, before any run.
func TestMatrixHistoryAsGateReadsIt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	counters := t.TempDir()
	t.Setenv("COUNTER_DIR", counters)
	t.Setenv("TMPDIR", t.TempDir())
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "t"}
	script := func(side, fails string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/sh\nc=\"$COUNTER_DIR/%s\"\nn=$(( $(cat \"$c\" 2>/dev/null || echo 0) + 1 ))\necho \"$n\" > \"$c\"\nmkdir -p out\n{\necho '<testsuite name=\"s\">'\n", side)
		for _, name := range names {
			cond := "false"
			if name == "t" {
				cond = fails
			}
			fmt.Fprintf(&b, "if %s; then echo '<testcase classname=\"c\" name=\"%s\"><failure message=\"boom\"/></testcase>'; else echo '<testcase classname=\"c\" name=\"%s\"/>'; fi\n", cond, name, name)
		}
		b.WriteString("echo '</testsuite>'\n} > out/junit.xml\n")
		return b.String()
	}
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("base", "false")), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(script("head", "[ $n -eq 1 ] || [ $n -eq 3 ]")), 0o755)
	git(t, repo, "commit", "-q", "-am", "patch")
	hist := t.TempDir()
	for i := 1; i <= 20; i++ {
		var b strings.Builder
		b.WriteString(`<testsuite name="s">`)
		for _, name := range names {
			if i <= 4 { // an outage: every test failed
				fmt.Fprintf(&b, `<testcase classname="c" name="%s"><failure message="db down"/></testcase>`, name)
			} else {
				fmt.Fprintf(&b, `<testcase classname="c" name="%s"/>`, name)
			}
		}
		b.WriteString("</testsuite>\n")
		os.WriteFile(filepath.Join(hist, fmt.Sprintf("run-%02d.xml", i)), []byte(b.String()), 0o644)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)

	if r := run(t, fixedClock, "matrix", "--base", "base", "-k", "5", "--junit", "out/junit.xml", "--history", filepath.Join(hist, "nope-*.xml"), "--", "sh", "run.sh"); r.code != 2 || !strings.Contains(r.stderr, "no JUnit XML files found") {
		t.Errorf("--history matching nothing: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(counters, "base")); err == nil {
		t.Errorf("--history matching nothing: the command ran")
	}
	os.Remove(filepath.Join(counters, "base"))
	os.Remove(filepath.Join(counters, "head"))
	results := filepath.Join(t.TempDir(), "results")
	m := run(t, fixedClock, "matrix", "--base", "base", "-k", "5", "--junit", "out/junit.xml", "--results", results, "--history", filepath.Join(hist, "*.xml"), "--", "sh", "run.sh")
	if m.code != 1 || !strings.Contains(m.stdout, "verdict: block") || !strings.Contains(m.stderr, "infrastructure failures") {
		t.Errorf("matrix: exit %d, want a block (1) with the outage runs left out of the history\n%s%s", m.code, m.stdout, m.stderr)
	}
	g := run(t, fixedClock, "gate", "--base", filepath.Join(results, "base-*.xml"), "--head", filepath.Join(results, "head-*.xml"), "--max-runs", "5", "--history", filepath.Join(hist, "*.xml"))
	if g.code != m.code {
		t.Errorf("gate on matrix's files: exit %d, matrix %d\n%s", g.code, m.code, g.stdout)
	}
}

// TestMatrixTestRemovedAsDeclared: matrix reads head's diff against base,
// as the action reads a pull request's files, and takes --pr-body and
// --label: a test removed on head blocks until the removal is declared.
// Before, the property checks did not run ("no diff given") and no
// declaration could be given, so a deliberate removal never passed.
func TestMatrixTestRemovedAsDeclared(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	suite := func(tests ...string) string {
		var b strings.Builder
		b.WriteString("#!/bin/sh\nmkdir -p out\n{\necho '<testsuite name=\"s\">'\n")
		for _, n := range tests {
			fmt.Fprintf(&b, "echo '<testcase classname=\"c\" name=\"%s\"/>'\n", n)
		}
		b.WriteString("echo '</testsuite>'\n} > out/junit.xml\n")
		return b.String()
	}
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(suite("t1", "t2", "t3")), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "tag", "base")
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte(suite("t1", "t2")), 0o755)
	git(t, repo, "commit", "-q", "-am", "drop t3")
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(repo)
	body := filepath.Join(t.TempDir(), "body.md")
	os.WriteFile(body, []byte("Drops a test.\n\nTest-Changes: removes c::t3, which tested nothing\n"), 0o644)

	for _, tc := range []struct {
		name  string
		extra []string
		code  int
	}{
		{"undeclared", nil, 1},
		{"declared in the body", []string{"--pr-body", body}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"matrix", "--base", "base", "-k", "5", "--junit", "out/junit.xml", "--results", filepath.Join(t.TempDir(), "r")}, tc.extra...)
			m := run(t, fixedClock, append(args, "--", "sh", "run.sh")...)
			if m.code != tc.code || strings.Contains(m.stdout+m.stderr, "no diff given") {
				t.Fatalf("matrix: exit %d, want %d\n%s%s", m.code, tc.code, m.stdout, m.stderr)
			}
			_, line, _ := strings.Cut(m.stdout, "the same verdict from the files: flakegate ")
			line, _, _ = strings.Cut(line, "\n")
			if !strings.Contains(line, " --diff ") {
				t.Errorf("the gate command does not give the diff: %s", line)
			}
			var gargs []string
			for _, f := range strings.Fields(line) {
				gargs = append(gargs, strings.Trim(f, "'"))
			}
			if g := run(t, fixedClock, gargs...); g.code != m.code {
				t.Errorf("gate on the files: exit %d, matrix %d\n%s", g.code, m.code, g.stdout)
			}
		})
	}
}
