package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/synth"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), Env{Args: args, Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errb})
	return result{code, out.String(), errb.String()}
}

var fixedClock = map[string]string{"SOURCE_DATE_EPOCH": "1796083200"}

func TestAnalyzeSample(t *testing.T) {
	r := run(t, fixedClock, "analyze", "../../fixtures/history")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"tests.test_checkout::test_payment_times_out_under_load", "tests.test_upload::test_retry_after_429", "tests.test_search::test_results_are_ordered"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text output lacks %s:\n%s", want, r.stdout)
		}
	}
	for _, never := range []string{"test_reserve_stock", "test_login_sets_session"} {
		if strings.Contains(r.stdout, never) {
			t.Errorf("text output flags %s (broken / fixed regression):\n%s", never, r.stdout)
		}
	}
}

func TestAnalyzeJSONAndOut(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	r := run(t, fixedClock, "analyze", "--format", "json", "--threshold", "0.2", "../../fixtures/history/*.xml", "--json", jsonPath, "--out", filepath.Join(dir, "out"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	for _, k := range []string{"generated_at", "source", "threshold", "min_commits", "results_parsed", "tests_analyzed", "flaky_count", "flaky_rate", "tests", "totals", "skipped_files", "infra_runs"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if rep["threshold"] != 0.2 || rep["generated_at"] != "2026-12-01T00:00:00Z" {
		t.Errorf("threshold %v generated_at %v", rep["threshold"], rep["generated_at"])
	}
	file, _ := os.ReadFile(jsonPath)
	if !bytes.Equal(file, []byte(r.stdout)) {
		t.Error("--json file differs from --format json output")
	}
	for _, f := range []string{"report.json", "report.csv", "report.md", "report.html"} {
		if fi, err := os.Stat(filepath.Join(dir, "out", f)); err != nil || fi.Size() == 0 {
			t.Errorf("--out %s: %v", f, err)
		}
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile("../../fixtures/history/run-00-1001-1.xml")
	os.WriteFile(filepath.Join(dir, "good.xml"), good, 0o644)
	os.WriteFile(filepath.Join(dir, "bad.xml"), []byte("<html><body>502 Bad Gateway</body></html>"), 0o644)
	os.WriteFile(filepath.Join(dir, "evil.xml"), []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite/>`), 0o644)

	r := run(t, fixedClock, "analyze", "--format", "json", dir)
	if r.code != 0 {
		t.Fatalf("a bad file among good ones: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"skipped " + filepath.Join(dir, "bad.xml") + ": line 1: root element <html> is not JUnit", "evil.xml: line 1: DOCTYPE declarations are refused"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	var rep struct {
		Skipped []struct{ Path, Error string } `json:"skipped_files"`
	}
	json.Unmarshal([]byte(r.stdout), &rep)
	if len(rep.Skipped) != 2 {
		t.Errorf("skipped_files = %+v, want 2 entries", rep.Skipped)
	}

	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no file parses", []string{"analyze", filepath.Join(dir, "bad.xml")}, 1, "none of the 1 files could be read as JUnit XML"},
		{"nothing matches", []string{"analyze", filepath.Join(dir, "nope", "*.xml")}, 1, "no JUnit XML files found"},
		{"no path", []string{"analyze"}, 2, "no PATH given"},
		{"bad format", []string{"analyze", "--format", "xml", dir}, 2, `invalid value "xml" for flag -format: accepted values are text, json, csv, md, html`},
		{"bad threshold", []string{"analyze", "--threshold", "1.5", dir}, 2, `threshold = 1.5: threshold must be between 0 and 1`},
		{"bad min commits", []string{"analyze", "--min-commits", "0", dir}, 2, "min-commits = 0: min_commits must be at least 1"},
		{"min commits not whole", []string{"analyze", "--min-commits", "1.5", dir}, 2, `invalid value "1.5" for flag -min-commits: want a whole number`},
		{"commit sha a revision", []string{"analyze", "--commit-sha", "HEAD~1", dir}, 2, `--commit-sha HEAD~1: a revision, not the commit's SHA: give --commit-sha "$(git rev-parse HEAD~1)"`},
		{"matrix: --junit missing", []string{"matrix", "--base", "HEAD", "--", "true"}, 2, `missing --junit: --base, --junit and a command after -- are required`},
		{"matrix: duration without a unit", []string{"matrix", "--base", "HEAD", "--junit", "j.xml", "--run-timeout", "10", "--", "true"}, 2, `invalid value "10" for flag -run-timeout: want a duration with its unit, such as 15m, 90s or 1h30m`},
		{"gate: max runs not whole", []string{"gate", "--max-runs", "x", "--base", dir, "--head", dir}, 2, `invalid value "x" for flag -max-runs: want a whole number`},
		{"unknown flag", []string{"analyze", "--thresold", "0.2", dir}, 2, "flag provided but not defined: -thresold"},
		{"malformed glob", []string{"analyze", dir + "/[.xml"}, 2, "malformed glob"},
		{"gate: malformed glob", []string{"gate", "--base", dir + "/[.xml", "--head", dir}, 2, "--base " + dir + "/[.xml: malformed glob"},
		{"unknown command", []string{"analyse", dir}, 2, `unknown command "analyse": accepted commands are analyze, gate, matrix, ledger, demo, version`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("exit %d (want %d), stderr:\n%s\nwant %q", r.code, tc.code, r.stderr, tc.msg)
			}
		})
	}
}

func TestNoArgsRunsActionInActions(t *testing.T) {
	called := false
	code := Main(context.Background(), Env{Getenv: func(k string) string {
		if k == "GITHUB_ACTIONS" {
			return "true"
		}
		return ""
	}, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Action: func(context.Context) int { called = true; return 3 }})
	if !called || code != 3 {
		t.Errorf("action called %v, code %d", called, code)
	}
	if r := run(t, nil); r.code != 2 || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no args outside Actions: %+v", r)
	}
}

// writeRuns writes n JUnit runs of one side, with the given failures.
func writeRuns(t *testing.T, dir, side string, n int, fails map[string]int) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="%s"/></properties>`, side)
		for _, name := range []string{"stable", "patched", "flaky"} {
			if i < fails[name] {
				fmt.Fprintf(&b, `<testcase classname="t" name="%s" file="tests/t.py"><failure message="boom"/></testcase>`, name)
			} else {
				fmt.Fprintf(&b, `<testcase classname="t" name="%s" file="tests/t.py"/>`, name)
			}
		}
		b.WriteString(`</testsuite>`)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.xml", side, i)), []byte(b.String()), 0o644)
	}
}

func TestGateCLI(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, filepath.Join(dir, "base"), "base", 5, map[string]int{"flaky": 2})
	writeRuns(t, filepath.Join(dir, "ok"), "head", 5, map[string]int{"flaky": 1})
	writeRuns(t, filepath.Join(dir, "bad"), "head", 5, map[string]int{"flaky": 1, "patched": 3})
	writeRuns(t, filepath.Join(dir, "hist"), "main", 30, map[string]int{"flaky": 8})

	jsonPath := filepath.Join(dir, "gate.json")
	r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base/*.xml"), "--head", filepath.Join(dir, "ok"), "--history", filepath.Join(dir, "hist"), "--json", jsonPath)
	if r.code != 0 || !strings.Contains(r.stdout, "verdict: pass") {
		t.Fatalf("pre-existing flake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		Verdict string
		Tests   []struct {
			Name, Bucket, Decision string
		}
	}
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &res); err != nil || len(res.Tests) != 3 || res.Verdict != "pass" {
		t.Fatalf("json: %v %+v", err, res)
	}

	r = run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "bad"), "--history", filepath.Join(dir, "hist"))
	if r.code != 1 || !strings.Contains(r.stdout, "verdict: block") || !strings.Contains(r.stdout, "t::patched") {
		t.Fatalf("patch-induced flake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A head file cut short (a run that crashed while writing it) leaves
	// the head evidence incomplete: the check fails, and the output and
	// JSON say why.
	cut := filepath.Join(dir, "cut")
	writeRuns(t, cut, "head", 5, map[string]int{"flaky": 1})
	whole, _ := os.ReadFile(filepath.Join(cut, "head-2.xml"))
	os.WriteFile(filepath.Join(cut, "head-2.xml"), whole[:len(whole)/2], 0o644)
	r = run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", cut, "--history", filepath.Join(dir, "hist"), "--json", jsonPath)
	if r.code != 1 || !strings.Contains(r.stdout, "verdict: block") ||
		!strings.Contains(r.stdout, "head results missing: 1 head result file(s) or run(s) were not read") ||
		!strings.Contains(r.stdout, "head: not read: "+filepath.Join(cut, "head-2.xml")) {
		t.Fatalf("a head file cut short: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var partial struct {
		Verdict string
		Unread  []struct{ Side, Path, Error string }
	}
	b, _ = os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &partial); err != nil || partial.Verdict != "block" || len(partial.Unread) != 1 ||
		partial.Unread[0].Side != "head" || !strings.Contains(partial.Unread[0].Error, "truncated") {
		t.Fatalf("json of a gate with a head file cut short: %v %+v", err, partial)
	}
	if r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", cut, "--on-inconclusive", "fail"); r.code != 1 || !strings.Contains(r.stdout, "verdict: block") {
		t.Fatalf("a head file cut short, on-inconclusive fail: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// SOURCE_DATE_EPOCH that is no number of seconds is refused, not
	// ignored.
	for _, args := range [][]string{{"analyze", dir}, {"gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "ok")}, {"ledger", "verify", jsonPath}} {
		if r := run(t, map[string]string{"SOURCE_DATE_EPOCH": "yesterday"}, args...); r.code != 2 || !strings.Contains(r.stderr, `SOURCE_DATE_EPOCH="yesterday": want the number of seconds since 1970-01-01 UTC`) {
			t.Errorf("%v with a bad SOURCE_DATE_EPOCH: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
	// A ledger path that names no file is said: a misspelt one reads
	// the same as no ledger.
	r = run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "ok"), "--history", filepath.Join(dir, "hist"),
		"--ledger", filepath.Join(dir, "ledger.ymll"))
	if r.code != 0 || !strings.Contains(r.stderr, "--ledger "+filepath.Join(dir, "ledger.ymll")+": no such file: no ledger on that side") {
		t.Errorf("a ledger path naming no file: exit %d\n%s", r.code, r.stderr)
	}
	// Results that hold no test compare nothing: not a pass.
	os.MkdirAll(filepath.Join(dir, "none"), 0o755)
	os.WriteFile(filepath.Join(dir, "none", "r.xml"), []byte(`<testsuite name="s"></testsuite>`), 0o644)
	if r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "none"), "--head", filepath.Join(dir, "none")); r.code != 0 ||
		!strings.Contains(r.stdout, "verdict: inconclusive") || !strings.Contains(r.stdout, "no test was compared") {
		t.Errorf("results with no test: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"gate", "--head", dir}, "--base and --head are required"},
		{[]string{"gate", "--base", dir, "--head", dir, "--json", "-"}, "--json -: want a file name"},
		{[]string{"analyze", "--json", "-", dir}, "--json -: want a file name; --format json prints the JSON report"},
		{[]string{"analyze", dir, "-"}, "PATH -: standard input is not accepted"},
		{[]string{"ledger", "bogus"}, `unknown command "bogus": the one command is verify`},
		{[]string{"analyze", "--workers", "-3", dir}, "--workers -3: want 0 (one per CPU) or a positive number"},
		{[]string{"version", "extra"}, `flakegate version: unexpected argument "extra"`},
		{[]string{"gate", "--base", dir, "--head", dir, "--first-look", "30", "--max-runs", "20"}, "first-look = 30: want at most max-runs (20)"},
		{[]string{"gate", "--base", dir, "--head", dir, "--on-inconclusive", "maybe"}, `invalid value "maybe" for flag -on-inconclusive: accepted values are neutral, fail, pass`},
		{[]string{"gate", "--base", dir, "--head", dir, "--p1", "1"}, "p1 = 1: want a number above 0.5 and below 1"},
		{[]string{"gate", "--base", dir, "--head", dir, "--p1", "0.3"}, "p1 = 0.3: want a number above 0.5 and below 1"},
		{[]string{"gate", "--base", dir, "--head", dir, "--alpha-pr", "0"}, "alpha-pr = 0: want a number strictly between 0 and 1"},
		{[]string{"gate", "--base", dir, "--head", dir, "--alpha", "0"}, "alpha = 0: want a number strictly between 0 and 1"},
		{[]string{"gate", "--base", dir, "--head", dir, "--beta", "0"}, "beta = 0: want a number strictly between 0 and 1"},
		{[]string{"gate", "--base", dir, "--head", dir, "--p1", "0"}, "p1 = 0: want a number above 0.5 and below 1"},
	} {
		if r := run(t, nil, tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %s, want %q", tc.args, r.code, r.stderr, tc.msg)
		}
	}
}

func TestLedgerVerifyCLI(t *testing.T) {
	dir := t.TempDir()
	good := `version: 1
entries:
  - test: "tests/test_upload.py::test_retry_after_429"
    signature: "sha256:9f2c0a1b"
    owner: "@storage-team"
    issue: "https://github.com/acme/shop/issues/12"
    replacement: "tests/test_upload.py::test_retry_header_parsed"
    evidence: {p_flake_baseline: 0.30, p_regression: 0.90, alpha: 0.05, beta: 0.05,
               llr_trace: [[false, 1.099, 1.099], [true, -1.946, -0.847], [true, -1.946, -2.793], [true, -1.946, -4.739]], decision: FLAKE}
    release_triggers: [scope_file_changed, signature_changed]
`
	os.WriteFile(filepath.Join(dir, "good.yml"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(strings.Replace(good, "-4.739", "-4.000", 1)), 0o644)
	if r := run(t, nil, "ledger", "verify", filepath.Join(dir, "good.yml")); r.code != 0 {
		t.Errorf("good ledger: exit %d: %s", r.code, r.stderr)
	}
	r := run(t, nil, "ledger", "verify", filepath.Join(dir, "bad.yml"))
	if r.code != 1 || !strings.Contains(r.stderr, "entries[0]") || !strings.Contains(r.stderr, "llr_trace") {
		t.Errorf("tampered ledger: exit %d: %s", r.code, r.stderr)
	}
	// An entry past its expiry day fails verify as it fails the gate; the
	// day is today's, or SOURCE_DATE_EPOCH's (2026-12-01).
	expired := strings.Replace(good, "    replacement:", "    expires: 2026-11-30\n    replacement:", 1)
	os.WriteFile(filepath.Join(dir, "expired.yml"), []byte(expired), 0o644)
	r = run(t, fixedClock, "ledger", "verify", filepath.Join(dir, "expired.yml"))
	if r.code != 1 || !strings.Contains(r.stderr, "expires: expired on 2026-11-30 (today is 2026-12-01)") {
		t.Errorf("expired entry: exit %d: %s", r.code, r.stderr)
	}
	if r := run(t, map[string]string{"SOURCE_DATE_EPOCH": "1795996800"}, "ledger", "verify", filepath.Join(dir, "expired.yml")); r.code != 0 {
		t.Errorf("on its expiry day: exit %d: %s", r.code, r.stderr)
	}
}

var _ = synth.Sample

// TestReadmeSample keeps the README honest: the output it shows for
// analyze of the sample is what the command prints.
func TestReadmeSample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "`go run . analyze fixtures/history` prints:\n\n```\n")
	want, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("README has no sample output block")
	}
	if r := run(t, nil, "analyze", "../../fixtures/history"); r.code != 0 || r.stdout != want {
		t.Errorf("README shows:\n%s\nthe command prints:\n%s", want, r.stdout)
	}
}

