package collect

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// TestGitHubOverMaxSaid: runs of the window that MaxRuns leaves unread are
// counted from GitHub's total_count and said in History.Skipped: exactly
// when Since is a UTC midnight (GitHub's day filter is then the window),
// as a bound otherwise, and not at all when the listing went past Since.
func TestGitHubOverMaxSaid(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		since   time.Time
		max     int
		want    int
		atMost  bool
		message string
	}{
		{name: "midnight", since: day, max: 20, want: 10, message: "10 runs in the window were not read (max-runs is 20: the newest 20 were read)"},
		{name: "mid-day", since: day.Add(6 * time.Hour), max: 20, want: 10, atMost: true, message: "up to 10 runs in the window"},
		{name: "listing past since", since: day.Add(20 * time.Hour), max: 25},
		{name: "all read", since: day, max: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, repo := newFake(t)
			// 30 runs an hour apart from 10:00 on the day.
			for i := range 30 {
				r := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA(fmt.Sprint(i)), CreatedAt: day.Add(time.Duration(10+i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit", Files: map[string][]byte{"a.xml": junitDoc(1, []string{"one"})}})
			}
			h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, Workflows: []string{"ci.yml"}, Since: tc.since, MaxRuns: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			if st.RunsOverMax != tc.want || st.RunsOverMaxAtMost != tc.atMost {
				t.Errorf("RunsOverMax %d (at most %v), want %d (%v)", st.RunsOverMax, st.RunsOverMaxAtMost, tc.want, tc.atMost)
			}
			said := skippedMap(h)["workflow runs of "+testRepo.String()]
			if tc.message == "" && said != "" || !strings.Contains(said, tc.message) {
				t.Errorf("Skipped says %q, want %q", said, tc.message)
			}
			if id := st.WorkflowIDs["ci.yml"]; id == 0 || h.Runs[0].WorkflowID != id || h.Runs[0].WorkflowFile != "ci.yml" {
				t.Errorf("workflow ids %v; run 0 records %d %q", st.WorkflowIDs, h.Runs[0].WorkflowID, h.Runs[0].WorkflowFile)
			}
		})
	}
}

// TestWorkflowSelection: which carried runs the workflows input keeps.
func TestWorkflowSelection(t *testing.T) {
	run := func(file string, id int64) history.Run {
		return history.Run{Run: model.Run{RunID: "1"}, WorkflowFile: file, WorkflowID: id}
	}
	type result struct{ Keep, Known bool }
	for _, tc := range []struct {
		name string
		wfs  []string
		ids  map[string]int64
		run  history.Run
		want result
	}{
		{"every workflow", nil, nil, run("nightly.yml", 2), result{true, true}},
		{"same file", []string{"ci.yml"}, map[string]int64{"ci.yml": 1}, run("ci.yml", 1), result{true, true}},
		{"same file, no run listed now", []string{"ci.yml"}, nil, run("ci.yml", 1), result{true, true}},
		{"a path names the file", []string{".github/workflows/ci.yml"}, nil, run("ci.yml", 1), result{true, true}},
		{"other file", []string{"ci.yml"}, map[string]int64{"ci.yml": 1}, run("nightly.yml", 2), result{false, true}},
		{"by id", []string{"1"}, nil, run("", 1), result{true, true}},
		{"other id", []string{"1"}, nil, run("", 2), result{false, true}},
		{"id only, the file's id known", []string{"ci.yml"}, map[string]int64{"ci.yml": 1}, run("", 2), result{false, true}},
		{"id only, the file's id unknown", []string{"ci.yml"}, nil, run("", 2), result{true, false}},
		{"an older history: nothing recorded", []string{"ci.yml"}, map[string]int64{"ci.yml": 1}, run("", 0), result{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, known := selectWorkflows(tc.wfs, tc.ids).keep(tc.run)
			if diff := cmp.Diff(tc.want, result{keep, known}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
