package action

import (
	"testing"

	"github.com/flakegate/flakegate/pkg/config"
)

// TestBranches pins which branch each mode reads history and the last
// report from.
func TestBranches(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		input, deflt, refName string
		baseRef               string
		wantGate, wantReport  string
	}{
		{name: "branch input wins", input: "release", deflt: "main", refName: "fix", baseRef: "main", wantGate: "release", wantReport: "release"},
		{name: "the PR's base, the default branch", deflt: "main", refName: "42/merge", baseRef: "stable", wantGate: "stable", wantReport: "main"},
		{name: "no PR: the default branch", deflt: "main", refName: "fix", wantGate: "main", wantReport: "main"},
		{name: "nothing named: the ref for a report only", refName: "main", wantGate: "", wantReport: "main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &run{cfg: &config.Config{Branch: tc.input, DefaultBranch: tc.deflt, GitHub: config.GitHub{RefName: tc.refName}}}
			if got := a.baseBranch(pr{baseRef: tc.baseRef}); got != tc.wantGate {
				t.Errorf("gate reads %q, want %q", got, tc.wantGate)
			}
			if got := a.reportBranch(); got != tc.wantReport {
				t.Errorf("report reads %q, want %q", got, tc.wantReport)
			}
		})
	}
}
