package action

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/google/go-cmp/cmp"
)

// TestMatrixLegsReport: ci.yml runs the suite on a matrix and uploads an
// artifact per leg, junit-ubuntu and junit-windows, in each workflow run.
// A test that fails on Windows in every run is broken there, not flaky:
// the report names it per leg, with the Windows one failing on every
// commit and neither flagged, while a test that fails now and then in
// both legs is flagged in each. The runs stay one per workflow run, and
// no run reads as repeated. A Windows leg that reran its failures into an
// artifact of its own (junit-windows-rerun) counts as attempts of that
// leg: its retry is evidence.
func TestMatrixLegsReport(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	rng := rand.New(rand.NewPCG(7, 11))
	const runs = 12
	for i := range runs {
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: fmt.Sprintf("%040x", 0xabc0+i), CreatedAt: now.Add(-time.Duration(runs-i) * 6 * time.Hour)})
		for _, leg := range []string{"ubuntu", "windows"} {
			var cases []string
			pass := func(n string) {
				cases = append(cases, fmt.Sprintf(`<testcase classname="tests.test_app" name="%s" file="tests/test_app.py"/>`, n))
			}
			fail := func(n string) {
				cases = append(cases, fmt.Sprintf(`<testcase classname="tests.test_app" name="%s" file="tests/test_app.py"><failure message="%s failed"/></testcase>`, n, n))
			}
			pass("test_ok")
			if leg == "windows" {
				fail("test_paths")
			} else {
				pass("test_paths")
			}
			// Fails on every third commit on each leg, offset per leg.
			if (i+len(leg))%3 == 0 {
				fail("test_race")
			} else {
				pass("test_race")
			}
			for k := range 20 {
				pass(fmt.Sprintf("test_more_%d", k))
			}
			files := map[string][]byte{"junit.xml": []byte(`<testsuite name="pytest">` + strings.Join(cases, "") + `</testsuite>`)}
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-" + leg, Files: files})
			if leg == "windows" && rng.IntN(2) == 0 {
				// Only the failures, again: test_paths fails again.
				rerun := `<testsuite name="pytest"><testcase classname="tests.test_app" name="test_paths"><failure message="test_paths failed"/></testcase></testsuite>`
				repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-windows-rerun", Files: map[string][]byte{"junit.xml": []byte(rerun)}})
			}
		}
	}
	r := weeklyReport(t, s, repo, "ci.yml")
	files := uploadedReport(t, s)
	var rep struct {
		Runs         int `json:"runs"`
		RepeatedRuns int `json:"repeated_runs"`
		Tests        []struct {
			Name         string  `json:"name"`
			IsFlaky      bool    `json:"is_flaky"`
			Commits      int     `json:"commits"`
			FlakyCommits int     `json:"flaky_commits"`
			FailureRate  float64 `json:"failure_rate"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(files["report.json"], &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runs != runs || rep.RepeatedRuns != 0 {
		t.Errorf("report: %d runs, %d repeated; want %d and 0", rep.Runs, rep.RepeatedRuns, runs)
	}
	flaky := map[string]bool{}
	names := map[string]bool{}
	for _, x := range rep.Tests {
		names[x.Name] = true
		flaky[x.Name] = x.IsFlaky
	}
	for name, want := range map[string]bool{
		"tests.test_app::test_paths [junit-windows]": false,
		"tests.test_app::test_paths [junit-ubuntu]":  false,
		"tests.test_app::test_race [junit-windows]":  true,
		"tests.test_app::test_race [junit-ubuntu]":   true,
		"tests.test_app::test_ok [junit-ubuntu]":     false,
	} {
		if got, ok := flaky[name]; !ok || got != want {
			t.Errorf("%s: in the report %v, flaky %v; want flaky %v (tests: %v)", name, ok, got, want, names)
		}
	}
	for name := range names {
		if strings.Contains(name, "rerun") || !strings.Contains(name, " [junit-") {
			t.Errorf("test %q: every test ran in both legs, and the rerun is the Windows leg's", name)
		}
	}
	if out := r.outputs(); out["flaky-count"] != "2" {
		t.Errorf("flaky-count = %q, want 2 (test_race on each leg)", out["flaky-count"])
	}
}

// TestBazelAttemptsReport: Bazel with --flaky_test_attempts keeps each
// failed attempt of a test target beside the last attempt's test.xml, as
// test_attempts/attempt_N.xml, and the workflow uploads bazel-testlogs
// whole, per matrix leg. A test failing in attempt 1 and passing in
// test.xml on 3 of 12 commits is flaky: a retry within the run. Before,
// the attempts directory was a leg of its own: every test became two,
// the attempt's copy failing whenever seen, and nothing was flaky. Shards
// (shard_N_of_M) hold different tests and stay one leg each.
func TestBazelAttemptsReport(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	doc := func(class string, names []string, failing string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><testsuites><testsuite name="%s" tests="%d">`, class, len(names))
		for _, n := range names {
			if n == failing {
				fmt.Fprintf(&b, `<testcase name="%s" classname="%s" time="0.1"><failure message="timed out">at %s</failure></testcase>`, n, class, n)
			} else {
				fmt.Fprintf(&b, `<testcase name="%s" classname="%s" time="0.1"/>`, n, class)
			}
		}
		b.WriteString(`</testsuite></testsuites>`)
		return []byte(b.String())
	}
	const runs = 12
	for i := range runs {
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: fmt.Sprintf("%040x", 0xbaa0+i), CreatedAt: now.Add(-time.Duration(runs-i) * 6 * time.Hour)})
		for _, leg := range []string{"linux", "macos"} {
			files := map[string][]byte{
				"server/api_test/test.xml":             doc("server.ApiTest", []string{"testGet", "testPut", "testRetry"}, ""),
				"server/db_test/shard_1_of_2/test.xml": doc("server.DbTest", []string{"testOpen", "testClose"}, ""),
				"server/db_test/shard_2_of_2/test.xml": doc("server.DbTest", []string{"testMigrate", "testLock"}, ""),
				"server/db_test/shard_2_of_2/test.log": []byte("log"),
			}
			if leg == "linux" && i%4 == 1 {
				files["server/api_test/test_attempts/attempt_1.xml"] = doc("server.ApiTest", []string{"testGet", "testPut", "testRetry"}, "testRetry")
				files["server/api_test/test_attempts/attempt_1.log"] = []byte("log")
			}
			if leg == "macos" && i%4 == 2 {
				// Two failed attempts before the pass, in a shard.
				files["server/db_test/shard_2_of_2/test_attempts/attempt_1.xml"] = doc("server.DbTest", []string{"testMigrate", "testLock"}, "testLock")
				files["server/db_test/shard_2_of_2/test_attempts/attempt_2.xml"] = doc("server.DbTest", []string{"testMigrate", "testLock"}, "testLock")
			}
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "bazel-testlogs-" + leg, Files: files})
		}
	}
	weeklyReport(t, s, repo, "ci.yml")
	var rep struct {
		Runs  int `json:"runs"`
		Tests []struct {
			Name         string `json:"name"`
			IsFlaky      bool   `json:"is_flaky"`
			Commits      int    `json:"commits"`
			FlakyCommits int    `json:"flaky_commits"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(uploadedReport(t, s)["report.json"], &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range rep.Tests {
		got[x.Name] = fmt.Sprintf("flaky %v, %d of %d commits", x.IsFlaky, x.FlakyCommits, x.Commits)
	}
	want := map[string]string{}
	for _, leg := range []string{"linux", "macos"} {
		for _, n := range []string{"server.ApiTest::testGet", "server.ApiTest::testPut", "server.ApiTest::testRetry", "server.DbTest::testOpen", "server.DbTest::testClose", "server.DbTest::testMigrate", "server.DbTest::testLock"} {
			want[n+" [bazel-testlogs-"+leg+"]"] = "flaky false, 0 of 12 commits"
		}
	}
	// Shard 1's legs never differ: one report uploaded twice, as far as
	// anyone can tell (see splitLegs), so its tests are not split.
	for _, n := range []string{"server.DbTest::testOpen", "server.DbTest::testClose"} {
		delete(want, n+" [bazel-testlogs-linux]")
		delete(want, n+" [bazel-testlogs-macos]")
		want[n] = "flaky false, 0 of 12 commits"
	}
	want["server.ApiTest::testRetry [bazel-testlogs-linux]"] = "flaky true, 3 of 12 commits"
	want["server.DbTest::testLock [bazel-testlogs-macos]"] = "flaky true, 3 of 12 commits"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	if rep.Runs != runs {
		t.Errorf("report: %d runs, want %d", rep.Runs, runs)
	}
}

// TestGateMatrixHistory: the gate's history is a matrix's (junit-ubuntu
// and junit-windows artifacts in each ci.yml run on main), where it tells
// tests apart by leg, while the experiment ran on one runner. A test that
// passed every base run but failed now and then on main on Windows is a
// flake the base runs missed: its head failures do not block. Its
// baseline counts the runs of both legs, a run failing when either leg
// failed.
func TestGateMatrixHistory(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	for i := range 20 {
		sha := fmt.Sprintf("%040x", 0xdef0+i)
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: sha, CreatedAt: now.Add(-time.Duration(20-i) * time.Hour)})
		for _, leg := range []string{"ubuntu", "windows"} {
			failing := map[string]bool{"test_ws_reconnect": leg == "windows" && i%3 == 0}
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(sha, int(run.ID), failing)}})
		}
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{
		"mode": "gate", "base-results": "results/base", "head-results": "results/head", "workflows": "ci.yml"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{"test_ws_reconnect": 2})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d, want 0: a flake main already had\n%s", code, r.stdout.String())
	}
	if x := gateTest(t, r, "tests.test_app::test_ws_reconnect"); x.History.Runs != 20 || x.History.Failures != 7 {
		t.Errorf("history of %s: %d/%d runs failed, want 7/20 (either leg)", x.Name, x.History.Failures, x.History.Runs)
	}
}

// TestGateMatrixArtifactSides: a fork's PR gated through workflow_run,
// both sides read from the CI runs' artifacts on the base and head
// commits, where CI is a two-leg matrix. The patch breaks test_login on
// Windows only: the gate blocks on "test_login [junit-windows]" as a
// regression and names the Ubuntu leg clean. test_ws_reconnect already
// failed now and then on Windows on the base commit: a pre-existing flake
// there, which does not block.
func TestGateMatrixArtifactSides(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop")
	for i := range 5 {
		b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
		h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
		for _, leg := range []string{"ubuntu", "windows"} {
			win := leg == "windows"
			repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID),
				map[string]bool{"test_ws_reconnect": win && i%2 == 0})}})
			repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID),
				map[string]bool{"test_login": win, "test_ws_reconnect": win && i%2 == 1})}})
		}
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), nil)
	if code := r.run(); code != 1 {
		t.Fatalf("exit %d, want 1 (block)\n%s", code, r.stdout.String())
	}
	for name, want := range map[string]string{
		"tests.test_app::test_login [junit-windows]":        "block",
		"tests.test_app::test_login [junit-ubuntu]":         "pass",
		"tests.test_app::test_ws_reconnect [junit-windows]": "pass",
	} {
		if got := gateTest(t, r, name); got.Name != name || got.Decision != want {
			t.Errorf("%s: decision %q, want %q", got.Name, got.Decision, want)
		}
	}
	if out := r.outputs(); out["blocking-count"] != "1" {
		t.Errorf("blocking-count = %q, want 1", out["blocking-count"])
	}
}

// TestManyLegsReportSaid: one artifact holding 600 directories of the
// same suite, all of one workflow run, is read whole, and the report step
// warns in the log, the summary and report.json that it did not tell the
// legs apart as usual.
func TestManyLegsReportSaid(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: fmt.Sprintf("%040x", 0xabc), CreatedAt: now.Add(-time.Hour)})
	files := map[string][]byte{}
	for l := range 600 {
		files[fmt.Sprintf("module-%03d/junit.xml", l)] = []byte(`<testsuite name="s"><testcase classname="t" name="x"/></testsuite>`)
	}
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: files})
	r := weeklyReport(t, s, repo, "ci.yml")
	const said = "Some legs were not told apart as usual: 1 run had more than 256 legs"
	if !strings.Contains(r.stdout.String(), "::warning::"+said) {
		t.Errorf("the log does not warn:\n%s", r.stdout.String())
	}
	if !strings.Contains(r.summary(), said) {
		t.Errorf("the summary does not say it:\n%s", r.summary())
	}
	got := uploadedReport(t, s)
	var rep struct {
		Totals        struct{ Testcases int }
		FoldedLegRuns int  `json:"folded_leg_runs"`
		Stopped       bool `json:"leg_search_stopped"`
	}
	if err := json.Unmarshal(got["report.json"], &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Testcases != 600 || rep.FoldedLegRuns != 1 || !rep.Stopped {
		t.Errorf("report.json %+v; want 600 testcases, 1 run with folded legs, the search stopped", rep)
	}
}

// TestGateArtifactSidesMissingAndWorkflows: base and head read from the
// artifacts of runs on their commits. Runs of a workflow the workflows
// input leaves out are not read (an e2e run on head that fails a test no
// longer blocks). No base run at all (none ran, or its artifacts expired)
// leaves the evidence partial, not an error: the verdict is inconclusive,
// the base side rests on history, and the summary says what is missing.
func TestGateArtifactSidesMissingAndWorkflows(t *testing.T) {
	for _, tc := range []struct {
		name      string
		baseRuns  bool
		workflows string
		want      int
		verdict   string
	}{
		{"all workflows", true, "", 1, "block"},
		{"ci.yml only", true, "ci.yml", 0, "pass"},
		{"no base run", false, "ci.yml", 0, "inconclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "")
			for i := range 5 {
				if tc.baseRuns {
					b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
					repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), nil)}})
				}
				h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), nil)}})
			}
			// An e2e workflow's run on head, with a test of its own failing.
			e := repo.AddRun(ghfake.Run{Workflow: "e2e.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: e.ID, Name: "e2e-junit", Files: map[string][]byte{"junit.xml": []byte(
				`<testsuite name="e2e"><properties><property name="commit_sha" value="` + headSHA + `"/></properties><testcase classname="e2e.checkout" name="test_pay"><failure message="x"/></testcase></testsuite>`)}})
			for i := range 40 {
				m := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: ghfake.SHA(fmt.Sprint("main", i)), CreatedAt: now.Add(-time.Duration(50+i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: m.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(ghfake.SHA(fmt.Sprint("main", i)), int(m.ID), nil)}})
			}
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
			inputs := map[string]string{"upload-artifact": "false"}
			if tc.workflows != "" {
				inputs["workflows"] = tc.workflows
			}
			r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), inputs)
			if code := r.run(); code != tc.want || r.outputs()["verdict"] != tc.verdict {
				t.Fatalf("exit %d, verdict %q; want %d, %s\n%s", code, r.outputs()["verdict"], tc.want, tc.verdict, r.stdout.String())
			}
			if !tc.baseRuns && !strings.Contains(r.summary(), "runs of the base commit") {
				t.Errorf("the summary does not say the base runs are missing:\n%s", r.summary())
			}
		})
	}
}

// TestGateErrorCheckRun: with check-run on, a gate that cannot reach a
// verdict (here the PR's ledger does not parse) still completes its check
// run, as a failure that says why: for a fork's workflow_run the check run
// is the required check, and the PR would wait for it forever.
func TestGateErrorCheckRun(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop")
	repo.SetFile(headSHA, ".github/flaky-ledger.yml", []byte("version: [1\n"))
	for i := range 5 {
		b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
		h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
		repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), nil)}})
		repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), nil)}})
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), map[string]string{"check-run": "true", "upload-artifact": "false"})
	if code := r.run(); code != 1 || r.outputs()["verdict"] != "error" {
		t.Fatalf("exit %d, verdict %q; want 1, error\n%s", code, r.outputs()["verdict"], r.stdout.String())
	}
	runs := repo.CheckRuns()
	if len(runs) != 1 || runs[0].HeadSHA != headSHA || runs[0].Conclusion != "failure" || runs[0].Title != "flakegate: error" ||
		!strings.Contains(runs[0].Summary, "could not reach a verdict") || !strings.Contains(runs[0].Summary, "ledger") {
		t.Errorf("check runs %+v; want one failure on the head commit saying why", runs)
	}
}

// TestGateWorkflowRunSuperseded: a PR pushed twice in quick succession. The
// workflow_run of the first push completes after the second: its commit is
// no longer the PR's head (or no open PR has it at all), and the run of
// the newer head gates the PR. This one posts nothing (no comment, no
// check run), says why, and does not fail.
func TestGateWorkflowRunSuperseded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload func() map[string]any
		want    string
	}{
		{"fork, found by head SHA", func() map[string]any {
			p := forkRunPayload()
			p["workflow_run"].(map[string]any)["head_sha"] = ghfake.SHA("older")
			return p
		}, "no open pull request has head " + ghfake.SHA("older")},
		{"listed in pull_requests", func() map[string]any {
			p := forkRunPayload()
			wr := p["workflow_run"].(map[string]any)
			wr["head_sha"] = ghfake.SHA("older")
			wr["pull_requests"] = []any{map[string]any{"number": 42,
				"head": map[string]any{"ref": "fix", "sha": ghfake.SHA("older")},
				"base": map[string]any{"ref": "main", "sha": baseSHA}}}
			return p
		}, "results are for an older commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "forker/shop")
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
			r := newRunner(t, s, self.ID, "workflow_run", tc.payload(), map[string]string{"check-run": "true"})
			if code := r.run(); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.stdout.String())
			}
			if v := r.outputs()["verdict"]; v != "skipped" {
				t.Errorf("verdict %q, want skipped", v)
			}
			if log := r.stdout.String(); !strings.Contains(log, "::notice") || !strings.Contains(log, tc.want) {
				t.Errorf("no notice saying %q:\n%s", tc.want, log)
			}
			if sum := r.summary(); !strings.Contains(sum, "nothing to gate") {
				t.Errorf("summary does not say so:\n%s", sum)
			}
			if n, runs := len(repo.Comments(42)), repo.CheckRuns(); n != 0 || len(runs) != 0 {
				t.Errorf("%d comments and check runs %+v posted; want none", n, runs)
			}
		})
	}
}

// TestGateCancelledPostsTheErrorCheckRun: the job is cancelled (the runner
// signals the container) while the gate collects. Where the check run is
// the required check, the pull request would wait for it forever: the
// error check run is still posted, with a context of its own, and no
// report file is written.
func TestGateCancelledPostsTheErrorCheckRun(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), map[string]string{"check-run": "true", "upload-artifact": "false"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code := r.runCtx(ctx); code != 1 || r.outputs()["verdict"] != "error" {
		t.Fatalf("exit %d, verdict %q; want 1, error\n%s", code, r.outputs()["verdict"], r.stdout.String())
	}
	if runs := repo.CheckRuns(); len(runs) != 1 || runs[0].HeadSHA != headSHA || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Summary, "context canceled") {
		t.Errorf("check runs %+v; want one failure on the head commit saying the run was cancelled", runs)
	}
	if _, err := os.Stat(filepath.Join(r.env["GITHUB_WORKSPACE"], "flakegate-report", "gate.json")); err == nil {
		t.Errorf("a cancelled gate wrote gate.json")
	}
}

// TestGateWorkflowRunPRBeyondTheScan: a fork PR's workflow_run
// (pull_requests empty, GET /commits/{sha}/pulls omits forks) in a
// repository with more than 1,000 newer open pull requests. The fallback
// scan of open PRs stops at 1,000, so the PR, whose head IS the run's
// commit, is not found. That is not "superseded": the PR's required check
// (flakegate's check run on its head) must not be left unposted with exit
// 0, or the PR waits forever: the run fails with the reason, and the error
// check run is posted on the head.
func TestGateWorkflowRunPRBeyondTheScan(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop") // PR #42, head headSHA, from a fork
	repo.SetCommitPullsOmitForks(true)
	for i := range 1000 {
		repo.AddPullRequest(ghfake.PullRequest{Number: 100 + i, HeadSHA: ghfake.SHA("other" + string(rune('a'+i%26)) + string(rune('a'+i/26))), BaseSHA: baseSHA})
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), map[string]string{"check-run": "true", "upload-artifact": "false"})
	code := r.run()
	runs := repo.CheckRuns()
	if v := r.outputs()["verdict"]; v != "error" || code != 1 || len(runs) != 1 || runs[0].HeadSHA != headSHA || !strings.Contains(runs[0].Summary, "search stopped at the cap") {
		t.Errorf("PR #42's head is the run's commit %s, but the gate ended with verdict %q, exit %d, and check runs %+v: want error, 1, and the error check run on the head saying why\n%s",
			headSHA[:7], v, code, runs, r.stdout.String())
	}
}

// shardDoc is a pytest document of tests test_0 … test_{n-1} of class,
// the failing ones with a failure.
func shardDoc(class string, n int, failing map[string]bool) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><testsuites name="pytest tests"><testsuite name="pytest">`)
	for i := range n {
		name := fmt.Sprintf("test_%d", i)
		if failing[name] {
			fmt.Fprintf(&b, `<testcase classname="%s" name="%s"><failure message="boom"/></testcase>`, class, name)
		} else {
			fmt.Fprintf(&b, `<testcase classname="%s" name="%s"/>`, class, name)
		}
	}
	b.WriteString(`</testsuite></testsuites>`)
	return []byte(b.String())
}

