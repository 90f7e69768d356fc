package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/explain"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

const (
	// summaryBudget leaves room under GitHub's 1 MiB for the other sections.
	summaryBudget = publish.MaxSummaryBytes - 64<<10
	// issueBudget leaves room under GitHub's limit for the markers.
	issueBudget = ghapi.MaxCommentChars - 1024
)

func (a *run) report(ctx context.Context) (outcome, error) {
	now := a.env.Now().UTC()
	branch := a.reportBranch()
	c, err := a.api()
	if err != nil {
		return outcome{}, err
	}
	var ev collect.Report
	if err := a.stage("Collect results", func() error {
		var err error
		ev, err = collect.ForReport(ctx, collect.ReportOptions{
			Scope: a.scope(branch), Client: c, Results: a.cfg.Results,
			Previous: a.reportPreviousOptions(branch), Now: now, Uploads: a.cfg.UploadArtifact,
		}, a.log)
		return err
	}); err != nil {
		return outcome{}, err
	}
	if ev.Filtered != "" {
		a.log.Noticef("%s", ev.Filtered)
	}

	opts := a.cfg.ScoreOptions()
	opts.Now = now
	if err := ctx.Err(); err != nil {
		return outcome{}, err // cancelled: no report, no files
	}
	rep, err := score.Score(ev.Window, opts)
	if err != nil {
		return outcome{}, fmt.Errorf("score: %w", err)
	}
	rep.Branch = branch // the next report of branch takes this one as its last
	if f, name, err := collect.Owners(a.cfg.GitHub.Workspace); err != nil {
		a.log.Warningf("%s: %v; owners are left out", name, err)
	} else {
		for _, s := range f.Skipped() {
			a.log.Warningf("%s %s: skipped, as GitHub skips it", name, s)
		}
		f.Annotate(rep.Tests, a.cfg.Checkout())
	}
	if s := render.LegBoundsNote(rep); s != "" {
		a.log.Warningf("%s", s)
	}
	trend := score.Compare(ev.Previous.Report, rep) // collect warned of each skipped file
	empty := emptyReason(rep, ev)
	if empty != "" {
		a.log.Warningf("%s", empty)
	}

	ai := ""
	switch {
	case a.cfg.AIEnabled() && rep.FlakyCount > 0:
		a.optional("AI root causes", func() error { ai = a.explain(ctx, rep); return nil })
	case a.cfg.AIEnabled():
		a.log.Infof("AI root causes: no flaky test to explain; Gemini is not called")
	case rep.FlakyCount > 0:
		a.log.Infof("AI root causes: not asked for (gemini-api-key is empty%s)", a.noKeyWhy())
	}

	if err := ctx.Err(); err != nil {
		return outcome{}, err
	}
	var files map[string][]byte
	if err := a.stage("Write reports", func() error {
		var err error
		if files, err = render.ReportFiles(rep, ev.Full, ai); err != nil {
			return err
		}
		return a.writeFiles(files)
	}); err != nil {
		return outcome{}, err
	}

	summary, err := a.summary(rep, trend, ai, ev.Filtered, empty, summaryBudget)
	if err != nil {
		return outcome{}, err
	}
	a.appendSummary(summary)
	a.shown = len(a.log.Overflow) // the summary lists them
	if a.cfg.UploadArtifact {
		a.optional("Upload report artifact", func() error { return a.upload(ctx, files) })
	}
	if a.cfg.TrackingIssue && empty != "" {
		// Nothing read is not "no flaky tests": the issue stays as it is.
		a.log.Noticef("tracking issue left as it is: %s", empty)
	} else if a.cfg.TrackingIssue {
		a.optional("Tracking issue", func() error {
			body, err := a.summary(rep, trend, ai, ev.Filtered, empty, issueBudget)
			if err != nil {
				return err
			}
			url, did, warning, err := publish.TrackingIssue(ctx, orNil[publish.IssueTracker](c), a.repo(), a.cfg.CommentTag, rep.FlakyCount, body)
			if warning != "" {
				a.log.Warningf("tracking issue: %s", warning)
			}
			switch {
			case err != nil:
				return err
			case did == publish.IssueNone:
				a.log.Infof("tracking issue: no flaky tests, and no open issue to close; none is opened")
			default:
				a.log.Infof("tracking issue %s: %s", did, url)
			}
			return nil
		})
	}
	a.log.Infof("flakegate: %d flaky tests of %d analysed", rep.FlakyCount, rep.TestsAnalyzed)
	out := outcome{verdict: "pass", tests: rep.TestsAnalyzed, flaky: rep.FlakyCount, jsonPath: filepath.Join(a.reportDir, render.ReportJSONFile)}
	for _, t := range rep.Tests {
		if t.Failures > 0 {
			out.failed++
		}
	}
	// As in gate mode: the sticky comment where there is a pull request,
	// and the check run when asked for.
	body := func(budget int) (string, error) { return a.summary(rep, trend, ai, ev.Filtered, empty, budget) }
	if p := a.cfg.PullRequest; p != nil && p.Number > 0 && a.cfg.Comment != publish.CommentOff {
		a.optional("Sticky comment", func() error { return a.reportComment(ctx, c, p.Number, rep, body, &out) })
	}
	if a.cfg.CheckRun {
		a.optional("Check run", func() error { return a.reportCheckRun(ctx, c, rep, body, &out) })
	}
	return out, nil
}

