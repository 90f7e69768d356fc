package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/config"
	"github.com/flakegate/flakegate/pkg/explain"
	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

// pr is the pull request under test.
type pr struct {
	number  int
	headSHA string
	baseSHA string
	baseRef string
	body    string
	labels  []string
	// untrusted is set for workflow_run events: the results come from a run
	// that executed the PR's code.
	untrusted bool
	// movedTo is the PR's head when it is no longer headSHA (a slow run, or
	// a re-run, of an older commit): the sticky comment is left to the run
	// of the newer head.
	movedTo string
	// mergeGroup is set for a merge queue's commit: the queued pull
	// requests' ledger changes were judged on their own runs, with their
	// labels and declarations, which the queue's event does not carry.
	mergeGroup bool
}

func (a *run) gate(ctx context.Context) (outcome, error) {
	var p pr
	if err := a.stage("Pull request", func() error {
		var err error
		p, err = a.pullRequest(ctx)
		return err
	}); err != nil {
		var stale superseded
		if errors.As(err, &stale) {
			// A later run gates the PR's head: this one posts nothing
			// and does not fail, so that a PR pushed twice in quick
			// succession leaves no red run and no failed check behind.
			a.log.Noticef("flakegate gate: nothing to gate: %v", err)
			a.appendSummary("## flakegate: nothing to gate\n\n" + render.EscapeMarkdown(err.Error()) + "\n")
			return outcome{verdict: "skipped"}, nil
		}
		return outcome{}, err
	}
	if p.untrusted {
		// The artifacts were made by a run of the PR's code: their contents
		// are data to parse and escape, never paths, commands or markup.
		a.log.Infof("results come from a run of pull request #%d's code and are treated as untrusted", p.number)
	}
	c, err := a.api()
	if err != nil {
		return outcome{}, err
	}
	branch := a.baseBranch(p)
	var ev collect.Gate
	if err := a.stage("Collect evidence", func() error {
		var err error
		ev, err = collect.ForGate(ctx, collect.GateOptions{
			Scope: a.scope(branch), Client: c,
			BaseResults: a.cfg.BaseResults, HeadResults: a.cfg.HeadResults, History: a.cfg.History,
			BaseSHA: p.baseSHA, HeadSHA: p.headSHA, Previous: a.gatePreviousOptions(branch), Now: a.env.Now(),
			Infra: a.cfg.ScoreOptions(),
		}, a.log)
		return err
	}); err != nil {
		return outcome{}, err
	}
	infra := a.cfg.ScoreOptions().InfraRule()
	in := gate.Input{PRBody: p.body, Labels: p.labels, Now: a.env.Now().UTC(), Tests: gate.JoinInfra(ev.Base, ev.Head, ev.History, infra),
		Collected: gate.CollectedCounts(ev.Base, ev.Head, infra)}
	var other []string
	in.Unread, other = gate.UnreadFiles(ev.Base, ev.Head)
	in.Notes = append(ev.Notes, other...)
	in.Notes = append(in.Notes, ev.TestedNotes(p.baseSHA, p.headSHA)...)
	if err := a.stage("Diff and ledger", func() error { return a.diffAndLedger(ctx, c, p, &in) }); err != nil {
		return outcome{}, err
	}
	if err := ctx.Err(); err != nil {
		return outcome{}, err // cancelled: no verdict, no files
	}
	opts := a.cfg.GateOptions()
	if t := ev.Tested; t != nil && t.Looks > 1 {
		// How many pairs matrix ran depended on its earlier looks: this
		// look takes the share of alpha-pr each of them had.
		alpha := opts.AlphaPR
		if alpha == 0 {
			alpha = gate.DefaultAlphaPR
		}
		if len(t.LookPairs) == t.Looks {
			pairs := len(ev.Head.Runs)
			opts.AlphaPR = gate.LookAlpha(alpha, t.LookPairs, pairs)
			in.Notes = append(in.Notes, fmt.Sprintf("the runs are flakegate matrix's, which looked at them up to %d times (after %s pairs), at shares of alpha-pr %.3g that grow with the pairs read; this look, at %d pairs, takes that look's: %.3g",
				t.Looks, render.Counts(t.LookPairs), alpha, pairs, opts.AlphaPR))
		} else {
			// A matrix before the shares grew: equal ones.
			opts.AlphaPR = alpha / float64(t.Looks)
			in.Notes = append(in.Notes, fmt.Sprintf("the runs are flakegate matrix's, which looked at them up to %d times, each at alpha-pr %.3g/%d; so does this look: %.3g",
				t.Looks, alpha, t.Looks, opts.AlphaPR))
		}
	}
	if t := ev.Tested; t != nil && t.K > 0 {
		// No more pairs come: matrix's budget is this look's. The
		// calibration covers 20 runs whatever the budget, so the same
		// tests block; an undecided test says the budget is spent.
		opts.MaxRuns = t.K
	}
	res, err := gate.Evaluate(in, opts)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{verdict: string(res.Verdict), tests: headTests(in.Tests), blocking: res.Blocking(), inconclusive: res.Undecided(),
		invalid: res.Invalid(), jsonPath: filepath.Join(a.reportDir, render.GateJSONFile)}
	for _, t := range in.Tests {
		for _, pass := range t.Head {
			if !pass {
				out.failed++
				break
			}
		}
	}
	var flaky []score.Test
	if ev.LastReport != nil {
		flaky = ev.LastReport.Flaky()
		out.flaky = len(flaky)
	}
	meta := render.GateMeta{Repository: a.cfg.GitHub.Repository, ServerURL: a.cfg.GitHub.ServerURL, PR: p.number, HeadSHA: p.headSHA, BaseSHA: p.baseSHA,
		Flaky: flaky, RunURL: a.runURL(), ArtifactHint: fmt.Sprintf("the %s artifact and the job summary", a.cfg.ReportArtifact())}
	if t := ev.Tested; t != nil {
		// The commits the runs were of, as flakegate matrix recorded
		// them: the base side ran where head left its base branch.
		meta.BaseSHA, meta.HeadSHA = t.Base.SHA, t.Head.SHA
	}
	switch {
	case a.cfg.AIEnabled() && len(out.blocking) > 0:
		a.optional("AI root causes", func() error { meta.AI = a.explainBlocking(ctx, res, ev); return nil })
	case len(out.blocking) > 0:
		a.log.Infof("AI root causes: not asked for (gemini-api-key is empty%s)", a.noKeyWhy())
	}

	if err := ctx.Err(); err != nil {
		return outcome{}, err
	}
	files, err := render.GateFiles(res, meta)
	if err != nil {
		return outcome{}, err
	}
	if err := a.writeFiles(files); err != nil {
		return outcome{}, err
	}
	var summary strings.Builder
	_ = render.GateMarkdown(&summary, res, meta, summaryBudget-min(len(a.overflow(summaryBudget/2)), summaryBudget/2))
	a.appendSummary(summary.String())
	switch {
	case p.movedTo != "":
		a.log.Noticef("pull request #%d: its head is now %s, not %s, which this run tested: the sticky comment is left to the newer head's run; this verdict stands for the commit tested", p.number, p.movedTo, p.headSHA)
	case a.cfg.Comment != publish.CommentOff && p.number > 0:
		a.optional("Sticky comment", func() error { return a.comment(ctx, c, p, res, meta, &out) })
	}
	if a.cfg.CheckRun {
		a.optional("Check run", func() error { return a.checkRun(ctx, c, p, res, in.Tests, &out) })
	}
	if a.cfg.UploadArtifact {
		a.optional("Upload report artifact", func() error { return a.upload(ctx, files) })
	}
	for _, an := range publish.Annotations(res, in.Tests, a.cfg.Checkout(), -1) {
		a.log.Annotate(publish.Annotation{Level: "error", Title: an.Title, File: an.Path, Line: an.StartLine, Message: an.Message})
	}
	if res.Verdict == gate.VerdictBlock {
		out.exit = 1
	}
	a.log.Infof("flakegate gate: %s (%d blocking, %d inconclusive)", res.Verdict, len(out.blocking), len(out.inconclusive))
	return out, nil
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
		p := pr{number: c.Number, headSHA: c.HeadSHA, baseSHA: c.BaseSHA, baseRef: c.BaseRef, body: c.Body, labels: c.Labels}
		if ev.WorkflowRun != nil {
			p.untrusted = true
			// The event lists the PR without its body and labels.
			gh, err := a.client()
			if err != nil {
				return pr{}, err
			}
			x, err := gh.PullRequest(ctx, a.repo(), p.number)
			if err != nil {
				return pr{}, err
			}
			if x.HeadSHA != p.headSHA {
				return pr{}, superseded(fmt.Sprintf("pull request #%d: head is %s, but the run tested %s: results are for an older commit, and the run of its head gates it", p.number, x.HeadSHA, p.headSHA))
			}
			fromGitHub(&p, x)
			return p, nil
		}
		// The payload's body and labels are the PR's when the event
		// happened, and a re-run gets the same payload: a declaration or
		// label added since (as a blocked PR is told to) is read from the
		// PR as it is now.
		gh, err := a.client()
		if err == nil {
			var x ghapi.PullRequest
			if x, err = gh.PullRequest(ctx, a.repo(), p.number); err == nil {
				p.body, p.labels = x.Body, x.Labels
				if x.HeadSHA != "" && p.headSHA != "" && x.HeadSHA != p.headSHA {
					p.movedTo = x.HeadSHA
				}
			}
		}
		if err != nil {
			a.log.Warningf("pull request #%d: %v; its body and labels are the event's", p.number, err)
		}
		return p, nil
	}
	if mg := ev.MergeGroup; mg != nil {
		// A merge queue's commit: local results only, gated against the
		// queue's base; the queued PRs' diffs were checked on their own.
		a.log.Infof("merge_group: the queue's commit %s against %s at %s", mg.HeadSHA, mg.BaseRef, mg.BaseSHA)
		return pr{headSHA: mg.HeadSHA, baseSHA: mg.BaseSHA, baseRef: mg.BaseRef, mergeGroup: true}, nil
	}
	if !ev.FromPullRequest() {
		// No PR: local results only (workflow_dispatch, or a workflow_run
		// of a push). Looked up by commit, a push's run found no open PR
		// (or one that happened to have that head) and was skipped with
		// exit 0, leaving a regression in its results ungated.
		return pr{headSHA: a.cfg.HeadSHA}, nil
	}
	sha := ev.WorkflowRun.HeadSHA
	gh, err := a.client()
	if err != nil {
		return pr{}, err
	}
	prs, err := gh.PullRequestsForCommit(ctx, a.repo(), sha)
	if err != nil {
		return pr{}, fmt.Errorf("pull request for %s: %w", sha, err)
	}
	for _, x := range prs {
		if x.HeadSHA == sha && x.State == "open" {
			p := pr{number: x.Number, headSHA: sha, untrusted: true}
			fromGitHub(&p, x)
			a.log.Infof("workflow_run: pull request #%d has head %s", p.number, sha)
			return p, nil
		}
	}
	return pr{}, superseded(fmt.Sprintf("workflow_run: no open pull request has head %s (the PR moved on or was closed, or the run was not for a PR)", sha))
}

