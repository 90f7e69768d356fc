package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestOverflowAfterTheSummary: report mode, more than 10 warnings while
// reading (12 files that are not JUnit), then the check run cannot be
// created (a read-only token). The runner drops annotations over its caps,
// and the summary was written before the check run: the 403 must still be
// in the log and in the summary.
func TestOverflowAfterTheSummary(t *testing.T) {
	s := newFake(t)
	s.Repo(repoName)
	self := s.Repo(repoName).AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1", "repository": map[string]any{"full_name": repoName, "default_branch": "main"}},
		map[string]string{"results": "results/*.xml", "check-run": "true"})
	r.env["INPUT_GITHUB-TOKEN"] = ghfake.ReadOnlyToken
	ws := r.env["GITHUB_WORKSPACE"]
	os.MkdirAll(filepath.Join(ws, "results"), 0o755)
	os.WriteFile(filepath.Join(ws, "results", "good.xml"), junitRun(ghfake.SHA("c1"), 1, map[string]bool{"test_login": true}), 0o644)
	for i := range 12 {
		os.WriteFile(filepath.Join(ws, "results", fmt.Sprintf("bad-%02d.xml", i)), []byte("not xml at all <"), 0o644)
	}
	r.run()
	out, sum := r.stdout.String(), r.summary()
	if !strings.Contains(out, "Resource not accessible") || !strings.Contains(sum, "Resource not accessible") {
		t.Errorf("the check run's failure (403) is not in both the log and the summary\nLOG:\n%s\nSUMMARY:\n%s", out, sum)
	}
	for i := range 12 {
		if name := fmt.Sprintf("bad-%02d.xml", i); !strings.Contains(out, name) || !strings.Contains(sum, name) {
			t.Errorf("%s is not named in both the log and the summary", name)
		}
	}
}

// TestOverflowOnError: gate mode fails with "no head results (12 input(s)
// left out, listed above)": all 12 are listed in the log, though the
// runner shows only 10 warnings, and the summary says the error and lists
// the other 2.
func TestOverflowOnError(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"base-results": "results/base/*.xml", "head-results": "results/head/*.xml"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, nil)
	os.MkdirAll(filepath.Join(ws, "results/head"), 0o755)
	for i := range 12 {
		os.WriteFile(filepath.Join(ws, "results/head", fmt.Sprintf("head-%02d.xml", i)), []byte("<testsuite><testcase"), 0o644)
	}
	if code := r.run(); code != 1 {
		t.Fatalf("exit %d", code)
	}
	log, sum := r.stdout.String(), r.summary()
	for i := range 12 {
		if !strings.Contains(log, fmt.Sprintf("head-%02d.xml", i)) {
			t.Errorf("head-%02d.xml is not listed in the log", i)
		}
	}
	// The annotations show the first 10; the summary says the error and
	// lists the rest.
	for _, want := range []string{"## flakegate: error", "none of the 12 files could be read", "2 more messages", "head-10.xml", "head-11.xml"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the summary does not say %q:\n%s", want, sum)
		}
	}
}

// TestOverflowInTheIssue: 120 files that are not JUnit, with long names:
// the tracking issue's body has room under GitHub's limit, and keeps the
// messages over the log's caps (as many as fit, and how many more the log
// has) rather than dropping them all.
func TestOverflowInTheIssue(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	addHistory(t, repo, 0, 25)
	bad := map[string][]byte{}
	for i := 0; i < 120; i++ {
		bad[fmt.Sprintf("reports/%03d-%s.xml", i, strings.Repeat("n", 250))] = []byte("not xml at all")
	}
	run := repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA("x"), CreatedAt: now.Add(-3600e9)})
	repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-results", Files: bad})
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: now})
	r := newRunner(t, s, self.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{"lookback-days": "7", "tracking-issue": "true", "upload-artifact": "false"})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	sum := r.summary()
	if !strings.Contains(sum, "more messages (over GitHub's annotation limits)") {
		t.Errorf("the summary does not list the messages over the caps")
	}
	is := repo.Issues()
	if len(is) != 1 {
		t.Fatalf("%d issues", len(is))
	}
	body := is[0].Body
	if !strings.Contains(body, "more messages") || len(body) > issueBudget {
		t.Errorf("issue body is %d bytes of a %d-byte budget, without the messages over the caps", len(body), issueBudget)
	}
}
