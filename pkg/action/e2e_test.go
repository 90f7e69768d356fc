package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/synth"
)

const repoName = "acme/shop"

var now = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// runner is one invocation of the action as the runner sets it up: every
// input present (its default, or a value), hyphens kept in INPUT_ names,
// the event file and the file commands in a temp dir.
type runner struct {
	t       *testing.T
	env     map[string]string
	dir     string
	stdout  bytes.Buffer
	sleeps  []time.Duration
	sleepMu sync.Mutex
}

// newFake starts the fake GitHub on the tests' clock, with no Gemini key
// in the environment, so that no AI section is asked for.
func newFake(t *testing.T) *ghfake.Server {
	t.Helper()
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	s := ghfake.New(t)
	s.SetClock(func() time.Time { return now })
	return s
}

// uploadedReport returns the files of the one artifact the run uploaded,
// the report's.
func uploadedReport(t *testing.T, s *ghfake.Server) map[string][]byte {
	t.Helper()
	uploads := s.Uploads()
	if len(uploads) != 1 || uploads[0].Name != "flakegate-report" {
		t.Fatalf("uploads = %+v", uploads)
	}
	files, err := uploads[0].Files()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func newRunner(t *testing.T, s *ghfake.Server, runID int64, event string, payload any, inputs map[string]string) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{t: t, dir: dir, env: map[string]string{}}
	for _, in := range config.Inputs() {
		r.env["INPUT_"+strings.ToUpper(in.Name)] = in.Default
	}
	r.env["INPUT_GITHUB-TOKEN"] = ghfake.Token
	for k, v := range inputs {
		r.env["INPUT_"+strings.ToUpper(k)] = v
	}
	ev, _ := json.Marshal(payload)
	os.MkdirAll(filepath.Join(dir, "workflow"), 0o755)
	os.MkdirAll(filepath.Join(dir, "file_commands"), 0o755)
	os.MkdirAll(filepath.Join(dir, "workspace"), 0o755)
	os.WriteFile(filepath.Join(dir, "workflow", "event.json"), ev, 0o644)
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "CI": "true", "HOME": filepath.Join(dir, "home"),
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": filepath.Join(dir, "workflow", "event.json"),
		"GITHUB_REPOSITORY": repoName, "GITHUB_REPOSITORY_OWNER": "acme", "GITHUB_SHA": ghfake.SHA("merge"), "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main",
		"GITHUB_WORKFLOW": "flakegate", "GITHUB_WORKFLOW_REF": repoName + "/.github/workflows/flakegate.yml@refs/heads/main",
		"GITHUB_RUN_ID": fmt.Sprint(runID), "GITHUB_RUN_ATTEMPT": "1", "GITHUB_RUN_NUMBER": "7", "GITHUB_JOB": "flakegate", "GITHUB_ACTOR": "octocat",
		"GITHUB_API_URL": strings.TrimSuffix(s.URL, "/"), "GITHUB_SERVER_URL": "https://github.com", "GITHUB_GRAPHQL_URL": s.URL + "graphql",
		"GITHUB_WORKSPACE": filepath.Join(dir, "workspace"),
		"GITHUB_OUTPUT":    filepath.Join(dir, "file_commands", "set_output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "file_commands", "step_summary"),
		"GITHUB_RETENTION_DAYS": "90", "RUNNER_TEMP": filepath.Join(dir, "runner_temp"),
		"ACTIONS_RUNTIME_TOKEN": s.RuntimeTokenFor(repoName, runID), "ACTIONS_RUNTIME_URL": s.ResultsURL, "ACTIONS_RESULTS_URL": s.ResultsURL,
	} {
		r.env[k] = v
	}
	return r
}

func (r *runner) run() int {
	r.t.Helper()
	return r.runCtx(context.Background())
}

// runCtx runs the action with ctx, as a cancelled job's step would be.
func (r *runner) runCtx(ctx context.Context) int {
	r.t.Helper()
	return Run(ctx, Env{
		Getenv: func(k string) string { return r.env[k] },
		Stdout: &r.stdout,
		Now:    func() time.Time { return now },
		GhapiOptions: ghapi.Options{Retry: retry.Policy{Sleep: func(_ context.Context, d time.Duration) error {
			r.sleepMu.Lock()
			r.sleeps = append(r.sleeps, d)
			r.sleepMu.Unlock()
			return nil
		}}, Now: func() time.Time { return now }},
	})
}

