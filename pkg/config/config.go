// Package config turns the environment of a GitHub Actions container step —
// the INPUT_* variables, the GITHUB_* context and the event file — into a
// validated Config. It neither logs nor calls the network: every bad input is
// reported, all at once, before any API call.
//
// Inputs are read with go-envconfig through go-githubactions' GetInput, so
// "lookback-days" comes from INPUT_LOOKBACK-DAYS, trimmed. The runner sets
// every declared input, to "" when it has no value: an empty input means the
// default, and the defaults equal those of action.yml (see Inputs).
package config

import (
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/internal/glob"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/score"
)

// Mode is what the action does.
type Mode string

const (
	// ModeAuto picks ModeGate for a pull request's event — pull_request,
	// pull_request_target, or a workflow_run whose triggering run was started
	// by one (forks included) — and for a merge queue's (merge_group), and
	// ModeReport for every other event (schedule, workflow_dispatch, push, …).
	ModeAuto Mode = "auto"
	// ModeReport scores and ranks flaky tests over recent runs.
	ModeReport Mode = "report"
	// ModeGate compares a PR's base and head and blocks what the patch caused.
	ModeGate Mode = "gate"
)

// Bounds on inputs, with their source.
const (
	// maxLookbackDays: GitHub keeps artifacts and logs at most 400 days
	// (private repositories; 90 for public ones).
	maxLookbackDays = 400
	// maxRuns: GitHub: the list-workflow-runs endpoint returns at most 1,000
	// results when filtered.
	maxRuns = 1000
	// maxAnnotations caps max-annotations: each takes room in the check run.
	maxAnnotations = 1000
	// maxLabelChars: GitHub rejects label names over 50 characters.
	maxLabelChars = 50
)

