package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/render"
)

// flakyName is the pre-existing flake of the base-branch history tests.
const flakyName = "test_ws_reconnect"

// flakyFails says whether the pre-existing flake fails in CI run i: in 3
// runs of every 10, a failure rate of 0.3.
func flakyFails(i int) bool { return i%10 == 0 || i%10 == 3 || i%10 == 6 }

// addCIRuns adds runs [from, to) of ci.yml on main, one every two hours
// up to now, each with a JUnit artifact in which only the pre-existing
// flake ever fails. A run in which it fails concludes "failure", as CI
// without retries does.
func addCIRuns(repo *ghfake.Repo, from, to int) {
	for i := from; i < to; i++ {
		sha := ghfake.SHA(fmt.Sprint("main-", i))
		run := ghfake.Run{Workflow: "ci.yml", HeadSHA: sha, CreatedAt: now.Add(-time.Duration(60-i) * 2 * time.Hour)}
		if flakyFails(i) {
			run.Conclusion = "failure"
		}
		run = repo.AddRun(run)
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results",
			Files: map[string][]byte{"junit.xml": junitRun(sha, int(run.ID), map[string]bool{flakyName: flakyFails(i)})}})
	}
}

// reportArtifact zips a report artifact whose carried history holds n runs
// on branch in which every test passes.
func reportArtifact(t *testing.T, branch string, n int) map[string][]byte {
	t.Helper()
	var srcs []history.Source
	for i := range n {
		sha := ghfake.SHA(fmt.Sprint("sentinel-", i))
		doc := junitRun(sha, 900000+i, nil)
		srcs = append(srcs, history.Source{Name: fmt.Sprint("sentinel-", i, ".xml"),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(doc)), nil },
			Run: &model.Run{CommitSHA: sha, RunID: fmt.Sprint(900000 + i), Attempt: 1, Branch: branch, Event: "push", Workflow: "CI",
				Time: now.Add(-time.Duration(i+1) * time.Minute)}})
	}
	h, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	if err := history.Encode(&hb, h); err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{render.ReportJSONFile: []byte(`{"source":"sentinel"}`), render.HistoryFile: hb.Bytes()}
}

// gateTally is a test's entry in gate.json, as far as these tests read it.
type gateTally struct {
	Name    string `json:"name"`
	History struct {
		Runs     int `json:"runs"`
		Failures int `json:"failures"`
	} `json:"history"`
	Decision string `json:"decision"`
	Bucket   string `json:"bucket"`
}

