package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/ledger"
)

// TestExamples keeps the quickstarts in examples/ and the README's
// workflow pasteable: actionlint
// (in .ci/run) checks them as workflows but cannot see this action's
// inputs, so this test checks what it cannot. Every flakegate step sets
// only inputs action.yml declares; every workflow states its permissions
// and grants what its flakegate steps use (checks: write for a check run,
// pull-requests: write for the comment, issues: write for the tracking
// issue, actions: read for artifacts); every job that runs flakegate
// matrix checks out the whole history and installs flakegate first.
func TestExamples(t *testing.T) {
	inputs := actionInputs(t)
	paths, err := filepath.Glob("examples/*.yml")
	if err != nil || len(paths) < 4 {
		t.Fatalf("examples: %v, %d workflows", err, len(paths))
	}
	// The README's workflow, the first YAML block of "As a GitHub Action",
	// is checked as the examples are.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## As a GitHub Action")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README: no workflow in its section As a GitHub Action")
	}
	paths = append(paths, "README.md")
	type step struct {
		If   string            `yaml:"if"`
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
	}
	type job struct {
		Permissions map[string]string `yaml:"permissions"`
		Steps       []step            `yaml:"steps"`
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if p == "README.md" {
				b = []byte(block)
			}
			if err != nil {
				t.Fatal(err)
			}
			var wf struct {
				Permissions map[string]string `yaml:"permissions"`
				Jobs        map[string]job    `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(b, &wf); err != nil {
				t.Fatal(err)
			}
			if len(wf.Permissions) == 0 {
				t.Error("no top-level permissions: state them")
			}
			for name, j := range wf.Jobs {
				perms := wf.Permissions
				if j.Permissions != nil {
					perms = j.Permissions // a job's permissions replace the workflow's
				}
				installed, fullHistory := false, false
				for _, s := range j.Steps {
					if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["fetch-depth"] == "0" {
						fullHistory = true
					}
					if strings.Contains(s.Run, "go install github.com/flakegate/flakegate@v") {
						installed = true
					}
					if strings.Contains(s.Run, "flakegate matrix ") && (!installed || !fullHistory) {
						t.Errorf("job %s runs flakegate matrix without installing it first (%v) or without fetch-depth: 0 (%v)", name, installed, fullHistory)
					}
					// go test replays a cached pass: every repetition of a
					// run, and a history job whose cache is restored, would
					// read the same result.
					if (strings.Contains(s.Run, "go test") || strings.Contains(s.Run, "gotestsum")) && !strings.Contains(s.Run, "-count=1") {
						t.Errorf("job %s runs Go's tests without -count=1: %q", name, s.Run)
					}
					if !strings.HasPrefix(s.Uses, "flakegate/flakegate@") {
						continue
					}
					// A gate after other steps runs when they failed too:
					// a skipped gate posts no check run, and a PR whose
					// required check is that check run waits forever.
					if s.With["mode"] == "gate" && !strings.Contains(s.If, "!cancelled()") {
						t.Errorf("job %s: the gate step needs if: ${{ !cancelled() }}", name)
					}
					need := map[string]string{"contents": "read", "actions": "read"}
					for k, v := range s.With {
						if _, ok := inputs[k]; !ok {
							t.Errorf("job %s: input %q is not declared in action.yml", name, k)
						}
						switch {
						case k == "check-run" && v == "true":
							need["checks"] = "write"
						case k == "tracking-issue" && v == "true":
							need["issues"] = "write"
						}
					}
					if s.With["mode"] != "report" && s.With["comment"] != "off" && s.With["comment"] != "false" {
						need["pull-requests"] = "write"
					}
					for k, v := range need {
						if perms[k] != v {
							t.Errorf("job %s: permission %s is %q, want %q for its flakegate step", name, k, perms[k], v)
						}
					}
				}
			}
		})
	}
}

// TestReadmeLedgerVerifies: the ledger entry the README shows how to write
// passes ledger verify.
func TestReadmeLedgerVerifies(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## The quarantine ledger")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README: no ledger in its section The quarantine ledger")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "   "))
	}
	if ps := ledger.VerifyFile("README.md", []byte(strings.Join(lines, "\n")), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)); len(ps) > 0 {
		t.Errorf("the README's ledger does not verify: %v", ps)
	}
}
