package action

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// driftRun is a run's JUnit of the tests named, test_gone among them only
// when with is set.
func driftRun(sha string, run int, with bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0"?><testsuite name="tests"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`, sha, run)
	names := []string{"test_list", "test_login"}
	if with {
		names = append(names, "test_gone")
	}
	for _, n := range names {
		fmt.Fprintf(&b, `<testcase classname="tests.test_app" name="%s"/>`, n)
	}
	b.WriteString(`</testsuite>`)
	return []byte(b.String())
}

// TestGateArtifactsBaseMovedOn: the gate reads both sides from CI's
// artifacts. The pull request's base.sha is main's tip when it was opened;
// main then removed test_gone (in every later run of ci.yml on main), and
// the branch took main in. A clean head lacks test_gone as main does now:
// the removal is main's, not the patch's.
func TestGateArtifactsBaseMovedOn(t *testing.T) {
	s := newFake(t)
	repo := gateRepo(t, s, "")
	b := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: baseSHA, CreatedAt: now.Add(-72 * time.Hour)})
	repo.AddArtifact(ghfake.Artifact{RunID: b.ID, Name: "junit", Files: map[string][]byte{"junit.xml": driftRun(baseSHA, int(b.ID), true)}})
	for i := range 6 {
		sha := ghfake.SHA(fmt.Sprint("main-", i))
		m := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "push", HeadSHA: sha, CreatedAt: now.Add(-time.Duration(60-i) * time.Hour)})
		repo.AddArtifact(ghfake.Artifact{RunID: m.ID, Name: "junit", Files: map[string][]byte{"junit.xml": driftRun(sha, int(m.ID), false)}})
	}
	for i := range 3 {
		h := repo.AddRun(ghfake.Run{Workflow: "ci.yml", Event: "pull_request", HeadBranch: "fix", HeadSHA: headSHA, PullRequests: []int{42}, CreatedAt: now.Add(-time.Duration(5-i) * time.Hour)})
		repo.AddArtifact(ghfake.Artifact{RunID: h.ID, Name: "junit", Files: map[string][]byte{"junit.xml": driftRun(headSHA, int(h.ID), false)}})
	}
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "pull_request", HeadSHA: headSHA, CreatedAt: now})
	r := newRunner(t, s, self.ID, "pull_request", prPayload(repoName), map[string]string{"workflows": "ci.yml"})
	if code := r.run(); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.summary())
	}
	if got := gateTest(t, r, "tests.test_app::test_gone"); got.Decision != "pass" {
		t.Errorf("test_gone: %q, want pass (removed on the base branch)\n%s", got.Decision, r.summary())
	}
	if sum := r.summary(); strings.Contains(sum, "test-count") || !strings.Contains(sum, "1 test(s) of the base runs were removed on the base branch after the base commit") {
		t.Errorf("the test-count property counts a test main removed, or the summary does not say it was main's:\n%s", sum)
	}
}