// TestRerunFailedJobsReport: CI shards the suite in 4 jobs, each uploading
// junit-shard-N-attempt-${{ github.run_attempt }} (upload-artifact refuses
// a name the run already has). On 3 of 12 commits shard 2 failed test_3,
// and "Re-run failed jobs" re-ran shard 2, where it passed: a retry flake.
// The two attempts' artifacts are one leg (see artifactLeg): 40 tests,
// test_3 flaky on those 3 commits. Before, each attempt was a leg of its
// own: 50 tests, every shard-2 test twice, and test_3 was not flagged.
func TestRerunFailedJobsReport(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	const commits = 12
	for i := range commits {
		flaked := i%4 == 1
		attempts := 1
		if flaked {
			attempts = 2
		}
		run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: fmt.Sprintf("%040x", 0xabc0+i),
			CreatedAt: now.Add(-time.Duration(commits-i) * 6 * time.Hour), Attempts: attempts})
		for sh := 1; sh <= 4; sh++ {
			fail := map[string]bool{"test_3": sh == 2 && flaked}
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: fmt.Sprintf("junit-shard-%d-attempt-1", sh),
				Files: map[string][]byte{"junit.xml": shardDoc(fmt.Sprintf("tests.test_s%d", sh), 10, fail)}})
		}
		if flaked {
			repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-shard-2-attempt-2",
				Files: map[string][]byte{"junit.xml": shardDoc("tests.test_s2", 10, nil)}})
		}
	}
	weeklyReport(t, s, repo, "ci.yml")
	var rep struct {
		TestsAnalyzed int `json:"tests_analyzed"`
		Tests         []struct {
			Name         string   `json:"name"`
			IsFlaky      bool     `json:"is_flaky"`
			FlakyCommits int      `json:"flaky_commits"`
			Evidence     []string `json:"evidence"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(uploadedReport(t, s)["report.json"], &rep); err != nil {
		t.Fatal(err)
	}
	if rep.TestsAnalyzed != 40 {
		t.Errorf("%d tests analysed, want 40", rep.TestsAnalyzed)
	}
	found := false
	for _, x := range rep.Tests {
		if strings.Contains(x.Name, "[") {
			t.Errorf("test %q: the attempts are one leg", x.Name)
		}
		if x.Name == "tests.test_s2::test_3" {
			found = true
			if !x.IsFlaky || x.FlakyCommits != 3 {
				t.Errorf("%s: flaky %v on %d commits (evidence %v), want flaky on 3", x.Name, x.IsFlaky, x.FlakyCommits, x.Evidence)
			}
		}
	}
	if !found {
		t.Error("tests.test_s2::test_3 is not in the report")
	}
}

// TestGateSidesToldApartDifferently: the fork-safe gate reads both sides
// from a two-leg matrix's artifacts (junit-ubuntu, junit-windows), one CI
// run each. On the base run test_ws_reconnect failed on Windows, so base
// tells every test apart by leg; head is clean, its legs identical, so
// head does not. The gate compares each test across its legs: a pass, no
// test removed. Before, base said "c::n [junit-ubuntu]" and head "c::n":
// every test removed and added, exit 1.
func TestGateSidesToldApartDifferently(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop")
	b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-10 * time.Hour)})
	h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-5 * time.Hour)})
	for _, leg := range []string{"ubuntu", "windows"} {
		repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), map[string]bool{"test_ws_reconnect": leg == "windows"})}})
		repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), nil)}})
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), map[string]string{"workflows": "ci.yml"})
	code := r.run()
	out := r.outputs()
	if code != 0 || out["verdict"] == "block" || out["blocking-count"] != "0" {
		t.Errorf("exit %d, verdict %s, blocking-count %s; want no block\n%s", code, out["verdict"], out["blocking-count"], r.summary())
	}
	if sum := r.summary(); !strings.Contains(sum, "compared across their legs") || strings.Contains(sum, "removed") {
		t.Errorf("the summary does not say the tests were compared across legs, or calls one removed:\n%s", sum)
	}
}

// TestGateHeadRerunFailedJobs: CI shards the suite in 4 jobs, each
// uploading junit-shard-N-attempt-A. On head, shard 2 failed test_3, which
// flakes on main now and then, and "Re-run failed jobs" re-ran shard 2,
// where it passed. The gate passes it as a pre-existing flake. Before, the
// re-run was a leg of its own: the 10 tests of shard 2 were removed and
// test_3 a new failing test, 11 blocking.
func TestGateHeadRerunFailedJobs(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop")
	add := func(run ghfake.Run, name, class string, fail map[string]bool) {
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: name, Files: map[string][]byte{"junit.xml": shardDoc(class, 10, fail)}})
	}
	for i := range 20 {
		sha := ghfake.SHA(fmt.Sprint("main", i))
		m := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: sha, CreatedAt: now.Add(-time.Duration(50+i) * time.Hour)})
		for sh := 1; sh <= 4; sh++ {
			add(m, fmt.Sprintf("junit-shard-%d-attempt-1", sh), fmt.Sprintf("tests.test_s%d", sh), map[string]bool{"test_3": sh == 2 && i%4 == 0})
		}
	}
	b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-10 * time.Hour)})
	h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-5 * time.Hour), Attempts: 2})
	for sh := 1; sh <= 4; sh++ {
		name, class := fmt.Sprintf("junit-shard-%d-attempt-1", sh), fmt.Sprintf("tests.test_s%d", sh)
		add(b, name, class, nil)
		add(h, name, class, map[string]bool{"test_3": sh == 2})
	}
	add(h, "junit-shard-2-attempt-2", "tests.test_s2", nil)
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), map[string]string{"workflows": "ci.yml"})
	code := r.run()
	out := r.outputs()
	if code != 0 || out["verdict"] != "pass" || out["blocking-count"] != "0" {
		t.Errorf("exit %d, verdict %s, blocking-count %s; want a pass\n%s", code, out["verdict"], out["blocking-count"], r.summary())
	}
	if sum := r.summary(); strings.Contains(sum, "removed") || strings.Contains(sum, "attempt-") {
		t.Errorf("the summary names a removed test or an attempt's leg:\n%s", sum)
	}
}

// TestGateLegEntryAfterFold: a flake quarantined on one leg, with a base
// ledger entry for "c::n [junit-windows]", fails on head's Windows leg in
// 3 of 5 runs. When base is clean, its legs never differed and it names
// the test "c::n", while head names it by leg: the gate compares it under
// "c::n" (sameIdentities), and the leg's entry still exempts it, as it does
// when both sides name the legs (base's other leg failed once). Before,
// the folded test found no entry and blocked as a patch-induced flake. The Windows entry does not exempt
// failures on Ubuntu, folded or not: the patch's, with the flake's message.
func TestGateLegEntryAfterFold(t *testing.T) {
	for _, tc := range []struct {
		name     string
		entry    string
		baseFail bool   // base's other leg failed once: base names the legs too
		failOn   string // the head leg that fails
		exempt   bool
	}{
		{"plain entry, clean base", "tests.test_app::test_ws_reconnect", false, "windows", true},
		{"leg entry, clean base", "tests.test_app::test_ws_reconnect [junit-windows]", false, "windows", true},
		{"leg entry, base named by leg too", "tests.test_app::test_ws_reconnect [junit-windows]", true, "windows", true},
		{"leg entry, failing on the other leg, clean base", "tests.test_app::test_ws_reconnect [junit-windows]", false, "ubuntu", false},
		{"leg entry, failing on the other leg, base named by leg", "tests.test_app::test_ws_reconnect [junit-windows]", true, "ubuntu", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "forker/shop")
			setLedger(repo, tc.entry)
			for i := range 5 {
				b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
				h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
				for _, leg := range []string{"ubuntu", "windows"} {
					repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), map[string]bool{"test_ws_reconnect": tc.baseFail && leg != tc.failOn && i == 0})}})
					repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), map[string]bool{"test_ws_reconnect": leg == tc.failOn && i >= 2})}})
				}
			}
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
			r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), nil)
			code := r.run()
			exempt := strings.Contains(r.summary(), "1 exempt by the ledger")
			if out := r.outputs(); exempt != tc.exempt || tc.exempt && (code != 0 || out["verdict"] == "block") {
				t.Errorf("exit %d, verdict %s, exempt %v; want exempt %v\n%s", code, out["verdict"], exempt, tc.exempt, r.summary())
			}
		})
	}
}

func junitSixTests(sha string, run int, failing map[string]bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0"?><testsuite name="tests" timestamp="2026-11-29T10:%02d:00"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`, run%60, sha, run)
	for _, name := range []string{"test_list", "test_login", "test_ws_reconnect", "test_a", "test_b", "test_c"} {
		if failing[name] || failing["*"] {
			fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="%s" file="tests/test_app.py"><failure message="AssertionError: boom @maintainers"/></testcase>`, name)
		} else {
			fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="%s" file="tests/test_app.py"/>`, name)
		}
	}
	b.WriteString(`</testsuite>`)
	return []byte(b.String())
}