// Config is a validated action configuration. Field comments name the input.
// Lists come from inputs separated by newlines or commas, with blank entries
// dropped.
type Config struct {
	// RequestedMode is the mode input as given: auto, report or gate.
	RequestedMode Mode
	// Mode is the resolved mode: ModeReport or ModeGate, never ModeAuto.
	Mode Mode

	GitHubToken Secret // github-token; see Secrets

	// Workflows (workflows) are workflow file names ("ci.yml") or numeric
	// workflow ids whose runs are read; empty means every workflow. A path
	// such as ".github/workflows/ci.yml" is reduced to its file name.
	Workflows []string
	// Branch (branch) is the branch whose runs are read. "" means the
	// repository's default branch (DefaultBranch); in gate mode, the PR's
	// base branch.
	Branch string
	// DefaultBranch is the repository's default branch as the runner's
	// context tells it: the event's repository.default_branch, or, for a
	// schedule event (which runs on the default branch), GITHUB_REF_NAME.
	// "" when neither says.
	DefaultBranch string
	// LookbackDays (lookback-days) and MaxRuns (max-runs) bound the runs read.
	LookbackDays int
	MaxRuns      int
	// ArtifactPatterns (artifact-pattern) are globs (pkg/internal/glob) matched
	// case-insensitively against artifact names; see MatchArtifact.
	ArtifactPatterns []string

	// Local JUnit XML globs, relative to the workspace; "**" matches any
	// number of directories. Results (results): in report mode, when set, these
	// are analysed instead of downloading run artifacts. BaseResults and
	// HeadResults (base-results, head-results): the K repetitions on the PR's
	// base and head. History (history): earlier base-branch results used to
	// estimate the baseline failure rate p0; when empty, gate mode reads the
	// JUnit artifacts of recent runs of Workflows on the base branch instead.
	// Either way the history carried in the last report artifact is added.
	Results     []string
	BaseResults []string
	HeadResults []string
	History     []string

	// Threshold (threshold) in [0,1]: a test is flaky when its score reaches it.
	Threshold float64
	// MinCommits (min-commits) ≥ 1: commits a test needs before it is ranked.
	MinCommits int
	// InfraThreshold (infra-threshold) in (0,1]: a run in which at least this
	// fraction of the tests failed is an infrastructure failure, excluded from
	// flakiness detection and reported apart.
	InfraThreshold float64
	// P1, Alpha, Beta (p1, alpha, beta) parametrise Wald's SPRT: H1 is "the
	// test fails with rate P1" (a regression), α and β its error rates.
	// P1 is in (0.5,1), so that every baseline rate p0 ≤ 0.5 the gate can
	// judge lies below it; α and β are in (0,1) with α+β < 1, which makes the
	// bounds A = ln((1−β)/α) > 0 > B = ln(β/(1−α)).
	P1, Alpha, Beta float64
	// AlphaPR (alpha-pr) in (0,1) bounds the chance that a PR that changes
	// nothing is blocked, over all its tests together.
	AlphaPR float64
	// OnInconclusive (on-inconclusive) decides what an undecided SPRT does.
	OnInconclusive gate.Policy

	// LedgerPath (ledger-path): the quarantine ledger, relative to the
	// repository root, cleaned, never outside it.
	LedgerPath string
	// ProtectedPaths (protected-paths): globs of repository paths whose edits
	// need a declaration (the DeclarationLabel, or a declaration in the PR
	// body). "**" matches any number of directories, "**/" also none.
	ProtectedPaths []string
	// AllowNewProtected (protected-new-files: allow): new files under a
	// protected path need no declaration, but those a pattern names.
	AllowNewProtected bool
	// ApprovalLabel (approval-label) lets the ledger grow.
	ApprovalLabel string
	// DeclarationLabel (declaration-label) declares edits to protected paths
	// and to the ledger's freeze set.
	DeclarationLabel string

	// Comment (comment) says when the sticky PR comment is posted:
	// always, changes, failures or off; true and false mean always and
	// off.
	Comment  publish.CommentMode
	CheckRun bool // check-run: also create a check run with annotations
	// CheckName (check-name) names the check run; CommentTag (comment-tag,
	// default the check name) tells this step's comment, tracking issue and
	// artifact from another flakegate step's in the same PR or run.
	CheckName, CommentTag string
	// MaxAnnotations (max-annotations) caps the check run's annotations.
	MaxAnnotations      int
	UploadArtifact      bool // upload-artifact: upload ArtifactName from inside the action
	TrackingIssue       bool // tracking-issue: keep a tracking issue of flaky tests (report mode)
	FailOnExpiredLedger bool // fail-on-expired-ledger: an expired ledger entry fails the gate

	// ArtifactName (artifact-name) is the report artifact's name.
	ArtifactName string
	// ReportDir (report-dir) is where reports are written: relative to the
	// workspace (never above it) or absolute.
	ReportDir string

	GeminiAPIKey Secret // gemini-api-key: AI root causes run only when it is set
	GeminiModel  string // gemini-model, without any "models/" prefix

	// GitHub is the runner's context.
	GitHub GitHub
	// Event is the parsed event file.
	Event Event
	// PullRequest is the PR under test, or nil when the event is not a pull
	// request's. See PullRequest for what workflow_run leaves out.
	PullRequest *PullRequest
	// HeadSHA is the commit under evaluation: the PR's head.sha (never the
	// merge commit in GITHUB_SHA), the triggering run's head_sha for
	// workflow_run, otherwise GITHUB_SHA.
	HeadSHA string

	// Notices are inputs that were set but do not apply in the resolved mode,
	// for the caller to print (::notice::) so nothing is ignored silently.
	Notices []string
	// Warnings are what this configuration will leave unread or lose, for
	// the caller to print (::warning::): an empty github-token where the
	// step can run without the API but reads less.
	Warnings []string
}