// emptyReason says why a report analysed no test, or "" when it analysed
// some: a report of nothing must say so, not pass quietly.
func emptyReason(rep *score.Report, ev collect.Report) string {
	if rep.TestsAnalyzed > 0 {
		return ""
	}
	var why []string
	if ev.Filtered != "" {
		why = append(why, ev.Filtered)
	}
	if n := len(rep.SkippedFiles); n > 0 {
		why = append(why, fmt.Sprintf("%d input files were skipped", n))
	}
	if n := len(rep.InfraRuns); n > 0 {
		why = append(why, fmt.Sprintf("%d runs were excluded as infrastructure failures", n))
	}
	if rep.ResultsWithoutCommit > 0 {
		why = append(why, fmt.Sprintf("%d results came from runs without a commit SHA", rep.ResultsWithoutCommit))
	}
	if len(why) == 0 {
		why = append(why, "no test results were found")
	}
	return "0 tests analysed: " + strings.Join(why, "; ")
}

// scope is where this step reads workflow runs.
func (a *run) scope(branch string) collect.Scope {
	return collect.Scope{
		Repo: a.repo(), FullName: a.cfg.GitHub.Repository, Workflows: a.cfg.Workflows, Branch: branch,
		Since: a.env.Now().UTC().AddDate(0, 0, -a.cfg.LookbackDays), MaxRuns: a.cfg.MaxRuns,
		Match: a.cfg.MatchArtifact, Self: a.cfg.GitHub.RunID, TempDir: a.cfg.GitHub.RunnerTemp,
		Workspace: a.cfg.GitHub.Workspace,
	}
}

// previousOptions locate this step's last report on branch.
func (a *run) previousOptions(branch string) collect.PreviousOptions {
	ref, _, _ := strings.Cut(a.cfg.GitHub.WorkflowRef, "@") // owner/repo/.github/workflows/f.yml@ref
	return collect.PreviousOptions{Repo: a.repo(), Workflow: path.Base(ref), Branch: branch,
		ArtifactName: a.cfg.ReportArtifact(), FormerNames: a.cfg.FormerReportArtifacts(), Self: a.cfg.GitHub.RunID}
}

// reportPreviousOptions are previousOptions, and a report also reads this
// workflow's runs on the branch this run is on: a scheduled run is on the
// default branch whatever branch it reports on, and its earlier reports of
// branch are there.
func (a *run) reportPreviousOptions(branch string) collect.PreviousOptions {
	o := a.previousOptions(branch)
	if ref := a.cfg.GitHub.Ref; strings.HasPrefix(ref, "refs/heads/") {
		o.Home = strings.TrimPrefix(ref, "refs/heads/")
	}
	return o
}

// gatePreviousOptions are previousOptions, and the gate also reads the
// report of another workflow (the weekly report's) when its own workflow,
// run on pull requests, has left none on the base branch.
func (a *run) gatePreviousOptions(branch string) collect.PreviousOptions {
	o := a.previousOptions(branch)
	o.AnyWorkflow = true
	return o
}

// noKeyWhy says why gemini-api-key may be empty: a fork's pull request
// gets no secrets.
func (a *run) noKeyWhy() string {
	if p := a.cfg.PullRequest; p != nil && p.Fork {
		return "; a pull request from a fork gets no secrets"
	}
	return ""
}

