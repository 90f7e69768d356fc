package action

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/render"
)

// rewriteHistory decodes a carried history file to a map, lets f change
// it, and encodes it again.
func rewriteHistory(t *testing.T, gz []byte, f func(map[string]any)) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	f(c)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := json.NewEncoder(zw).Encode(c); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

// TestReportCarriedHistoryUnreadable: report 1 carries 10 runs; its
// artifact is then altered. 20 days later, report 2 (lookback 7 days)
// reads 3 new runs. A history it cannot read at all starts anew, said in
// the summary and report.json's skipped_files; one a newer flakegate wrote
// (version 2) fails the report, which would otherwise replace it for good,
// unless artifact-name is changed to start anew; a report.json that cannot
// be read loses the trend, not the history. Before, all three carried 3
// runs and said so only in a log warning.
func TestReportCarriedHistoryUnreadable(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, files map[string][]byte)
		inputs map[string]string
		// wantErr: the report fails, its error holding these.
		wantErr []string
		// wantRuns carried to the next report, and the skipped_files
		// entry (path prefix) and summary note expected.
		wantRuns    int
		wantSkipped string
		wantNote    string
	}{
		{name: "unchanged", change: func(*testing.T, map[string][]byte) {}, wantRuns: 13},
		{name: "unknown field of version 1", change: func(t *testing.T, f map[string][]byte) {
			f[render.HistoryFile] = rewriteHistory(t, f[render.HistoryFile], func(c map[string]any) { c["x_new"] = []int{1, 2} })
		}, wantRuns: 13},
		{name: "newer version", change: func(t *testing.T, f map[string][]byte) {
			f[render.HistoryFile] = rewriteHistory(t, f[render.HistoryFile], func(c map[string]any) { c["version"] = 2 })
		}, wantErr: []string{"carried history: version 2, this flakegate reads version 1", "a newer flakegate wrote it", "uses:", "artifact-name"}},
		{name: "newer version, artifact-name changed", change: func(t *testing.T, f map[string][]byte) {
			f[render.HistoryFile] = rewriteHistory(t, f[render.HistoryFile], func(c map[string]any) { c["version"] = 2 })
		}, inputs: map[string]string{"artifact-name": "flakegate-history"}, wantRuns: 3},
		{name: "cut short", change: func(t *testing.T, f map[string][]byte) {
			f[render.HistoryFile] = f[render.HistoryFile][:len(f[render.HistoryFile])/2]
		}, wantRuns: 3, wantSkipped: "history.json.gz of the previous report (run ",
			wantNote: "could not be read: it starts anew with the runs read now"},
		{name: "older version 0", change: func(t *testing.T, f map[string][]byte) {
			f[render.HistoryFile] = rewriteHistory(t, f[render.HistoryFile], func(c map[string]any) { c["version"] = 0 })
		}, wantRuns: 3, wantSkipped: "history.json.gz of the previous report (run ",
			wantNote: "could not be read: it starts anew with the runs read now"},
		{name: "report.json of another shape", change: func(t *testing.T, f map[string][]byte) {
			f[render.ReportJSONFile] = []byte(`{"threshold": {"value": 0.1}, "tests": []}`)
		}, wantRuns: 13, wantSkipped: "report.json of the previous report (run "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = saved
			s := newFake(t)
			repo := s.Repo(repoName)
			files := carriedTen(t, s, repo)
			in := map[string]string{"workflows": "ci.yml", "lookback-days": "7"}
			tc.change(t, files)
			altered := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-30 * time.Minute)})
			repo.AddArtifact(ghfake.Artifact{RunID: altered.ID, Name: "flakegate-report", Zip: zipFiles(t, files)})

			now = saved.Add(20 * 24 * time.Hour)
			for i := 100; i < 103; i++ {
				run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint("new", i)), CreatedAt: now.Add(-time.Duration(103-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_a": false, "test_b": false})}})
			}
			for k, v := range tc.inputs {
				in[k] = v
			}
			if tc.wantErr != nil {
				self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
				r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"mode": "report", "workflows": "ci.yml", "lookback-days": "7"})
				uploads := len(s.Uploads())
				if code := r.run(); code != 1 {
					t.Fatalf("exit %d, want 1\n%s", code, r.stdout.String())
				}
				log := r.stdout.String()
				for _, w := range tc.wantErr {
					if !strings.Contains(log, w) {
						t.Errorf("log lacks %q:\n%s", w, log)
					}
				}
				if n := len(s.Uploads()); n != uploads {
					t.Errorf("%d artifacts uploaded, want none", n-uploads)
				}
				return
			}
			two := reportAt(t, s, repo, now, in)
			if len(two.Runs) != tc.wantRuns {
				t.Errorf("report 2 carries %d runs, want %d:\n%s", len(two.Runs), tc.wantRuns, strings.Join(two.Runs, "\n"))
			}
			var skipped []string
			for _, sk := range two.Report["skipped_files"].([]any) {
				skipped = append(skipped, sk.(map[string]any)["path"].(string))
			}
			found := false
			for _, p := range skipped {
				found = found || tc.wantSkipped != "" && strings.HasPrefix(p, tc.wantSkipped)
			}
			if tc.wantSkipped != "" && !found || tc.wantSkipped == "" && len(skipped) > 0 {
				t.Errorf("report.json skipped_files %q, want %q", skipped, tc.wantSkipped)
			}
			if tc.wantSkipped != "" && !strings.Contains(two.summary, render.EscapeMarkdown(tc.wantSkipped)) {
				t.Errorf("summary does not list %q:\n%s", tc.wantSkipped, two.summary)
			}
			if tc.wantNote != "" && !strings.Contains(two.summary, "> [!NOTE]\n> the history carried in the previous report") {
				t.Errorf("summary has no note of the history started anew:\n%s", two.summary)
			}
			if tc.wantNote == "" && strings.Contains(two.summary, "starts anew") {
				t.Errorf("summary says the history starts anew:\n%s", two.summary)
			}
		})
	}
}

