package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestReportWithoutTokenSaysWhatItCannotRead: a report of local results
// whose github-token is empty (a secret that is not there, a typo in its
// name) cannot read the previous report. Its artifact then carries only
// the runs it read, and the next report's carried history lost the older
// runs. The log must say so before that happens, not leave it to be found.
func TestReportWithoutTokenSaysWhatItCannotRead(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	s := newFake(t)
	repo := s.Repo(repoName)
	// A month ago: a report of ci.yml's runs then, carried from then on.
	now = saved.Add(-30 * 24 * time.Hour)
	for i := range 3 {
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint("old", i)), CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_a": false})}})
	}
	first := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml"})
	if len(first.Runs) != 3 {
		t.Fatalf("first report carries %d runs, want 3", len(first.Runs))
	}

	// Today: local results, and an empty github-token.
	now = saved
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"},
		map[string]string{"mode": "report", "results": "local/*.xml", "github-token": ""})
	ws := r.env["GITHUB_WORKSPACE"]
	os.MkdirAll(filepath.Join(ws, "local"), 0o755)
	os.WriteFile(filepath.Join(ws, "local", "r.xml"), []byte(fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="%040d"/><property name="run_id" value="77"/></properties><testcase classname="tests.t" name="test_a"/></testsuite>`, 7)), 0o644)
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	log := r.stdout.String()
	if !strings.Contains(log, "::warning::github-token is empty: the last report is not read") {
		t.Errorf("the log does not say that the empty github-token kept the previous report unread:\n%s", log)
	}
}

// TestGateLedgerPathNotFoundIsSaid: ledger-path names a file that is at
// neither commit (.yaml for .yml). The gate must say that no ledger was
// read there, as flakegate gate --ledger does, rather than exempt nothing
// without a word.
func TestGateLedgerPathNotFoundIsSaid(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{
		"base-results": "results/base/*.xml", "head-results": "results/head", "ledger-path": ".github/flaky-ledger.yaml"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, map[string]int{"test_ws_reconnect": 2})
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{"test_ws_reconnect": 2})
	r.run()
	if log := r.stdout.String(); !strings.Contains(log, ".github/flaky-ledger.yaml") {
		t.Errorf("the log never names the ledger-path that was not found:\n%s", log)
	}
}

// TestReportDirOutsideTheWorkspaceIsSaid: report-dir /tmp/fg is accepted
// (an absolute path), but the action runs in a container: the reports
// written there are gone, or elsewhere, for the steps after it.
func TestReportDirOutsideTheWorkspaceIsSaid(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	ciRuns(repo, "main", 2, now)
	out := t.TempDir()
	got := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "report-dir": out})
	if want := "::warning::report-dir " + out + " is outside the workspace"; !strings.Contains(got.log, want) {
		t.Errorf("no warning %q:\n%s", want, got.log)
	}
	if in := reportAt(t, s, repo, now.Add(time.Hour), map[string]string{"workflows": "ci.yml"}); strings.Contains(in.log, "outside the workspace") {
		t.Errorf("warned of the default report-dir:\n%s", in.log)
	}
}

// TestConfigurationErrorInTheSummary: a bad input fails the step with an
// annotation, and the job summary says it too, as a run's other errors
// do: the annotation alone was easy to miss.
func TestConfigurationErrorInTheSummary(t *testing.T) {
	s := newFake(t)
	self := s.Repo(repoName).AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"alpha-pr": "1.5"})
	if code := r.run(); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if sum := r.summary(); !strings.Contains(sum, "## flakegate: configuration error") || !strings.Contains(sum, "alpha-pr") {
		t.Errorf("summary does not say the configuration error:\n%s", sum)
	}
	if out := r.outputs(); out["verdict"] != "error" {
		t.Errorf("verdict %q, want error", out["verdict"])
	}
}
