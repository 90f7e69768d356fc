package action

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/publish"
)

var (
	headSHA = ghfake.SHA("head")
	baseSHA = ghfake.SHA("base")
)

// junitRun is one run's JUnit document with the given failing tests.
func junitRun(sha string, run int, failing map[string]bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0"?><testsuite name="tests" timestamp="2026-11-29T10:%02d:00"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`, run%60, sha, run)
	for _, name := range []string{"test_list", "test_login", "test_ws_reconnect", "<img src=x onerror=alert(1)>@everyone"} {
		if failing[name] {
			fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="%s" file="tests/test_app.py"><failure message="AssertionError: boom @maintainers"/></testcase>`, escapeAttr(name))
		} else {
			fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="%s" file="tests/test_app.py"/>`, escapeAttr(name))
		}
	}
	b.WriteString(`</testsuite>`)
	return []byte(b.String())
}

func escapeAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// writeSide writes K runs into the workspace; fails[name] is how many of
// the runs fail for that test.
func writeSide(t *testing.T, dir, side, sha string, k int, fails map[string]int) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for i := 0; i < k; i++ {
		failing := map[string]bool{}
		for n, f := range fails {
			failing[n] = i < f
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.xml", side, i)), junitRun(sha, 100*len(side)+i, failing), 0o644)
	}
}

// forkRunPayload is the workflow_run event of CI's run on a fork's pull
// request: its pull_requests list is empty, as GitHub sends it for forks.
func forkRunPayload() map[string]any {
	return map[string]any{"action": "completed", "workflow_run": map[string]any{
		"id": 999, "name": "CI", "workflow_id": 1, "run_attempt": 1, "event": "pull_request", "status": "completed", "conclusion": "failure",
		"head_sha": headSHA, "head_branch": "fix", "head_repository": map[string]any{"full_name": "forker/shop"},
		"repository": map[string]any{"full_name": repoName}, "pull_requests": []any{}},
		"repository": map[string]any{"full_name": repoName}}
}

func prPayload(headRepo string) map[string]any {
	var repo any = map[string]any{"full_name": headRepo}
	if headRepo == "" {
		repo = nil
	}
	return map[string]any{
		"action": "synchronize", "number": 42,
		"pull_request": map[string]any{
			"number": 42, "state": "open", "body": "Cache the login page.", "labels": []any{},
			"head": map[string]any{"ref": "fix", "sha": headSHA, "repo": repo},
			"base": map[string]any{"ref": "main", "sha": baseSHA, "repo": map[string]any{"full_name": repoName}},
		},
		"repository": map[string]any{"full_name": repoName},
	}
}

const ledgerYAML = `version: 1
entries:
  - test: "tests.test_app::test_ws_reconnect"
    signature: "sha256:00000000"
    owner: "@realtime-team"
    issue: "https://github.com/acme/shop/issues/12"
    replacement: "tests.test_app::test_ws_reconnect_once"
    evidence: {p_flake_baseline: 0.30, p_regression: 0.90, alpha: 0.05, beta: 0.05,
               llr_trace: [[false, 1.099, 1.099], [true, -1.946, -0.847], [true, -1.946, -2.793], [true, -1.946, -4.739]], decision: FLAKE}
    release_triggers: [scope_file_changed, signature_changed]
`

func gateRepo(t *testing.T, s *ghfake.Server, headRepo string) *ghfake.Repo {
	t.Helper()
	repo := s.Repo(repoName)
	repo.AddPullRequest(ghfake.PullRequest{Number: 42, HeadSHA: headSHA, BaseSHA: baseSHA, HeadRepo: headRepo, Body: "Cache the login page.",
		Files: []ghfake.File{{Filename: "app/login.py", Status: "modified", Patch: "@@ -1,2 +1,3 @@\n def login():\n+    cache.clear()\n     return page\n"}}})
	repo.SetFile(baseSHA, ".github/flaky-ledger.yml", []byte(ledgerYAML))
	repo.SetFile(headSHA, ".github/flaky-ledger.yml", []byte(ledgerYAML))
	return repo
}