// TestReportStampsUntimedRuns: a report made with the results input, of
// files with commit_sha and run_id but no timestamp, carries their runs
// with its own time. 400 days later, reports of workflow runs no longer
// carry or score them. Before, they were carried for good, with no time,
// and tests.local::test_old was flagged from 13-month-old data.
func TestReportStampsUntimedRuns(t *testing.T) {
	saved := now
	defer func() { now = saved }()
	s := newFake(t)
	repo := s.Repo(repoName)
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "workflow_dispatch", CreatedAt: now.Add(-time.Hour)})
	r := newRunner(t, s, self.ID, "workflow_dispatch", map[string]any{}, map[string]string{"mode": "report", "results": "local/*.xml"})
	ws := r.env["GITHUB_WORKSPACE"]
	os.MkdirAll(filepath.Join(ws, "local"), 0o755)
	for i := range 6 {
		fail := ""
		if i%2 == 0 {
			fail = `<failure message="boom"/>`
		}
		doc := fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="%040d"/><property name="run_id" value="%d"/></properties><testcase classname="tests.local" name="test_old">%s</testcase><testcase classname="tests.local" name="test_old"/></testsuite>`, i, 5000+i, fail)
		os.WriteFile(filepath.Join(ws, "local", fmt.Sprintf("r%d.xml", i)), []byte(doc), 0o644)
	}
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	addRuns := func(tag string) {
		for i := range 3 {
			run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint(tag, i)), CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": pytestDoc(map[string]bool{"test_a": false})}})
		}
	}
	in := map[string]string{"workflows": "ci.yml", "lookback-days": "7"}
	// The next day the local runs are carried with the first report's time,
	// and are older than no window yet.
	now = saved.Add(24 * time.Hour)
	addRuns("day")
	next := reportAt(t, s, repo, now, in)
	stamp := saved.UTC().Format(time.RFC3339)
	local := 0
	for _, run := range next.Runs {
		if strings.Contains(run, "|500") {
			local++
			if !strings.Contains(run, " "+stamp+" ") {
				t.Errorf("local run carried as %q, want the time of the report that first carried it, %s", run, stamp)
			}
		}
	}
	if local != 6 {
		t.Errorf("a day later, %d local runs carried, want 6:\n%s", local, strings.Join(next.Runs, "\n"))
	}
	now = saved.Add(400 * 24 * time.Hour)
	addRuns("late")
	late := reportAt(t, s, repo, now, in)
	for _, run := range late.Runs {
		if strings.Contains(run, "|500") {
			t.Errorf("400 days later, still carried: %s", run)
		}
	}
	if late.Report["runs"].(float64) != 3 {
		t.Errorf("400 days later, the report scores %v runs, want 3", late.Report["runs"])
	}
	if b, _ := json.Marshal(late.Report["tests"]); strings.Contains(string(b), "test_old") {
		t.Errorf("400 days later, test_old is still scored: %.300s", b)
	}
}

// TestGateHistoryInputOverlapsCarried: the weekly report carries ci.yml's
// 40 runs on main; a pull request's gate is given the same 40 runs' JUnit
// files (commit_sha and run_id, no attempt) as its history input. Each
// run counts once: a file's run replaces the report's carried attempt of
// it, as a run read from GitHub does. Before, the gate counted 80 runs
// (run key sha|id against sha|id#1).
func TestGateHistoryInputOverlapsCarried(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	docs := map[string][]byte{}
	for i := range 40 {
		sha := ghfake.SHA(fmt.Sprint("main-", i))
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: sha, CreatedAt: now.Add(-time.Duration(60-i) * 2 * time.Hour)})
		doc := junitRun(sha, int(run.ID), map[string]bool{flakyName: flakyFails(i)})
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": doc}})
		docs[fmt.Sprintf("run-%d.xml", run.ID)] = doc
	}
	report := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now.Add(-39 * time.Hour)})
	rr := newRunner(t, s, report.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"workflows": "ci.yml"})
	if code := rr.run(); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, rr.stdout.String())
	}
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"workflows": "ci.yml", "base-results": "results/base/*.xml", "head-results": "results/head/*.xml", "history": "results/history/*.xml"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, map[string]int{flakyName: 1})
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{flakyName: 2})
	os.MkdirAll(filepath.Join(ws, "results/history"), 0o755)
	for name, doc := range docs {
		os.WriteFile(filepath.Join(ws, "results/history", name), doc, 0o644)
	}
	// One file of a run the report does not carry, with no run id: kept.
	os.WriteFile(filepath.Join(ws, "results/history", "extra.xml"),
		[]byte(`<testsuite name="tests"><properties><property name="commit_sha" value="`+ghfake.SHA("extra")+`"/></properties><testcase classname="tests.test_app" name="test_ws_reconnect"/></testsuite>`), 0o644)
	r.run()
	got := gateTest(t, r, flakyName)
	if got.History.Runs != 41 || got.History.Failures != 12 {
		t.Errorf("gate history of %s: %+v, want 41 runs (40 once, and the file with no run id), 12 failures", flakyName, got.History)
	}
	if want := "base-branch history for p0: 41 runs (41 from the history input; 0 carried"; !strings.Contains(r.stdout.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, r.stdout.String())
	}
}

// carriedTen adds ten runs of ci.yml and, an hour before now, a report of
// them (lookback 7 days), and returns the files of the artifact it uploaded.
func carriedTen(t *testing.T, s *ghfake.Server, repo *ghfake.Repo) map[string][]byte {
	t.Helper()
	for i := range 10 {
		addPytestRun(repo, "ci.yml", i, map[string]bool{"test_a": i%3 == 0, "test_b": false})
	}
	if one := reportAt(t, s, repo, now.Add(-time.Hour), map[string]string{"workflows": "ci.yml", "lookback-days": "7"}); len(one.Runs) != 10 {
		t.Fatalf("report 1 carries %d runs", len(one.Runs))
	}
	ups := s.Uploads()
	files, err := ups[len(ups)-1].Files()
	if err != nil {
		t.Fatal(err)
	}
	return files
}