// summary renders the job summary (or the tracking issue's body): the
// report, what the inputs filtered out, the trend, the AI section and
// annotations that did not fit the log's caps.
func (a *run) summary(rep *score.Report, trend *score.Trend, ai, filtered, empty string, budget int) (string, error) {
	var head, trendMD bytes.Buffer
	for _, note := range []string{empty, filtered} {
		if note != "" {
			head.WriteString("> [!NOTE]\n> " + render.EscapeMarkdown(note) + "\n\n")
			break // the empty reason already names the filter
		}
	}
	if trend != nil {
		if err := render.TrendMarkdown(&trendMD, trend); err != nil {
			return "", err
		}
	}
	if ai != "" {
		ai = "\n" + ai + "\n"
	}
	overflow := a.overflow(budget)
	tail := trendMD.Len() + len(ai) + len(overflow)
	var md bytes.Buffer
	err := render.Markdown(&md, rep, render.MarkdownOptions{Title: "flakegate report", MaxBytes: max(4096, budget-head.Len()-min(tail, budget/2)),
		ArtifactHint: fmt.Sprintf("the %s artifact", render.EscapeMarkdown(a.cfg.ReportArtifact())), RepoURL: a.repoURL()})
	if err != nil {
		return "", err
	}
	out := md.String()
	if head.Len() > 0 {
		// After the title line, before the rest.
		if i := strings.Index(out, "\n"); i >= 0 {
			out = out[:i+1] + "\n" + head.String() + out[i+1:]
		} else {
			out = head.String() + out
		}
	}
	// The tail's parts, each whole or said to be left out: the messages
	// over the log's caps last, cut to the room left.
	const noteRoom = 200
	for _, part := range []struct{ what, md string }{{"The trend since the last report", trendMD.String()}, {"The AI root-cause section", ai}} {
		switch {
		case part.md == "":
		case len(out)+len(part.md)+noteRoom <= budget:
			out += part.md
		default:
			out += fmt.Sprintf("\n> [!NOTE]\n> %s is left out here (over the size limit); it is in the %s artifact.\n", part.what, render.EscapeMarkdown(a.cfg.ReportArtifact()))
		}
	}
	return out + a.overflow(budget-len(out)), nil
}

// overflow lists the messages over GitHub's annotation caps, for the job
// summary, within room bytes: nothing is left out silently. They are in
// the step's log as well (publish.Log prints them as plain lines).
func (a *run) overflow(room int) string { return overflowMD(a.log.Overflow, room) }

// flushOverflow appends to the job summary the messages over the caps that
// it does not hold yet: those of stages after the summary was written (the
// comment, the check run, the upload), or of a step that failed.
func (a *run) flushOverflow() {
	if rest := a.log.Overflow[min(a.shown, len(a.log.Overflow)):]; len(rest) > 0 {
		a.appendSummary(overflowMD(rest, publish.MaxSummaryBytes-a.summaryCopy.Len()-1024))
		a.shown = len(a.log.Overflow)
	}
}

