package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestMergeGroupLedgerChanges: a pull request changes the ledger and
// passes its own gate, with its approval label and declaration: it adds an
// entry for a test flaky on base, or fixes the last quarantined flake and
// deletes the file. In the merge queue the queue's commit was judged again
// with no labels and no PR body: "growth without the label" or "freeze set
// changes, not declared", and the queue blocked. The queue's commit is
// gated with the base's ledger on both sides.
func TestMergeGroupLedgerChanges(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, head string // the ledger file at each commit; "" for none
	}{
		{"an approved entry added", "version: 1\nentries: []\n", ledgerYAML},
		{"the ledger deleted", ledgerYAML, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			repo := s.Repo(repoName)
			mergeSHA := ghfake.SHA("queue")
			repo.SetFile(baseSHA, ".github/flaky-ledger.yml", []byte(tc.base))
			if tc.head != "" {
				repo.SetFile(mergeSHA, ".github/flaky-ledger.yml", []byte(tc.head))
			}
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
			if code := r.run(); code != 0 || r.outputs()["verdict"] != "pass" || strings.Contains(r.summary(), "growth") || strings.Contains(r.summary(), "freeze-set") {
				t.Errorf("exit %d, verdict %q; want 0, pass\n%s", code, r.outputs()["verdict"], r.summary())
			}
		})
	}
}
