package action

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/render"
)

// legacyCopy re-adds the last upload as an artifact of a new scheduled run
// on main at `at`, with report.json's branch taken out: a report as an
// earlier flakegate wrote it.
func legacyCopy(t *testing.T, s *ghfake.Server, repo *ghfake.Repo, at time.Time) {
	t.Helper()
	ups := s.Uploads()
	files, err := ups[len(ups)-1].Files()
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(files[render.ReportJSONFile], &rep); err != nil {
		t.Fatal(err)
	}
	delete(rep, "branch")
	files[render.ReportJSONFile], _ = json.Marshal(rep)
	run := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: at})
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "flakegate-report", Zip: zipFiles(t, files)})
}

// TestLegacyReportOfAnotherBranch: before the upgrade, a scheduled
// run on main reported on release (branch: release) after main's report.
// The first main report after the upgrade still takes that release report
// as main's last (it names no branch and was made on main): it carries
// release's runs as main's and loses main's carried history, though the
// carried runs themselves say which branch they are of.
func TestLegacyReportOfAnotherBranch(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	s := newFake(t)
	repo := s.Repo(repoName)
	now = saved.Add(-30 * 24 * time.Hour)
	mainSHA := ghfake.SHA(fmt.Sprint("main", now.Unix(), 0))
	ciRuns(repo, "main", 3, now)
	ciRuns(repo, "release", 2, now)
	reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "lookback-days": "7"})
	legacyCopy(t, s, repo, now.Add(time.Minute))
	now = now.Add(time.Hour)
	reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "branch": "release", "lookback-days": "7"})
	legacyCopy(t, s, repo, now.Add(time.Minute))

	now = saved
	next := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "lookback-days": "7"})
	if len(next.Runs) != 3 || !strings.Contains(strings.Join(next.Runs, " "), mainSHA) {
		t.Errorf("first main report after the upgrade carries %d runs; want main's 3\n%s\n%s", len(next.Runs), next.Runs, grepLines(next.log, "previous report"))
	}
}