func overflowMD(list []publish.Annotation, room int) string {
	n := len(list)
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n<details><summary>%d more messages (over GitHub's annotation limits)</summary>\n\n", n)
	const end = "\n</details>\n"
	for i, an := range list {
		line := fmt.Sprintf("- %s: %s\n", an.Level, render.EscapeMarkdown(render.Truncate(an.Message, 500)))
		if b.Len()+len(line)+len(end)+100 > room {
			fmt.Fprintf(&b, "- and %d more: see the step's log\n", n-i)
			break
		}
		b.WriteString(line)
	}
	b.WriteString(end)
	if b.Len() > room {
		return ""
	}
	return b.String()
}

// repoURL is the repository's web address, for links; "" when unknown.
func (a *run) repoURL() string {
	if g := a.cfg.GitHub; g.ServerURL != "" && g.Repository != "" {
		return strings.TrimSuffix(g.ServerURL, "/") + "/" + g.Repository
	}
	return ""
}

// reportComment posts, edits or leaves the sticky comment with the report,
// as the comment input says. The report's verdict is a pass: under
// comment: failures only a comment already there is edited.
func (a *run) reportComment(ctx context.Context, c *ghapi.Client, number int, rep *score.Report, body func(int) (string, error), out *outcome) error {
	text, err := body(ghapi.MaxCommentChars - len(publish.CommentMarker(a.cfg.CommentTag)) - 64)
	if err != nil {
		return err
	}
	var state strings.Builder
	fmt.Fprintf(&state, "report\n%d flaky", rep.FlakyCount)
	for _, t := range rep.Flaky() {
		state.WriteString("\n" + t.Name)
	}
	return a.postComment(ctx, c, number, publish.Comment{Mode: a.cfg.Comment, Tag: a.cfg.CommentTag, Body: text, State: state.String()}, out)
}

// reportCheckRun creates a check run on the commit under evaluation with
// the report as its summary and a warning annotation per flaky test whose
// file is known, up to max-annotations. Flaky tests make it neutral; the
// report never fails it.
func (a *run) reportCheckRun(ctx context.Context, c *ghapi.Client, rep *score.Report, body func(int) (string, error), out *outcome) error {
	sha := a.cfg.HeadSHA
	if sha == "" {
		return fmt.Errorf("no commit to attach the check run to")
	}
	text, err := body(ghapi.MaxCheckText)
	if err != nil {
		return err
	}
	conclusion := "success"
	if rep.FlakyCount > 0 {
		conclusion = "neutral"
	}
	var notes []ghapi.Annotation
	co := a.cfg.Checkout()
	for _, t := range rep.Flaky() {
		if t.File == "" {
			continue // annotations need a file; the summary lists every test
		}
		if m := a.cfg.MaxAnnotations; m >= 0 && len(notes) >= m {
			break
		}
		line := max(1, t.Line)
		notes = append(notes, ghapi.Annotation{Path: render.Plain(co.RepoPath(t.File)), StartLine: line, EndLine: line, Level: "warning",
			Title:   render.Plain("flakegate: flaky: " + t.Name),
			Message: render.PlainLines(fmt.Sprintf("flake rate %.3f (%d of %d runs failed; evidence: %s)", t.FlakeRate, t.Failures, t.Runs, strings.Join(t.Evidence, ", ")))})
	}
	url, err := publish.CheckRun(ctx, orNil[publish.CheckRunner](c), a.repo(), ghapi.CheckRunSpec{
		Name: a.cfg.CheckName, HeadSHA: sha, Status: "completed", Conclusion: conclusion, DetailsURL: a.runURL(),
		Title: fmt.Sprintf("flakegate: %d flaky tests", rep.FlakyCount), Summary: text, Annotations: notes})
	if err != nil {
		return err
	}
	out.checkURL = url
	a.log.Infof("check run %q: %s", a.cfg.CheckName, url)
	return nil
}

// reportBranch is the branch a report reads: the branch input, else the
// repository's default branch, else the branch this run is on
// (GITHUB_REF_NAME; the event named no default branch). Runs of every
// branch would mix PR branches' breakage into the history.
func (a *run) reportBranch() string {
	for _, b := range []string{a.cfg.Branch, a.cfg.DefaultBranch, a.cfg.GitHub.RefName} {
		if b != "" {
			return b
		}
	}
	return ""
}

// upload sends the report files as the report artifact. The files stay in
// report-dir whatever happens.
func (a *run) upload(ctx context.Context, files map[string][]byte) error {
	u, err := publish.ArtifactService(a.env.Getenv)
	if errors.Is(err, publish.ErrNoArtifactService) {
		a.log.Noticef("artifact upload skipped: %v; the report is in %s for actions/upload-artifact", err, a.forLaterSteps(a.reportDir))
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w; the report is in %s", err, a.forLaterSteps(a.reportDir))
	}
	names := publish.ArtifactNames(a.cfg.ReportArtifact(), a.cfg.GitHub.RunAttempt)
	res, err := publish.Upload(ctx, u, names, files, a.cfg.GitHub.RetentionDays)
	if err != nil {
		return fmt.Errorf("%w; the report is in %s", err, a.forLaterSteps(a.reportDir))
	}
	a.log.Infof("uploaded artifact %s (id %d, %d bytes)", res.Name, res.ID, res.Size)
	return nil
}

// explain asks Gemini for root causes; any failure becomes a note in the
// section.
func (a *run) explain(ctx context.Context, rep *score.Report) string {
	in := explain.Input{Source: rep.Source, TestsAnalyzed: rep.TestsAnalyzed, FlakyCount: rep.FlakyCount, RunsAnalyzed: rep.Runs}
	for _, t := range rep.Flaky() {
		in.Tests = append(in.Tests, explain.FromScore(t))
	}
	return a.explainInput(ctx, in)
}

func (a *run) explainInput(ctx context.Context, in explain.Input) string {
	base := a.env.GeminiBaseURL
	if base == "" {
		base = a.env.Getenv("GOOGLE_GEMINI_BASE_URL")
	}
	g, err := explain.NewGemini(explain.Options{APIKey: a.cfg.GeminiAPIKey.Value(), Model: a.cfg.GeminiModel, BaseURL: base, HTTPClient: a.env.HTTPClient})
	if err != nil {
		return explain.Markdown(explain.Result{Note: explain.Note(err)})
	}
	res := explain.Run(ctx, g, in)
	if res.Note != "" {
		a.log.Warningf("AI root causes: %s", res.Note)
	}
	return explain.Markdown(res)
}

// orNil returns c as T, or a nil T when c is nil: a nil *ghapi.Client in an
// interface would not compare equal to nil.
func orNil[T any](c *ghapi.Client) T {
	var zero T
	if c == nil {
		return zero
	}
	return any(c).(T)
}