// analyzeSample runs analyze --format json on the sample history with a
// CODEOWNERS file of this content, and fails the test unless it exits 0.
func analyzeSample(t *testing.T, codeowners string) (r result, co string) {
	t.Helper()
	co = filepath.Join(t.TempDir(), "CODEOWNERS")
	os.WriteFile(co, []byte(codeowners), 0o644)
	r = run(t, fixedClock, "analyze", "--format", "json", "--codeowners", co, "../../fixtures/history")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return r, co
}

func TestAnalyzeCodeowners(t *testing.T) {
	r, co := analyzeSample(t, "*  @acme/all\ntests/ @acme/qa\n")
	dir := filepath.Dir(co)
	var rep struct {
		Tests []struct {
			Name   string
			File   string
			Owners []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, x := range rep.Tests {
		if x.File != "" && (len(x.Owners) != 1 || x.Owners[0] != "@acme/qa") {
			t.Fatalf("%s (%s): owners %v", x.Name, x.File, x.Owners)
		}
	}
	// A line GitHub does not accept is skipped with a warning, as GitHub
	// skips it; the other lines still give owners.
	os.WriteFile(co, []byte("!negated @x\ntests/ @acme/qa\n"), 0o644)
	r = run(t, fixedClock, "analyze", "--format", "json", "--codeowners", co, "../../fixtures/history")
	if r.code != 0 || !strings.Contains(r.stderr, co+` line 1: pattern "!negated": negation`) || !strings.Contains(r.stderr, "skipped, as GitHub skips it") {
		t.Errorf("CODEOWNERS with a bad line: exit %d, %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"@acme/qa"`) {
		t.Error("the lines after a skipped one gave no owners")
	}
	if r := run(t, nil, "analyze", "--codeowners", filepath.Join(dir, "absent"), "../../fixtures/history"); r.code != 2 || !strings.Contains(r.stderr, "--codeowners") {
		t.Errorf("absent CODEOWNERS: exit %d, %s", r.code, r.stderr)
	}
}

// TestAnalyzeOwnersOfRunnerPaths: run in a clone named after the
// repository, analyze finds the owners of files that tools wrote on a
// runner (<work>/shop/shop/tests/...), with an anchored pattern.
func TestAnalyzeOwnersOfRunnerPaths(t *testing.T) {
	clone := filepath.Join(t.TempDir(), "shop")
	results := filepath.Join(clone, "results")
	os.MkdirAll(filepath.Join(clone, ".github"), 0o755)
	os.WriteFile(filepath.Join(clone, ".github", "CODEOWNERS"), []byte("/tests/ @acme/qa\n"), 0o644)
	os.MkdirAll(results, 0o755)
	ents, err := os.ReadDir("../../fixtures/history")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join("../../fixtures/history", e.Name()))
		os.WriteFile(filepath.Join(results, e.Name()), bytes.ReplaceAll(b, []byte(`file="tests/`), []byte(`file="/home/runner/work/shop/shop/tests/`)), 0o644)
	}
	t.Chdir(clone)
	r := run(t, fixedClock, "analyze", "--format", "json", "results")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct {
		Tests []struct {
			File   string
			Owners []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, x := range rep.Tests {
		if strings.HasPrefix(x.File, "/home/runner/") && slices.Equal(x.Owners, []string{"@acme/qa"}) {
			owned++
		}
	}
	if owned == 0 || owned != len(rep.Tests) {
		t.Errorf("%d of %d tests owned by @acme/qa", owned, len(rep.Tests))
	}
}

// TestHelp: -h on every command prints its usage to stdout and exits 0,
// each flag shows one default, and the top-level usage names every flag
// of every command.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"help"}, {"analyze", "-h"}, {"analyze", "--help"}, {"gate", "-h"}, {"matrix", "-h"},
		{"ledger", "-h"}, {"ledger", "verify", "-h"}, {"demo", "-h"},
	} {
		r := run(t, nil, args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want usage on stdout and exit 0", args, r.code, len(r.stdout), r.stderr)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%v: two defaults on one line: %s", args, line)
			}
		}
	}
	top := run(t, nil, "help").stdout
	flagRE := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, cmd := range []string{"analyze", "gate", "matrix", "demo"} {
		for _, m := range flagRE.FindAllStringSubmatch(run(t, nil, cmd, "-h").stdout, -1) {
			name := "--" + m[1]
			if m[1] == "k" {
				name = "-k"
			}
			if !strings.Contains(top, name+" ") && !strings.Contains(top, name+"]") {
				t.Errorf("the top-level usage does not name %s %s", cmd, name)
			}
		}
	}
	// Every flag the README shows on a flakegate command line is one.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(readme), "\n") {
		i := strings.Index(line, "flakegate ")
		if i < 0 || strings.Contains(line, "hyperfine") {
			continue
		}
		// Flags after "flakegate " (another command's before it are its own).
		for _, m := range regexp.MustCompile(`(?:^|\s)(--[a-z][a-z0-9-]+)`).FindAllStringSubmatch(line[i:], -1) {
			if !strings.Contains(top, m[1]) {
				t.Errorf("README line uses %s, which the usage does not list:\n%s", m[1], line)
			}
		}
	}
	// A file named -h is never opened.
	if r := run(t, nil, "ledger", "verify", "-h"); strings.Contains(r.stderr, "no such file") {
		t.Errorf("ledger verify -h opened a file: %s", r.stderr)
	}
}