// Load reads and validates the configuration from getenv (os.Getenv in the
// action, a map in tests). It reads the event file named by
// GITHUB_EVENT_PATH, and does nothing else outside the process.
//
// Every problem is collected: the error joins one *InputError per bad input
// and one *EnvError per bad runner variable or event field. No error ever
// contains a secret. On error the Config is nil; call Secrets(getenv) first to
// mask the secrets whatever Load returns.
func Load(getenv func(string) string) (*Config, error) {
	action := githubactions.New(githubactions.WithGetenv(getenv))
	raw, err := readInputs(action)
	if err != nil {
		return nil, err
	}
	gh, ghErr := readGitHub(getenv)
	ev, evErr := readEvent(gh.EventName, gh.EventPath)

	v := &validator{}
	c := &Config{
		GitHub:      gh,
		Event:       ev,
		PullRequest: pullRequestOf(ev),
	}
	c.GitHubToken = v.secret("github-token", raw.GitHubToken)
	c.GeminiAPIKey = v.secret("gemini-api-key", raw.GeminiAPIKey)
	c.RequestedMode = Mode(v.oneOf("mode", raw.Mode, string(ModeAuto), string(ModeReport), string(ModeGate)))
	c.Workflows = v.workflows("workflows", raw.Workflows)
	c.Branch = v.branch("branch", raw.Branch)
	c.LookbackDays = v.integer("lookback-days", raw.LookbackDays, 1, maxLookbackDays)
	c.MaxRuns = v.integer("max-runs", raw.MaxRuns, 1, maxRuns)
	c.ArtifactPatterns = v.globs("artifact-pattern", raw.ArtifactPattern)
	c.Results = v.localGlobs("results", raw.Results)
	c.BaseResults = v.localGlobs("base-results", raw.BaseResults)
	c.HeadResults = v.localGlobs("head-results", raw.HeadResults)
	c.History = v.localGlobs("history", raw.History)
	c.Threshold = v.number("threshold", raw.Threshold)
	c.MinCommits = v.integer("min-commits", raw.MinCommits, 1, math.MaxInt32)
	c.InfraThreshold = v.number("infra-threshold", raw.InfraThreshold)
	c.P1 = v.number("p1", raw.P1)
	c.Alpha = v.number("alpha", raw.Alpha)
	c.Beta = v.number("beta", raw.Beta)
	c.AlphaPR = v.number("alpha-pr", raw.AlphaPR)
	c.OnInconclusive = gate.Policy(raw.OnInconclusive)
	c.LedgerPath = v.repoPath("ledger-path", raw.LedgerPath)
	c.ProtectedPaths = v.globs("protected-paths", raw.ProtectedPaths)
	if strings.TrimSpace(raw.ProtectedPaths) == "none" {
		c.ProtectedPaths = []string{} // no path: the edits need no declaration
	}
	c.AllowNewProtected = v.oneOf("protected-new-files", raw.ProtectedNewFiles, "declare", "allow") == "allow"
	c.ApprovalLabel = v.label("approval-label", raw.ApprovalLabel)
	c.DeclarationLabel = v.label("declaration-label", raw.DeclarationLabel)
	c.Comment = v.commentMode("comment", raw.Comment)
	c.CheckRun = v.boolean("check-run", raw.CheckRun)
	c.CheckName = v.checkName("check-name", raw.CheckName)
	c.CommentTag = v.tag("comment-tag", raw.CommentTag, c.CheckName)
	c.MaxAnnotations = v.integer("max-annotations", raw.MaxAnnotations, 0, maxAnnotations)
	c.UploadArtifact = v.boolean("upload-artifact", raw.UploadArtifact)
	c.TrackingIssue = v.boolean("tracking-issue", raw.TrackingIssue)
	c.FailOnExpiredLedger = v.boolean("fail-on-expired-ledger", raw.FailOnExpiredLedger)
	c.ArtifactName = v.artifactName("artifact-name", raw.ArtifactName)
	c.ReportDir = v.reportDir("report-dir", raw.ReportDir)
	c.GeminiModel = v.model("gemini-model", raw.GeminiModel)

	// The stages own their options' ranges; the command line checks the
	// same ones.
	raws := map[string]string{"threshold": raw.Threshold, "min-commits": raw.MinCommits, "infra-threshold": raw.InfraThreshold,
		"p1": raw.P1, "alpha": raw.Alpha, "beta": raw.Beta, "alpha-pr": raw.AlphaPR, "on-inconclusive": raw.OnInconclusive,
		"protected-paths": raw.ProtectedPaths}
	v.options(raws, c.ScoreOptions().Validate())
	v.options(raws, c.GateOptions().Check())
	v.inInputOrder()
	// Checks that depend on the event come last, and are skipped when the
	// event file is at fault, so its error is not followed by echoes.
	derived := &validator{}
	if evErr == nil {
		c.resolve(derived)
	}

	if err := errors.Join(append(append(v.errs, ghErr, evErr), derived.errs...)...); err != nil {
		return nil, err
	}
	return c, nil
}

