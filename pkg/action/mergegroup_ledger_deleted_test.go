package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestMergeGroupLedgerDeleted: a pull request fixes the last
// quarantined flake and deletes .github/flaky-ledger.yml (declared, its
// entry released: the test ran clean on head), and passes its own gate.
// In the queue the head has no ledger, so `in.HeadLedger != nil` is false,
// the base's ledger is not used on both sides, and the removal is judged
// again without the PR's body: a freeze-set change, not declared.
func TestMergeGroupLedgerDeleted(t *testing.T) {
	s := newFake(t)
	repo := s.Repo(repoName)
	mergeSHA := ghfake.SHA("queue")
	repo.SetFile(baseSHA, ".github/flaky-ledger.yml", []byte(ledgerYAML))
	self := repo.AddRun(ghfake.Run{Workflow: "gate.yml", Event: "merge_group", HeadSHA: mergeSHA, CreatedAt: now})
	payload := map[string]any{"action": "checks_requested", "merge_group": map[string]any{
		"head_sha": mergeSHA, "head_ref": "refs/heads/gh-readonly-queue/main/pr-42-" + headSHA,
		"base_sha": baseSHA, "base_ref": "refs/heads/main"},
		"repository": map[string]any{"full_name": repoName, "default_branch": "main"}}
	r := newRunner(t, s, self.ID, "merge_group", payload, map[string]string{
		"base-results": "results/base/*.xml", "head-results": "results/head/*.xml", "check-run": "true", "upload-artifact": "false"})
	ws := r.env["GITHUB_WORKSPACE"]
	writeSide(t, filepath.Join(ws, "results/base"), "base", baseSHA, 5, map[string]int{"test_ws_reconnect": 2})
	writeSide(t, filepath.Join(ws, "results/head"), "head", mergeSHA, 5, nil)
	if code := r.run(); code != 0 || r.outputs()["verdict"] != "pass" {
		t.Errorf("exit %d, verdict %q; want 0, pass\n%s", code, r.outputs()["verdict"], r.summary())
	}
	if strings.Contains(r.summary(), "freeze set") {
		t.Logf("summary mentions the freeze set")
	}
}
