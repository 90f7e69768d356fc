package action

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestReportPreviousUnreadable: report 1 carries 10 runs. 20 days later,
// report 2 (lookback 7 days) cannot read report 1's artifact. When the
// failure is one a re-run may not meet (503 through every retry), report
// 2 fails and uploads nothing: carrying only the window's 3 runs, it would
// have become the next report's previous one, and the 10 runs were lost
// for good. When it is the artifact itself (not a zip), the report goes
// on and its summary and skipped_files say the history starts anew.
// Before, both went on, saying so only in a log warning.
func TestReportPreviousUnreadable(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	for _, tc := range []struct {
		name  string
		zip   []byte // served instead of report 1's artifact; nil: that
		fails bool   // 503 through every retry
	}{
		{name: "503 every time", fails: true},
		{name: "not a zip", zip: []byte("not a zip")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = saved
			s := newFake(t)
			repo := s.Repo(repoName)
			files := carriedTen(t, s, repo)
			in := map[string]string{"workflows": "ci.yml", "lookback-days": "7"}
			prev := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-30 * time.Minute)})
			z := tc.zip
			if z == nil {
				z = zipFiles(t, files)
			}
			art := repo.AddArtifact(ghfake.Artifact{RunID: prev.ID, Name: "flakegate-report", Zip: z})
			if tc.fails {
				s.Inject(ghfake.Fault{Path: fmt.Sprintf("/repos/*/*/actions/artifacts/%d/zip", art.ID), Status: 503, Times: -1})
			}
			now = saved.Add(20 * 24 * time.Hour)
			for i := 100; i < 103; i++ {
				run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint("new", i)), CreatedAt: now.Add(-time.Duration(103-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_a": false, "test_b": false})}})
			}
			if tc.fails {
				self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
				r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"mode": "report", "workflows": "ci.yml", "lookback-days": "7"})
				uploads := len(s.Uploads())
				if code := r.run(); code != 1 {
					t.Fatalf("exit %d, want 1\n%s", code, r.stdout.String())
				}
				if log := r.stdout.String(); !strings.Contains(log, "re-run the job") {
					t.Errorf("log does not say to re-run:\n%s", log)
				}
				if n := len(s.Uploads()); n != uploads {
					t.Errorf("%d artifacts uploaded, want none", n-uploads)
				}
				return
			}
			two := reportAt(t, s, repo, now, in)
			if len(two.Runs) != 3 {
				t.Errorf("report 2 carries %d runs, want 3", len(two.Runs))
			}
			if !strings.Contains(two.summary, "carried history starts anew") {
				t.Errorf("summary does not say the carried history starts anew:\n%s", two.summary)
			}
			found := false
			for _, sk := range two.Report["skipped_files"].([]any) {
				found = found || sk.(map[string]any)["path"] == "the previous report"
			}
			if !found {
				t.Errorf("report.json skipped_files = %v, want the previous report", two.Report["skipped_files"])
			}
		})
	}
}