// resolve settles the mode, the commit under evaluation, and what needs the
// GitHub API.
func (c *Config) resolve(v *validator) {
	c.Mode = c.RequestedMode
	if c.Mode == ModeAuto {
		c.Mode = ModeReport
		if c.Event.FromPullRequest() || c.Event.MergeGroup != nil {
			c.Mode = ModeGate
		}
	}

	c.DefaultBranch = c.Event.DefaultBranch
	if c.DefaultBranch == "" && c.Event.Name == EventSchedule {
		// GitHub runs scheduled workflows on the default branch.
		c.DefaultBranch = c.GitHub.RefName
	}

	switch {
	case c.PullRequest != nil:
		c.HeadSHA = c.PullRequest.HeadSHA
	case c.Event.WorkflowRun != nil:
		c.HeadSHA = c.Event.WorkflowRun.HeadSHA
	case c.Event.MergeGroup != nil:
		c.HeadSHA = c.Event.MergeGroup.HeadSHA
	default:
		c.HeadSHA = c.GitHub.SHA
	}

	if wr := c.Event.WorkflowRun; c.Mode == ModeGate && wr != nil && wr.Event == EventPullRequestTarget {
		// GitHub gives a pull_request_target run the base branch's tip as
		// its head_sha: looked up by that commit, no open PR is found and
		// the gate would be skipped with exit 0, every time.
		v.fail("mode", string(c.RequestedMode), "gate cannot follow a workflow_run of a pull_request_target run: GitHub sets such a run's head_sha to the base branch's tip, not the pull request's head, so the pull request whose results it holds is unknown; "+
			"run flakegate in the pull_request_target workflow itself (it already has a write token), or start the tests on pull_request and follow that run")
	} else if c.Mode == ModeGate && c.PullRequest == nil && (len(c.BaseResults) == 0 || len(c.HeadResults) == 0) {
		event := c.GitHub.EventName
		if event == "" {
			event = "none"
		}
		v.fail("mode", string(c.RequestedMode), fmt.Sprintf(
			"gate needs a pull request event (pull_request, pull_request_target, or a workflow_run of a pull_request run) "+
				"or both base-results and head-results (a merge_group event needs both: the queue's commit has no run of its own to read); the event is %s", event))
	}

	switch c.Mode {
	case ModeReport:
		if len(c.BaseResults)+len(c.HeadResults)+len(c.History) > 0 {
			c.Notices = append(c.Notices, "base-results, head-results and history are used in gate mode only; the mode is report")
		}
	case ModeGate:
		if len(c.Results) > 0 {
			c.Notices = append(c.Notices, "results is used in report mode only; the mode is gate, which reads base-results and head-results")
		}
		if c.TrackingIssue {
			c.Notices = append(c.Notices, "tracking-issue is used in report mode only; the mode is gate")
		}
	}

	if !c.GitHubToken.IsSet() {
		c.Warnings = append(c.Warnings, c.tokenlessLosses()...)
	}

	reasons := c.apiReasons()
	if len(reasons) == 0 {
		return
	}
	if !c.GitHubToken.IsSet() {
		v.fail("github-token", "", "a token is required because "+strings.Join(reasons, ", and ")+
			"; leave github-token at its default (${{ github.token }}) or pass a token")
	}
	if c.GitHub.Repository == "" { // a malformed one is reported by readGitHub
		v.errs = append(v.errs, &EnvError{Name: "GITHUB_REPOSITORY", Reason: `want "owner/name"; the GitHub API is needed because ` + strings.Join(reasons, ", and ")})
	}
}

