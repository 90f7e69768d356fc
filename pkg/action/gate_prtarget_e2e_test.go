package action

import (
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestGateLeavesOutRunsOfOtherCode: both sides are read from run
// artifacts, and ci.yml also runs on pull_request_target (for forks, with
// secrets, checking out the PR's head), on issue_comment (a "/retest" bot
// checking out a PR) or on workflow_run. GitHub gives those runs the
// default branch's tip as head_sha, here the base commit, though they
// tested another PR's code, in which test_login is broken. The gate leaves
// them out and blocks this PR's regression of test_login. Before, they were
// base runs: test_login was "flaky base, broken head", the verdict
// inconclusive, and the step passed (exit 0).
func TestGateLeavesOutRunsOfOtherCode(t *testing.T) {
	for _, event := range []string{"", "pull_request_target", "issue_comment", "workflow_run"} {
		s := newFake(t)
		repo := gateRepo(t, s, repoName)
		for i := 0; i < 5; i++ {
			b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), nil)}})
			h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), map[string]bool{"test_login": true})}})
			if event != "" {
				o := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: event, HeadSHA: baseSHA, HeadBranch: "other-fix", HeadRepo: "mallory/shop", CreatedAt: now.Add(-time.Duration(7-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: o.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(o.ID), map[string]bool{"test_login": true})}})
			}
		}
		self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"check-run": "false"})
		code := r.run()
		out := r.outputs()
		t.Logf("%q runs on the base commit → exit %d, verdict %s", event, code, out["verdict"])
		if code != 1 || out["verdict"] != "block" {
			i := strings.Index(r.summary(), "test_login")
			t.Errorf("a regression of test_login did not block (verdict %s) once other code's %s runs were read as base runs:\n%s", out["verdict"], event, r.summary()[max(0, i-200):min(len(r.summary()), i+600)])
		}
	}
}