// outputs parses the GITHUB_OUTPUT file as the runner does.
func (r *runner) outputs() map[string]string {
	r.t.Helper()
	b, _ := os.ReadFile(r.env["GITHUB_OUTPUT"])
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var v []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			v = append(v, lines[i])
		}
		out[name] = strings.Join(v, "\n")
	}
	return out
}

// file is the file an output names, as a later step of the workflow,
// started in the workspace, opens it.
func (r *runner) file(output string) string {
	p := r.outputs()[output]
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(r.env["GITHUB_WORKSPACE"], filepath.FromSlash(p))
}

func (r *runner) summary() string {
	b, _ := os.ReadFile(r.env["GITHUB_STEP_SUMMARY"])
	return string(b)
}

// addHistory adds runs of ci.yml on main, each with a JUnit artifact made
// by synth: commits [from, to) of the sample suite.
func addHistory(t *testing.T, repo *ghfake.Repo, from, to int) {
	t.Helper()
	spec := synth.Sample()
	spec.Commits = to
	spec.Rerun = 0
	spec.InfraRuns = nil
	err := spec.Generate(func(sr synth.Run) (io.Writer, func() error, error) {
		var buf bytes.Buffer
		return &buf, func() error {
			if sr.Commit < from {
				return nil
			}
			run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: sr.SHA, CreatedAt: now.Add(-time.Duration(to-sr.Commit) * 3 * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"reports/junit.xml": buf.Bytes()}})
			return nil
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReportEndToEnd runs the weekly report twice against the fake GitHub:
// the first collects every run, uploads its report and history; the
// second finds that report, shows the trend, and downloads only new runs.
func TestReportEndToEnd(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	addHistory(t, repo, 0, 25)
	// A PR branch's run, broken by its patch: not the default branch, so
	// not read.
	prRun := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadBranch: "feature", CreatedAt: now.Add(-time.Hour)})
	repo.AddArtifact(ghfake.Artifact{RunID: prRun.ID, Name: "junit-results", Files: map[string][]byte{"j.xml": []byte(`<testsuite name="s"><testcase classname="x" name="from_a_branch"/></testsuite>`)}})
	// A fork's pull request from its own branch named main: listed with
	// branch=main, but not the default branch's history.
	forkRun := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadRepo: "forker/shop", CreatedAt: now.Add(-90 * time.Minute)})
	repo.AddArtifact(ghfake.Artifact{RunID: forkRun.ID, Name: "junit-results", Files: map[string][]byte{"j.xml": []byte(`<testsuite name="s"><testcase classname="x" name="from_a_branch"/></testsuite>`)}})
	expiredRun := repo.AddRun(ghfake.Run{Workflow: "ci.yml", CreatedAt: now.Add(-2 * time.Hour)})
	repo.AddArtifact(ghfake.Artifact{RunID: expiredRun.ID, Name: "junit-old", Expired: true, Files: map[string][]byte{"a.xml": []byte("<testsuite/>")}})
	// An artifact listed as live that has expired by the time it is
	// downloaded: the download answers 410 Gone.
	goneRun := repo.AddRun(ghfake.Run{Workflow: "ci.yml", CreatedAt: now.Add(-3 * time.Hour)})
	gone := repo.AddArtifact(ghfake.Artifact{RunID: goneRun.ID, Name: "junit-gone", Files: map[string][]byte{"a.xml": []byte("<testsuite/>")}})
	s.Inject(ghfake.Fault{Path: fmt.Sprintf("/repos/acme/shop/actions/artifacts/%d/zip", gone.ID), Status: 410, Times: 5})
	s.Inject(ghfake.Fault{Path: "/repos/acme/shop/actions/runs/*/artifacts", Times: 2, Status: 502})
	s.Inject(ghfake.Fault{Path: "/repos/acme/shop/actions/runs", Kind: ghfake.TooManyRequests, RetryAfter: 3 * time.Second})

	report1 := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-7 * 24 * time.Hour)})
	inputs := map[string]string{"lookback-days": "7", "tracking-issue": "true"}
	r := newRunner(t, s, report1.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, inputs)
	os.MkdirAll(filepath.Join(r.env["GITHUB_WORKSPACE"], ".github"), 0o755)
	os.WriteFile(filepath.Join(r.env["GITHUB_WORKSPACE"], ".github", "CODEOWNERS"), []byte("tests/ @acme/qa\n"), 0o644)
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	out := r.outputs()
	if out["verdict"] != "pass" || out["flaky-count"] == "0" || out["blocking-count"] != "0" {
		t.Errorf("outputs = %v", out)
	}
	if _, err := os.Stat(r.file("report-json")); err != nil {
		t.Errorf("report-json: %v", err)
	}
	sum := r.summary()
	if strings.Contains(r.summary(), "from_a_branch") || strings.Contains(r.stdout.String(), "from_a_branch") {
		t.Error("a feature branch's run was read")
	}
	for _, want := range []string{"flakegate report", "test_payment_times_out_under_load", "junit-old", "junit-gone", "expired"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if len(r.sleeps) < 3 {
		t.Errorf("retries slept %v, want the two 502s and the 429 retried", r.sleeps)
	}
	if !slices.Contains(r.sleeps, 3*time.Second) {
		t.Errorf("no retry waited the 429's Retry-After of 3s: %v", r.sleeps)
	}
	for _, q := range s.Requests(ghfake.HostBlob) {
		if q.Header.Get("Authorization") != "" || strings.Contains(fmt.Sprint(q.Header), ghfake.Token) {
			t.Fatalf("the token reached the blob host: %s %s", q.Method, q.Path)
		}
	}
	for _, line := range strings.Split(r.stdout.String(), "\n") {
		if strings.Contains(line, ghfake.Token) && line != "::add-mask::"+ghfake.Token {
			t.Errorf("the token appears in the log outside ::add-mask::: %q", line)
		}
	}
	if !strings.Contains(r.stdout.String(), "::add-mask::"+ghfake.Token) {
		t.Error("the token was not masked")
	}
	files := uploadedReport(t, s)
	for _, f := range []string{"report.json", "report.csv", "report.md", "report.html", "history.json.gz"} {
		if len(files[f]) == 0 {
			t.Errorf("artifact lacks %s", f)
		}
	}
	var rep struct {
		Skipped []struct{ Path, Error string } `json:"skipped_files"`
		Runs    int                            `json:"runs"`
		Tests   []struct {
			Name   string
			Owners []string
		}
	}
	json.Unmarshal(files["report.json"], &rep)
	if len(rep.Tests) == 0 || len(rep.Tests[0].Owners) != 1 || rep.Tests[0].Owners[0] != "@acme/qa" {
		t.Errorf("owners from CODEOWNERS: %+v", rep.Tests[:min(1, len(rep.Tests))])
	}
	if !strings.Contains(sum, "Owners (CODEOWNERS): @\u200bacme/qa") {
		t.Error("summary does not show the owners (neutralised, not mentioned)")
	}
	if rep.Runs != 25 || len(rep.Skipped) != 2 || !strings.Contains(rep.Skipped[0].Error+rep.Skipped[1].Error, "410") {
		t.Errorf("report: runs %d, skipped %+v", rep.Runs, rep.Skipped)
	}

	// A week later: five new runs. The report run before is the previous
	// report; only the new runs' artifacts are downloaded.
	addHistory(t, repo, 25, 30)
	// The same workflow gated a pull request in between: its artifact has
	// no report and must not hide the last report.
	gateRun := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "pull_request", CreatedAt: now.Add(-time.Hour)})
	repo.AddArtifact(ghfake.Artifact{RunID: gateRun.ID, Name: "flakegate-report", Files: map[string][]byte{"gate.json": []byte("{}")}})
	gateRun2 := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "workflow_dispatch", CreatedAt: now.Add(-30 * time.Minute)})
	repo.AddArtifact(ghfake.Artifact{RunID: gateRun2.ID, Name: "flakegate-report", Files: map[string][]byte{"gate.json": []byte("{}")}})
	report2 := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	before := len(s.Requests(ghfake.HostBlob))
	r2 := newRunner(t, s, report2.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, inputs)
	if code := r2.run(); code != 0 {
		t.Fatalf("second report: exit %d\n%s", code, r2.stdout.String())
	}
	downloads := 0
	for _, q := range s.Requests(ghfake.HostBlob)[before:] {
		if q.Method == "GET" {
			downloads++
		}
	}
	// A gate run's artifact (no report in it), the previous report
	// artifact, then the five new runs' artifacts.
	if downloads != 1+1+5 {
		t.Errorf("second report downloaded %d blobs, want 7 (a gate artifact, the previous report and 5 new runs)", downloads)
	}
	if sum := r2.summary(); !strings.Contains(sum, "Trend since the report of") {
		t.Errorf("second summary has no trend:\n%s", sum)
	}
	// One tracking issue, found by its marker and updated in place.
	issues := repo.Issues()
	if len(issues) != 1 || !strings.Contains(issues[0].Body, publish.IssueMarker("")) || !strings.Contains(issues[0].Body, "Trend since") || !strings.Contains(issues[0].Title, "flaky tests") {
		t.Errorf("tracking issues = %+v", issues)
	}
}