// gateTest reads the named test's entry from the gate.json of the run.
func gateTest(t *testing.T, r *runner, name string) gateTally {
	t.Helper()
	b, err := os.ReadFile(r.file("report-json"))
	if err != nil {
		t.Fatalf("gate.json: %v\n%s", err, r.stdout.String())
	}
	var res struct {
		Tests []gateTally `json:"tests"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	for _, tt := range res.Tests {
		if strings.HasSuffix(tt.Name, name) {
			return tt
		}
	}
	t.Fatalf("gate.json has no test %s:\n%s", name, b)
	return gateTally{}
}

// TestGateBaseBranchHistory: the common setup. ci.yml uploads JUnit
// artifacts on main, where test_ws_reconnect is a pre-existing flake
// failing in 30% of runs; a scheduled flakegate report on main carries the
// history it read; a pull request's workflow gates in mode auto with no
// history input. The gate reads main's CI runs that the report does not
// hold, tops them up with the report's carried history, and leaves out
// everything that is not main's own history: a newer report made on a
// feature branch, runs of the PR's head commit, a fork's PR from its own
// main, runs of other branches. The pre-existing flake failing on head
// does not block.
func TestGateBaseBranchHistory(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")

	// The weekly report on main has read the first 40 CI runs.
	addCIRuns(repo, 0, 40)
	report := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-39 * time.Hour)})
	rr := newRunner(t, s, report.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"workflows": "ci.yml"})
	if code := rr.run(); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, rr.stdout.String())
	}
	if up := s.Uploads(); len(up) != 1 {
		t.Fatalf("report uploads = %+v", up)
	}

	// Since then: 20 more runs on main, and runs that are not main's history.
	addCIRuns(repo, 40, 60)
	fail := map[string]bool{flakyName: true}
	notMain := []ghfake.Run{
		{Workflow: "ci.yml", HeadSHA: headSHA, CreatedAt: now.Add(-30 * time.Minute)},                                                            // the PR's head commit pushed to main
		{Workflow: "ci.yml", Event: "pull_request", HeadRepo: "forker/shop", HeadSHA: ghfake.SHA("fork"), CreatedAt: now.Add(-20 * time.Minute)}, // a fork's PR from its own main
		{Workflow: "ci.yml", HeadBranch: "fix", HeadSHA: ghfake.SHA("fix"), CreatedAt: now.Add(-10 * time.Minute)},                               // another branch
	}
	for _, run := range notMain {
		run.Conclusion = "failure"
		run = repo.AddRun(run)
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(run.HeadSHA, int(run.ID), fail)}})
	}
	expired := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA("main-expired"), CreatedAt: now.Add(-5 * time.Hour)})
	for i := range 12 { // more than GitHub shows as annotations in one step
		repo.AddArtifact(ghfake.Artifact{RunID: expired.ID, Name: fmt.Sprintf("junit-old-%02d", i), Expired: true, Files: map[string][]byte{"a.xml": junitRun(expired.HeadSHA, 1, fail)}})
	}
	// A newer report, made by a push to a feature branch: its carried
	// history says the flake is perfectly stable over 500 runs. It must
	// not move p0 for pull requests into main.
	feature := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "push", HeadBranch: "fix", CreatedAt: now.Add(-time.Hour)})
	repo.AddArtifact(ghfake.Artifact{RunID: feature.ID, Name: "flakegate-report", Files: reportArtifact(t, "main", 500)})

	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"workflows": "ci.yml", "base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, map[string]int{flakyName: 1})
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{flakyName: 2})
	code := r.run()
	log := r.stdout.String()

	// The history: 40 runs carried in main's report and the 20 read from
	// ci.yml since; 18 of the 60 failed.
	got := gateTest(t, r, flakyName)
	if got.History.Runs != 60 || got.History.Failures != 18 {
		t.Errorf("history of %s = %+v, want 60 runs with 18 failures (40 carried in main's report, 20 from ci.yml runs since)\n%s", flakyName, got.History, log)
	}
	if !strings.Contains(log, fmt.Sprintf("previous report: run %d on main", report.ID)) {
		t.Errorf("the last report on main (run %d) was not read:\n%s", report.ID, log)
	}
	if strings.Contains(log, fmt.Sprintf("run %d", feature.ID)) {
		t.Errorf("the feature branch's report (run %d) was read:\n%s", feature.ID, log)
	}
	for _, want := range []string{
		"base-branch history for p0: 60 runs (20 from the JUnit artifacts of runs of ci.yml on main since ",
		fmt.Sprintf("; 40 carried in the report of run %d)", report.ID),
		"left out 2 (the PR's commits, pull request runs, this run), already carried 40",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	// Each expired artifact is a warning, in the log or, over GitHub's
	// annotation caps, in the job summary.
	for i := range 12 {
		name := fmt.Sprintf("junit-old-%02d", i)
		if !strings.Contains(log, "::warning::base-branch history: skipped run "+fmt.Sprint(expired.ID)) ||
			!strings.Contains(log+r.summary(), render.EscapeMarkdown(name)) {
			t.Errorf("expired artifact %s left out without a warning:\n%s\n%s", name, log, r.summary())
		}
	}

	// The pre-existing flake must not block: with main's history it is a
	// pre-existing flake, and it passes.
	if code != 0 || r.outputs()["verdict"] != "pass" || got.Decision == "block" {
		t.Errorf("exit %d, verdict %q, %s: %s/%s; want exit 0, verdict pass for a pre-existing flake\n%s",
			code, r.outputs()["verdict"], flakyName, got.Bucket, got.Decision, log)
	}
}

// TestGateAutoWithReportNoHistory: mode auto, the README's setup. Once a
// scheduled report exists and the history input is empty, the gate used to
// fail with "combine: no history". It must gate, with the report's carried
// history as base-branch history.
func TestGateAutoWithReportNoHistory(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	addCIRuns(repo, 30, 60)
	report := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-time.Hour)})
	rr := newRunner(t, s, report.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, nil)
	if code := rr.run(); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, rr.stdout.String())
	}

	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	before := len(s.Requests(ghfake.HostBlob))
	code := r.run()
	log := r.stdout.String()
	if out := r.outputs(); code != 0 || out["verdict"] != "pass" || strings.Contains(log, "combine") {
		t.Fatalf("exit %d, outputs %v; want a passing gate\n%s", code, out, log)
	}
	if got := gateTest(t, r, flakyName); got.History.Runs != 30 || got.History.Failures != 9 {
		t.Errorf("history of %s = %+v, want the report's 30 runs with 9 failures", flakyName, got.History)
	}
	// Every CI run is in the carried history: only the report is downloaded.
	downloads := 0
	for _, q := range s.Requests(ghfake.HostBlob)[before:] {
		if q.Method == "GET" {
			downloads++
		}
	}
	if n := downloads; n != 1 {
		t.Errorf("the gate downloaded %d blobs, want 1 (the report artifact)\n%s", n, log)
	}
}

// TestGateReadsTheReportOfAnotherWorkflow: the quickstarts put the gate
// (on pull requests) and the weekly report (on a schedule) in workflows of
// their own. The gate's workflow has no run on the base branch, so it
// reads the newest report of another workflow's scheduled run there: its
// flaky tests and carried history.
func TestGateReadsTheReportOfAnotherWorkflow(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	addCIRuns(repo, 30, 60)
	report := repo.AddRun(ghfake.Run{Workflow: "flakegate-report.yml", Event: "schedule", CreatedAt: now.Add(-time.Hour)})
	rr := newRunner(t, s, report.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, nil)
	rr.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-report.yml@refs/heads/main"
	if code := rr.run(); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, rr.stdout.String())
	}
	// A pull request's run of another workflow, its branch named main,
	// may upload an artifact of the same name: it is never read.
	pr := repo.AddRun(ghfake.Run{Workflow: "other.yml", Event: "pull_request", HeadBranch: "main", CreatedAt: now.Add(-time.Minute)})
	repo.AddArtifact(ghfake.Artifact{RunID: pr.ID, Name: "flakegate-report", Files: map[string][]byte{"report.json": []byte(`{"tests":[]}`)}})

	self := repo.AddRun(ghfake.Run{Workflow: "flakegate-gate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"mode": "gate", "base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	r.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-gate.yml@refs/heads/main"
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	code := r.run()
	log := r.stdout.String()
	if out := r.outputs(); code != 0 || out["verdict"] != "pass" || out["flaky-count"] == "0" {
		t.Fatalf("exit %d, outputs %v; want a pass that knows the report's flaky tests\n%s", code, out, log)
	}
	if !strings.Contains(log, fmt.Sprintf("previous report: run %d", report.ID)) {
		t.Errorf("the report's run is not named:\n%s", log)
	}
	if got := gateTest(t, r, flakyName); got.History.Runs != 30 || got.History.Failures != 9 {
		t.Errorf("history of %s = %+v, want the report's 30 runs with 9 failures", flakyName, got.History)
	}
}

// TestReportArtifactPatternMatchesNothing: an artifact-pattern that no
// artifact matches leaves the report empty, and the warning and the
// summary say so, naming the pattern's input and artifacts it refused,
// not only "no test results were found".
func TestReportArtifactPatternMatchesNothing(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	addCIRuns(repo, 50, 60)
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"},
		map[string]string{"artifact-pattern": "*nomatch*", "upload-artifact": "false"})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	want := "none of the 10 artifacts of the runs read matched artifact-pattern (names seen: junit-results)"
	if log, sum := r.stdout.String(), r.summary(); !strings.Contains(log, want) || !strings.Contains(sum, render.EscapeMarkdown(want)) {
		t.Errorf("neither the log nor the summary says %q:\n%s\n%s", want, log, sum)
	}
}

// TestReportOverTheRequestBudget: the weekly report needs more requests
// than the token has left this hour. The collection stops, and the report
// covers the runs read and says so, rather than failing with nothing
// saved; the next report reads the rest.
func TestReportOverTheRequestBudget(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	addCIRuns(repo, 30, 60)
	s.SetRateLimit(30, now.Add(time.Hour))
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"min-commits": "2"})
	code := r.run()
	log, sum := r.stdout.String(), r.summary()
	if out := r.outputs(); code != 0 || out["verdict"] != "pass" || out["tests-count"] == "0" {
		t.Fatalf("exit %d, outputs %v; want a report of the runs read\n%s", code, out, log)
	}
	for _, want := range []string{"the collection stopped early", "rate limit", "the next report reads the rest"} {
		if !strings.Contains(log, want) || !strings.Contains(sum, want) {
			t.Errorf("the log and the summary do not both say %q\n%s\n%s", want, log, sum)
		}
	}
	// The next week, with the budget back: the runs read are known, the
	// others are read.
	s.SetRateLimit(ghfake.DefaultRateLimit, now.Add(time.Hour))
	next := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(time.Minute)})
	r2 := newRunner(t, s, next.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"min-commits": "2"})
	if code := r2.run(); code != 0 || strings.Contains(r2.summary(), "stopped early") {
		t.Fatalf("next report: exit %d\n%s", code, r2.stdout.String())
	}
	m := regexp.MustCompile(`runs listed (\d+), left out \d+ \([^)]*\), already known (\d+)`).FindStringSubmatch(r2.stdout.String())
	if m == nil || m[2] == "0" {
		t.Errorf("the next report knew none of the runs read before: %v\n%s", m, r2.stdout.String())
	}
}
