package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// report-dir ${{ runner.temp }}/fg (which the runner rewrites to
// /github/runner_temp/fg, a mount of the runner's temp directory, and
// which the README gives as an example of an input path) is warned of as
// a directory the later steps do not find the reports in; they do, at
// ${{ runner.temp }}/fg.
func TestRunnerTempReportDirNotWarned(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	ciRuns(repo, "main", 2, now)
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"mode": "report", "workflows": "ci.yml"})
	r.env["INPUT_REPORT-DIR"] = filepath.Join(r.env["RUNNER_TEMP"], "fg")
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	if strings.Contains(r.stdout.String(), "outside the workspace") {
		t.Errorf("report-dir under RUNNER_TEMP warned of:\n%s", r.stdout.String())
	}
}
