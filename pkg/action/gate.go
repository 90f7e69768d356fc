package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/matrix"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

const (
	gateFile = "gate.json"
	// maxCommentChars: GitHub answers 422 "Body is too long" over 65,536.
	maxCommentChars = 65536
	// maxAnnotationTitle: check-run annotation titles are cut at 255.
	maxAnnotationTitle = 255
)

// pr is the pull request under test.
type pr struct {
	number  int
	headSHA string
	baseSHA string
	baseRef string
	body    string
	labels  []string
	fork    bool
	// untrusted is set for workflow_run events: the results come from a run
	// that executed the PR's code.
	untrusted bool
}

func (a *run) gate(ctx context.Context) (outcome, error) {
	var p pr
	if err := a.stage("Pull request", func() error {
		var err error
		p, err = a.pullRequest(ctx)
		return err
	}); err != nil {
		return outcome{}, err
	}

	if p.untrusted {
		// The artifacts were made by a run of the PR's code: their contents
		// are data to parse and escape, never paths, commands or markup.
		a.log.Infof("results come from a run of pull request #%d's code and are treated as untrusted", p.number)
	}
	var in gate.Input
	in.PRBody, in.Labels, in.Now = p.body, p.labels, a.env.Now().UTC()
	var base, head, hist *history.History
	var lastReport *score.Report
	if err := a.stage("Collect evidence", func() error {
		var err error
		if base, err = a.side(ctx, "base-results", a.cfg.BaseResults, p.baseSHA); err != nil {
			return err
		}
		if head, err = a.side(ctx, "head-results", a.cfg.HeadResults, p.headSHA); err != nil {
			return err
		}
		hist, lastReport, err = a.baseHistory(ctx, p)
		return err
	}); err != nil {
		return outcome{}, err
	}
	if base == nil || head == nil {
		return outcome{}, errors.New("no base or head results: give base-results and head-results, or run the suite on the PR's base and head commits with JUnit artifacts")
	}
	in.Tests = matrix.Join(base, head, hist)

	if err := a.stage("Diff and ledger", func() error { return a.diffAndLedger(ctx, p, &in) }); err != nil {
		return outcome{}, err
	}

	opt := gate.Options{P1: a.cfg.P1, Alpha: a.cfg.Alpha, Beta: a.cfg.Beta, AlphaPR: a.cfg.AlphaPR, OnInconclusive: gate.Policy(a.cfg.OnInconclusive),
		ProtectedPaths: a.cfg.ProtectedPaths, DeclareLabel: a.cfg.DeclarationLabel, ApprovalLabel: a.cfg.ApprovalLabel,
		ExpiredLedgerWarn: !a.cfg.FailOnExpiredLedger}
	res, err := gate.Evaluate(in, opt)
	if err != nil {
		return outcome{}, err
	}
	blocking := 0
	for _, t := range res.Tests {
		if t.Decision == gate.Block {
			blocking++
		}
	}

	// Reports, comment, summary, check run.
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return outcome{}, err
	}
	var flaky []score.Test
	if lastReport != nil {
		flaky = lastReport.Flaky()
	}
	meta := render.GateMeta{Repository: a.cfg.GitHub.Repository, PR: p.number, HeadSHA: p.headSHA, BaseSHA: p.baseSHA, Flaky: flaky,
		RunURL: a.runURL(), ArtifactHint: fmt.Sprintf("the %s artifact and the job summary", a.cfg.ArtifactName)}
	var full bytes.Buffer
	if err := render.GateMarkdown(&full, res, meta, 0); err != nil {
		return outcome{}, err
	}
	files := map[string][]byte{gateFile: js.Bytes(), "gate.md": full.Bytes()}
	if err := a.writeFiles(files); err != nil {
		return outcome{}, err
	}
	summaryMD, _ := a.gateSummary(res, meta)
	if _, err := publish.AppendSummary(a.cfg.GitHub.StepSummary, summaryMD); err != nil {
		a.log.Warningf("job summary: %v", err)
	}
	if a.cfg.Comment && p.number > 0 {
		_ = a.stage("Sticky comment", func() error { a.comment(ctx, p, res, meta); return nil })
	}
	if a.cfg.CheckRun {
		_ = a.stage("Check run", func() error { a.checkRun(ctx, p, res, in.Tests); return nil })
	}
	if a.cfg.UploadArtifact {
		_ = a.stage("Upload report artifact", func() error { a.upload(ctx, files); return nil })
	}
	for _, t := range res.Tests {
		if t.Decision == gate.Block {
			a.log.Annotate(publish.Annotation{Level: "error", Title: cutTitle("flakegate: " + string(t.Bucket) + ": " + t.Name),
				File: fileOf(in.Tests, t.Name), Message: t.Reason})
		}
	}
	out := outcome{verdict: string(res.Verdict), blocking: blocking, jsonPath: filepath.Join(a.reportDir, gateFile)}
	if res.Verdict == gate.VerdictBlock {
		out.exit = 1
	}
	a.log.Infof("flakegate gate: %s (%d blocking)", res.Verdict, blocking)
	return out, nil
}

