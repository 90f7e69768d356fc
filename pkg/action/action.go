// Package action runs flakegate as a GitHub Action: configuration, then
// each stage in a log group, then outputs and the exit code. It wires the
// stages together and does no scoring or rendering of its own.
package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/render"
)

// Env is what the action takes from its process; tests pass a map-backed
// Getenv and fakes.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	// HTTPClient reaches the GitHub API; nil means a default client.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// GhapiOptions tune retries (tests shorten the waits).
	GhapiOptions ghapi.Options
	// GeminiBaseURL points the AI section at a fake; "" is Google's.
	GeminiBaseURL string
}

// outcome is what a mode produced: the step's outputs and exit code.
type outcome struct {
	verdict                        string // pass, block, inconclusive
	tests, failed, flaky           int
	blocking, inconclusive         []string // test names (and property checks)
	invalid                        []string // tests red on base: attribution undefined
	jsonPath, commentURL, checkURL string
	exit                           int
}

// verdictJSON is the verdict-json output.
type verdictJSON struct {
	Verdict      string   `json:"verdict"`
	Tests        int      `json:"tests"`
	Failed       int      `json:"failed"`
	Flaky        int      `json:"flaky"`
	Blocking     []string `json:"blocking"`
	Inconclusive []string `json:"inconclusive"`
	// Invalid are the tests red on base, whose attribution is undefined:
	// they make a verdict inconclusive that no undecided test does.
	Invalid   []string `json:"invalid,omitempty"`
	Truncated bool     `json:"truncated,omitempty"` // a list holds its first maxOutputNames names
}

// maxOutputNames bounds each list of verdict-json: GitHub caps a job's
// outputs at 1 MB, and a verdict can block tens of thousands of tests.
const maxOutputNames = 100

