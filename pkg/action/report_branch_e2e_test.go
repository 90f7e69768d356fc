package action

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// ciRuns adds n runs of ci.yml on branch, each with one passing test, an
// hour apart before at.
func ciRuns(repo *ghfake.Repo, branch string, n int, at time.Time) {
	for i := range n {
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadBranch: branch, HeadSHA: ghfake.SHA(fmt.Sprint(branch, at.Unix(), i)),
			CreatedAt: at.Add(-time.Duration(n-i) * time.Hour)})
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_a": false})}})
	}
}

// TestReportOfAnotherBranch: a scheduled report runs on the default branch
// whatever branch it reports on. A report with branch: release looked for
// its last report among this workflow's runs on release, found none every
// week (no trend, and the carried history never grew), and a report of
// main took the release report, made by a run on main, as main's last,
// carrying release's runs on as main's. Each report now names its branch
// and is the last report of that branch only.
func TestReportOfAnotherBranch(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	s := newFake(t)
	repo := s.Repo(repoName)

	now = saved.Add(-30 * 24 * time.Hour)
	ciRuns(repo, "release", 3, now)
	ciRuns(repo, "main", 2, now)
	rel := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "branch": "release", "lookback-days": "7"})
	if len(rel.Runs) != 3 || rel.Report["branch"] != "release" {
		t.Fatalf("first release report: %d runs, branch %v; want 3, release", len(rel.Runs), rel.Report["branch"])
	}
	now = now.Add(time.Hour)
	main := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "lookback-days": "7"})
	if len(main.Runs) != 2 || main.Report["branch"] != "main" {
		t.Errorf("main report after it: %d runs, branch %v; want main's 2 (release's report is not main's)\n%s", len(main.Runs), main.Report["branch"], main.log)
	}

	// A month later, past the lookback: the release runs carried come
	// from the first release report, found on main.
	now = saved
	ciRuns(repo, "release", 2, now)
	next := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "branch": "release", "lookback-days": "7"})
	if len(next.Runs) != 5 || !strings.Contains(next.log, "previous report: run") {
		t.Errorf("second release report carries %d runs, want 5 (3 carried, 2 new)\n%s", len(next.Runs), next.log)
	}
	for _, r := range next.Runs {
		if strings.Contains(r, "main") {
			t.Errorf("the release report carries a run of main: %s", r)
		}
	}
	mainNext := reportAt(t, s, repo, now.Add(time.Hour), map[string]string{"workflows": "ci.yml", "lookback-days": "7"})
	if len(mainNext.Runs) != 2 {
		t.Errorf("main report a month later carries %d runs, want main's 2 carried\n%s", len(mainNext.Runs), mainNext.log)
	}
}

// TestReportOfAMisspeltBranch: a report of a branch with no runs
// (branch: mian) found none and, made on main, was the next main
// report's last: the history carried until then was gone.
func TestReportOfAMisspeltBranch(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	s := newFake(t)
	repo := s.Repo(repoName)
	now = saved.Add(-30 * 24 * time.Hour)
	ciRuns(repo, "main", 3, now)
	if first := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml"}); len(first.Runs) != 3 {
		t.Fatalf("first report carries %d runs, want 3", len(first.Runs))
	}
	now = saved
	reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml", "branch": "mian"})
	now = saved.Add(7 * 24 * time.Hour)
	if next := reportAt(t, s, repo, now, map[string]string{"workflows": "ci.yml"}); len(next.Runs) != 3 {
		t.Errorf("after a report of branch mian, the next main report carries %d runs, want the 3 carried before\n%s", len(next.Runs), next.log)
	}
}