// tokenlessLosses says what a step with an empty github-token that needs
// no API call still leaves unread: the last report, and in gate mode the
// base branch's runs. An empty input is not the default here: the runner
// applies ${{ github.token }} only when the input is left out, so "" comes
// from an expression that was empty (a secret that is not set).
func (c *Config) tokenlessLosses() []string {
	const fix = "; leave github-token at its default (${{ github.token }}) or pass a token"
	switch {
	case c.Mode == ModeReport && len(c.Results) > 0:
		s := "github-token is empty: the last report is not read, so this report has no trend"
		if c.UploadArtifact {
			s += ", and its artifact carries only the runs of results: the history the last report carried is not carried on, and the next report does without it"
		}
		return []string{s + fix}
	case c.Mode == ModeGate && c.PullRequest == nil:
		s := "github-token is empty: the history carried in the last report is not read"
		if len(c.History) == 0 {
			s = "github-token is empty: no base-branch runs and no history carried in the last report are read, so each test's baseline failure rate rests on base-results alone"
		}
		return []string{s + fix}
	}
	return nil
}

// apiReasons says why this configuration calls the GitHub API, if it does.
func (c *Config) apiReasons() []string {
	var r []string
	switch c.Mode {
	case ModeReport:
		if len(c.Results) == 0 {
			r = append(r, "mode report with no results input downloads workflow-run artifacts")
		}
		if c.TrackingIssue {
			r = append(r, "tracking-issue is true")
		}
	case ModeGate:
		if c.PullRequest != nil {
			r = append(r, "mode gate reads the pull request's files and base-branch history")
		} else if len(c.BaseResults) == 0 || len(c.HeadResults) == 0 {
			r = append(r, "mode gate with no base-results or head-results downloads runs' artifacts")
		}
	}
	if c.Comment != publish.CommentOff && c.PullRequest != nil && c.Mode == ModeReport {
		r = append(r, "comment is on and there is a pull request")
	}
	if c.CheckRun {
		r = append(r, "check-run is true")
	}
	return r
}

// Secrets returns the non-empty secret values — github-token, gemini-api-key
// and ACTIONS_RUNTIME_TOKEN — for the caller to mask (::add-mask::) before
// printing anything.
func (c *Config) Secrets() []string {
	return nonEmpty(c.GitHubToken.Value(), c.GeminiAPIKey.Value(), c.GitHub.RuntimeToken.Value())
}

// Secrets returns the same values as Config.Secrets straight from the
// environment, valid or not, so they can be masked before Load's errors are
// printed.
func Secrets(getenv func(string) string) []string {
	action := githubactions.New(githubactions.WithGetenv(getenv))
	var out []string
	for _, in := range Inputs() {
		if in.Secret {
			out = append(out, action.GetInput(in.Name))
		}
	}
	return nonEmpty(append(out, strings.TrimSpace(getenv("ACTIONS_RUNTIME_TOKEN")))...)
}

