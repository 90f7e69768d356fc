package action

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestResultsReportKeepsCarriedHistoryOn503: the previous report's
// artifact answers 503 through every retry, and the report is of local
// results (the results input). The report goes on, uploads an artifact
// carrying only the local run, and the next report takes it as its last:
// the 10 carried runs are gone, though the 503 was as retryable as in
// TestReportPreviousUnreadable.
func TestResultsReportKeepsCarriedHistoryOn503(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	s := newFake(t)
	repo := s.Repo(repoName)
	files := carriedTen(t, s, repo)
	in := map[string]string{"workflows": "ci.yml", "lookback-days": "7"}
	prev := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-30 * time.Minute)})
	art := repo.AddArtifact(ghfake.Artifact{RunID: prev.ID, Name: "flakegate-report", Zip: zipFiles(t, files)})
	s.Inject(ghfake.Fault{Path: fmt.Sprintf("/repos/*/*/actions/artifacts/%d/zip", art.ID), Status: 503, Times: -1})

	now = saved.Add(20 * 24 * time.Hour)
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"},
		map[string]string{"mode": "report", "results": "local/*.xml"})
	ws := r.env["GITHUB_WORKSPACE"]
	os.MkdirAll(filepath.Join(ws, "local"), 0o755)
	os.WriteFile(filepath.Join(ws, "local", "r.xml"), []byte(fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="%040d"/><property name="run_id" value="77"/></properties><testcase classname="tests.t" name="test_a"/></testsuite>`, 7)), 0o644)
	code := r.run()
	t.Logf("results report with the previous report answering 503: exit %d, uploads %d", code, len(s.Uploads()))
	if code != 1 {
		t.Errorf("exit %d, want 1: the report went on without the history it carries", code)
	}
	if code == 0 {
		next := reportAt(t, s, repo, now.Add(time.Hour), in)
		if len(next.Runs) < 10 {
			t.Errorf("after a results report that met a 503, the next report carries %d runs: the 10 carried before are lost", len(next.Runs))
		}
	}
}
