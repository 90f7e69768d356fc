package action

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestUnknownWorkflowIsLeftOut: workflows names backend.yml and
// frontend.yml, but frontend.yml was renamed (web.yml). The report reads
// backend.yml's runs and says, in the report and the summary, that
// frontend.yml was not found. Before, the step failed on the 404 and read
// nothing. With no workflow found at all it fails, naming them.
func TestUnknownWorkflowIsLeftOut(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	for i := range 6 {
		for _, wf := range []string{"backend.yml", "web.yml"} {
			r := repo.AddRun(ghfake.Run{Workflow: wf, HeadSHA: fmt.Sprintf("%040x", 0xabc0+i), CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-" + wf, Files: map[string][]byte{"junit.xml": shardDoc(strings.TrimSuffix(wf, ".yml"), 5, nil)}})
		}
	}
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"workflows": "backend.yml,frontend.yml"})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	var rep struct {
		Runs         int `json:"runs"`
		SkippedFiles []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"skipped_files"`
	}
	if err := json.Unmarshal(uploadedReport(t, s)["report.json"], &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 6 {
		t.Errorf("%d runs read, want backend.yml's 6", rep.Runs)
	}
	said := false
	for _, sk := range rep.SkippedFiles {
		said = said || sk.Path == "workflow frontend.yml" && strings.Contains(sk.Error, "not found")
	}
	if !said || !strings.Contains(r.summary(), "frontend.yml") {
		t.Errorf("frontend.yml not said to be missing: skipped %+v\nsummary:\n%s", rep.SkippedFiles, r.summary())
	}

	self = repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r = newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"workflows": "frontend.yml,api.yml"})
	if code := r.run(); code == 0 || !strings.Contains(r.stdout.String(), "no workflow of acme/shop found: frontend.yml, api.yml") {
		t.Errorf("no workflow found: exit %d\n%s", code, r.stdout.String())
	}
}

// TestGateMonorepoWorkflows: backend.yml and frontend.yml each upload JUnit
// on push to main and on pull requests, behind a paths filter, and the
// gate reads both sides from their artifacts. The PR touches the backend.
// When frontend.yml has no head run with results, the head commit's runs
// of every status tell why:
//   - no run (a paths filter), or a run whose test jobs were skipped (it
//     succeeds with no JUnit), or only a run of another workflow named
//     "frontend": its base run is left out, said in a notice, and the PR
//     passes on the backend (before: the 8 frontend tests read as deleted
//     and the test count dropped, exit 1);
//   - a run in progress (whose result will fail a test), a run that failed
//     with no JUnit (a broken build), a cancelled one beside one in
//     progress, or a listing that fails: head results missing, which fails
//     the check whatever on-inconclusive says (it was inconclusive, exit 0,
//     under the default neutral), and head says why;
//   - both ran and head deletes a red backend test and adds another: a
//     block, red test removed (before: the red test read as missing from
//     the frontend's base run, an unstable id, and the PR passed).
func TestGateMonorepoWorkflows(t *testing.T) {
	frontendRun := func(conclusion, status string) func(*ghfake.Server, *ghfake.Repo) {
		return func(_ *ghfake.Server, repo *ghfake.Repo) {
			repo.AddRun(ghfake.Run{Workflow: "frontend.yml", Name: "frontend", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Hour), Conclusion: conclusion, Status: status})
		}
	}
	for _, tc := range []struct {
		name     string
		frontend func(*ghfake.Server, *ghfake.Repo) // head's frontend runs, without JUnit
		redTest  bool                               // backend's test_4 is red on base and deleted on head
		verdict  string
		says     string // in the log or the summary
	}{
		{"no frontend run on head", nil, false, "pass", "frontend (did not run)"},
		{"test jobs skipped", frontendRun("success", ""), false, "pass", "frontend (ran with no JUnit results"},
		{"another workflow of the same name", func(_ *ghfake.Server, repo *ghfake.Repo) {
			repo.AddRun(ghfake.Run{Workflow: "frontend-deploy.yml", Name: "frontend", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Hour), Conclusion: "failure"})
		}, false, "pass", "frontend (did not run)"},
		{"still running", frontendRun("", "in_progress"), false, "block", "still running: its tests were not compared"},
		{"build broken", frontendRun("failure", ""), false, "block", `its run ended "failure" with no JUnit results`},
		{"cancelled and running", func(s *ghfake.Server, repo *ghfake.Repo) {
			repo.AddRun(ghfake.Run{Workflow: "frontend.yml", Name: "frontend", Event: "push", HeadSHA: headSHA, CreatedAt: now.Add(-2 * time.Hour), Conclusion: "cancelled"})
			frontendRun("", "in_progress")(s, repo)
		}, false, "block", "still running"},
		{"listing fails", func(s *ghfake.Server, _ *ghfake.Repo) {
			s.Inject(ghfake.Fault{Path: "/repos/*/*/actions/runs", Times: -1})
		}, false, "block", "could not be listed"},
		{"more head runs than are listed", func(_ *ghfake.Server, repo *ghfake.Repo) {
			frontendRun("failure", "")(nil, repo)
			for i := range 300 {
				repo.AddRun(ghfake.Run{Workflow: "lint.yml", Name: "lint", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Hour + time.Duration(i)*time.Second)})
			}
		}, false, "block", "only 300 of the head commit's 303 runs were listed"},
		{"head deletes a red backend test", nil, true, "block", "removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "")
			add := func(wf, sha, event string, at time.Time, n int) {
				r := repo.AddRun(ghfake.Run{Workflow: wf + ".yml", Name: wf, Event: event, HeadSHA: sha, CreatedAt: at})
				var b strings.Builder
				b.WriteString(`<testsuite name="pytest">`)
				for i := range n {
					switch {
					case wf == "backend" && i == 4 && tc.redTest && sha == headSHA:
						b.WriteString(`<testcase classname="backend.tests" name="test_new"/>`)
					case wf == "backend" && i == 4 && tc.redTest:
						b.WriteString(`<testcase classname="backend.tests" name="test_4"><failure message="boom"/></testcase>`)
					default:
						fmt.Fprintf(&b, `<testcase classname="%s.tests" name="test_%d"/>`, wf, i)
					}
				}
				b.WriteString(`</testsuite>`)
				repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-" + wf, Files: map[string][]byte{"junit.xml": []byte(b.String())}})
			}
			add("backend", baseSHA, "push", now.Add(-3*time.Hour), 10)
			add("frontend", baseSHA, "push", now.Add(-3*time.Hour), 8)
			add("backend", headSHA, "pull_request", now.Add(-time.Hour), 10)
			if tc.redTest {
				add("frontend", headSHA, "pull_request", now.Add(-time.Hour), 8)
			}
			if tc.frontend != nil {
				tc.frontend(s, repo)
			}
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
			r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"upload-artifact": "false", "workflows": "backend.yml,frontend.yml"})
			code := r.run()
			out := r.outputs()
			if out["verdict"] != tc.verdict || (code == 0) != (tc.verdict != "block") {
				t.Errorf("exit %d, verdict %s; want %s\n%s", code, out["verdict"], tc.verdict, r.summary())
			}
			sum := r.summary()
			if !strings.Contains(sum+r.stdout.String(), tc.says) {
				t.Errorf("does not say %q:\n%s\n%s", tc.says, sum, r.stdout.String())
			}
			if !tc.redTest && (strings.Contains(sum, "removed") || strings.Contains(sum, "test-count")) {
				t.Errorf("the frontend's tests read as removed:\n%s", sum)
			}
		})
	}
}

// TestGateJobOnPushOnly: ci.yml runs on push and on pull_request, and its
// slow job on push only. The head commit of a same-repository PR has a push
// run (fast and slow tests) and a pull_request run (fast only); base has
// its push run. A slow test is not missing from the pull_request run, which
// never collects it: a pass (before: "5 test(s) collected in every base
// run have no result in some head runs", inconclusive).
func TestGateJobOnPushOnly(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	add := func(run ghfake.Run, jobs ...string) {
		for _, job := range jobs {
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-" + job, Files: map[string][]byte{"junit.xml": shardDoc(job, 5, nil)}})
		}
	}
	add(repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-5 * time.Hour)}), "fast", "slow")
	add(repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: headSHA, CreatedAt: now.Add(-2 * time.Hour)}), "fast", "slow")
	add(repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-2 * time.Hour)}), "fast")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"upload-artifact": "false", "workflows": "ci.yml"})
	if code := r.run(); code != 0 || r.outputs()["verdict"] != "pass" {
		t.Errorf("exit %d, verdict %s; want a pass\n%s", code, r.outputs()["verdict"], r.summary())
	}
}

// TestGateHeadArtifactUnreadable: the head runs' tests come in two shards'
// artifacts, and the shard holding test_login's failures answers 503 on
// every download. The PR declares test changes (it renamed another test).
// Before, its tests read as removed and declared, the evidence partial, and
// under the default on-inconclusive (neutral) the check passed, exit 0,
// with the regression unread. Now head results missing fail the check, and
// the shard's tests are not called removed.
func TestGateHeadArtifactUnreadable(t *testing.T) {
	shard2 := func(sha string, run int) []byte {
		return fmt.Appendf(nil, `<?xml version="1.0"?><testsuite name="tests2" timestamp="2026-11-29T10:%02d:00"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties><testcase classname="tests.other" name="test_a"/><testcase classname="tests.other" name="test_b"/></testsuite>`, run%60, sha, run)
	}
	for _, lost := range []bool{false, true} {
		s := newFake(t)
		repo := s.Repo(repoName)
		body := "Cache the login page.\n\nTest-Changes: renamed test_x in tests/other.py"
		repo.AddPullRequest(ghfake.PullRequest{Number: 42, HeadSHA: headSHA, BaseSHA: baseSHA, Body: body,
			Files: []ghfake.File{{Filename: "app/login.py", Status: "modified", Patch: "@@ -1,2 +1,3 @@\n def login():\n+    cache.clear()\n     return page\n"}}})
		self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
		for k := range 5 {
			b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, HeadBranch: "main", CreatedAt: now.Add(-time.Duration(10-k) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-shard1", Files: map[string][]byte{"a.xml": junitRun(baseSHA, 500+k, nil)}})
			repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-shard2", Files: map[string][]byte{"b.xml": shard2(baseSHA, 500+k)}})
			h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadBranch: "fix", CreatedAt: now.Add(-time.Duration(5-k) * time.Hour)})
			a := repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-shard1", Files: map[string][]byte{"a.xml": junitRun(headSHA, 600+k, map[string]bool{"test_login": true})}})
			repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-shard2", Files: map[string][]byte{"b.xml": shard2(headSHA, 600+k)}})
			if lost {
				s.Inject(ghfake.Fault{Path: fmt.Sprintf("/repos/*/*/actions/artifacts/%d/zip", a.ID), Status: 503, Times: -1})
			}
		}
		pl := prPayload(repoName)
		pl["pull_request"].(map[string]any)["body"] = body
		r := newRunner(t, s, self.ID, "pull_request", pl, map[string]string{"workflows": "ci.yml", "upload-artifact": "false"})
		code := r.run()
		out, sum := r.outputs(), r.summary()
		if code != 1 || out["verdict"] != "block" {
			t.Errorf("lost=%v: exit %d, verdict %s; want 1, block\n%s", lost, code, out["verdict"], sum)
		}
		switch {
		case !lost && !strings.Contains(sum, "test_login"):
			t.Errorf("the regression is not named:\n%s", sum)
		case lost && !strings.Contains(sum, "head results missing"):
			t.Errorf("lost shard: the summary does not say head results are missing:\n%s", sum)
		case lost && strings.Contains(sum, "removed: no results on head"):
			t.Errorf("lost shard: its tests read as removed:\n%s", sum)
		}
	}
}

// TestGateHistoryRequestBudget: 56 runs on main in the window, no report
// to carry them. Each run read costs an artifact listing and a download, and
// the gate runs on every push to every PR: it read all of them (up to
// max-runs, 200 by default, about 450 requests) of the repository's 1,000 an hour. It reads the newest
// collect.GateMaxRead, and, with little of the hour's budget left, fewer,
// keeping collect.GateRateReserve requests for the repository's other jobs.
func TestGateHistoryRequestBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     int // the fake's hourly limit; 0 leaves GitHub's
		maxRuns   int // history runs read, at most
		notice    string
		readsNone bool
	}{
		{"a full hour's budget", 0, collect.GateMaxRead, "the newest 50 runs not carried by a report were read, 6 older ones not", false},
		{"little left", collect.GateRateReserve + 3*10 + 15, 15, "older ones not", false},
		{"nothing to spare", collect.GateRateReserve + 2, 0, "base-branch history: not read", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "")
			addHistory(t, repo, 0, 70)
			if tc.limit > 0 {
				s.SetRateLimit(tc.limit, now.Add(time.Hour))
			}
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
			r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head/*.xml", "upload-artifact": "false"})
			ws := r.env["GITHUB_WORKSPACE"]
			writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
			writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{"test_login": 5})
			if code := r.run(); code != 1 {
				t.Fatalf("exit %d, want 1 (test_login fails every head run)\n%s", code, r.stdout.String())
			}
			zips := 0
			for _, q := range s.Requests(ghfake.HostAPI) {
				if strings.HasSuffix(q.Path, "/zip") {
					zips++
				}
			}
			if zips > tc.maxRuns || (!tc.readsNone && zips == 0) {
				t.Errorf("%d artifact downloads, want at most %d", zips, tc.maxRuns)
			}
			if log := r.stdout.String(); !strings.Contains(log, tc.notice) {
				t.Errorf("the log does not say %q:\n%s", tc.notice, log)
			}
		})
	}
}