func cutTitle(s string) string {
	if r := []rune(s); len(r) > maxAnnotationTitle {
		return string(r[:maxAnnotationTitle-1]) + "…"
	}
	return s
}

func fileOf(tests []gate.TestInput, name string) string {
	for _, t := range tests {
		if t.Name == name {
			return t.File
		}
	}
	return ""
}

func (a *run) runURL() string {
	g := a.cfg.GitHub
	if g.ServerURL == "" || g.Repository == "" || g.RunID == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", g.ServerURL, g.Repository, g.RunID)
}

// pullRequest finds the PR under test. For workflow_run on a fork, whose
// pull_requests list is empty, it looks the PR up by head SHA and checks
// that the PR's head is that commit.
func (a *run) pullRequest(ctx context.Context) (pr, error) {
	ev := a.cfg.Event
	if c := a.cfg.PullRequest; c != nil && c.Number > 0 {
		p := pr{number: c.Number, headSHA: c.HeadSHA, baseSHA: c.BaseSHA, baseRef: c.BaseRef, body: c.Body, labels: c.Labels, fork: c.Fork}
		if ev.WorkflowRun != nil {
			p.untrusted = true
			// The event lists the PR without its body and labels.
			if err := a.fillPR(ctx, &p); err != nil {
				return pr{}, err
			}
		}
		return p, nil
	}
	if ev.WorkflowRun == nil {
		// No PR: local results only (for example workflow_dispatch).
		return pr{headSHA: a.cfg.HeadSHA}, nil
	}
	sha := ev.WorkflowRun.HeadSHA
	c, err := a.client()
	if err != nil {
		return pr{}, err
	}
	prs, err := c.PullRequestsForCommit(ctx, a.repo(), sha)
	if err != nil {
		return pr{}, fmt.Errorf("pull request for %s: %w", sha, err)
	}
	for _, x := range prs {
		if x.GetHead().GetSHA() == sha && x.GetState() == "open" {
			p := pr{number: x.GetNumber(), headSHA: sha, untrusted: true}
			fromGitHub(&p, x)
			a.log.Infof("workflow_run: pull request #%d has head %s", p.number, sha)
			return p, nil
		}
	}
	return pr{}, fmt.Errorf("workflow_run: no open pull request has head %s (the PR moved on, or the run was not for a PR)", sha)
}

func (a *run) fillPR(ctx context.Context, p *pr) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	x, err := c.PullRequest(ctx, a.repo(), p.number)
	if err != nil {
		return err
	}
	if x.GetHead().GetSHA() != p.headSHA {
		return fmt.Errorf("pull request #%d: head is %s, but the run tested %s: results are for an older commit", p.number, x.GetHead().GetSHA(), p.headSHA)
	}
	fromGitHub(p, x)
	return nil
}

func fromGitHub(p *pr, x *github.PullRequest) {
	p.baseSHA, p.baseRef, p.body = x.GetBase().GetSHA(), x.GetBase().GetRef(), x.GetBody()
	p.fork = x.GetHead().GetRepo().GetFullName() != x.GetBase().GetRepo().GetFullName()
	p.labels = nil
	for _, l := range x.Labels {
		p.labels = append(p.labels, l.GetName())
	}
}