// TestGateLegEntriesAndOutages: leg entries of the base ledger against a
// test compared across legs, with outages and failures on both legs. An
// outage run is left out, so its failures say nothing of where the test
// failed (a Windows entry still covers Windows failures beside an outage
// of both legs); entries for both legs cover failures on both. None blocks.
func TestGateLegEntriesAndOutages(t *testing.T) {
	win := "tests.test_app::test_ws_reconnect [junit-windows]"
	ubu := "tests.test_app::test_ws_reconnect [junit-ubuntu]"
	for _, tc := range []struct {
		name    string
		entries []string
		failOn  []string
		outage  string // head leg with an outage in run 0
	}{
		{"windows entry, windows fails", []string{win}, []string{"windows"}, ""},
		{"plain entry, windows fails, ubuntu outage in run 0", []string{"tests.test_app::test_ws_reconnect"}, []string{"windows"}, "ubuntu"},
		{"windows entry, windows fails, both legs outage in run 0", []string{win}, []string{"windows"}, "both"},
		{"plain entry, windows fails, both legs outage in run 0", []string{"tests.test_app::test_ws_reconnect"}, []string{"windows"}, "both"},
		{"both leg entries, both legs fail", []string{win, ubu}, []string{"windows", "ubuntu"}, ""},
		{"plain entry, both legs fail", []string{"tests.test_app::test_ws_reconnect"}, []string{"windows", "ubuntu"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "forker/shop")
			setLedger(repo, tc.entries...)
			for i := range 5 {
				b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
				h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
				for _, leg := range []string{"ubuntu", "windows"} {
					repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitSixTests(baseSHA, int(b.ID), nil)}})
					f := map[string]bool{}
					for _, fl := range tc.failOn {
						// Windows fails in runs 1 and 3, Ubuntu in run 2: the
						// legs differ, so head names them.
						if fl == leg && (leg == "windows" && i%2 == 1 || leg == "ubuntu" && i == 2) {
							f["test_ws_reconnect"] = true
						}
					}
					if (leg == tc.outage || tc.outage == "both") && i == 0 {
						f["*"] = true
					}
					repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-" + leg, Files: map[string][]byte{"junit.xml": junitSixTests(headSHA, int(h.ID), f)}})
				}
			}
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
			r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), nil)
			code := r.run()
			out := r.outputs()
			sum := r.summary()
			if code != 0 || out["verdict"] == "block" {
				t.Errorf("exit %d, verdict %s: a quarantined flake blocked\n%s", code, out["verdict"], sum)
			}
		})
	}
}