// TestReadmeSynopsisDefaults: every default the README's command-line
// synopsis shows ("[--max-runs 20]", "[--format text|json|...]") is the
// one the command's help gives. The synopsis said --first-look 5 where
// the default is 1.
func TestReadmeSynopsisDefaults(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(b), "## Command line\n\n```\n")
	block, _, _ = strings.Cut(block, "```")
	opt := regexp.MustCompile(`\[--([a-z0-9-]+) ([^\]\s]+)\]`)
	placeholder := regexp.MustCompile(`^[A-Z]+$`)
	cmd, checked := "", 0
	for _, line := range strings.Split(block, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "flakegate" {
			cmd = f[1]
		}
		for _, m := range opt.FindAllStringSubmatch(line, -1) {
			name, shown := m[1], m[2]
			if placeholder.MatchString(shown) { // FILE, GLOB, L
				continue
			}
			help := run(t, nil, cmd, "-h").stdout
			_, after, ok := strings.Cut(help, "\n  -"+name+" ")
			if !ok {
				t.Errorf("%s: the README shows --%s, which -h does not list", cmd, name)
				continue
			}
			def := ""
			if _, d, ok := strings.Cut(strings.SplitN(after, "\n  -", 2)[0], "(default "); ok {
				def = strings.Trim(strings.TrimSuffix(strings.TrimSpace(d), ")"), `"`)
			}
			first, _, _ := strings.Cut(shown, "|") // "text|json|csv": the first is the default
			if first != def {
				t.Errorf("%s: the README shows [--%s %s], -h gives the default %q", cmd, name, shown, def)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("checked %d defaults in the README's synopsis", checked)
	}
}

// TestAnalyzeCommitFlags: files that state no commit (pytest's, jest's,
// most tools') can be given one, so that a suite run ten times on one
// commit is scored: flaky where it both passed and failed. A file that
// states its own commit keeps it. --run-id makes the files one run.
func TestAnalyzeCommitFlags(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		failure := ""
		if i%3 == 0 {
			failure = `<failure message="race"/>`
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("run%d.xml", i)), []byte(`<testsuite name="pytest">`+
			`<testcase classname="t" name="flaky">`+failure+`</testcase><testcase classname="t" name="ok"/></testsuite>`), 0o644)
	}
	own := filepath.Join(dir, "own.xml")
	os.WriteFile(own, []byte(`<testsuite name="pytest"><properties><property name="commit_sha" value="other"/></properties>`+
		`<testcase classname="t" name="flaky"/><testcase classname="t" name="ok"/></testsuite>`), 0o644)
	report := func(args ...string) (rep struct {
		FlakyCount int `json:"flaky_count"`
		Runs       int `json:"runs"`
		Commits    []struct{ SHA string }
		Tests      []struct {
			Name     string
			IsFlaky  bool `json:"is_flaky"`
			Evidence []string
		}
	}) {
		t.Helper()
		r := run(t, fixedClock, append([]string{"analyze", "--format", "json"}, append(args, dir)...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := report(); len(rep.Commits) != 1 || rep.FlakyCount != 0 {
		t.Errorf("without --commit-sha: %d commits (only own.xml's), %d flaky", len(rep.Commits), rep.FlakyCount)
	}
	rep := report("--commit-sha", "abc123", "--min-commits", "1")
	if len(rep.Commits) != 2 || rep.Runs != 11 || rep.FlakyCount != 1 || rep.Tests[0].Name != "t::flaky" || !slices.Equal(rep.Tests[0].Evidence, []string{"same-commit"}) {
		t.Errorf("--commit-sha: %+v", rep)
	}
	rep = report("--commit-sha", "abc123", "--run-id", "7", "--min-commits", "1")
	if rep.Runs != 2 || rep.FlakyCount != 1 || !slices.Equal(rep.Tests[0].Evidence, []string{"retry"}) {
		t.Errorf("--run-id: the ten files are one run, where t::flaky failed and passed: %+v", rep)
	}
}

// TestReadmeListsJSONFields: every field of analyze's JSON report, at the
// top and per test, is named in the README.
func TestReadmeListsJSONFields(t *testing.T) {
	r, _ := analyzeSample(t, "* @acme/all\n")
	var rep map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var tests []map[string]json.RawMessage
	if err := json.Unmarshal(rep["tests"], &tests); err != nil || len(tests) == 0 {
		t.Fatalf("tests: %v", err)
	}
	keys := map[string]bool{}
	for k := range rep {
		keys[k] = true
	}
	for _, tt := range tests {
		for k := range tt {
			keys[k] = true
		}
	}
	keys["too_few_commits"] = true // per test only when true; the sample has none
	// Only when a bound on legs was met (TestAnalyzeManyLegsSaid).
	keys["folded_leg_runs"], keys["leg_search_stopped"] = true, true
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		if !strings.Contains(string(b), "`"+k+"`") && !strings.Contains(string(b), "`"+k+":") {
			t.Errorf("the README does not name the JSON field %q", k)
		}
	}
}

// TestAnalyzeDownloadedMatrix: a matrix run's artifacts as gh run download
// writes them, a directory per artifact, read as one run (--run-id). A
// test that failed on Windows only is that leg's test, not a flake with
// retry evidence; the rerun artifact of the Windows leg's failures is
// attempts of that leg.
func TestAnalyzeDownloadedMatrix(t *testing.T) {
	dir := t.TempDir()
	write := func(art, doc string) {
		os.MkdirAll(filepath.Join(dir, art), 0o755)
		os.WriteFile(filepath.Join(dir, art, "junit.xml"), []byte(`<testsuite name="pytest">`+doc+`</testsuite>`), 0o644)
	}
	write("junit-ubuntu", `<testcase classname="t" name="paths"/><testcase classname="t" name="ok"/>`)
	write("junit-windows", `<testcase classname="t" name="paths"><failure message="sep"/></testcase><testcase classname="t" name="ok"/>`)
	write("junit-windows-rerun", `<testcase classname="t" name="paths"><failure message="sep"/></testcase>`)
	r := run(t, fixedClock, "analyze", "--format", "json", "--commit-sha", "abc123", "--run-id", "7", "--min-commits", "1", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct {
		FlakyCount int `json:"flaky_count"`
		Runs       int `json:"runs"`
		Tests      []struct {
			Name     string
			Failures int
			Runs     int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range rep.Tests {
		got[x.Name] = fmt.Sprintf("%d/%d", x.Failures, x.Runs)
	}
	want := map[string]string{"t::paths [junit-ubuntu]": "0/1", "t::paths [junit-windows]": "2/1", "t::ok [junit-ubuntu]": "0/1", "t::ok [junit-windows]": "0/1"}
	if rep.FlakyCount != 0 || rep.Runs != 1 || !maps.Equal(got, want) {
		t.Errorf("%d flaky, %d runs, tests (failures/runs) %v; want 0, 1 and %v", rep.FlakyCount, rep.Runs, got, want)
	}
}

// TestAnalyzeManyLegsSaid: a run downloaded as more artifact directories
// than flakegate tells apart is read whole, and analyze says on stderr and
// in the report which legs it did not tell apart as usual.
func TestAnalyzeManyLegsSaid(t *testing.T) {
	dir := t.TempDir()
	for l := range 600 {
		art := filepath.Join(dir, fmt.Sprintf("junit-%03d", l))
		if err := os.MkdirAll(art, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(art, "junit.xml"), []byte(`<testsuite name="s"><testcase classname="t" name="x"/></testsuite>`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, fixedClock, "analyze", "--format", "json", "--commit-sha", "abc123", "--run-id", "7", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct {
		Totals        struct{ Testcases int }
		Runs          int  `json:"runs"`
		FoldedLegRuns int  `json:"folded_leg_runs"`
		Stopped       bool `json:"leg_search_stopped"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Testcases != 600 || rep.Runs != 1 || rep.FoldedLegRuns != 1 || !rep.Stopped {
		t.Errorf("report %+v; want 600 testcases in 1 run, 1 run with folded legs and the search stopped", rep)
	}
	if !strings.Contains(r.stderr, "flakegate: warning: Some legs were not told apart as usual: 1 run had more than 256 legs") {
		t.Errorf("stderr does not say so:\n%s", r.stderr)
	}
}

// TestReadmeSynopsis: every flag a command takes is in the README's
// synopsis and in flakegate's usage.
func TestReadmeSynopsis(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(b), "## Command line\n\n```\n")
	synopsis, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("README has no synopsis")
	}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, cmd := range []string{"analyze", "gate", "matrix", "demo"} {
		r := run(t, nil, cmd, "-h")
		names := flagLine.FindAllStringSubmatch(r.stdout+r.stderr, -1)
		if len(names) == 0 {
			t.Fatalf("%s -h lists no flags:\n%s%s", cmd, r.stdout, r.stderr)
		}
		var line string
		for _, l := range strings.Split(synopsis, "flakegate ") {
			if strings.HasPrefix(l, cmd+" ") {
				line = l
			}
		}
		for _, m := range names {
			f := m[1]
			want := "--" + f
			if len(f) == 1 {
				want = "-" + f
			}
			if !strings.Contains(line, want+" ") && !strings.Contains(line, want+"]") {
				t.Errorf("README's synopsis of %s lacks %s", cmd, want)
			}
			if !strings.Contains(usageOf(cmd), want) {
				t.Errorf("flakegate's usage of %s lacks %s", cmd, want)
			}
		}
	}
}

// usageOf is the part of flakegate's usage about cmd.
func usageOf(cmd string) string {
	_, after, _ := strings.Cut(usage, "  flakegate "+cmd+" ")
	text, _, _ := strings.Cut(after, "\n  flakegate ")
	return text
}

// TestAnalyzeSaysUntimedRuns: runs that state no time are ordered before
// every timed run, which the order-reading evidence then reads (a test
// failing in runs 4, 5, 9 and 10 of ten, with run 10 untimed, reads as
// failing first and is called intermittent): analyze warns when some runs
// have a time and some do not, and not when none has one.
func TestAnalyzeSaysUntimedRuns(t *testing.T) {
	write := func(dir string, untimed func(i int) bool) {
		os.MkdirAll(dir, 0o755)
		for i := 1; i <= 10; i++ {
			ts := fmt.Sprintf(` timestamp="2026-11-%02dT10:00:00Z"`, i)
			if untimed(i) {
				ts = ""
			}
			fail := ""
			if i%5 == 4 || i%5 == 0 {
				fail = `<failure message="boom"/>`
			}
			doc := fmt.Sprintf(`<testsuite name="s"%s><properties><property name="commit_sha" value="c%02d"/><property name="run_id" value="%d"/></properties><testcase classname="t" name="x">%s</testcase></testsuite>`, ts, i, i, fail)
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%02d.xml", i)), []byte(doc), 0o644)
		}
	}
	dir := t.TempDir()
	write(filepath.Join(dir, "some"), func(i int) bool { return i == 10 })
	write(filepath.Join(dir, "none"), func(int) bool { return true })
	write(filepath.Join(dir, "all"), func(int) bool { return false })
	for name, want := range map[string]bool{"some": true, "none": false, "all": false} {
		r := run(t, fixedClock, "analyze", "--min-commits", "5", filepath.Join(dir, name))
		if got := strings.Contains(r.stderr, "1 of 10 runs state no time") || strings.Contains(r.stderr, "runs state no time"); got != want || r.code != 0 {
			t.Errorf("%s: exit %d, warned %v, want %v:\n%s", name, r.code, got, want, r.stderr)
		}
	}
}

// TestGateLedgerAloneExemptsNothing: a PR adds a ledger entry for the test
// it breaks (8 of 10 head runs failing against 1 of 10 base runs). Its
// checkout's ledger, given as --ledger alone, was read as the base's too
// and exempted the failure: pass, exit 0. Now exemption needs the base's
// ledger (--base-ledger).
func TestGateLedgerAloneExemptsNothing(t *testing.T) {
	dir := filepath.Join("testdata", "ledger-self")
	args := []string{"gate", "--base", filepath.Join(dir, "base-*.xml"), "--head", filepath.Join(dir, "head-*.xml"), "--ledger", filepath.Join(dir, "ledger.yml")}
	r := run(t, fixedClock, args...)
	if r.code != 1 || !strings.Contains(r.stdout, "verdict: block") || !strings.Contains(r.stdout, "no --base-ledger: the ledger given (--ledger) is read as the head's, checked alone, and exempts nothing") ||
		strings.Contains(r.stdout, "exempt:") || strings.Contains(r.stdout, "freeze-set") {
		t.Errorf("--ledger alone: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The base's ledger given (here the same file): the entry exempts.
	r = run(t, fixedClock, append(args, "--base-ledger", filepath.Join(dir, "ledger.yml"))...)
	if r.code != 0 || !strings.Contains(r.stdout, "verdict: pass") || !strings.Contains(r.stdout, "c::b: exempt:") {
		t.Errorf("--base-ledger given: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