// side reads one side's evidence: the local globs, or else the JUnit
// artifacts of workflow runs on that commit (every attempt).
func (a *run) side(ctx context.Context, input string, globs []string, sha string) (*history.History, error) {
	if len(globs) > 0 {
		h, err := a.readLocal(ctx, globs)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", input, err)
		}
		for _, s := range h.Skipped {
			a.log.Warningf("%s: skipped %s: %s", input, s.Path, s.Error)
		}
		return h, nil
	}
	if sha == "" || !a.cfg.GitHubToken.IsSet() {
		return nil, nil
	}
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	h, _, err := collect.GitHub(ctx, c, collect.GitHubOptions{Repo: a.repo(), TempDir: a.cfg.GitHub.RunnerTemp, HeadSHA: sha, Match: a.cfg.MatchArtifact, MaxRuns: a.cfg.MaxRuns})
	if err != nil {
		return nil, fmt.Errorf("artifacts of runs on %s: %w", sha, err)
	}
	for _, s := range h.Skipped {
		a.log.Warningf("%s: skipped %s: %s", input, s.Path, s.Error)
	}
	if len(h.Runs) == 0 {
		return nil, nil
	}
	return h, nil
}

// baseHistory is the base branch's recent runs, for p0: the history input,
// or else the JUnit artifacts of recent runs of the workflows input on the
// base branch; plus, either way, the history carried in the last report
// artifact of this workflow on that branch. A missing source degrades to a
// notice or a warning: p0 then rests on the base runs and what was read.
func (a *run) baseHistory(ctx context.Context, p pr) (*history.History, *score.Report, error) {
	branch := a.baseBranch(p)
	// Runs of the PR's head commit are the patch's, not the base's. When
	// the base side was read from the artifacts of the base commit's runs,
	// those runs are the base side already and would count twice.
	skip := map[string]bool{}
	if p.headSHA != "" {
		skip[p.headSHA] = true
	}
	if len(a.cfg.BaseResults) == 0 && p.baseSHA != "" {
		skip[p.baseSHA] = true
	}
	api := a.cfg.GitHubToken.IsSet()
	if api && branch == "" {
		a.log.Noticef("base-branch history: the base branch is unknown (no pull request, no branch input, and the event does not name the default branch); set the branch input to read it")
	}
	var prev previous
	if api && branch != "" {
		var err error
		if prev, err = a.previousReport(ctx, branch); err != nil {
			a.log.Noticef("base-branch history: last report on %s: %v; no carried history is added", branch, err)
		}
	}
	var carried *history.History
	if prev.history != nil {
		carried = history.Filter(prev.history, func(r model.Run) bool {
			return !skip[r.CommitSHA] && (r.Branch == "" || r.Branch == branch)
		})
	}

	var h *history.History
	var from string
	switch {
	case len(a.cfg.History) > 0:
		local, err := a.readLocal(ctx, a.cfg.History)
		if err != nil {
			return nil, nil, fmt.Errorf("input history: %w", err)
		}
		for _, s := range local.Skipped {
			a.log.Warningf("history: skipped %s: %s", s.Path, s.Error)
		}
		h, from = local, "the history input"
	case api && branch != "":
		h, from = a.collectBase(ctx, branch, skip, carried)
	}
	if h == nil && carried == nil {
		return nil, prev.report, nil
	}
	combined, err := history.Combine(carried, h, a.env.Now().Add(-keepHistory))
	if err != nil {
		return nil, nil, err
	}
	var parts []string
	read := 0
	if h != nil {
		read = len(h.Runs)
		parts = append(parts, fmt.Sprintf("%d from %s", read, from))
	}
	if carried != nil {
		parts = append(parts, fmt.Sprintf("%d carried in the report of run %d", len(combined.Runs)-read, prev.runID))
	}
	msg := fmt.Sprintf("base-branch history for p0: %d runs (%s)", len(combined.Runs), strings.Join(parts, "; "))
	a.log.Infof("%s", msg)
	return combined, prev.report, nil
}

// baseBranch is the branch whose runs are the gate's base history: the
// branch input, else the PR's base branch, else the default branch.
func (a *run) baseBranch(p pr) string {
	for _, b := range []string{a.cfg.Branch, p.baseRef, a.cfg.DefaultBranch} {
		if b != "" {
			return b
		}
	}
	return ""
}