func nonEmpty(vs ...string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// AIEnabled reports whether AI root causes are requested: gemini-api-key is set.
func (c *Config) AIEnabled() bool { return c.GeminiAPIKey.IsSet() }

// Checkout is the repository's checkout, for test files' paths: the
// workspace, where paths tools wrote on the runner name the repository.
func (c *Config) Checkout() model.Checkout {
	return model.Checkout{Root: c.GitHub.Workspace, Name: c.GitHub.Repo}
}

// MatchArtifact reports whether an artifact with this name holds test results:
// it matches one of ArtifactPatterns, without regard to case, and is not the
// report artifact (ArtifactName) itself.
func (c *Config) MatchArtifact(name string) bool {
	name = strings.ToLower(name)
	if strings.HasPrefix(name, strings.ToLower(c.ArtifactName)) {
		return false // this step's report artifact, or another flakegate step's
	}
	for _, p := range c.ArtifactPatterns {
		if glob.Match(strings.ToLower(p), name) {
			return true
		}
	}
	return false
}

// validator parses raw inputs and collects an *InputError per bad one.
type validator struct{ errs []error }

func (v *validator) fail(input, value, reason string) {
	v.errs = append(v.errs, &InputError{Input: input, Value: value, Reason: reason})
}

// secret checks a credential without ever repeating it.
func (v *validator) secret(input, s string) Secret {
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		v.fail(input, "", "contains whitespace or control characters (value not shown); pass the secret alone")
		return Secret{}
	}
	return NewSecret(s)
}

func (v *validator) oneOf(input, s string, allowed ...string) string {
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	v.fail(input, s, "want one of "+strings.Join(allowed, ", "))
	return ""
}

// boolean accepts the YAML 1.2 core-schema booleans, as actions/toolkit's
// getBooleanInput does: true | True | TRUE | false | False | FALSE.
func (v *validator) boolean(input, s string) bool {
	switch s {
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	v.fail(input, s, "want a YAML 1.2 core-schema boolean: true | True | TRUE | false | False | FALSE")
	return false
}

func (v *validator) integer(input, s string, lo, hi int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		want := fmt.Sprintf("want an integer from %d to %d", lo, hi)
		if hi == math.MaxInt32 {
			want = fmt.Sprintf("want an integer of at least %d", lo)
		}
		v.fail(input, s, want)
		return 0
	}
	return n
}

// numberRange is an accepted interval and how to say it.
// number parses a number; its range is checked by the stage that owns it
// (see options).
// A value that is not a number is NaN, which every range refuses.
func (v *validator) number(input, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	// Decimal only: ParseFloat also reads 0x1p-3 and 1_0, which no one
	// writes for a rate on purpose.
	if err != nil || math.IsInf(f, 0) || strings.ContainsAny(s, "xX_") {
		return math.NaN()
	}
	return f
}

// options turns the option errors a stage's Validate returns into input
// errors, each with the value as given.
func (v *validator) options(raw map[string]string, err error) {
	if err == nil {
		return
	}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	failed := map[string]bool{}
	for _, e := range v.errs {
		var ie *InputError
		if errors.As(e, &ie) {
			failed[ie.Input] = true
		}
	}
	for _, e := range list {
		var oe *model.OptionError
		if errors.As(e, &oe) {
			if failed[oe.Name] {
				continue // already said, by the parse
			}
			v.fail(oe.Name, raw[oe.Name], oe.Want)
			continue
		}
		v.errs = append(v.errs, e)
	}
}

// inInputOrder sorts the input errors as action.yml lists the inputs.
func (v *validator) inInputOrder() {
	at := map[string]int{}
	for i, in := range Inputs() {
		at[in.Name] = i
	}
	rank := func(e error) int {
		var ie *InputError
		if errors.As(e, &ie) {
			return at[ie.Input]
		}
		return len(at)
	}
	slices.SortStableFunc(v.errs, func(a, b error) int { return rank(a) - rank(b) })
}

// commentMode accepts a comment mode, and true and false for always and
// off (the input was a boolean before it had modes).
func (v *validator) commentMode(input, s string) publish.CommentMode {
	switch s {
	case "true", "True", "TRUE":
		return publish.CommentAlways
	case "false", "False", "FALSE":
		return publish.CommentOff
	}
	var names []string
	for _, m := range publish.CommentModes {
		if s == string(m) {
			return m
		}
		names = append(names, string(m))
	}
	v.fail(input, s, "want one of "+strings.Join(names, ", ")+" (true and false mean always and off)")
	return ""
}