// outputNames are the first maxOutputNames of names for verdict-json, each
// on one line without control or invisible characters (render.Plain): a
// later step that prints them (`jq -r '.blocking[]'`) would otherwise send
// a name's "\n::add-mask::…" to the runner as a workflow command.
func outputNames(names []string) []string {
	out := make([]string, 0, min(len(names), maxOutputNames))
	for _, n := range names[:min(len(names), maxOutputNames)] {
		n = render.Plain(n)
		if strings.HasPrefix(n, "::") {
			// An empty classname and suite give "::name": printed alone,
			// "::add-mask::x" is a command; a backslash keeps it text, as
			// the log's guard does.
			n = `\` + n
		}
		out = append(out, n)
	}
	return out
}

// outputs are the step outputs, in action.yml's order.
func (o outcome) outputs(reportDir, summaryPath string) [][2]string {
	v := verdictJSON{Verdict: o.verdict, Tests: o.tests, Failed: o.failed, Flaky: o.flaky,
		Blocking: outputNames(o.blocking), Inconclusive: outputNames(o.inconclusive), Invalid: outputNames(o.invalid),
		Truncated: len(o.blocking) > maxOutputNames || len(o.inconclusive) > maxOutputNames || len(o.invalid) > maxOutputNames}
	js, _ := json.Marshal(v) // strings and ints only: cannot fail
	return [][2]string{
		{"verdict", o.verdict},
		{"tests-count", strconv.Itoa(o.tests)},
		{"failed-count", strconv.Itoa(o.failed)},
		{"flaky-count", strconv.Itoa(o.flaky)},
		{"blocking-count", strconv.Itoa(len(o.blocking))},
		{"inconclusive-count", strconv.Itoa(len(o.inconclusive))},
		{"verdict-json", string(js)},
		{"comment-url", o.commentURL},
		{"check-url", o.checkURL},
		{"summary-path", summaryPath},
		{"report-dir", reportDir},
		{"report-json", o.jsonPath},
	}
}

// Run runs the action and returns the exit code: 0 when the verdict lets
// the check pass, 1 when it blocks or flakegate failed. The verdict output
// tells the two apart: pass, block, inconclusive, skipped or error.
func Run(ctx context.Context, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	log := publish.NewLog(env.Stdout, env.Getenv)
	masked := map[string]bool{}
	mask := func(secrets []string) {
		for _, s := range secrets {
			if !masked[s] {
				masked[s] = true
				log.Mask(s)
			}
		}
	}
	mask(config.Secrets(env.Getenv))
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		log.Errorf("flakegate: configuration: %v", err)
		// In the job summary too, where a run's errors are read: the
		// annotation alone was easy to miss among the workflow's.
		if _, serr := publish.AppendSummary(env.Getenv("GITHUB_STEP_SUMMARY"),
			"## flakegate: configuration error\n\n"+render.EscapeMarkdown(render.Truncate(err.Error(), 4000))+"\n"); serr != nil {
			log.Warningf("job summary: %v", serr)
		}
		fail(log, env.Getenv("GITHUB_OUTPUT"), "", "")
		return 1
	}
	mask(cfg.Secrets())
	for _, n := range cfg.Notices {
		log.Noticef("%s", n)
	}
	for _, w := range cfg.Warnings {
		log.Warningf("%s", w)
	}
	a := &run{cfg: cfg, log: log, env: env, reportDir: reportDir(cfg)}
	if ws := cfg.GitHub.Workspace; ws != "" && filepath.IsAbs(a.forLaterSteps(a.reportDir)) && !within(cfg.GitHub.RunnerTemp, a.reportDir) {
		// The action runs in a container: a directory outside the
		// workspace goes with it, or, where the runner mounts it
		// (runner_temp), is another path for the steps after.
		log.Warningf("report-dir %s is outside the workspace (%s): this step runs in a container, so the steps after it do not find the reports there, nor at the report-dir and report-json outputs; give a directory relative to the workspace", a.reportDir, ws)
	}
	if t := cfg.GitHub.RunnerTemp; t != "" {
		// Downloads spool there; a runner makes it, a bare container may not.
		if err := os.MkdirAll(t, 0o700); err != nil {
			log.Warningf("RUNNER_TEMP %s: %v; large artifacts will be left out", t, err)
		}
	}
	var out outcome
	switch cfg.Mode {
	case config.ModeGate:
		out, err = a.gate(ctx)
	default:
		out, err = a.report(ctx)
	}
	if err != nil {
		log.Errorf("flakegate: %v", err)
		if cfg.Mode == config.ModeGate && cfg.CheckRun {
			a.errorCheckRun(ctx, err)
		}
		a.appendSummary("## flakegate: error\n\n" + render.EscapeMarkdown(render.Truncate(err.Error(), 4000)) + "\n")
		a.flushOverflow()
		fail(log, cfg.GitHub.Output, a.forLaterSteps(a.reportDir), "")
		return 1
	}
	a.flushOverflow()
	summaryPath := ""
	if err := a.writeFiles(map[string][]byte{SummaryFile: []byte(a.summaryCopy.String())}); err != nil {
		log.Warningf("the copy of the job summary in report-dir: %v", err)
	} else {
		summaryPath = a.forLaterSteps(filepath.Join(a.reportDir, SummaryFile))
	}
	out.jsonPath = a.forLaterSteps(out.jsonPath)
	if err := publish.WriteOutputs(cfg.GitHub.Output, out.outputs(a.forLaterSteps(a.reportDir), summaryPath)); err != nil {
		log.Errorf("flakegate: step outputs: %v", err)
		return 1
	}
	return out.exit
}

// errorCheckRunTimeout bounds the error check run's requests.
const errorCheckRunTimeout = 5 * time.Second

// errorCheckRun reports a gate that could not reach a verdict as a failed
// check run on the head commit: where the check run is the required check
// (a fork's workflow_run, whose job's own status lands on the default
// branch), the pull request would otherwise wait for it forever.
func (a *run) errorCheckRun(ctx context.Context, cause error) {
	sha := a.cfg.HeadSHA
	if sha == "" {
		return
	}
	// Also when the run was cancelled: the check run is what the pull
	// request waits for. A few seconds of the runner's grace period.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), errorCheckRunTimeout)
	defer cancel()
	c, err := a.client()
	if err == nil {
		msg := "flakegate could not reach a verdict: " + render.EscapeMarkdown(render.Truncate(cause.Error(), 2000))
		if u := a.runURL(); u != "" {
			msg += "\n\nThe log is in [this run](" + u + ")."
		}
		var url string
		url, err = publish.CheckRun(ctx, orNil[publish.CheckRunner](c), a.repo(), ghapi.CheckRunSpec{
			Name: a.cfg.CheckName, HeadSHA: sha, Status: "completed", Conclusion: "failure", DetailsURL: a.runURL(),
			Title: "flakegate: error", Summary: msg})
		if err == nil {
			a.log.Infof("check run %q: %s", a.cfg.CheckName, url)
			return
		}
	}
	a.log.Warningf("check run for the error: %v", err)
}

// fail records verdict=error so a workflow can tell a broken tool from a
// blocking verdict.
func fail(log *publish.Log, outputPath, dir, summary string) {
	if outputPath == "" {
		return
	}
	if err := publish.WriteOutputs(outputPath, outcome{verdict: "error"}.outputs(dir, summary)); err != nil {
		log.Errorf("flakegate: step outputs: %v", err)
	}
}

// run carries one invocation's state across stages.
type run struct {
	cfg       *config.Config
	log       *publish.Log
	env       Env
	gh        *ghapi.Client
	reportDir string
	// summary is what the run appended to the job summary, kept for the
	// copy in report-dir that summary-path names.
	summaryCopy strings.Builder
	// shown is how many of log.Overflow the job summary holds.
	shown int
}

// appendSummary appends text to the job summary and to the run's copy of it.
func (a *run) appendSummary(text string) {
	wrote, err := publish.AppendSummary(a.cfg.GitHub.StepSummary, text)
	if err != nil {
		a.log.Warningf("job summary: %v", err)
		wrote = render.Truncate(text, max(0, publish.MaxSummaryBytes-a.summaryCopy.Len()))
	}
	a.summaryCopy.WriteString(wrote) // the copy in report-dir is what the summary holds
}

// SummaryFile is the copy of the job summary in report-dir: the step's own
// summary file is the runner's, at a path inside the action's container.
const SummaryFile = "summary.md"

// forLaterSteps is path as the workflow's later steps reach it: relative
// to the workspace when it lies inside it. Those steps run outside the
// action's container, which sees the workspace at /github/workspace, and
// start in the workspace, as actions/upload-artifact resolves paths.
func (a *run) forLaterSteps(path string) string {
	ws := a.cfg.GitHub.Workspace
	if path == "" || ws == "" {
		return path
	}
	rel, err := filepath.Rel(ws, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

// within reports whether path is dir or under it. The runner mounts its
// temporary directory into the container (runner.temp): a report-dir
// there is where the steps after find it, at ${{ runner.temp }}/….
func within(dir, path string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// reportDir resolves the report-dir input against the workspace.
func reportDir(cfg *config.Config) string {
	d := cfg.ReportDir
	if !filepath.IsAbs(d) && cfg.GitHub.Workspace != "" {
		d = filepath.Join(cfg.GitHub.Workspace, d)
	}
	return d
}

func (a *run) repo() ghapi.Repo {
	return ghapi.Repo{Owner: a.cfg.GitHub.Owner, Name: a.cfg.GitHub.Repo}
}

// client returns the GitHub client, creating it on first use.
func (a *run) client() (*ghapi.Client, error) {
	if a.gh != nil {
		return a.gh, nil
	}
	if !a.cfg.GitHubToken.IsSet() {
		return nil, fmt.Errorf("input github-token is empty: the GitHub API is needed for this step")
	}
	c, err := ghapi.New(a.cfg.GitHubToken.Value(), a.cfg.GitHub.APIURL, a.env.HTTPClient, a.env.GhapiOptions)
	if err != nil {
		return nil, err
	}
	a.gh = c
	return c, nil
}

// api is the GitHub client when there is a token, else nil: the stages
// that can do without the API (local results) take nil.
func (a *run) api() (*ghapi.Client, error) {
	if !a.cfg.GitHubToken.IsSet() {
		return nil, nil
	}
	return a.client()
}

// stage runs f inside a log group.
func (a *run) stage(title string, f func() error) error {
	end := a.log.Group(title)
	defer end()
	return f()
}

// optional runs a stage whose failure does not fail the step (the comment,
// the check run, the upload, …): the failure is logged once, as a warning
// naming the stage, and the step goes on.
func (a *run) optional(title string, f func() error) {
	if err := a.stage(title, f); err != nil {
		a.log.Warningf("%s: %v", title, err)
	}
}

// writeFiles writes the report files into the report directory.
func (a *run) writeFiles(files map[string][]byte) error {
	if err := a.checkReportDir(); err != nil {
		return err
	}
	if err := os.MkdirAll(a.reportDir, 0o755); err != nil {
		return fmt.Errorf("report-dir: %w", err)
	}
	for name, b := range files {
		p := filepath.Join(a.reportDir, name)
		// A file committed as a symbolic link would redirect the write.
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("report-dir: %s exists and is not a regular file (%s): flakegate does not write through it", p, fi.Mode().Type())
		}
		if err := writeWhole(p, b); err != nil {
			return fmt.Errorf("report-dir: %w", err)
		}
	}
	return nil
}

// writeWhole writes b to p by a temporary file renamed into place, so that
// a step cancelled mid-write leaves the old file or the new one, never
// half of one.
func writeWhole(p string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// checkReportDir refuses a report-dir in the workspace reached through a
// symbolic link, or that is not a directory: a pull request can commit one
// in its checkout.
func (a *run) checkReportDir() error {
	ws := a.cfg.GitHub.Workspace
	if ws == "" {
		return nil
	}
	rel, err := filepath.Rel(filepath.Clean(ws), filepath.Clean(a.reportDir))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// An absolute report-dir outside the workspace is the workflow
		// author's explicit choice (config refuses a relative one climbing
		// out of it); nothing of the pull request's lies on that path.
		return nil
	}
	p := filepath.Clean(ws)
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("report-dir: %w", err)
		}
		if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
			return fmt.Errorf("report-dir: %s is a symbolic link or not a directory: flakegate does not write through it", p)
		}
	}
	return nil
}
