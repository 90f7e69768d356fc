package action

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/publish"
)

// gateOnce runs the gate on the PR once, with head failures as given, as
// workflow run self (a new run each time, so the comment's run link
// changes), and returns the runner.
func gateOnce(t *testing.T, s *ghfake.Server, repo *ghfake.Repo, inputs map[string]string, headFails map[string]int, env ...string) *runner {
	t.Helper()
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	in := map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head", "history": "results/history/*.xml", "upload-artifact": "false"}
	for k, v := range inputs {
		in[k] = v
	}
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), in)
	for i := 0; i+1 < len(env); i += 2 {
		r.env[env[i]] = env[i+1]
	}
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, headFails)
	writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, nil)
	r.run()
	return r
}

var (
	passing  = map[string]int{}
	blocking = map[string]int{"test_login": 5}
	other    = map[string]int{"test_list": 5}
)

// TestCommentModes runs four gates on one PR (pass, block, the same block,
// pass) under each comment mode and checks what the sticky comment did
// after each: how many comments there are, and how many times the one
// comment was written.
func TestCommentModes(t *testing.T) {
	type state struct{ Comments, Writes int }
	sequence := []map[string]int{passing, blocking, blocking, passing}
	for _, tc := range []struct {
		mode string
		want []state
		logs []string
	}{
		{"always", []state{{1, 1}, {1, 2}, {1, 3}, {1, 4}}, []string{"posted", "edited", "edited", "edited"}},
		{"true", []state{{1, 1}, {1, 2}, {1, 3}, {1, 4}}, []string{"posted", "edited", "edited", "edited"}},
		{"changes", []state{{0, 0}, {1, 1}, {1, 1}, {1, 2}}, []string{"skipped", "posted", "unchanged", "edited"}},
		{"failures", []state{{0, 0}, {1, 1}, {1, 2}, {1, 3}}, []string{"skipped", "posted", "edited", "edited"}},
		{"off", []state{{0, 0}, {0, 0}, {0, 0}, {0, 0}}, nil},
		{"false", []state{{0, 0}, {0, 0}, {0, 0}, {0, 0}}, nil},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "")
			var got []state
			var logs []string
			for i, fails := range sequence {
				r := gateOnce(t, s, repo, map[string]string{"comment": tc.mode}, fails)
				cs := repo.Comments(42)
				st := state{Comments: len(cs)}
				if len(cs) == 1 {
					st.Writes = 1 + strings.Count(requestLog(s), fmt.Sprintf("PATCH /repos/%s/issues/comments/%d", repoName, cs[0].ID))
				}
				got = append(got, st)
				for _, a := range []string{"posted", "edited", "unchanged", "skipped"} {
					if strings.Contains(r.stdout.String(), "PR comment "+a) {
						logs = append(logs, a)
					}
				}
				if i == 3 && len(cs) == 1 && !strings.Contains(cs[0].Body, "flakegate: pass") {
					t.Errorf("after the last, passing run the comment does not say pass:\n%s", cs[0].Body)
				}
				out := r.outputs()
				if len(cs) == 1 && out["comment-url"] == "" && tc.mode != "off" {
					t.Errorf("run %d: comment-url output is empty with a comment there", i+1)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("comments after each run (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.logs, logs); diff != "" {
				t.Errorf("what the log says of the comment (-want +got):\n%s", diff)
			}
		})
	}
}

// requestLog lists the API requests the fake served, one "METHOD path"
// per line.
func requestLog(s *ghfake.Server) string {
	var b strings.Builder
	for _, r := range s.Requests(ghfake.HostAPI) {
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.Path)
	}
	return b.String()
}

// TestTwoInstances runs two flakegate steps on one PR, as a matrix or two
// workflows would: each keeps its own sticky comment, check run and
// artifact, and re-running either edits its own comment only.
func TestTwoInstances(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	unit := map[string]string{"check-run": "true", "check-name": "flakegate (unit)", "upload-artifact": "true"}
	e2e := map[string]string{"check-run": "true", "check-name": "flakegate e2e", "comment-tag": "e2e", "upload-artifact": "true"}
	for round := 0; round < 2; round++ {
		gateOnce(t, s, repo, unit, blocking)
		gateOnce(t, s, repo, e2e, other)
	}
	cs := repo.Comments(42)
	if len(cs) != 2 {
		t.Fatalf("%d comments, want one per instance", len(cs))
	}
	markers := []string{publish.CommentMarker("flakegate (unit)"), publish.CommentMarker("e2e")}
	for i, m := range markers {
		if !strings.Contains(cs[i].Body, m) {
			t.Errorf("comment %d lacks its marker %s", i, m)
		}
		if strings.Contains(cs[i].Body, markers[1-i]) {
			t.Errorf("comment %d carries the other instance's marker", i)
		}
	}
	if !strings.Contains(cs[0].Body, "test\\_login") || !strings.Contains(cs[1].Body, "test\\_list") {
		t.Errorf("each comment should name its own blocking test")
	}
	var names []string
	for _, c := range repo.CheckRuns() {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"flakegate (unit)", "flakegate (unit)", "flakegate e2e", "flakegate e2e"}, names); diff != "" {
		t.Errorf("check runs (-want +got):\n%s", diff)
	}
	var arts []string
	for _, a := range s.Uploads() {
		arts = append(arts, a.Name)
	}
	for _, want := range []string{"flakegate-report-flakegate--unit-", "flakegate-report-e2e"} {
		if !slices.Contains(arts, want) {
			t.Errorf("artifacts %v lack %s", arts, want)
		}
	}
}

// TestArtifactNameOnRerun: a re-run keeps its run, and the first attempt's
// artifact keeps the name; the second attempt uploads under another. A
// re-run whose first attempt uploaded nothing (it failed before) keeps the
// plain name, which is the only one a gate in another workflow finds
// (GitHub's name filter is exact).
func TestArtifactNameOnRerun(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	uploads := func(runID int64, attempts ...string) []string {
		token := s.RuntimeTokenFor(repoName, runID) // one run: its attempts share the backend ids
		before := len(s.Uploads())
		for _, attempt := range attempts {
			in := map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head"}
			r := newRunner(t, s, runID, "pull_request", prPayload(repoName), in)
			r.env["ACTIONS_RUNTIME_TOKEN"] = token
			ws := r.env["GITHUB_WORKSPACE"]
			writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
			writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
			r.env["GITHUB_RUN_ATTEMPT"] = attempt
			if code := r.run(); code != 0 {
				t.Fatalf("attempt %s: exit %d\n%s", attempt, code, r.stdout.String())
			}
			if strings.Contains(r.stdout.String(), "::warning") {
				t.Errorf("attempt %s warned:\n%s", attempt, r.stdout.String())
			}
		}
		var names []string
		for _, a := range s.Uploads()[before:] {
			names = append(names, a.Name)
		}
		sort.Strings(names)
		return names
	}
	// Attempts 1 and 2, then attempt 2 again: a taken name.
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	if diff := cmp.Diff([]string{"flakegate-report", "flakegate-report-attempt-2", "flakegate-report-attempt-2-2"}, uploads(self.ID, "1", "2", "2")); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	// Attempt 1 failed before its upload; attempt 2 is the run's first.
	rerun := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	if diff := cmp.Diff([]string{"flakegate-report"}, uploads(rerun.ID, "2")); diff != "" {
		t.Errorf("a re-run after an attempt without upload: artifacts (-want +got):\n%s", diff)
	}
}

// TestAnnotationsOnLines: blocking tests are annotated on the file and line
// JUnit gives, in the log and the check run, and max-annotations caps the
// check run's. Paths are the repository's: JUnit's relative paths, paths
// under the workspace, and the paths tools write on the runner, whose
// checkout the action's container sees as /github/workspace.
func TestAnnotationsOnLines(t *testing.T) {
	for _, tc := range []struct {
		max  string
		want int
	}{{"10", 3}, {"1", 1}, {"0", 0}} {
		t.Run("max-annotations="+tc.max, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "")
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
			r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
				map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head/*.xml", "check-run": "true", "max-annotations": tc.max, "upload-artifact": "false"})
			ws := r.env["GITHUB_WORKSPACE"]
			side := func(dir, sha string, fail bool) {
				os.MkdirAll(filepath.Join(ws, dir), 0o755)
				for i := 0; i < 5; i++ {
					failure := ""
					if fail {
						failure = `<failure message="boom"/>`
					}
					doc := fmt.Sprintf(`<testsuite name="t"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`+
						`<testcase classname="tests.test_a" name="test_one" file="%s/tests/test_a.py" line="12">%s</testcase>`+
						`<testcase classname="tests.test_b" name="test_two" file="tests/test_b.py" line="34">%s</testcase>`+
						`<testcase classname="tests.test_c" name="test_three" file="/home/runner/work/shop/shop/tests/test_c.py" line="56">%s</testcase></testsuite>`,
						sha, i+len(dir)*10, ws, failure, failure, failure)
					os.WriteFile(filepath.Join(ws, dir, fmt.Sprintf("%d.xml", i)), []byte(doc), 0o644)
				}
			}
			side("results/base", baseSHA, false)
			side("results/head", headSHA, true)
			if code := r.run(); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, r.stdout.String())
			}
			log := r.stdout.String()
			for _, want := range []string{"::error file=tests/test_a.py,line=12,", "::error file=tests/test_b.py,line=34,", "::error file=tests/test_c.py,line=56,"} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q (the workspace path made relative, on the line):\n%s", want, log)
				}
			}
			runs := repo.CheckRuns()
			if len(runs) != 1 {
				t.Fatalf("%d check runs", len(runs))
			}
			anns := runs[0].Annotations
			if len(anns) != tc.want {
				t.Fatalf("%d annotations, want %d: %+v", len(anns), tc.want, anns)
			}
			if tc.want > 0 && (anns[0].Path != "tests/test_a.py" || anns[0].StartLine != 12 || anns[0].EndLine != 12) {
				t.Errorf("annotation = %+v, want tests/test_a.py line 12", anns[0])
			}
			if tc.want > 2 && (anns[2].Path != "tests/test_c.py" || anns[2].StartLine != 56) {
				t.Errorf("annotation = %+v, want tests/test_c.py line 56 (the runner's path made the repository's)", anns[2])
			}
			if out := r.outputs(); out["check-url"] == "" {
				t.Errorf("check-url output is empty")
			}
		})
	}
}

// TestOutputsMatchActionYAML: every output the action writes is declared
// in action.yml, and every declared output is written, in both modes.
func TestOutputsMatchActionYAML(t *testing.T) {
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Outputs map[string]any `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	var declared []string
	for k := range meta.Outputs {
		declared = append(declared, k)
	}
	sort.Strings(declared)

	s := newFake(t)
	repo := gateRepo(t, s, "")
	r := gateOnce(t, s, repo, nil, blocking)
	out := r.outputs()
	var written []string
	for k := range out {
		written = append(written, k)
	}
	sort.Strings(written)
	if diff := cmp.Diff(declared, written); diff != "" {
		t.Errorf("outputs (-action.yml +written):\n%s", diff)
	}
	var v struct {
		Verdict                string
		Tests, Failed, Flaky   int
		Blocking, Inconclusive []string
	}
	if err := json.Unmarshal([]byte(out["verdict-json"]), &v); err != nil {
		t.Fatalf("verdict-json %q: %v", out["verdict-json"], err)
	}
	if v.Verdict != "block" || v.Tests != 4 || v.Failed != 1 || !slices.Equal(v.Blocking, []string{"tests.test_app::test_login"}) || v.Inconclusive == nil {
		t.Errorf("verdict-json = %s", out["verdict-json"])
	}
	if out["tests-count"] != "4" || out["failed-count"] != "1" || out["blocking-count"] != "1" || out["inconclusive-count"] != "0" ||
		!strings.HasPrefix(out["comment-url"], "https://") {
		t.Errorf("outputs = %v", out)
	}
	// Paths are as the workflow's later steps reach them, outside the
	// action's container: relative to the workspace they start in. The
	// summary's copy is what the step appended to the job summary.
	if out["report-dir"] != "flakegate-report" || out["report-json"] != "flakegate-report/gate.json" || out["summary-path"] != "flakegate-report/summary.md" {
		t.Errorf("paths in the outputs = %q, %q, %q", out["report-dir"], out["report-json"], out["summary-path"])
	}
	if b, err := os.ReadFile(r.file("summary-path")); err != nil || string(b) != r.summary() {
		t.Errorf("summary-path: %v; it holds:\n%s\nthe job summary:\n%s", err, b, r.summary())
	}
}

// TestLocalResultsOffline: report mode with results set reads no workflow
// runs, so it works with no API reachable, and lookback-days does not drop
// local files dated weeks back: the bundled sample gives the same 3 flaky
// tests as `flakegate analyze fixtures/history`.
func TestLocalResultsOffline(t *testing.T) {
	s := ghfake.New(t)
	r := newRunner(t, s, 1, "workflow_dispatch", map[string]any{"repository": map[string]any{"full_name": repoName}},
		map[string]string{"mode": "report", "results": "history/*.xml", "upload-artifact": "false"})
	r.env["GITHUB_API_URL"] = "http://127.0.0.1:1" // nothing listens
	copyDir(t, "../../fixtures/history", filepath.Join(r.env["GITHUB_WORKSPACE"], "history"))
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	out := r.outputs()
	if out["flaky-count"] != "3" || out["tests-count"] != "60" {
		t.Errorf("outputs = %v, want 3 flaky of 60 tests", out)
	}
	if strings.Contains(r.stdout.String(), "::error") {
		t.Errorf("errors in the log:\n%s", r.stdout.String())
	}
}

// TestEverythingFilteredOut: when the inputs leave nothing to analyse, the
// summary and the log say why instead of passing quietly.
func TestEverythingFilteredOut(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	old := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: ghfake.SHA("old"), CreatedAt: now.AddDate(0, 0, -20)})
	repo.AddArtifact(ghfake.Artifact{RunID: old.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(ghfake.SHA("old"), int(old.ID), nil)}})
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"repository": map[string]any{"full_name": repoName, "default_branch": "main"}},
		map[string]string{"mode": "report", "workflows": "ci.yml", "upload-artifact": "false"})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	for what, text := range map[string]string{"log": r.stdout.String(), "summary": r.summary()} {
		if !strings.Contains(text, "0 tests analysed") {
			t.Errorf("the %s does not say that nothing was analysed:\n%s", what, text)
		}
	}
}

// TestAISections: with a Gemini key, the AI section reaches the report
// files, the job summary and the tracking issue in report mode, and the PR
// comment for blocking tests in gate mode. GOOGLE_GEMINI_BASE_URL reaches
// the client.
func TestAISections(t *testing.T) {
	var calls int
	gem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls++
		reply := `{"summary":"Shared fixture state leaks between tests.","root_causes":[],"recommendations":["Reset the fixture."]}`
		body, _ := json.Marshal(map[string]any{"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": reply}}}, "finishReason": "STOP"}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer gem.Close()
	const said = "Shared fixture state leaks between tests."

	s := ghfake.New(t)
	s.Repo(repoName)
	r := newRunner(t, s, 1, "workflow_dispatch", map[string]any{"repository": map[string]any{"full_name": repoName}},
		map[string]string{"mode": "report", "results": "history/*.xml", "upload-artifact": "false", "tracking-issue": "true", "gemini-api-key": "AIzaTESTKEY0123456789"})
	r.env["GOOGLE_GEMINI_BASE_URL"] = gem.URL
	copyDir(t, "../../fixtures/history", filepath.Join(r.env["GITHUB_WORKSPACE"], "history"))
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	dir := r.file("report-dir")
	for _, f := range []string{"report.md", "report.html"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if !strings.Contains(string(b), said) {
			t.Errorf("%s lacks the AI section", f)
		}
	}
	if !strings.Contains(r.summary(), said) {
		t.Errorf("the summary lacks the AI section")
	}
	if is := s.Repo(repoName).Issues(); len(is) != 1 || !strings.Contains(is[0].Body, said) {
		t.Errorf("the tracking issue lacks the AI section: %+v\n%s", is, r.stdout.String())
	}

	repo := gateRepo(t, s, "")
	g := gateOnce(t, s, repo, map[string]string{"gemini-api-key": "AIzaTESTKEY0123456789"}, blocking, "GOOGLE_GEMINI_BASE_URL", gem.URL)
	if cs := repo.Comments(42); len(cs) != 1 || !strings.Contains(cs[0].Body, said) || !strings.Contains(cs[0].Body, "AI-generated") {
		t.Errorf("the PR comment lacks the AI section of the blocking test:\n%s", g.stdout.String())
	}
	if calls != 2 {
		t.Errorf("Gemini was called %d times, want 2 (GOOGLE_GEMINI_BASE_URL must reach the client)", calls)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// TestTrackingIssueLifecycle: the tracking issue is open while there are
// flaky tests. A report with none closes it, saying so, and a report with
// none and no open issue opens none; the next flaky test opens a new one.
func TestTrackingIssueLifecycle(t *testing.T) {
	s := ghfake.New(t)
	repo := s.Repo(repoName)
	clean := t.TempDir()
	for i := range 6 {
		doc := fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="%040x"/><property name="run_id" value="%d"/></properties>`+
			`<testcase classname="tests.test_a" name="test_one"/></testsuite>`, i+1, 100+i)
		os.WriteFile(filepath.Join(clean, fmt.Sprintf("run-%d.xml", i)), []byte(doc), 0o644)
	}
	// A window that held no test: nothing analysed is not "no flaky
	// tests", and the issue stays open.
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "run.xml"), []byte(`<testsuite name="s"><properties><property name="commit_sha" value="c0ffee"/></properties></testsuite>`), 0o644)
	report := func(from string) string {
		r := newRunner(t, s, 1, "workflow_dispatch", map[string]any{"repository": map[string]any{"full_name": repoName}},
			map[string]string{"mode": "report", "results": "history/*.xml", "upload-artifact": "false", "tracking-issue": "true"})
		copyDir(t, from, filepath.Join(r.env["GITHUB_WORKSPACE"], "history"))
		if code := r.run(); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.stdout.String())
		}
		return r.stdout.String()
	}
	state := func() (out []string) {
		for _, is := range repo.Issues() {
			out = append(out, is.State+": "+is.Title)
		}
		return out
	}
	steps := []struct {
		from string
		log  string
		want []string
	}{
		{"../../fixtures/history", "tracking issue created", []string{"open: flakegate: 3 flaky tests"}},
		{"../../fixtures/history", "tracking issue updated", []string{"open: flakegate: 3 flaky tests"}},
		{empty, "tracking issue left as it is: 0 tests analysed", []string{"open: flakegate: 3 flaky tests"}},
		{clean, "tracking issue closed", []string{"closed: flakegate: no flaky tests"}},
		{clean, "no flaky tests, and no open issue to close; none is opened", []string{"closed: flakegate: no flaky tests"}},
		{"../../fixtures/history", "tracking issue created", []string{"closed: flakegate: no flaky tests", "open: flakegate: 3 flaky tests"}},
	}
	for i, st := range steps {
		log := report(st.from)
		if !strings.Contains(log, st.log) {
			t.Errorf("report %d: the log does not say %q:\n%s", i+1, st.log, log)
		}
		if diff := cmp.Diff(st.want, state()); diff != "" {
			t.Fatalf("report %d: issues (-want +got):\n%s", i+1, diff)
		}
	}
	if is := repo.Issues()[0]; !strings.Contains(is.Body, "No test was flagged as flaky") || !strings.Contains(is.Body, publish.IssueMarker("")) {
		t.Errorf("the closed issue's body does not say there are none, or lost its marker:\n%s", is.Body)
	}
}

// TestFirstReportIsNotAWarning: the first report of a workflow has no
// previous report to find, and says so as a notice; a report whose
// earlier runs' report artifacts are gone warns.
func TestFirstReportIsNotAWarning(t *testing.T) {
	for _, tc := range []struct {
		earlier bool
		want    string
	}{
		{false, "::notice::previous report: none, as no earlier run of this workflow on main succeeded (a first report)"},
		{true, "::warning::previous report: none of the 1 earlier successful runs of this workflow on main has a report artifact (expired, or not uploaded)"},
	} {
		s := newFake(t)
		repo := s.Repo(repoName)
		if tc.earlier {
			repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-7 * 24 * time.Hour)})
		}
		self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
		r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"},
			map[string]string{"mode": "report", "results": "history/*.xml", "upload-artifact": "false"})
		copyDir(t, "../../fixtures/history", filepath.Join(r.env["GITHUB_WORKSPACE"], "history"))
		if code := r.run(); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.stdout.String())
		}
		if log := r.stdout.String(); !strings.Contains(log, tc.want) {
			t.Errorf("earlier run %v: the log lacks %q:\n%s", tc.earlier, tc.want, log)
		}
	}
}

// TestReportOnPullRequest: report mode on a pull request posts the report
// as the sticky comment, edited in place on the next run, and, with
// check-run, a check run on the head commit with a warning annotation per
// flaky test, neutral when there are flaky tests.
func TestReportOnPullRequest(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	for attempt := 1; attempt <= 2; attempt++ {
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
			map[string]string{"mode": "report", "results": "history/*.xml", "check-run": "true", "upload-artifact": "false"})
		copyDir(t, "../../fixtures/history", filepath.Join(r.env["GITHUB_WORKSPACE"], "history"))
		if code := r.run(); code != 0 {
			t.Fatalf("attempt %d: exit %d\n%s", attempt, code, r.stdout.String())
		}
		out := r.outputs()
		cs := repo.Comments(42)
		if len(cs) != 1 || !strings.Contains(cs[0].Body, "flakegate report") || !strings.Contains(cs[0].Body, "**3 flaky tests**") ||
			out["comment-url"] == "" {
			t.Fatalf("attempt %d: %d comments, comment-url %q; want one sticky comment with the report", attempt, len(cs), out["comment-url"])
		}
		runs := repo.CheckRuns()
		if len(runs) != attempt || out["check-url"] == "" {
			t.Fatalf("attempt %d: %d check runs, check-url %q", attempt, len(runs), out["check-url"])
		}
		cr := runs[attempt-1]
		if cr.HeadSHA != headSHA || cr.Conclusion != "neutral" || len(cr.Annotations) != 3 || cr.Annotations[0].Level != "warning" ||
			!strings.HasPrefix(cr.Annotations[0].Path, "tests/") {
			t.Errorf("attempt %d: check run %+v", attempt, cr)
		}
	}
}

// TestVerdictJSONBounded: a verdict that blocks thousands of tests gives a
// verdict-json of at most maxOutputNames names a list, says it was cut,
// and keeps the whole counts in their outputs.
func TestVerdictJSONBounded(t *testing.T) {
	var names []string
	for i := range 5000 {
		names = append(names, fmt.Sprintf("tests/test_%04d.py::test_a_long_name_%d", i, i))
	}
	out := outcome{verdict: "block", blocking: names, inconclusive: names[:3]}
	got := map[string]string{}
	for _, kv := range out.outputs("", "") {
		got[kv[0]] = kv[1]
	}
	var v verdictJSON
	if err := json.Unmarshal([]byte(got["verdict-json"]), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Blocking) != maxOutputNames || len(v.Inconclusive) != 3 || !v.Truncated || got["blocking-count"] != "5000" {
		t.Errorf("%d and %d names, truncated %v, blocking-count %s", len(v.Blocking), len(v.Inconclusive), v.Truncated, got["blocking-count"])
	}
	if n := len(got["verdict-json"]); n > 16<<10 {
		t.Errorf("verdict-json is %d bytes", n)
	}
	short := outcome{verdict: "pass"}
	for _, kv := range short.outputs("", "") {
		if kv[0] == "verdict-json" && strings.Contains(kv[1], "truncated") {
			t.Errorf("an uncut verdict-json says truncated: %s", kv[1])
		}
		if kv[0] == "verdict-json" && !strings.Contains(kv[1], `"blocking":[]`) {
			t.Errorf("no blocking test is not an empty list: %s", kv[1])
		}
	}
	// Tests red on base alone make a verdict inconclusive: named.
	red := outcome{verdict: "inconclusive", invalid: []string{"t::checkout"}}
	for _, kv := range red.outputs("", "") {
		if kv[0] == "verdict-json" && !strings.Contains(kv[1], `"inconclusive":[],"invalid":["t::checkout"]`) {
			t.Errorf("red base: verdict-json %s", kv[1])
		}
	}
	// A name a later step prints (jq -r) is one line: its "::" cannot
	// start a workflow command there (an audit).
	hostile := outcome{verdict: "block", blocking: []string{"t::x\n::add-mask::secret\u202e", "::add-mask::hunter2"}}
	for _, kv := range hostile.outputs("", "") {
		if kv[0] != "verdict-json" {
			continue
		}
		if err := json.Unmarshal([]byte(kv[1]), &v); err != nil {
			t.Fatal(err)
		}
		if want := []string{"t::x ::add-mask::secret", `\::add-mask::hunter2`}; !slices.Equal(v.Blocking, want) {
			t.Errorf("verdict-json names %q, want %q", v.Blocking, want)
		}
	}
}

// TestSummaryCopyIsTheSummary: the copy in report-dir (summary-path) is
// what the job summary holds, cut as it was cut under GitHub's 1 MiB, not
// everything the step tried to append.
func TestSummaryCopyIsTheSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary")
	cfg := &config.Config{}
	cfg.GitHub.StepSummary = path
	a := &run{cfg: cfg, log: publish.NewLog(io.Discard, func(string) string { return "" })}
	a.appendSummary("## first\n")
	a.appendSummary(strings.Repeat("| row | data |\n", 200000)) // 3 MB
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.summaryCopy.String() != string(b) || len(b) > publish.MaxSummaryBytes {
		t.Errorf("copy %d bytes, summary %d bytes (cap %d): want the same text", a.summaryCopy.Len(), len(b), publish.MaxSummaryBytes)
	}
}