// checkName accepts a check run name.
func (v *validator) checkName(input, s string) string {
	if s == "" || len(s) > 100 || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		v.fail(input, s, "want a name of 1 to 100 characters on one line")
		return ""
	}
	return s
}

// tag accepts a comment tag; empty means the check name.
func (v *validator) tag(input, s, checkName string) string {
	given := s != ""
	if !given {
		s = checkName
	}
	if s == "" {
		return ""
	}
	if err := publish.CheckTag(s); err != nil {
		if given {
			v.fail(input, s, err.Error())
		} else {
			v.fail(input, "", "the check name "+strconv.Quote(checkName)+" cannot be a comment tag: "+err.Error()+"; set comment-tag")
		}
		return ""
	}
	return s
}

// splitList splits on newlines and commas, trims, and drops blank entries.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// globs checks every pattern's syntax (pkg/internal/glob): an unclosed '['
// or '{', or a trailing '\', is refused.
func (v *validator) globs(input, s string) []string {
	list := glob.SplitList(s)
	for _, p := range list {
		if err := glob.Validate(p); err != nil {
			v.fail(input, p, "malformed glob: want * ? [a-z] {a,b} and ** for any directories, one pattern per line or comma")
		}
	}
	return list
}

// localGlobs checks globs of files in the workspace: as globs, and that a
// relative one does not climb out of the workspace (collect.LocalIn refuses
// it too, but only once the step has called the API).
func (v *validator) localGlobs(input, s string) []string {
	list := v.globs(input, s)
	for _, p := range list {
		if c := path.Clean(p); !path.IsAbs(c) && (c == ".." || strings.HasPrefix(c, "../")) {
			v.fail(input, p, "climbs out of the workspace: want a path relative to the workspace and inside it, or an absolute path")
		}
	}
	return list
}

func (v *validator) workflows(input, s string) []string {
	var out []string
	for _, w := range splitList(s) {
		if n, err := strconv.ParseInt(w, 10, 64); err == nil && n > 0 {
			out = append(out, w)
			continue
		}
		base := w
		if strings.HasPrefix(w, ".github/workflows/") {
			base = strings.TrimPrefix(w, ".github/workflows/")
		}
		if strings.ContainsAny(base, "/\\ \t") || !(strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml")) || len(base) <= len(".yml") {
			v.fail(input, w, "want workflow file names such as ci.yml (or .github/workflows/ci.yml) or numeric workflow ids, separated by newlines or commas")
			continue
		}
		out = append(out, base)
	}
	return out
}

func (v *validator) branch(input, s string) string {
	b := strings.TrimPrefix(s, "refs/heads/")
	if s == "" {
		return ""
	}
	if b == "" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") || strings.Contains(b, "//") ||
		strings.ContainsFunc(b, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) }) {
		v.fail(input, s, "want a branch name such as main (a valid git branch name), or empty for the default branch")
		return ""
	}
	// The names a local clone gives (flakegate matrix --base origin/main)
	// name no branch on GitHub: a report of one read no run and was taken
	// as the branch's last report.
	for _, p := range []string{"origin/", "refs/remotes/", "refs/tags/", "refs/pull/"} {
		if strings.HasPrefix(s, p) {
			v.fail(input, s, "a name in a clone, not a branch on GitHub: want the branch's own name, such as main, or empty for the default branch")
			return ""
		}
	}
	return b
}

// repoPath accepts a path inside the repository.
func (v *validator) repoPath(input, s string) string {
	p := path.Clean(s)
	if path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(s, "\\") {
		v.fail(input, s, "want a file path relative to the repository root, such as .github/flaky-ledger.yml, not leaving it")
		return ""
	}
	return p
}

// reportDir accepts an absolute directory or one under the workspace.
func (v *validator) reportDir(input, s string) string {
	p := path.Clean(s)
	if p == ".." || strings.HasPrefix(p, "../") || strings.Contains(s, "\\") {
		v.fail(input, s, "want a directory relative to the workspace (not above it) or an absolute path")
		return ""
	}
	return p
}