// collectBase reads the JUnit artifacts of the runs of the workflows input
// on branch in the lookback window, leaving out the runs the carried
// history holds and those that are not base history (see notOfBranch). What it
// cannot read becomes a warning; it returns the history and where it came
// from.
func (a *run) collectBase(ctx context.Context, branch string, skip map[string]bool, carried *history.History) (*history.History, string) {
	wfs := "every workflow"
	if len(a.cfg.Workflows) > 0 {
		wfs = strings.Join(a.cfg.Workflows, ", ")
	}
	from := fmt.Sprintf("the JUnit artifacts of runs of %s on %s in the last %d days", wfs, branch, a.cfg.LookbackDays)
	c, err := a.client()
	if err != nil {
		a.log.Warningf("base-branch history: %v", err)
		return nil, from
	}
	var known map[string]bool
	if carried != nil {
		known = carried.Keys()
	}
	h, st, err := collect.GitHub(ctx, c, collect.GitHubOptions{
		TempDir: a.cfg.GitHub.RunnerTemp,
		Repo:    a.repo(), Workflows: a.cfg.Workflows, Branch: branch,
		Since: a.env.Now().AddDate(0, 0, -a.cfg.LookbackDays), MaxRuns: a.cfg.MaxRuns,
		Match: a.cfg.MatchArtifact, Known: known, Exclude: a.notOfBranch(skip, true),
	})
	for _, s := range h.Skipped {
		a.log.Warningf("base-branch history: skipped %s: %s", s.Path, s.Error)
	}
	if err != nil {
		a.log.Warningf("base-branch history: %v; p0 rests on what was read", err)
	}
	a.log.Infof("base-branch history: runs of %s on %s listed %d, left out %d (the PR's commits, pull request runs, this run), already carried %d, artifacts downloaded %d (%d bytes)",
		wfs, branch, st.RunsListed, st.RunsExcluded, st.RunsKnown, st.Downloaded, st.Bytes)
	return h, from
}

// notOfBranch reports the runs listed on a branch that are not that
// branch's history: this run, runs whose head commit lives in another
// repository (a fork's branch of the same name), and runs of the commits in
// skip. With prRuns, pull request runs too: they test a PR's head branch,
// which a fork may name like the base, or a merge into another base.
func (a *run) notOfBranch(skip map[string]bool, prRuns bool) func(*github.WorkflowRun) bool {
	return func(r *github.WorkflowRun) bool {
		switch ev := r.GetEvent(); {
		case skip[r.GetHeadSHA()], r.GetID() == a.cfg.GitHub.RunID,
			prRuns && (ev == config.EventPullRequest || ev == config.EventPullRequestTarget):
			return true
		}
		head := r.GetHeadRepository().GetFullName()
		return head != "" && a.cfg.GitHub.Repository != "" && !strings.EqualFold(head, a.cfg.GitHub.Repository)
	}
}

// diffAndLedger fills the diff, the collected counts and both ledgers.
func (a *run) diffAndLedger(ctx context.Context, p pr, in *gate.Input) error {
	if p.number > 0 {
		c, err := a.client()
		if err != nil {
			return err
		}
		files, err := c.PullRequestFiles(ctx, a.repo(), p.number)
		if err != nil {
			return fmt.Errorf("files of pull request #%d: %w", p.number, err)
		}
		for _, f := range files {
			in.Changes = append(in.Changes, gate.FileChange{Path: f.GetFilename(), PreviousPath: f.GetPreviousFilename(), Status: f.GetStatus(), Patch: f.GetPatch()})
		}
		in.ChangesKnown = true
	} else {
		a.log.Noticef("no pull request: the protected-path and skip-marker checks need the PR's diff and did not run")
	}
	var err error
	if in.BaseLedger, err = a.ledgerAt(ctx, p.baseSHA, false); err != nil {
		return fmt.Errorf("ledger at base: %w", err)
	}
	if in.HeadLedger, err = a.ledgerAt(ctx, p.headSHA, !p.untrusted); err != nil {
		return fmt.Errorf("ledger at head: %w", err)
	}
	return nil
}

