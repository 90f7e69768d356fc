package collect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/render"
)

// TestPreviousReportOfAnotherWorkflow: a gate whose own workflow (on pull
// requests) has left no report on the base branch finds the weekly report
// of another workflow by its artifact's name, whatever else stands before
// it: other crons, forks' and pull requests' runs whose branch is called
// main, expired artifacts, failed runs, gates' artifacts, other branches,
// this run. Each case counts the API requests: in the simple case 4 (this
// workflow's runs on main, the artifacts named flakegate-report, the
// report's run, the download's redirect; and one request to the blob host).
func TestPreviousReportOfAnotherWorkflow(t *testing.T) {
	const name = "flakegate-report"
	reportFiles := map[string][]byte{render.ReportJSONFile: []byte(`{"source":"sentinel"}`)}
	gateFiles := map[string][]byte{"verdict.json": []byte(`{}`)}
	// at is an hour after the report, and i minutes: what stands before it.
	at := func(i int) time.Time { return t0.Add(time.Hour + time.Duration(i)*time.Minute) }
	type setup struct {
		r    *ghfake.Repo
		self *int64
		// never holds runs never asked for and artifacts never downloaded.
		never map[string]bool
	}
	// before adds a run and its artifact, newer than the report; never
	// says that neither may be read.
	before := func(s setup, run ghfake.Run, art ghfake.Artifact, never bool) (ghfake.Run, ghfake.Artifact) {
		run = s.r.AddRun(run)
		art.RunID = run.ID
		if art.Name == "" {
			art.Name = name
		}
		art = s.r.AddArtifact(art)
		if never {
			s.never[fmt.Sprint("/actions/runs/", run.ID)] = true
			s.never[fmt.Sprint("/actions/artifacts/", art.ID, "/zip")] = true
		}
		return run, art
	}
	tests := []struct {
		name      string
		noReport  bool   // the weekly report has not run
		reportArt string // its artifact's name; default name
		setup     func(s setup)
		wantErr   error // nil: the report is read
		wantReqs  int
	}{
		{name: "simple", wantReqs: 4},
		{name: "behind an hourly cron", wantReqs: 4, setup: func(s setup) {
			for i := range 30 {
				s.r.AddRun(ghfake.Run{Workflow: "stale.yml", Event: "schedule", CreatedAt: at(i)})
			}
		}},
		{name: "behind a fork's run on its branch main", wantReqs: 4, setup: func(s setup) {
			before(s, ghfake.Run{Workflow: "other.yml", Event: "pull_request", HeadBranch: "main", HeadRepo: "evil/app", CreatedAt: at(1)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(1)}, true)
			// Even of a report event: only the head repository tells a
			// fork's run apart, and no request is made for it.
			before(s, ghfake.Run{Workflow: "other.yml", Event: "schedule", HeadBranch: "main", HeadRepo: "evil/app", CreatedAt: at(2)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(2)}, true)
		}},
		{name: "behind a pull request's run on main", wantReqs: 6, setup: func(s setup) {
			// Each run is asked for (its event), its artifact never read.
			_, art := before(s, ghfake.Run{Workflow: "other.yml", Event: "pull_request", HeadBranch: "main", CreatedAt: at(1)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(1)}, false)
			s.never[fmt.Sprint("/actions/artifacts/", art.ID, "/zip")] = true
			_, art = before(s, ghfake.Run{Workflow: "other.yml", Event: "workflow_run", HeadBranch: "main", CreatedAt: at(2)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(2)}, false)
			s.never[fmt.Sprint("/actions/artifacts/", art.ID, "/zip")] = true
		}},
		{name: "behind an expired report", wantReqs: 4, setup: func(s setup) {
			before(s, ghfake.Run{Workflow: "report.yml", Event: "schedule", CreatedAt: at(1)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(1), Expired: true}, true)
		}},
		{name: "behind a failed report run", wantReqs: 5, setup: func(s setup) {
			_, art := before(s, ghfake.Run{Workflow: "report.yml", Event: "schedule", Conclusion: "failure", CreatedAt: at(1)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(1)}, false)
			s.never[fmt.Sprint("/actions/artifacts/", art.ID, "/zip")] = true
		}},
		{name: "behind gates on main", wantReqs: 9, setup: func(s setup) {
			// Pushes: asked for, not downloaded.
			for i := range 3 {
				_, art := before(s, ghfake.Run{Workflow: "gate-push.yml", Event: "push", CreatedAt: at(i)},
					ghfake.Artifact{Files: gateFiles, CreatedAt: at(i)}, false)
				s.never[fmt.Sprint("/actions/artifacts/", art.ID, "/zip")] = true
			}
			// By hand: downloaded, holds no report.
			before(s, ghfake.Run{Workflow: "gate-push.yml", Event: "workflow_dispatch", CreatedAt: at(5)},
				ghfake.Artifact{Files: gateFiles, CreatedAt: at(5)}, false)
		}},
		{name: "behind this run and other branches", wantReqs: 4, setup: func(s setup) {
			run, _ := before(s, ghfake.Run{Workflow: "gate.yml", Event: "workflow_dispatch", CreatedAt: at(1)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(1)}, true)
			*s.self = run.ID
			before(s, ghfake.Run{Workflow: "report.yml", Event: "schedule", HeadBranch: "release", CreatedAt: at(2)},
				ghfake.Artifact{Files: reportFiles, CreatedAt: at(2)}, true)
		}},
		{name: "behind two pages of pull requests' gates", wantReqs: 5, setup: func(s setup) {
			for i := range 150 {
				before(s, ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadBranch: fmt.Sprint("fix-", i), CreatedAt: at(i)},
					ghfake.Artifact{Files: gateFiles, CreatedAt: at(i)}, true)
			}
		}},
		{name: "behind more than 10 runs on main", wantErr: ErrFirstReport, wantReqs: 12, setup: func(s setup) {
			for i := range 11 {
				_, art := before(s, ghfake.Run{Workflow: "other.yml", Event: "pull_request", HeadBranch: "main", CreatedAt: at(i)},
					ghfake.Artifact{Files: gateFiles, CreatedAt: at(i)}, false)
				s.never[fmt.Sprint("/actions/artifacts/", art.ID, "/zip")] = true
			}
		}},
		{name: "no report", noReport: true, wantErr: ErrFirstReport, wantReqs: 2},
		// The name filter is exact: a re-run's renamed artifact is not found
		// (see newestNamed).
		{name: "a re-run's report", reportArt: name + "-attempt-2", wantErr: ErrFirstReport, wantReqs: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, r := newFake(t)
			self := r.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadBranch: "fix", CreatedAt: t0.Add(23 * time.Hour)})
			selfID := self.ID
			var report ghfake.Run
			if !tc.noReport {
				report = r.AddRun(ghfake.Run{Workflow: "report.yml", Event: "schedule", CreatedAt: t0})
				artName := tc.reportArt
				if artName == "" {
					artName = name
				}
				r.AddArtifact(ghfake.Artifact{RunID: report.ID, Name: artName, Files: reportFiles, CreatedAt: t0})
			}
			st := setup{r: r, self: &selfID, never: map[string]bool{}}
			if tc.setup != nil {
				tc.setup(st)
			}
			c := newClient(t, s)
			p, err := PreviousReport(context.Background(), c, PreviousOptions{Repo: testRepo, Workflow: "gate.yml", Branch: "main",
				ArtifactName: name, Self: selfID, AnyWorkflow: true})
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("error = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("error = %v, want the report of run %d", err, report.ID)
			case p.RunID != report.ID || p.Report == nil || p.Report.Source != "sentinel" || !p.Created.Equal(t0):
				t.Errorf("read run %d (created %v, report %v), want the report of run %d", p.RunID, p.Created, p.Report, report.ID)
			}
			api := s.Requests(ghfake.HostAPI)
			var paths []string
			for _, rq := range api {
				paths = append(paths, rq.Path+"?"+rq.RawQuery)
				for k := range st.never {
					if strings.HasSuffix(rq.Path, k) {
						t.Errorf("%s was read", k)
					}
				}
			}
			if len(api) != tc.wantReqs {
				t.Errorf("%d API requests, want %d:\n%s", len(api), tc.wantReqs, strings.Join(paths, "\n"))
			}
		})
	}
}