func (v *validator) label(input, s string) string {
	if len([]rune(s)) > maxLabelChars || strings.ContainsAny(s, "\r\n") {
		v.fail(input, s, fmt.Sprintf("want a label name of at most %d characters on one line", maxLabelChars))
		return ""
	}
	return s
}

// artifactName applies the artifact service's rule: no " : < > | * ? \ /, CR or LF.
func (v *validator) artifactName(input, s string) string {
	if strings.ContainsAny(s, "\":<>|*?\\/\r\n") {
		v.fail(input, s, `want an artifact name without any of " : < > | * ? \ / or line breaks`)
		return ""
	}
	return s
}

// model accepts a Gemini model id: it becomes part of the request URL.
func (v *validator) model(input, s string) string {
	m := strings.TrimPrefix(s, "models/")
	ok := m != "" && len(m) <= 128
	for i, r := range m {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune(".-_", r)) {
			ok = false
		}
	}
	if !ok {
		v.fail(input, s, "want a Gemini model id such as gemini-3.8-flash (letters, digits, '.', '-', '_')")
		return ""
	}
	return m
}

// ScoreOptions are the report's scoring options from the inputs.
func (c *Config) ScoreOptions() score.Options {
	o := score.Defaults()
	o.Threshold, o.MinCommits, o.InfraThreshold = c.Threshold, c.MinCommits, c.InfraThreshold
	o.Source = c.GitHub.Repository
	return o
}

// GateOptions are the gate's options from the inputs.
func (c *Config) GateOptions() gate.Options {
	return gate.Options{P1: c.P1, Alpha: c.Alpha, Beta: c.Beta, AlphaPR: c.AlphaPR, OnInconclusive: c.OnInconclusive,
		ProtectedPaths: c.ProtectedPaths, AllowNewProtected: c.AllowNewProtected, DeclareLabel: c.DeclarationLabel, ApprovalLabel: c.ApprovalLabel,
		ExpiredLedgerWarn: !c.FailOnExpiredLedger}
}

// ReportArtifact is the name of this step's report artifact, the name the
// last report is looked up by: artifact-name, and the comment tag after it
// when the tag is not the default, so that two flakegate steps in one run
// upload two artifacts. (An upload adds -attempt-N on a re-run.)
func (c *Config) ReportArtifact() string {
	name, _ := c.reportArtifact()
	return name
}

// FormerReportArtifacts are the names earlier versions gave this step's
// report artifact, for the lookup of its last report after the rename: a
// tag ending in a digit had none ("flakegate-report-node18"), or, a tag of
// digits or attempt-N, "tag-" before it ("flakegate-report-tag-2").
func (c *Config) FormerReportArtifacts() []string {
	name, slug := c.reportArtifact()
	if slug == "" || !strings.HasSuffix(name, "-tag") {
		return nil
	}
	// The one name the previous version gave it: "tag-" before a tag that
	// read as a re-run's suffix of the untagged name, else none.
	if old := c.ArtifactName + "-" + slug; !collect.IsReportArtifact(c.ArtifactName, old) {
		return []string{old}
	}
	return []string{c.ArtifactName + "-tag-" + slug}
}

// reportArtifact returns the report artifact's name and the comment tag's
// slug in it ("" when untagged).
func (c *Config) reportArtifact() (string, string) {
	if c.CommentTag == "" || c.CommentTag == publish.DefaultTag {
		return c.ArtifactName, ""
	}
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, c.CommentTag)
	name := c.ArtifactName + "-" + slug
	if last := name[len(name)-1]; last >= '0' && last <= '9' {
		// A re-run's upload adds -attempt-N or -N, which end in a digit.
		// A tag ending in one ("2", "web-2") would read as a re-run's copy
		// of another step's report (the untagged step's, "web"'s), which
		// would take this one's report for its own. Tagged names end in a
		// letter, so no step's name is another's with a re-run's suffix.
		name += "-tag"
	}
	return name, slug
}
