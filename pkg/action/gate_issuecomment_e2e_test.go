package action

import (
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestGateLeavesOutIssueCommentRuns: as
// TestGateLeavesOutPullRequestTargetRuns, with issue_comment runs (a
// "/retest" bot that checks out another PR's head): GitHub gives them the
// default branch's tip as head_sha too, here the base commit, and they
// turned this PR's regression of test_login into an inconclusive pass.
func TestGateLeavesOutIssueCommentRuns(t *testing.T) {
	for _, polluted := range []bool{false, true} {
		s := newFake(t)
		repo := gateRepo(t, s, repoName)
		for i := 0; i < 5; i++ {
			b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-time.Duration(10-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(b.ID), nil)}})
			h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
			repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(headSHA, int(h.ID), map[string]bool{"test_login": true})}})
			if polluted {
				o := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "issue_comment", HeadSHA: baseSHA, HeadBranch: "other-fix", HeadRepo: "mallory/shop", CreatedAt: now.Add(-time.Duration(7-i) * time.Hour)})
				repo.AddArtifact(ghfake.Artifact{RunID: o.ID, Name: "junit-results", Files: map[string][]byte{"junit.xml": junitRun(baseSHA, int(o.ID), map[string]bool{"test_login": true})}})
			}
		}
		self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
		r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"check-run": "false"})
		code := r.run()
		out := r.outputs()
		t.Logf("issue_comment runs on the base commit: %v → exit %d, verdict %s", polluted, code, out["verdict"])
		if code != 1 || out["verdict"] != "block" {
			i := strings.Index(r.summary(), "test_login")
			t.Errorf("a regression of test_login did not block (verdict %s) once issue_comment runs (a /retest bot testing another PR) were read as base runs:\n%s", out["verdict"], r.summary()[max(0, i-200):min(len(r.summary()), i+600)])
		}
	}
}
