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
	report := repo.AddRun(ghfake.Run{Workflow: "flakegate-report.yml", Event: "schedule", CreatedAt: now.Add(-12 * time.Hour)})
	rr := newRunner(t, s, report.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, nil)
	rr.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-report.yml@refs/heads/main"
	if code := rr.run(); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, rr.stdout.String())
	}
	// An hourly cron, 11 runs since the report.
	for i := range 11 {
		repo.AddRun(ghfake.Run{Workflow: "stale.yml", Event: "schedule", HeadSHA: ghfake.SHA(fmt.Sprint("main-", 59)), CreatedAt: now.Add(-time.Duration(11-i) * time.Hour)})
	}

	self := repo.AddRun(ghfake.Run{Workflow: "flakegate-gate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"mode": "gate", "base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	r.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-gate.yml@refs/heads/main"
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	code := r.run()
	log := r.stdout.String()
	if out := r.outputs(); code != 0 || out["flaky-count"] == "0" {
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
	report := repo.AddRun(ghfake.Run{Workflow: "flakegate-report.yml", Event: "schedule", CreatedAt: now.Add(-12 * time.Hour)})
	rr := newRunner(t, s, report.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, nil)
	rr.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-report.yml@refs/heads/main"
	if code := rr.run(); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, rr.stdout.String())
	}
	release := repo.AddRun(ghfake.Run{Workflow: "flakegate-release.yml", Event: "schedule", CreatedAt: now.Add(-6 * time.Hour)})
	rl := newRunner(t, s, release.ID, "schedule", map[string]any{"schedule": "0 7 * * 1"}, map[string]string{"branch": "release"})
	rl.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-release.yml@refs/heads/main"
	if code := rl.run(); code != 0 {
		t.Fatalf("release report: exit %d\n%s", code, rl.stdout.String())
	}

	self := repo.AddRun(ghfake.Run{Workflow: "flakegate-gate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"mode": "gate", "base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	r.env["GITHUB_WORKFLOW_REF"] = repoName + "/.github/workflows/flakegate-gate.yml@refs/heads/main"
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	r.run()
	if log := r.stdout.String(); !strings.Contains(log, fmt.Sprintf("previous report: run %d", report.ID)) {
		t.Errorf("the gate did not read main's report (run %d; run %d reported on release):\n%s", report.ID, release.ID, grepLines(log, "previous report", "last report"))
	}
}
