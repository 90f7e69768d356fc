// Package demo runs flakegate's action on a bundled scenario with no GitHub
// and no network: the project's fake GitHub (ghfake) serves main's CI
// history and a pull request on loopback, and the action's own entry point,
// action.Run, runs the weekly report and then the PR gate against it with
// the environment the runner would give a container action. What a user
// would see (the PR comment, the job summaries, the HTML report) is written
// into a folder, Markdown and HTML side by side.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/action"
	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// File is one file the demo wrote.
type File struct {
	Path string // absolute
	What string
}

// Step is what one run of the action left: its exit code, step outputs,
// job summary and log.
type Step struct {
	Exit    int
	Outputs map[string]string
	Summary string
	Log     string
}

// Result is what the demo produced.
type Result struct {
	Report, Gate Step
	// Comment is the sticky comment the gate posted on the pull request,
	// as the fake GitHub stored it.
	Comment string
	// CheckRun is the check run's conclusion ("" when none was created).
	CheckRun string
	Files    []File
}

// Run runs the scenario and writes its outputs into out, which is created
// if missing. Files of an earlier demo in out are overwritten.
func Run(ctx context.Context, out string) (*Result, error) {
	if out == "" {
		return nil, errors.New("demo: no output folder")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	// The runner's side of the job (workspace, event file, file commands,
	// temp) lives in a temporary folder; only what a user sees goes to out.
	job, err := os.MkdirTemp("", "flakegate-demo-job-")
	if err != nil {
		return nil, fmt.Errorf("job folder: %w", err)
	}
	defer os.RemoveAll(job)

	s := ghfake.Start()
	defer s.Close()
	s.SetClock(func() time.Time { return Now })
	sc, err := Load(s, Now)
	if err != nil {
		return nil, err
	}
	repo := sc.Repo

	res := &Result{}
	// Step 1: the weekly report.
	res.Report, err = runStep(ctx, s, job, "report", sc.ReportRun.ID, "schedule", map[string]any{"schedule": "0 6 * * 1"}, map[string]string{
		"mode": "report", "workflows": historyWorkflow, "report-dir": filepath.Join(out, "report"),
	})
	if err != nil {
		return nil, err
	}
	// Step 2: the pull request's gate, on the K base and head repetitions
	// an earlier step of its job ran.
	if err := sc.WriteResults(filepath.Join(job, "gate", "workspace", "results")); err != nil {
		return nil, err
	}
	res.Gate, err = runStep(ctx, s, job, "gate", sc.GateRun.ID, "pull_request", PREvent(), map[string]string{
		"mode": "gate", "workflows": historyWorkflow, "report-dir": filepath.Join(out, "gate"),
		"base-results": "results/base-*.xml", "head-results": "results/head-*.xml", "check-run": "true",
	})
	if err != nil {
		return nil, err
	}
	if v := s.Violations(); len(v) > 0 {
		return nil, fmt.Errorf("the fake GitHub saw %d requests or responses outside GitHub's OpenAPI description, first: %v", len(v), v[0])
	}
	comments := repo.Comments(PR)
	if len(comments) != 1 {
		return nil, fmt.Errorf("the gate left %d comments on pull request #%d, want one sticky comment; its log:\n%s", len(comments), PR, res.Gate.Log)
	}
	res.Comment = comments[0].Body
	if runs := repo.CheckRuns(); len(runs) > 0 {
		res.CheckRun = runs[len(runs)-1].Conclusion
	}

	write := func(name, what string, data []byte) error {
		p := filepath.Join(out, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		res.Files = append(res.Files, File{Path: p, What: what})
		return nil
	}
	for _, f := range []struct {
		name, title, what, md string
	}{
		{"comment", fmt.Sprintf("flakegate: comment on %s#%d", Repository, PR), fmt.Sprintf("the sticky comment on pull request #%d", PR), res.Comment},
		{"summary-report", "flakegate: weekly report job summary", "the weekly report's job summary", res.Report.Summary},
		{"summary-gate", "flakegate: gate job summary", "the gate's job summary", res.Gate.Summary},
	} {
		if err := write(f.name+".md", f.what+" (Markdown)", []byte(f.md)); err != nil {
			return nil, err
		}
		if err := write(f.name+".html", f.what+" as HTML (GitHub-flavoured Markdown; mermaid charts and alerts stay as text)", HTML(f.title, f.md)); err != nil {
			return nil, err
		}
	}
	for _, st := range []struct {
		name string
		step Step
	}{{"report", res.Report}, {"gate", res.Gate}} {
		if err := write(st.name+".log", "the "+st.name+" step's log", []byte(st.step.Log)); err != nil {
			return nil, err
		}
	}
	reportHTML := filepath.Join(out, "report", "report.html")
	if _, err := os.Stat(reportHTML); err != nil {
		return nil, fmt.Errorf("the report step wrote no HTML report: %w", err)
	}
	res.Files = append(res.Files, File{Path: reportHTML, What: "the weekly report (HTML; JSON, CSV and Markdown beside it)"})
	return res, nil
}

// runStep runs action.Run once with the environment the runner gives a
// container action: every input of action.yml present with its default
// unless the step sets it, hyphens kept, the event file, the file commands
// and the GITHUB_* context.
func runStep(ctx context.Context, s *ghfake.Server, job, name string, runID int64, event string, payload any, inputs map[string]string) (Step, error) {
	dir := filepath.Join(job, name)
	for _, d := range []string{"workspace", "workflow", "file_commands", "home", "runner_temp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return Step{}, err
		}
	}
	ev, err := json.Marshal(payload)
	if err != nil {
		return Step{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "workflow", "event.json"), ev, 0o644); err != nil {
		return Step{}, err
	}
	env := map[string]string{}
	for _, in := range config.Inputs() {
		env["INPUT_"+strings.ToUpper(in.Name)] = in.Default
	}
	env["INPUT_GITHUB-TOKEN"] = ghfake.Token // the runner evaluates ${{ github.token }}
	for k, v := range inputs {
		env["INPUT_"+strings.ToUpper(k)] = v
	}
	ref := "refs/heads/main"
	if event == "pull_request" {
		ref = fmt.Sprintf("refs/pull/%d/merge", PR)
	}
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "CI": "true", "HOME": filepath.Join(dir, "home"),
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": filepath.Join(dir, "workflow", "event.json"),
		"GITHUB_REPOSITORY": Repository, "GITHUB_REPOSITORY_OWNER": "acme", "GITHUB_SHA": baseSHA, "GITHUB_REF": ref,
		"GITHUB_WORKFLOW": "flakegate", "GITHUB_WORKFLOW_REF": Repository + "/.github/workflows/" + selfWorkflow + "@" + ref,
		"GITHUB_RUN_ID": strconv.FormatInt(runID, 10), "GITHUB_RUN_ATTEMPT": "1", "GITHUB_RUN_NUMBER": "7", "GITHUB_JOB": "flakegate", "GITHUB_ACTOR": "octocat",
		"GITHUB_API_URL": strings.TrimSuffix(s.URL, "/"), "GITHUB_SERVER_URL": "https://github.com", "GITHUB_GRAPHQL_URL": s.URL + "graphql",
		"GITHUB_WORKSPACE": filepath.Join(dir, "workspace"),
		"GITHUB_OUTPUT":    filepath.Join(dir, "file_commands", "set_output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "file_commands", "step_summary"),
		"GITHUB_RETENTION_DAYS": "90", "RUNNER_TEMP": filepath.Join(dir, "runner_temp"), "RUNNER_OS": "Linux",
		"ACTIONS_RUNTIME_TOKEN": s.RuntimeTokenFor(Repository, runID), "ACTIONS_RUNTIME_URL": s.ResultsURL, "ACTIONS_RESULTS_URL": s.ResultsURL,
		"SOURCE_DATE_EPOCH": strconv.FormatInt(Now.Unix(), 10),
	} {
		env[k] = v
	}
	if event == "pull_request" {
		env["GITHUB_HEAD_REF"], env["GITHUB_BASE_REF"], env["GITHUB_REF_NAME"] = "cart-tax", "main", fmt.Sprintf("%d/merge", PR)
	} else {
		env["GITHUB_REF_NAME"] = "main"
	}
	var log bytes.Buffer
	code := action.Run(ctx, action.Env{
		Getenv:     func(k string) string { return env[k] },
		Stdout:     &log,
		HTTPClient: loopbackClient(),
		Now:        func() time.Time { return Now },
	})
	st := Step{Exit: code, Log: log.String()}
	outputs, err := os.ReadFile(env["GITHUB_OUTPUT"])
	if err != nil {
		return st, fmt.Errorf("%s step (exit %d) wrote no step outputs: %w; its log:\n%s", name, code, err, st.Log)
	}
	st.Outputs = parseOutputs(string(outputs))
	if st.Outputs["verdict"] == "error" {
		return st, fmt.Errorf("%s step failed (verdict error); its log:\n%s", name, st.Log)
	}
	summary, err := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	if err != nil {
		return st, fmt.Errorf("%s step wrote no job summary: %w", name, err)
	}
	st.Summary = string(summary)
	return st, nil
}

// loopbackClient is the demo's HTTP client: no proxy, and a dialer that
// refuses anything but loopback addresses, so the demo cannot reach the
// network even by mistake.
func loopbackClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("demo: refusing to dial %s: the demo talks only to its fake GitHub on loopback", addr)
			}
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// parseOutputs reads a GITHUB_OUTPUT file as the runner does: NAME=value
// lines and NAME<<DELIM blocks.
func parseOutputs(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var v []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				v = append(v, lines[i])
			}
			out[name] = strings.Join(v, "\n")
		} else if name, v, ok := strings.Cut(lines[i], "="); ok {
			out[name] = v
		}
	}
	return out
}