// TestPreviousReportExactNameFirst: two report steps in one workflow,
// tagged "web" and (before such tags got "-tag") "web-2", uploaded
// flakegate-report-web-2 first and flakegate-report-web. The "web" step read
// its neighbour's report, "web-2" reading as a re-run's copy of its own.
func TestPreviousReportExactNameFirst(t *testing.T) {
	s := ghfake.New(t)
	repo := s.Repo("acme/shop")
	run := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: t0})
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "flakegate-report-web-2", Files: map[string][]byte{render.ReportJSONFile: []byte(`{"source":"the web-2 step's"}`)}})
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "flakegate-report-web", Files: map[string][]byte{render.ReportJSONFile: []byte(`{"source":"the web step's"}`)}})
	p, err := PreviousReport(context.Background(), newClient(t, s), PreviousOptions{Repo: ghapi.Repo{Owner: "acme", Name: "shop"}, Workflow: "flakegate.yml", Branch: "main", ArtifactName: "flakegate-report-web", Self: 99999})
	if err != nil {
		t.Fatal(err)
	}
	if p.Report == nil || p.Report.Source != "the web step's" {
		t.Errorf("step web read %+v", p.Report)
	}
}

// A step tagged "node18" uploaded flakegate-report-node18 before the
// upgrade; after it, config names its report flakegate-report-node18-tag,
// and the last report (with the carried history) was no longer found: the
// former names are read too.
func TestPreviousReportAfterTagRename(t *testing.T) {
	s := ghfake.New(t)
	repo := s.Repo("acme/shop")
	run := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: t0})
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "flakegate-report-node18", Files: map[string][]byte{render.ReportJSONFile: []byte(`{"source":"last week's"}`)}})
	p, err := PreviousReport(context.Background(), newClient(t, s), PreviousOptions{Repo: ghapi.Repo{Owner: "acme", Name: "shop"}, Workflow: "flakegate.yml", Branch: "main", ArtifactName: "flakegate-report-node18-tag", FormerNames: []string{"flakegate-report-node18"}, Self: 99999})
	if err != nil {
		t.Fatal(err)
	}
	if p.Report == nil {
		t.Errorf("last week's report (flakegate-report-node18) not found under the new name")
	}
}
