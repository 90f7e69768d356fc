package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/synth"
)

// TestMain lets a test run this binary's main as a separate process, the
// way the runner starts the container's entrypoint.
func TestMain(m *testing.M) {
	if os.Getenv("FLAKEGATE_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestBinaryRunsTheAction starts the binary with no arguments and
// GITHUB_ACTIONS=true, the runner's environment (hyphenated INPUT_*
// variables, an event file, file commands in a directory), and local results
// in the workspace. It must run the report, write the step outputs and the
// summary, and upload the report artifact.
func TestBinaryRunsTheAction(t *testing.T) {
	s := ghfake.New(t)
	dir := t.TempDir()
	ws, fc, wf := filepath.Join(dir, "workspace"), filepath.Join(dir, "file_commands"), filepath.Join(dir, "workflow")
	for _, d := range []string{ws, fc, wf} {
		os.MkdirAll(d, 0o755)
	}
	spec := synth.Sample()
	if _, err := spec.WriteDir(filepath.Join(ws, "results")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wf, "event.json"), []byte(`{"schedule": "0 6 * * 1"}`), 0o644)

	env := []string{"FLAKEGATE_TEST_RUN_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home")}
	for _, in := range config.Inputs() {
		v := in.Default
		switch in.Name {
		case "github-token":
			v = "" // local results only: no API call
		case "results":
			v = "results/*.xml"
		case "lookback-days":
			v = "400"
		}
		env = append(env, "INPUT_"+strings.ToUpper(in.Name)+"="+v)
	}
	run := s.Repo("acme/shop").AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule"})
	env = append(env,
		"GITHUB_ACTIONS=true", "CI=true", "GITHUB_EVENT_NAME=schedule", "GITHUB_EVENT_PATH="+filepath.Join(wf, "event.json"),
		"GITHUB_REPOSITORY=acme/shop", "GITHUB_REPOSITORY_OWNER=acme", "GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main",
		"GITHUB_SHA="+ghfake.SHA("x"), fmt.Sprintf("GITHUB_RUN_ID=%d", run.ID), "GITHUB_RUN_ATTEMPT=1",
		"GITHUB_WORKFLOW_REF=acme/shop/.github/workflows/flakegate.yml@refs/heads/main",
		"GITHUB_WORKSPACE="+ws, "GITHUB_OUTPUT="+filepath.Join(fc, "set_output"), "GITHUB_STEP_SUMMARY="+filepath.Join(fc, "step_summary"),
		"GITHUB_API_URL="+strings.TrimSuffix(s.URL, "/"), "GITHUB_SERVER_URL=https://github.com", "GITHUB_RETENTION_DAYS=30",
		"ACTIONS_RUNTIME_TOKEN="+s.RuntimeTokenFor("acme/shop", run.ID), "ACTIONS_RUNTIME_URL="+s.ResultsURL, "ACTIONS_RESULTS_URL="+s.ResultsURL,
	)
	cmd := exec.Command(os.Args[0]) // no arguments, as the runner starts the entrypoint
	cmd.Env, cmd.Dir = env, ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("action process: %v\n%s", err, out)
	}
	outputs, _ := os.ReadFile(filepath.Join(fc, "set_output"))
	for _, want := range []string{"verdict<<", "\npass\n", "flaky-count<<", "\n3\n", "report-json<<"} {
		if !strings.Contains(string(outputs), want) {
			t.Errorf("outputs lack %q:\n%s", want, outputs)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(fc, "step_summary"))
	if !strings.Contains(string(summary), "test\\_payment\\_times\\_out\\_under\\_load") {
		t.Errorf("summary:\n%s", summary)
	}
	if !strings.Contains(string(out), "::group::") || !strings.Contains(string(out), "uploaded artifact flakegate-report") {
		t.Errorf("log:\n%s", out)
	}
	ups := s.Uploads()
	if len(ups) != 1 {
		t.Fatalf("uploads = %d", len(ups))
	}
	files, _ := ups[0].Files()
	var rep struct {
		FlakyCount int `json:"flaky_count"`
	}
	if err := json.Unmarshal(files["report.json"], &rep); err != nil || rep.FlakyCount != 3 {
		t.Errorf("uploaded report: %v, flaky_count %d", err, rep.FlakyCount)
	}
	if _, err := os.Stat(filepath.Join(ws, "flakegate-report", "report.html")); err != nil {
		t.Errorf("report-dir: %v", err)
	}
}