// superseded is a workflow_run whose commit is no longer an open pull
// request's head: there is nothing to gate.
type superseded string

func (s superseded) Error() string { return string(s) }

func fromGitHub(p *pr, x ghapi.PullRequest) {
	p.baseSHA, p.baseRef, p.body, p.labels = x.BaseSHA, x.BaseRef, x.Body, x.Labels
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

// diffAndLedger fills the diff and both ledgers.
func (a *run) diffAndLedger(ctx context.Context, c *ghapi.Client, p pr, in *gate.Input) error {
	if p.number > 0 {
		if c == nil {
			return fmt.Errorf("input github-token is empty: the pull request's files are needed")
		}
		files, err := c.PullRequestFiles(ctx, a.repo(), p.number)
		if err != nil {
			return fmt.Errorf("files of pull request #%d: %w", p.number, err)
		}
		for _, f := range files {
			in.Changes = append(in.Changes, gate.FileChange{Path: f.Path, PreviousPath: f.PreviousPath, Status: f.Status, Patch: f.Patch, Changes: f.Changes})
		}
		in.ChangesKnown = true
		if len(files) >= ghapi.MaxPullRequestFiles {
			in.ChangesCut = true
			a.log.Warningf("pull request #%d changes more files than GitHub lists (%d): protected-path and skip-marker checks saw only those", p.number, ghapi.MaxPullRequestFiles)
		}
	} else {
		a.log.Noticef("no pull request: the protected-path and skip-marker checks need the PR's diff and did not run")
	}
	var err error
	ws, path := a.cfg.GitHub.Workspace, a.cfg.LedgerPath
	if p.number == 0 && p.baseSHA == "" {
		// No base commit (workflow_dispatch, a workflow_run of a push):
		// no change to the ledger to judge, and the ledger the tested
		// commit has is the one its flakes are exempt by. Read as an
		// empty base, its every entry was "growth" and blocked.
		if in.HeadLedger, err = collect.LedgerAt(ctx, c, a.repo(), path, p.headSHA, ws, !p.untrusted); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		in.BaseLedger = in.HeadLedger
		if in.HeadLedger != nil {
			a.log.Infof("no base commit: the ledger at the tested commit is read as both sides', so its changes are not checked and its entries exempt as they stand")
		} else {
			a.noLedger("at the tested commit")
		}
		return nil
	}
	if in.BaseLedger, err = collect.LedgerAt(ctx, c, a.repo(), path, p.baseSHA, ws, false); err != nil {
		return fmt.Errorf("ledger at base: %w", err)
	}
	if in.HeadLedger, err = collect.LedgerAt(ctx, c, a.repo(), path, p.headSHA, ws, !p.untrusted); err != nil {
		return fmt.Errorf("ledger at head: %w", err)
	}
	if in.BaseLedger == nil && in.HeadLedger == nil {
		a.noLedger("at base or head")
	}
	if p.mergeGroup && (in.HeadLedger != nil || in.BaseLedger != nil) {
		// A queued PR that deleted the ledger file (its last entry
		// released, declared) leaves the queue's commit with none: read as
		// absent, the base's entries were an undeclared freeze-set change.
		// Judged again without the PRs' labels and bodies, every approved
		// entry was growth and a freeze-set change, and the queue blocked.
		a.log.Infof("merge_group: the queued pull requests' ledger changes were checked on their own runs; the queue's commit is gated with the base's ledger on both sides")
		in.HeadLedger = in.BaseLedger
	}
	return nil
}

// noLedger says that no quarantine ledger was found: with ledger-path left
// at its default, that is a repository without one; set to another path,
// most likely a misspelt one (.yaml for .yml), which exempted nothing
// without a word.
func (a *run) noLedger(where string) {
	if a.cfg.LedgerPath == config.DefaultLedgerPath {
		a.log.Infof("no quarantine ledger at %s (%s): no test is exempt", a.cfg.LedgerPath, where)
		return
	}
	a.log.Warningf("ledger-path %s: no such file %s: no test is exempt by a ledger; check the path against the repository", a.cfg.LedgerPath, where)
}

// comment posts, edits or leaves the sticky comment as the comment input
// says. A fork's read-only token cannot comment: the summary then says so.
func (a *run) comment(ctx context.Context, c *ghapi.Client, p pr, res gate.Result, meta render.GateMeta, out *outcome) error {
	var b strings.Builder
	marks := len(publish.CommentMarker(a.cfg.CommentTag)) + 64
	if err := render.GateMarkdown(&b, res, meta, ghapi.MaxCommentChars-marks); err != nil {
		return err
	}
	state := string(res.Verdict) + "\n" + strings.Join(out.blocking, "\n") + "\n" + strings.Join(out.inconclusive, "\n")
	return a.postComment(ctx, c, p.number, publish.Comment{
		Mode: a.cfg.Comment, Tag: a.cfg.CommentTag, Body: b.String(), State: state, Failing: res.Verdict != gate.VerdictPass}, out)
}

// postComment posts, edits or leaves the sticky comment cm and logs what
// it did; when it cannot (a fork's read-only token), the job summary says
// so and the error is returned.
func (a *run) postComment(ctx context.Context, c *ghapi.Client, number int, cm publish.Comment, out *outcome) error {
	r, err := publish.StickyComment(ctx, orNil[publish.Commenter](c), a.repo(), number, cm)
	if err != nil {
		a.appendSummary("\n> flakegate could not post its PR comment (" + render.EscapeMarkdown(err.Error()) + "); this summary is the report.\n")
		return err
	}
	out.commentURL = r.URL
	if r.Why != "" {
		a.log.Infof("PR comment %s: %s", r.Action, r.Why)
	} else {
		a.log.Infof("PR comment %s: %s", r.Action, r.URL)
	}
	if r.Duplicates != "" {
		a.log.Infof("PR comment: %s", r.Duplicates)
	}
	return nil
}

// checkRun creates a check run with an annotation per blocking test, on
// its file and line when the JUnit XML gave them, up to max-annotations.
func (a *run) checkRun(ctx context.Context, c *ghapi.Client, p pr, res gate.Result, tests []gate.TestInput, out *outcome) error {
	if p.headSHA == "" {
		return fmt.Errorf("no head commit to attach the check run to")
	}
	conclusion := map[gate.Verdict]string{gate.VerdictPass: "success", gate.VerdictBlock: "failure", gate.VerdictInconclusive: "neutral"}[res.Verdict]
	var summary strings.Builder
	_ = render.GateMarkdown(&summary, res, render.GateMeta{Repository: a.cfg.GitHub.Repository, ServerURL: a.cfg.GitHub.ServerURL, PR: p.number, HeadSHA: p.headSHA}, ghapi.MaxCheckText)
	url, err := publish.CheckRun(ctx, orNil[publish.CheckRunner](c), a.repo(), ghapi.CheckRunSpec{
		Name: a.cfg.CheckName, HeadSHA: p.headSHA, Status: "completed", Conclusion: conclusion, DetailsURL: a.runURL(),
		Title: "flakegate: " + string(res.Verdict), Summary: summary.String(),
		Annotations: publish.Annotations(res, tests, a.cfg.Checkout(), a.cfg.MaxAnnotations)})
	if err != nil {
		return err
	}
	out.checkURL = url
	a.log.Infof("check run %q: %s", a.cfg.CheckName, url)
	return nil
}

// explainBlocking asks for the root causes of the blocking tests, framed as
// such (not as flaky tests): their classification and head counts, and
// their head failures.
func (a *run) explainBlocking(ctx context.Context, res gate.Result, ev collect.Gate) string {
	msgs := map[string][]string{}
	for _, t := range ev.Head.Tests {
		for _, s := range t.Sigs {
			if len(msgs[t.ID]) < 3 && s.Message != "" {
				msgs[t.ID] = append(msgs[t.ID], s.Message)
			}
		}
	}
	in := explain.Input{Source: a.cfg.GitHub.Repository, TestsAnalyzed: len(res.Tests), Blocking: true}
	for _, t := range res.Tests {
		if t.Decision == gate.Block {
			in.Tests = append(in.Tests, explain.Test{Name: t.Name, Bucket: string(t.Bucket), Failures: t.Head.Failures, Runs: t.Head.Runs, Messages: msgs[t.Name]})
		}
	}
	return a.explainInput(ctx, in)
}

// headTests counts the tests read on the head side (the tests-count
// output): a test seen only on base or in history is not.
func headTests(tests []gate.TestInput) int {
	n := 0
	for _, t := range tests {
		if len(t.Head) > 0 {
			n++
		}
	}
	return n
}
