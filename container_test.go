package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/demo"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// containerVersion is what the test stamps into the binary, as the release
// workflow stamps the tag.
const containerVersion = "v0.0.0-container-test"

// TestContainer runs the binary as GitHub runs the action's container, as
// closely as a test without a container engine can: the binary built by the
// Dockerfile's own go build line, in a root file system laid out like the
// final image (no shell, no libc, nothing of the host), entered with chroot,
// with the runner's mounts, environment and inputs, against the fake GitHub
// on loopback. It runs the weekly report and then a pull request's gate,
// and checks the step outputs, the job summary, the comment, the uploaded
// artifact, the exit codes, and that nothing was written outside /github.
//
// chroot needs root. CI runs as root, and .ci/run sets
// FLAKEGATE_REQUIRE_CHROOT=1 so that the test fails there instead of
// skipping.
func TestContainer(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("FLAKEGATE_REQUIRE_CHROOT") == "1" {
			t.Fatal("TestContainer needs root for chroot, and FLAKEGATE_REQUIRE_CHROOT=1 says it must run here")
		}
		t.Skip("TestContainer needs root for chroot (CI runs as root; sudo go test -run TestContainer . runs it here)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("TestContainer needs Linux: the image is linux/amd64 and linux/arm64")
	}
	root := t.TempDir()
	buildLikeDockerfile(t, filepath.Join(root, "flakegate"))
	layoutImage(t, root)
	before := listFiles(t, root)

	// The runner's mounts.
	for _, d := range []string{"github/workspace", "github/home", "github/workflow", "github/file_commands", "github/runner_temp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	s := ghfake.New(t) // on loopback: the chroot shares the host's network
	now := time.Now().UTC().Truncate(time.Second)
	sc, err := demo.Load(s, now)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("version", func(t *testing.T) {
		out, code := runInRoot(t, root, []string{"/flakegate", "version"}, []string{"PATH=/usr/local/bin:/usr/bin:/bin"})
		if code != 0 || strings.TrimSpace(out) != "flakegate "+containerVersion {
			t.Errorf("flakegate version: exit %d, %q; want %q (the Dockerfile's -X must name the version variable)", code, out, "flakegate "+containerVersion)
		}
	})

	// Report mode on the scheduled run: history from the run artifacts.
	env, files := runnerEnv(t, root, s, sc.ReportRun.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{
		"mode": "report", "workflows": "ci.yml",
	})
	log, code := runInRoot(t, root, []string{"/flakegate"}, env)
	if code != 0 {
		t.Fatalf("report: exit %d, want 0\n%s", code, log)
	}
	out := readOutputs(t, root, files.output)
	// Paths are relative to the workspace: the later steps that read
	// them run outside the container, where /github/workspace is not.
	if out["verdict"] != "pass" || out["flaky-count"] != "3" || out["report-dir"] != "flakegate-report" ||
		out["report-json"] != "flakegate-report/report.json" || out["summary-path"] != "flakegate-report/summary.md" {
		t.Errorf("report outputs = %v", out)
	}
	summary := readFile(t, root, files.summary)
	if copied := readFile(t, root, "/github/workspace/"+out["summary-path"]); copied != summary {
		t.Errorf("summary-path holds:\n%s\nthe job summary:\n%s", copied, summary)
	}
	for _, want := range []string{"## flakegate report", "**3 flaky tests**", "test\\_payment\\_times\\_out\\_under\\_load", "Infrastructure failures excluded"} {
		if !strings.Contains(summary, want) {
			t.Errorf("report summary lacks %q:\n%s", want, summary)
		}
	}
	for _, f := range []string{"report.json", "report.html", "report.md", "report.csv", "history.json.gz"} {
		if _, err := os.Stat(filepath.Join(root, "github/workspace/flakegate-report", f)); err != nil {
			t.Errorf("report-dir: %v", err)
		}
	}
	if ups := s.Uploads(); len(ups) != 1 || ups[0].Name != "flakegate-report" {
		t.Errorf("uploads after the report = %d, want the flakegate-report artifact", len(ups))
	}

	// Gate mode on the pull request: K base and head runs in the
	// workspace, history from the artifacts and the report just uploaded.
	if err := sc.WriteResults(filepath.Join(root, "github/workspace/results")); err != nil {
		t.Fatal(err)
	}
	env, files = runnerEnv(t, root, s, sc.GateRun.ID, "pull_request", demo.PREvent(), map[string]string{
		"mode": "gate", "workflows": "ci.yml", "base-results": "results/base-*.xml", "head-results": "results/head-*.xml", "check-run": "true",
	})
	log, code = runInRoot(t, root, []string{"/flakegate"}, env)
	if code != 1 {
		t.Fatalf("gate: exit %d, want 1 (block)\n%s", code, log)
	}
	out = readOutputs(t, root, files.output)
	if out["verdict"] != "block" || out["blocking-count"] != "1" || out["report-json"] != "flakegate-report/gate.json" {
		t.Errorf("gate outputs = %v", out)
	}
	summary = readFile(t, root, files.summary)
	if !strings.Contains(summary, "flakegate: block") || !strings.Contains(summary, "test\\_total\\_includes\\_tax") {
		t.Errorf("gate summary:\n%s", summary)
	}
	comments := sc.Repo.Comments(demo.PR)
	if len(comments) != 1 || !strings.HasPrefix(comments[0].Body, "## ❌ flakegate: block") || !strings.Contains(comments[0].Body, "test\\_total\\_includes\\_tax") {
		t.Errorf("comments on #%d = %+v", demo.PR, comments)
	}
	if runs := sc.Repo.CheckRuns(); len(runs) == 0 || runs[len(runs)-1].Conclusion != "failure" {
		t.Errorf("check runs = %+v", runs)
	}
	if !strings.Contains(log, "::error ") || !strings.Contains(log, "::add-mask::"+ghfake.Token) {
		t.Errorf("gate log has no error annotation or no mask:\n%s", log)
	}

	// Nothing outside the mounts changed: no file in /tmp, none beside the
	// binary, no host path.
	after := listFiles(t, root)
	var outside []string
	for _, p := range after {
		if p != "github" && !strings.HasPrefix(p, "github/") && !slices.Contains(before, p) {
			outside = append(outside, p)
		}
	}
	if len(outside) > 0 {
		t.Errorf("the action wrote outside /github: %v", outside)
	}
	if tmp, _ := os.ReadDir(filepath.Join(root, "tmp")); len(tmp) > 0 {
		t.Errorf("the action left files in /tmp: %v", tmp)
	}
}

// buildLikeDockerfile builds the binary with the Dockerfile's go build
// line: its environment (CGO_ENABLED=0, GOOS/GOARCH of the target), its
// flags (-trimpath, -ldflags with the version), the version stamped.
func buildLikeDockerfile(t *testing.T, dst string) {
	t.Helper()
	d := readDockerBuild(t)
	vars := map[string]string{"TARGETOS": runtime.GOOS, "TARGETARCH": runtime.GOARCH, "VERSION": containerVersion}
	env := os.Environ()
	for _, e := range d.Env {
		env = append(env, expand(t, e, vars))
	}
	var args []string
	for i := 0; i < len(d.Args); i++ {
		a := expand(t, d.Args[i], vars)
		if a == "-o" && i+1 < len(d.Args) {
			args = append(args, "-o", dst)
			i++
			continue
		}
		args = append(args, a)
	}
	if !slices.Contains(args, dst) {
		t.Fatalf("Dockerfile build line has no -o: %q", d.Line)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// layoutImage lays out what gcr.io/distroless/static-debian12 holds that a
// program can touch: CA certificates, /etc/passwd and /etc/group with root
// and nonroot, /etc/nsswitch.conf, home directories, and a /tmp with mode
// 1777. Like the image, it has no shell, no libc and no package manager.
// Its tzdata is left out: flakegate works in UTC, and a missing zone would
// only make this test stricter.
func layoutImage(t *testing.T, root string) {
	t.Helper()
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("the host's CA bundle (the image has Debian's at the same path): %v", err)
	}
	files := map[string]string{
		"etc/ssl/certs/ca-certificates.crt": string(ca),
		"etc/passwd":                        "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"etc/group":                         "root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n",
		"etc/nsswitch.conf":                 "hosts: files dns\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"root", "home/nonroot"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"bin/sh", "bin/bash", "usr/bin/env"} {
		if _, err := os.Lstat(filepath.Join(root, sh)); err == nil {
			t.Fatalf("the image root has %s", sh)
		}
	}
}

type fileCommands struct{ output, summary string }

// runnerEnv is the environment the runner gives a container action, with
// the paths inside the container: every input of action.yml (its default,
// or the value given; hyphens kept), GITHUB_*, RUNNER_*, the runtime token
// and URLs, HOME, CI and GITHUB_ACTIONS, and the image's own ENV (PATH and
// SSL_CERT_FILE of distroless). It writes the event file and creates the
// file-command files, named as the runner names them.
func runnerEnv(t *testing.T, root string, s *ghfake.Server, runID int64, event string, payload any, inputs map[string]string) ([]string, fileCommands) {
	t.Helper()
	ev, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "github/workflow/event.json"), ev, 0o644); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", runID, time.Now().UnixNano()&0xffffffffffff)
	fc := map[string]string{}
	for _, name := range []string{"set_output", "step_summary", "set_env", "add_path", "save_state"} {
		fc[name] = "/github/file_commands/" + name + "_" + id
		if err := os.WriteFile(filepath.Join(root, fc[name]), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{}
	for name, def := range actionInputs(t) {
		if def == "${{ github.token }}" {
			def = ghfake.Token // the runner evaluates the expression
		}
		env["INPUT_"+strings.ToUpper(strings.ReplaceAll(name, " ", "_"))] = def
	}
	for k, v := range inputs {
		key := "INPUT_" + strings.ToUpper(k)
		if _, ok := env[key]; !ok {
			t.Fatalf("input %q is not declared in action.yml", k)
		}
		env[key] = v
	}
	ref, refName := "refs/heads/main", "main"
	if event == "pull_request" {
		ref, refName = fmt.Sprintf("refs/pull/%d/merge", demo.PR), fmt.Sprintf("%d/merge", demo.PR)
		env["GITHUB_HEAD_REF"], env["GITHUB_BASE_REF"] = "cart-tax", "main"
	} else {
		env["GITHUB_HEAD_REF"], env["GITHUB_BASE_REF"] = "", ""
	}
	api := strings.TrimSuffix(s.URL, "/")
	for k, v := range map[string]string{
		// The image's ENV (distroless static).
		"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
		// docker run -e ... as the runner's container action handler sets them.
		"HOME": "/github/home", "CI": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_JOB": "flakegate", "GITHUB_REF": ref, "GITHUB_REF_NAME": refName, "GITHUB_REF_TYPE": "branch", "GITHUB_REF_PROTECTED": "false",
		"GITHUB_SHA": ghfake.SHA("merge"), "GITHUB_REPOSITORY": demo.Repository, "GITHUB_REPOSITORY_OWNER": "acme",
		"GITHUB_REPOSITORY_ID": "123456", "GITHUB_REPOSITORY_OWNER_ID": "654321",
		"GITHUB_RUN_ID": strconv.FormatInt(runID, 10), "GITHUB_RUN_NUMBER": "7", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_RETENTION_DAYS": "90",
		"GITHUB_ACTOR": "octocat", "GITHUB_ACTOR_ID": "583231", "GITHUB_TRIGGERING_ACTOR": "octocat",
		"GITHUB_WORKFLOW": "flakegate", "GITHUB_WORKFLOW_REF": demo.Repository + "/.github/workflows/flakegate.yml@" + ref, "GITHUB_WORKFLOW_SHA": ghfake.SHA("merge"),
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": "/github/workflow/event.json",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": api, "GITHUB_GRAPHQL_URL": api + "/graphql",
		"GITHUB_WORKSPACE": "/github/workspace", "GITHUB_ACTION": "__flakegate_flakegate", "GITHUB_ACTION_REPOSITORY": "flakegate/flakegate", "GITHUB_ACTION_REF": "v1",
		"GITHUB_OUTPUT": fc["set_output"], "GITHUB_STEP_SUMMARY": fc["step_summary"], "GITHUB_ENV": fc["set_env"], "GITHUB_PATH": fc["add_path"], "GITHUB_STATE": fc["save_state"],
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_NAME": "GitHub Actions 2", "RUNNER_ENVIRONMENT": "github-hosted",
		"RUNNER_TEMP": "/github/runner_temp", "RUNNER_TOOL_CACHE": "/opt/hostedtoolcache", "RUNNER_WORKSPACE": "/home/runner/work/shop",
		"ACTIONS_RUNTIME_URL": s.ResultsURL, "ACTIONS_RUNTIME_TOKEN": s.RuntimeTokenFor(demo.Repository, runID), "ACTIONS_RESULTS_URL": s.ResultsURL,
	} {
		env[k] = v
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	slices.Sort(list)
	return list, fileCommands{output: fc["set_output"], summary: fc["step_summary"]}
}

// actionInputs reads every input declared in action.yml with its default
// ("" when it has none).
func actionInputs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Inputs map[string]struct {
			Default *string `yaml:"default"`
		} `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if len(doc.Inputs) == 0 {
		t.Fatal("action.yml declares no inputs")
	}
	out := map[string]string{}
	for name, in := range doc.Inputs {
		out[name] = ""
		if in.Default != nil {
			out[name] = *in.Default
		}
	}
	return out
}

// runInRoot starts argv[0] inside root with chroot, in /github/workspace
// (the runner's --workdir), with exactly env, and returns its combined
// output and exit code.
func runInRoot(t *testing.T, root string, argv, env []string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: "/", Stdout: &out, Stderr: &out,
		SysProcAttr: &syscall.SysProcAttr{Chroot: root}}
	if _, err := os.Stat(filepath.Join(root, "github/workspace")); err == nil {
		cmd.Dir = "/github/workspace"
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("chroot %s %v: %v", root, argv, err)
	}
	defer func() {
		t.Logf("%v in the chroot: %v from start to exit", argv, time.Since(start).Round(time.Millisecond))
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("%v: %v", argv, err)
		}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v: timed out\n%s", argv, out.String())
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// readOutputs parses a GITHUB_OUTPUT file (inside root) as the runner does.
func readOutputs(t *testing.T, root, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(readFile(t, root, path), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var v []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				v = append(v, lines[i])
			}
			if i == len(lines) {
				t.Errorf("GITHUB_OUTPUT: %s<<%s has no closing delimiter", name, delim)
			}
			out[name] = strings.Join(v, "\n")
		} else if name, v, ok := strings.Cut(lines[i], "="); ok {
			out[name] = v
		}
	}
	return out
}

func readFile(t *testing.T, root, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listFiles lists every path under root, relative, sorted.
func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