// weeklyReport runs the scheduled weekly report over the last 7 days of
// the workflows' runs, and wants it to succeed.
func weeklyReport(t *testing.T, s *ghfake.Server, repo *ghfake.Repo, workflows string) *runner {
	t.Helper()
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"lookback-days": "7", "workflows": workflows})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stdout.String())
	}
	return r
}

// TestGateArtifactsWithCoverage: CI uploads its test directory whole, the
// JUnit file with coverage.py's coverage.xml and a JaCoCo report beside it.
// They hold no results: the gate passes a clean PR and says what it left
// out (before: every PR was inconclusive, "could not be read").
func TestGateArtifactsWithCoverage(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "forker/shop")
	coverage := []byte("<?xml version=\"1.0\" ?>\n<coverage version=\"7.4.1\" line-rate=\"0.9\">\n\t<!-- Generated by coverage.py -->\n\t<packages/>\n</coverage>\n")
	jacoco := []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="app"/>`)
	for i := range 5 {
		b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
		h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
		for _, r := range []struct {
			id  int64
			sha string
		}{{b.ID, baseSHA}, {h.ID, headSHA}} {
			repo.AddArtifact(ghfake.Artifact{RunID: r.id, Name: "test-results", Files: map[string][]byte{
				"junit.xml": junitRun(r.sha, int(r.id), nil), "coverage.xml": coverage, "jacoco/jacocoTestReport.xml": jacoco}})
		}
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), nil)
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.stdout.String())
	}
	if out := r.outputs(); out["verdict"] != "pass" {
		t.Errorf("verdict = %q, want pass\n%s", out["verdict"], r.summary())
	}
	if sum := r.summary(); !strings.Contains(sum, "XML file(s) left out that hold no JUnit results") || !strings.Contains(sum, "a JaCoCo coverage report") {
		t.Errorf("the summary does not say what was left out:\n%s", sum)
	}
}

// setLedger commits, on base and head, a ledger of ledgerYAML's entry for
// each of tests, with the signature of junitRun's failure message.
func setLedger(repo *ghfake.Repo, tests ...string) {
	one := ledgerYAML[strings.Index(ledgerYAML, "  - test:"):]
	l := "version: 1\nentries:\n"
	for _, e := range tests {
		l += strings.Replace(strings.Replace(one, `"tests.test_app::test_ws_reconnect"`, fmt.Sprintf("%q", e), 1),
			"sha256:00000000", "sha256:539f8232ee0847ab4e66164b3163a7b331ee54cbcbf0ceb66536a596de9cfeb4", 1)
	}
	repo.SetFile(baseSHA, ".github/flaky-ledger.yml", []byte(l))
	repo.SetFile(headSHA, ".github/flaky-ledger.yml", []byte(l))
}

// TestGateWorkflowRunOfPush: a gate step on a workflow_run whose run was a
// push's, with its base and head results given. No pull request is under
// test: the results are gated as a workflow_dispatch's are, and a
// regression in them blocks (exit 1). Looked up by commit, the run was
// "skipped" with exit 0 when no open PR had that head, or read as the PR
// that did (its diff, its comment) when one happened to. With no base
// commit the repository's ledger is read as both sides' (blocking count
// 1): read against an empty base, its entry was ledger growth, three more
// blocks.
func TestGateWorkflowRunOfPush(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
	payload := forkRunPayload()
	wr := payload["workflow_run"].(map[string]any)
	wr["event"], wr["head_branch"], wr["conclusion"] = "push", "main", "success"
	wr["head_repository"] = map[string]any{"full_name": repoName}
	inputs := map[string]string{"mode": "gate", "base-results": "results/base/*.xml", "head-results": "results/head"}
	r := newRunner(t, s, self.ID, "workflow_run", payload, inputs)
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{"test_login": 5})
	if code := r.run(); code != 1 {
		t.Fatalf("exit %d, want 1 (block)\n%s", code, r.stdout.String())
	}
	if out := r.outputs(); out["verdict"] != "block" || out["blocking-count"] != "1" {
		t.Errorf("outputs = %v; want a block of one test", out)
	}
	if n := len(repo.Comments(42)); n != 0 {
		t.Errorf("%d comments on pull request #42, whose head the pushed commit happens to be; want none", n)
	}
}