// TestGatePullRequest: a patch makes test_login flaky while
// test_ws_reconnect was already flaky. The gate blocks on the first only,
// posts one sticky comment and edits it on the next run, and exits 1.
func TestGatePullRequest(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})

	inputs := map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head", "history": "results/history/*.xml", "check-run": "true"}
	for attempt := 1; attempt <= 2; attempt++ {
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), inputs)
		ws := r.env["GITHUB_WORKSPACE"]
		writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, map[string]int{"test_ws_reconnect": 2})
		writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, map[string]int{"test_login": 3, "test_ws_reconnect": 2})
		writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, map[string]int{"test_ws_reconnect": 12})
		if code := r.run(); code != 1 {
			t.Fatalf("attempt %d: exit %d, want 1 (block)\n%s", attempt, code, r.stdout.String())
		}
		out := r.outputs()
		if out["verdict"] != "block" || out["blocking-count"] != "1" {
			t.Errorf("outputs = %v", out)
		}
		if _, err := os.Stat(r.file("report-json")); err != nil {
			t.Errorf("report-json: %v", err)
		}
		if sum := r.summary(); !strings.Contains(sum, "flakegate: block") || !strings.Contains(sum, "test\\_login") {
			t.Errorf("summary:\n%s", sum)
		}
		if !strings.Contains(r.stdout.String(), "::error") {
			t.Error("no error annotation for the blocking test")
		}
	}
	comments := repo.Comments(42)
	if len(comments) != 1 {
		t.Fatalf("%d comments, want one sticky comment edited in place", len(comments))
	}
	body := comments[0].Body
	for _, want := range []string{"## ❌ flakegate: block", "test\\_login", "patch-induced flake", "Pre-existing flakes", "test\\_ws\\_reconnect", publish.CommentMarker("")} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}
	for _, bad := range []string{"<img", "@everyone", "@maintainers"} {
		if strings.Contains(body, bad) {
			t.Errorf("comment contains %q", bad)
		}
	}
	if len(body) > ghapi.MaxCommentChars {
		t.Errorf("comment is %d characters", len(body))
	}
	runs := repo.CheckRuns()
	if len(runs) != 2 || runs[0].Conclusion != "failure" {
		t.Errorf("check runs = %+v", runs)
	}
}

// TestGateForkWorkflowRun: a fork PR's results arrive through workflow_run,
// whose pull_requests list is empty. The gate finds the PR by head SHA,
// reads both sides from run artifacts, and comments. With a read-only token
// the comment falls back to the summary.
func TestGateForkWorkflowRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		token    string
		comments int
	}{{"write token", ghfake.Token, 1}, {"read-only token", ghfake.ReadOnlyToken, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := gateRepo(t, s, "forker/shop")
			for i := 0; i < 5; i++ {
				b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), nil)}})
				h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, HeadRepo: "forker/shop", CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), map[string]bool{"test_login": true})}})
			}
			self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "workflow_run", CreatedAt: now})
			r := newRunner(t, s, self.ID, "workflow_run", forkRunPayload(), nil)
			r.env["INPUT_GITHUB-TOKEN"] = tc.token
			code := r.run()
			if code != 1 {
				t.Fatalf("exit %d, want 1 (regression)\n%s", code, r.stdout.String())
			}
			if out := r.outputs(); out["verdict"] != "block" {
				t.Errorf("outputs = %v", out)
			}
			if !strings.Contains(r.stdout.String(), "pull request #42 has head") {
				t.Errorf("PR not found by head SHA:\n%s", r.stdout.String())
			}
			if got := len(repo.Comments(42)); got != tc.comments {
				t.Errorf("%d comments, want %d", got, tc.comments)
			}
			if tc.comments == 0 && (!strings.Contains(r.stdout.String(), "::warning") || !strings.Contains(r.summary(), "could not post its PR comment")) {
				t.Errorf("read-only token: no warning or summary fallback:\n%s", r.stdout.String())
			}
		})
	}
}

// TestGateCheckoutSymlinks: a pull request can commit symbolic links in its
// checkout. A results file linked out of the workspace is not read (and
// says so), and a report-dir or report file that is a link is not written
// through.
func TestGateCheckoutSymlinks(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	outside := t.TempDir()
	inputs := map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head", "upload-artifact": "false"}

	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), inputs)
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	writeSide(t, outside, "head", headSHA, 1, map[string]int{"test_login": 1})
	entries, _ := os.ReadDir(outside)
	if err := os.Symlink(filepath.Join(outside, entries[0].Name()), filepath.Join(ws, "results/head", "zz-link.xml")); err != nil {
		t.Fatal(err)
	}
	// The linked run, failing, is not read; a head file not read fails
	// the check (it may hold a failure), whatever on-inconclusive says.
	if code := r.run(); code != 1 {
		t.Fatalf("exit %d, want 1: a head file not read\n%s", code, r.stdout.String())
	}
	if strings.Contains(r.summary(), "test_login") {
		t.Errorf("the linked failing run was read:\n%s", r.summary())
	}
	if log := r.stdout.String(); !strings.Contains(log, "symbolic link out of the workspace") {
		t.Errorf("the skipped link is not reported:\n%s", log)
	}
	// The summary names the file.
	if v, sum := r.outputs()["verdict"], r.summary(); v != "block" || !strings.Contains(sum, "head results missing") || !strings.Contains(sum, "### Result files not read (1)") || !strings.Contains(sum, "zz-link.xml") {
		t.Errorf("verdict %q with a head file not read; summary:\n%s", v, sum)
	}

	for _, link := range []string{"flakegate-report", "flakegate-report/gate.json"} {
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), inputs)
		ws := r.env["GITHUB_WORKSPACE"]
		writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
		writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
		target := filepath.Join(t.TempDir(), "target")
		os.MkdirAll(filepath.Dir(filepath.Join(ws, link)), 0o755)
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
		if code := r.run(); code == 0 {
			t.Errorf("%s as a link: exit 0, want a failure", link)
		}
		if _, err := os.Lstat(target); err == nil {
			t.Errorf("%s as a link: flakegate wrote through it to %s", link, target)
		}
		if log := r.stdout.String(); !strings.Contains(log, "does not write through it") {
			t.Errorf("%s as a link: the log does not say why:\n%s", link, log)
		}
	}
}

// TestGateNewTestFiles: a clean PR that adds a test file under tests/
// fails the check by default (the seed's rule: any edit there needs a
// declaration), and passes with protected-new-files: allow. A conftest.py
// it adds still needs a declaration under allow.
func TestGateNewTestFiles(t *testing.T) {
	for _, tc := range []struct {
		allow   string
		files   []ghfake.File
		want    int
		verdict string
	}{
		{"declare", []ghfake.File{{Filename: "tests/test_cache.py", Status: "added", Patch: "@@ -0,0 +1 @@\n+def test_cache(): assert cache.get(1) == 1\n"}}, 1, "block"},
		{"allow", []ghfake.File{{Filename: "tests/test_cache.py", Status: "added", Patch: "@@ -0,0 +1 @@\n+def test_cache(): assert cache.get(1) == 1\n"}}, 0, "pass"},
		{"allow", []ghfake.File{{Filename: "tests/conftest.py", Status: "added", Patch: "@@ -0,0 +1 @@\n+import pytest\n"}}, 1, "block"},
	} {
		s := newFake(t)
		repo := s.Repo(repoName)
		repo.AddPullRequest(ghfake.PullRequest{Number: 42, HeadSHA: headSHA, BaseSHA: baseSHA, Body: "Cache lookups.", Files: tc.files})
		self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"base-results": "results/base", "head-results": "results/head",
			"history": "results/history", "protected-new-files": tc.allow, "upload-artifact": "false"})
		ws := r.env["GITHUB_WORKSPACE"]
		writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
		writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
		writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, nil)
		if code := r.run(); code != tc.want || r.outputs()["verdict"] != tc.verdict {
			t.Errorf("%s, %s: exit %d, verdict %s; want %d, %s\n%s", tc.allow, tc.files[0].Filename, code, r.outputs()["verdict"], tc.want, tc.verdict, r.stdout.String())
		}
	}
}

// TestGatePartialDiffAndHeadCount: a pull request of more files than
// GitHub lists (3,000) leaves the protected-path and skip-marker checks
// partial: the verdict is not a pass, and the log and gate.json say why.
// tests-count counts the head side's tests: a test only the base runs had
// (removed by the patch, which blocks) is not among them.
func TestGatePartialDiffAndHeadCount(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	var files []ghfake.File
	for i := range ghapi.MaxPullRequestFiles + 10 {
		files = append(files, ghfake.File{Filename: fmt.Sprintf("app/m%04d.py", i), Status: "modified", Patch: "@@ -1 +1 @@\n-a\n+b\n"})
	}
	repo.AddPullRequest(ghfake.PullRequest{Number: 42, HeadSHA: headSHA, BaseSHA: baseSHA, Body: "Rename everything.", Files: files})
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	for _, removed := range []bool{false, true} {
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
			map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head", "upload-artifact": "false"})
		ws := r.env["GITHUB_WORKSPACE"]
		writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
		writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
		if removed {
			for i := range 5 {
				p := filepath.Join(ws, "results/base", fmt.Sprintf("base-%d.xml", i))
				b, _ := os.ReadFile(p)
				b = bytes.Replace(b, []byte("</testsuite>"), []byte(`<testcase classname="tests.test_app" name="test_removed"/></testsuite>`), 1)
				os.WriteFile(p, b, 0o644)
			}
		}
		code, out := r.run(), r.outputs()
		want := "inconclusive"
		if removed {
			want = "block"
		}
		if out["verdict"] != want || (code == 0) != !removed || out["tests-count"] != "4" {
			t.Errorf("removed %v: exit %d, verdict %q, tests-count %q; want %s and 4 (the head side's tests)", removed, code, out["verdict"], out["tests-count"], want)
		}
		if log := r.stdout.String(); !strings.Contains(log, "changes more files than GitHub lists (3000)") {
			t.Errorf("the partial file list is not said:\n%s", log)
		}
		b, _ := os.ReadFile(r.file("report-json"))
		if !bytes.Contains(b, []byte("listed only up to 3000: protected-path and skip-marker checks saw only those")) {
			t.Errorf("gate.json does not give the reason:\n%s", b)
		}
	}
}

// TestGateDeclarationAddedSince: a blocked PR is told to add a
// "Test-Changes:" line or the label; a re-run gets the event's old payload,
// so the gate reads the body and labels from the PR as it is now.
func TestGateDeclarationAddedSince(t *testing.T) {
	files := []ghfake.File{{Filename: "tests/test_cache.py", Status: "added", Patch: "@@ -0,0 +1 @@\n+def test_cache(): assert cache.get(1) == 1\n"}}
	for _, tc := range []struct {
		name, body string
		labels     []string
		want       int
		verdict    string
	}{
		{"nothing added", "Cache lookups.", nil, 1, "block"},
		{"a declaration added to the body", "Cache lookups.\n\nTest-Changes: adds test_cache", nil, 0, "pass"},
		{"the label added", "Cache lookups.", []string{"test-changes-declared"}, 0, "pass"},
	} {
		s := newFake(t)
		repo := s.Repo(repoName)
		repo.AddPullRequest(ghfake.PullRequest{Number: 42, HeadSHA: headSHA, BaseSHA: baseSHA, Body: tc.body, Labels: tc.labels, Files: files})
		self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"base-results": "results/base", "head-results": "results/head",
			"history": "results/history", "upload-artifact": "false"})
		r.env["GITHUB_RUN_ATTEMPT"] = "2"
		ws := r.env["GITHUB_WORKSPACE"]
		writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
		writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
		writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, nil)
		if code := r.run(); code != tc.want || r.outputs()["verdict"] != tc.verdict {
			t.Errorf("%s: exit %d, verdict %s; want %d, %s\n%s", tc.name, code, r.outputs()["verdict"], tc.want, tc.verdict, r.stdout.String())
		}
	}
}

// TestGateUnscannedDiff: a test file whose diff GitHub does not show (too
// large: changes but no patch) is not checked for skip markers; the gate
// says so and does not pass.
func TestGateUnscannedDiff(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	repo.AddPullRequest(ghfake.PullRequest{Number: 42, HeadSHA: headSHA, BaseSHA: baseSHA, Body: "Test-Changes: rewrites the app tests",
		Files: []ghfake.File{{Filename: "tests/test_app.py", Status: "modified", Additions: 5000}}})
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"base-results": "results/base", "head-results": "results/head",
		"history": "results/history", "upload-artifact": "false"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, nil)
	if code := r.run(); code != 0 || r.outputs()["verdict"] != "inconclusive" {
		t.Fatalf("exit %d, verdict %q; want 0, inconclusive\n%s", code, r.outputs()["verdict"], r.stdout.String())
	}
	if b, _ := os.ReadFile(r.file("report-json")); !strings.Contains(string(b), "not checked for new skip markers: tests/test_app.py") {
		t.Errorf("gate.json does not name the file:\n%s", b)
	}
}

// TestGateOlderHeadLeavesTheComment: a pull_request run for an older head
// commit ends (or is re-run) after the run of the PR's current head. Its
// verdict and exit code stand for the commit it tested, but the sticky
// comment keeps the current head's verdict, and a notice says why.
func TestGateOlderHeadLeavesTheComment(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "") // PR #42's head is headSHA now
	oldSHA := ghfake.SHA("old")
	repo.SetFile(oldSHA, ".github/flaky-ledger.yml", []byte(ledgerYAML))
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	inputs := map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head", "history": "results/history/*.xml"}

	// The run for the current head passes.
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), inputs)
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", headSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, nil)
	if code := r.run(); code != 0 {
		t.Fatalf("current head: exit %d\n%s", code, r.stdout.String())
	}
	// The run for the old head (its payload names oldSHA) ends later.
	old := prPayload(repoName)
	old["pull_request"].(map[string]any)["head"].(map[string]any)["sha"] = oldSHA
	r2 := newRunner(t, s, self.ID+1, "pull_request", old, inputs)
	ws = r2.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", oldSHA, 5, map[string]int{"test_login": 5})
	writeSide(t, filepath.Join(ws, "results/history"), "history", ghfake.SHA("main"), 40, nil)
	if code := r2.run(); code != 1 || r2.outputs()["verdict"] != "block" {
		t.Errorf("older head: exit %d, verdict %q; want 1, block: the verdict stands for the commit tested", code, r2.outputs()["verdict"])
	}
	cs := repo.Comments(42)
	if len(cs) != 1 || strings.Contains(cs[0].Body, "flakegate: block") {
		t.Errorf("the PR's head is %s and its run passed, but the sticky comment now says block (for the older commit %s)", headSHA[:7], oldSHA[:7])
	}
	if log := r2.stdout.String(); !strings.Contains(log, "::notice") || !strings.Contains(log, "the sticky comment is left to the newer head's run") {
		t.Errorf("no notice:\n%s", log)
	}
}

// TestGateMergeGroup: the required check runs in a merge queue too. mode
// auto gates the queue's commit with the given results against the
// queue's base branch (its history is read from that branch, not the
// default one), posts the check run on the queue's commit, and comments
// nowhere. A patch-induced flake in the group blocks it.
func TestGateMergeGroup(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	mergeSHA := ghfake.SHA("queue")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "merge_group", HeadSHA: mergeSHA, CreatedAt: now})
	payload := map[string]any{"action": "checks_requested", "merge_group": map[string]any{
		"head_sha": mergeSHA, "head_ref": "refs/heads/gh-readonly-queue/release/pr-42-" + headSHA,
		"base_sha": baseSHA, "base_ref": "refs/heads/release"},
		"repository": map[string]any{"full_name": repoName, "default_branch": "main"}}
	r := newRunner(t, s, self.ID, "merge_group", payload, map[string]string{
		"base-results": "results/base/*.xml", "head-results": "results/head/*.xml", "check-run": "true", "upload-artifact": "false"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	writeSide(t, filepath.Join(ws, "results/head"), "head", mergeSHA, 5, map[string]int{"test_login": 3})
	before := len(s.Requests(ghfake.HostAPI))
	if code := r.run(); code != 1 || r.outputs()["verdict"] != "block" {
		t.Fatalf("exit %d, verdict %q; want 1, block\n%s", code, r.outputs()["verdict"], r.stdout.String())
	}
	if runs := repo.CheckRuns(); len(runs) != 1 || runs[0].HeadSHA != mergeSHA || runs[0].Conclusion != "failure" {
		t.Errorf("check runs %+v; want one failure on the queue's commit", runs)
	}
	if n := len(repo.Comments(42)); n != 0 {
		t.Errorf("%d comments; a merge group has no pull request to comment on", n)
	}
	branches := map[string]bool{}
	for _, q := range s.Requests(ghfake.HostAPI)[before:] {
		if strings.HasSuffix(q.Path, "/actions/runs") {
			v, _ := url.ParseQuery(q.RawQuery)
			branches[v.Get("branch")] = true
		}
	}
	if !branches["release"] || branches["main"] {
		t.Errorf("runs listed on branches %v; want the queue's base, release, only", branches)
	}
}

// TestGateNamesTheCommitsRun: with flakegate matrix's results, the base
// side ran at the merge base of head and its base branch, which is not the
// event's base.sha when the branch moved on before the pull request was
// opened; the comment named base.sha, a commit no run was of. matrix's
// manifest beside the files names the commits run: the comment links
// them, and the notes say where they differ from the event's. A manifest
// that does not hold commit SHAs is not used, and the log says so.
func TestGateNamesTheCommitsRun(t *testing.T) {
	mergeBase := ghfake.SHA("merge-base")
	for _, tc := range []struct {
		name, manifest, wantBase, wantLog string
	}{
		{"manifest", `{"base":{"rev":"origin/main","sha":"` + mergeBase + `","tip":"` + baseSHA + `"},"head":{"rev":"` + headSHA + `","sha":"` + headSHA + `"}}`,
			mergeBase, ""},
		{"bad manifest", `{"base":{"rev":"origin/main","sha":"[evil](https://x)"},"head":{"rev":"h","sha":"` + headSHA + `"}}`,
			baseSHA, "flakegate-matrix.json not used: base.sha"},
		// The revision's name is the untrusted side's text: the comment
		// escapes it, and a long one gives way to the commit.
		{"long revision", `{"base":{"rev":"` + strings.Repeat("@everyone ", 20) + `","sha":"` + mergeBase + `"},"head":{"rev":"h","sha":"` + headSHA + `"}}`,
			mergeBase, ""},
		{"mention as the revision", `{"base":{"rev":"@everyone","sha":"` + mergeBase + `","tip":"` + baseSHA + `"},"head":{"rev":"h","sha":"` + headSHA + `"},"later":1}`,
			mergeBase, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, r := matrixResults(t, 5, 3, tc.manifest)
			if code := r.run(); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, r.stdout.String())
			}
			body := repo.Comments(42)[0].Body
			want := "against base [`" + tc.wantBase[:7] + "`](https://github.com/acme/shop/commit/" + tc.wantBase + ")"
			if !strings.Contains(body, want) {
				t.Errorf("comment lacks %q:\n%s", want, body)
			}
			note := "the base runs are of " + model.ShortSHA(mergeBase) + ", where head left origin/main (their merge base; origin/main was at " + model.ShortSHA(baseSHA) + "), not of the event's base commit " + model.ShortSHA(baseSHA)
			if tc.name == "mention as the revision" {
				note = "the base runs are of " + model.ShortSHA(mergeBase) + ", where head left "
			}
			if tc.name == "long revision" {
				note = "the base runs are of " + model.ShortSHA(mergeBase) + ", as given to flakegate matrix (" + model.ShortSHA(mergeBase) + ")"
			}
			if strings.Contains(body, "@everyone") {
				t.Errorf("the comment mentions @everyone:\n%s", body)
			}
			if got := strings.Contains(r.summary(), note); got != (tc.wantBase == mergeBase) {
				t.Errorf("summary has the note %q: %v, want %v\n%s", note, got, tc.wantBase == mergeBase, r.summary())
			}
			if tc.wantLog != "" && !strings.Contains(r.stdout.String(), tc.wantLog) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, r.stdout.String())
			}
			if strings.Contains(body, "evil") {
				t.Errorf("the manifest's text reached the comment:\n%s", body)
			}
		})
	}
}

// TestGateTakesMatrixLooksShare: matrix's manifest says it looked at the
// runs up to 3 times (-k 20: after 5, 10 and 20 pairs), at shares of
// alpha-pr that grow with the pairs (5/35, 10/35, 20/35); how many pairs it
// ran depended on those looks, so the action's look takes the share of the
// look at the pairs it reads, and says so. A manifest without look_pairs is
// of a matrix whose looks took equal shares. A count of looks no matrix
// writes, or pairs that do not fit it, leave the manifest unused.
func TestGateTakesMatrixLooksShare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		looks   string
		alpha   string
		note    string
		wantLog string
	}{
		{"growing shares", `"looks":3,"look_pairs":[5,10,20]`, "within alpha-pr 0.007143", "the runs are flakegate matrix's, which looked at them up to 3 times (after 5, 10 and 20 pairs), at shares of alpha-pr 0.05 that grow with the pairs read; this look, at 5 pairs, takes that look's: 0.00714", ""},
		{"equal shares", `"looks":3`, "within alpha-pr 0.01667", "the runs are flakegate matrix's, which looked at them up to 3 times, each at alpha-pr 0.05/3; so does this look: 0.0167", ""},
		{"one look", `"looks":1`, "within alpha-pr 0.05", "", ""},
		{"looks no matrix writes", `"looks":99`, "within alpha-pr 0.05", "", "flakegate-matrix.json not used: looks 99: want 0 to 8"},
		{"pairs that do not fit", `"looks":3,"look_pairs":[10,5,20]`, "within alpha-pr 0.05", "", "flakegate-matrix.json not used: look_pairs [10 5 20]: want 3 counts of pairs, rising, from 1 to 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r := matrixResults(t, 5, 5, fmt.Sprintf(`{"base":{"rev":"origin/main","sha":"%s"},"head":{"rev":"h","sha":"%s"},%s}`, baseSHA, headSHA, tc.looks))
			if code := r.run(); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, r.stdout.String())
			}
			sum := r.summary()
			if !strings.Contains(sum, tc.alpha) || tc.note != "" && !strings.Contains(sum, tc.note) || tc.note == "" && strings.Contains(sum, "looked at them up to") {
				t.Errorf("summary lacks %q or the note %q:\n%s", tc.alpha, tc.note, sum)
			}
			if tc.wantLog != "" && !strings.Contains(r.stdout.String(), tc.wantLog) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, r.stdout.String())
			}
		})
	}
}

// TestGateTakesMatrixBudget: matrix's manifest gives the pairs it would run
// at most (-k); no more come, so the action's head-run budget is the same
// (gate.json's params), and the same test blocks. A k no matrix writes
// leaves the manifest unused.
func TestGateTakesMatrixBudget(t *testing.T) {
	for _, tc := range []struct {
		k       int
		want    string
		wantLog string
	}{
		{5, `"max_runs": 5,`, ""},
		{0, `"max_runs": 20,`, ""},
		{500, `"max_runs": 20,`, "flakegate-matrix.json not used: k 500: want 0 to 100"},
	} {
		t.Run(fmt.Sprint(tc.k), func(t *testing.T) {
			_, r := matrixResults(t, 5, 5, fmt.Sprintf(`{"base":{"rev":"origin/main","sha":"%s"},"head":{"rev":"h","sha":"%s"},"looks":1,"k":%d}`, baseSHA, headSHA, tc.k))
			if code := r.run(); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, r.stdout.String())
			}
			b, err := os.ReadFile(filepath.Join(r.env["GITHUB_WORKSPACE"], "flakegate-report", "gate.json"))
			if err != nil || !strings.Contains(string(b), tc.want) {
				t.Errorf("gate.json lacks %s (%v)", tc.want, err)
			}
			if tc.wantLog != "" && !strings.Contains(r.stdout.String(), tc.wantLog) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, r.stdout.String())
			}
		})
	}
}

// matrixResults is a pull_request run of the action on flakegate matrix's
// files in the workspace: pairs runs a side, test_login failing in fails
// head runs, and matrix's manifest beside them.
func matrixResults(t *testing.T, pairs, fails int, manifest string) (*ghfake.Repo, *runner) {
	t.Helper()
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName),
		map[string]string{"base-results": "results/base-*.xml", "head-results": "results/head-*.xml", "upload-artifact": "false"})
	dir := filepath.Join(r.env["GITHUB_WORKSPACE"], "results")
	writeSide(t, dir, "base", "", pairs, nil)
	writeSide(t, dir, "head", "", pairs, map[string]int{"test_login": fails})
	if err := os.WriteFile(filepath.Join(dir, model.MatrixManifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, r
}
