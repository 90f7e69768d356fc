package action

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestGateFindsTheWeeklyReportBehindAnotherCron: as
// TestGateReadsTheReportOfAnotherWorkflow, but the repository also has an
// ordinary scheduled workflow (an hourly cron: a stale bot, a nightly build)
// whose successful runs on main are newer than the weekly report's. The
// gate finds the report by its artifact's name, whatever runs came since
// (it once listed only the 10 newest scheduled runs of all workflows, and
// missed it).
func TestGateFindsTheWeeklyReportBehindAnotherCron(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	addCIRuns(repo, 30, 60)
	report := scheduledReport(t, s, repo, "flakegate-report.yml", now.Add(-12*time.Hour), nil)
	// An hourly cron, 11 runs since the report.
	for i := range 11 {
		repo.AddRun(ghfake.Run{Workflow: "stale.yml", Event: "schedule", HeadSHA: ghfake.SHA(fmt.Sprint("main-", 59)), CreatedAt: now.Add(-time.Duration(11-i) * time.Hour)})
	}

	code, log, out := gateOfPR(t, s, repo)
	if code != 0 || out["flaky-count"] == "0" {
		t.Errorf("exit %d, outputs %v; want a pass that knows the weekly report's flaky tests", code, out)
	}
	if !strings.Contains(log, fmt.Sprintf("previous report: run %d", report.ID)) {
		t.Errorf("the weekly report's run %d is not read:\n%s", report.ID, grepLines(log, "previous report", "last report"))
	}
}

func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestGateSkipsTheReportOfAnotherBranch: a newer scheduled report on main
// of the release branch (branch: release) is not main's report; the gate
// of a pull request into main reads the weekly report of main behind it.
func TestGateSkipsTheReportOfAnotherBranch(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	addCIRuns(repo, 30, 60)
	report := scheduledReport(t, s, repo, "flakegate-report.yml", now.Add(-12*time.Hour), nil)
	release := scheduledReport(t, s, repo, "flakegate-release.yml", now.Add(-6*time.Hour), map[string]string{"branch": "release"})

	_, log, _ := gateOfPR(t, s, repo)
	if !strings.Contains(log, fmt.Sprintf("previous report: run %d", report.ID)) {
		t.Errorf("the gate did not read main's report (run %d; run %d reported on release):\n%s", report.ID, release.ID, grepLines(log, "previous report", "last report"))
	}
}

// scheduledReport runs a report step of workflow (a file name) on a
// schedule at at, with inputs, and returns its run.
func scheduledReport(t *testing.T, s *ghfake.Server, repo *ghfake.Repo, workflow string, at time.Time, inputs map[string]string) ghfake.Run {
	t.Helper()
	run := repo.AddRun(ghfake.Run{Workflow: workflow, Event: "schedule", CreatedAt: at})
	r := newRunner(t, s, run.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, inputs)
	r.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/" + workflow + "@refs/heads/main"
	if code := r.run(); code != 0 {
		t.Fatalf("report of %s: exit %d\n%s", workflow, code, r.stdout.String())
	}
	return run
}

// gateOfPR runs the gate of pull request 7 in workflow flakegate-gate.yml
// on five base and five head runs of clean results, and returns its log.
func gateOfPR(t *testing.T, s *ghfake.Server, repo *ghfake.Repo) (code int, log string, out map[string]string) {
	t.Helper()
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate-gate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"mode": "gate", "base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	r.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-gate.yml@refs/heads/main"
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	code = r.run()
	return code, r.stdout.String(), r.outputs()
}