// ledgerAt reads the ledger at a commit through the contents API, or, when
// there is no API and checkout is true, from the workspace's checkout of the
// head. A missing file is nil.
func (a *run) ledgerAt(ctx context.Context, sha string, checkout bool) (*ledger.Ledger, error) {
	path := a.cfg.LedgerPath
	var data []byte
	if a.cfg.GitHubToken.IsSet() && sha != "" {
		c, err := a.client()
		if err != nil {
			return nil, err
		}
		data, err = c.FileContents(ctx, a.repo(), path, sha)
		if errors.Is(err, ghapi.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	} else {
		if !checkout {
			return nil, nil
		}
		b, err := os.ReadFile(filepath.Join(a.cfg.GitHub.Workspace, path))
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		data = b
	}
	l, err := ledger.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// gateSummary is the job summary: the full report, under GitHub's 1 MiB,
// and the messages over the annotation caps.
func (a *run) gateSummary(res gate.Result, meta render.GateMeta) (string, error) {
	var b bytes.Buffer
	tail := a.overflow()
	err := render.GateMarkdown(&b, res, meta, summaryBudget-min(len(tail), summaryBudget/2))
	if b.Len()+len(tail) <= summaryBudget {
		b.WriteString(tail)
	}
	return b.String(), err
}

// comment posts or edits the sticky comment. A fork's read-only token
// cannot comment: the summary carries the verdict instead.
func (a *run) comment(ctx context.Context, p pr, res gate.Result, meta render.GateMeta) {
	c, err := a.client()
	if err != nil {
		a.log.Warningf("PR comment: %v", err)
		return
	}
	var b bytes.Buffer
	if err := render.GateMarkdown(&b, res, meta, maxCommentChars-len(commentMarker)-1); err != nil {
		a.log.Warningf("PR comment: %v", err)
		return
	}
	cm, created, err := c.UpsertComment(ctx, a.repo(), p.number, commentMarker, b.String())
	if errors.Is(err, ghapi.ErrReadOnly) || errors.Is(err, ghapi.ErrForbidden) {
		a.log.Warningf("PR comment: the token cannot comment on pull request #%d (a fork's read-only token); the verdict is in the job summary", p.number)
		if _, err := publish.AppendSummary(a.cfg.GitHub.StepSummary, "\n> flakegate could not post its PR comment (read-only token); this summary is the report.\n"); err != nil {
			a.log.Warningf("job summary: %v", err)
		}
		return
	}
	if err != nil {
		a.log.Warningf("PR comment: %v; the verdict is in the job summary", err)
		return
	}
	verb := "edited"
	if created {
		verb = "posted"
	}
	a.log.Infof("PR comment %s: %s", verb, cm.GetHTMLURL())
}

// checkRun creates a check run with an annotation per blocking test.
func (a *run) checkRun(ctx context.Context, p pr, res gate.Result, tests []gate.TestInput) {
	c, err := a.client()
	if err != nil {
		a.log.Warningf("check run: %v", err)
		return
	}
	conclusion := map[gate.Verdict]string{gate.VerdictPass: "success", gate.VerdictBlock: "failure", gate.VerdictInconclusive: "neutral"}[res.Verdict]
	var anns []*github.CheckRunAnnotation
	for _, t := range res.Tests {
		file := fileOf(tests, t.Name)
		if t.Decision != gate.Block || file == "" {
			continue // annotations need a file; the summary lists every test
		}
		// Names, paths and reasons are untrusted: no controls, no bidi.
		anns = append(anns, &github.CheckRunAnnotation{
			Path: github.String(render.Plain(file)), StartLine: github.Int(1), EndLine: github.Int(1),
			AnnotationLevel: github.String("failure"), Title: github.String(cutTitle(render.Plain(t.Name))), Message: github.String(render.PlainLines(t.Reason))})
	}
	var summary bytes.Buffer
	_ = render.GateMarkdown(&summary, res, render.GateMeta{PR: p.number, HeadSHA: p.headSHA}, 65535)
	_, err = c.CreateCheckRun(ctx, a.repo(), ghapi.CheckRunSpec{Name: "flakegate", HeadSHA: p.headSHA, Status: "completed", Conclusion: conclusion,
		Title: "flakegate: " + string(res.Verdict), Summary: summary.String(), Annotations: anns})
	if err != nil {
		a.log.Warningf("check run: %v", err)
	}
}
