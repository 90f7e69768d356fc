package action

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/artifact"
	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/explain"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/owners"
	"github.com/flakegate/flakegate/pkg/publish"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

const (
	// keepHistory bounds the carried history: runs older than this are
	// dropped when the next report is made.
	keepHistory = 365 * 24 * time.Hour
	// historyFile and reportFile are the names inside the report artifact.
	historyFile = "history.json.gz"
	reportFile  = "report.json"
	// maxReportArtifact bounds the download of the previous report.
	maxReportArtifact = 256 << 20
	// summaryBudget leaves room under GitHub's 1 MiB for the other sections.
	summaryBudget = publish.MaxSummaryBytes - 64<<10
	// maxIssueBody: GitHub refuses issue bodies over 65,536 characters.
	maxIssueBody = 65536 - 1024
)

// errNoReport is an artifact without report.json: a gate run's.
var errNoReport = errors.New("no " + reportFile + " in the artifact")

// previous is what the last successful report run left.
type previous struct {
	report  *score.Report
	history *history.History
	runID   int64 // the run that made it
}

func (a *run) report(ctx context.Context) (outcome, error) {
	now := a.env.Now().UTC()
	var prev previous
	var collected *history.History
	var skipped []history.Skipped
	branch := a.reportBranch()

	if a.cfg.GitHubToken.IsSet() {
		if err := a.stage("Previous report", func() error {
			var err error
			prev, err = a.previousReport(ctx, branch)
			return err
		}); err != nil {
			// A missing or unreadable previous report is not fatal: the
			// trend and the carried history are left out, and said so.
			a.log.Warningf("previous report: %v; this report has no trend and downloads every run in the window", err)
		}
		if err := a.stage("Collect workflow runs", func() error {
			var err error
			collected, err = a.collectRuns(ctx, branch, prev.history, now)
			return err
		}); err != nil {
			return outcome{}, err
		}
	}
	if len(a.cfg.Results) > 0 {
		if err := a.stage("Read local results", func() error {
			local, err := a.readLocal(ctx, a.cfg.Results)
			if err != nil {
				return fmt.Errorf("input results: %w", err)
			}
			collected, err = history.Combine(collected, local, time.Time{})
			return err
		}); err != nil {
			return outcome{}, err
		}
	}
	if collected == nil {
		return outcome{}, errors.New("no results: give the results input, or a github-token to read workflow runs")
	}
	skipped = collected.Skipped
	full, err := history.Combine(prev.history, collected, now.Add(-keepHistory))
	if err != nil {
		return outcome{}, err
	}
	window, err := history.Combine(full, &history.History{}, now.AddDate(0, 0, -a.cfg.LookbackDays))
	if err != nil {
		return outcome{}, err
	}
	window.Totals, window.Skipped = collected.Totals, skipped

	opts := score.Defaults()
	opts.Threshold, opts.MinCommits, opts.InfraThreshold = a.cfg.Threshold, a.cfg.MinCommits, a.cfg.InfraThreshold
	opts.Source, opts.Now = a.cfg.GitHub.Repository, now
	rep, err := score.Score(window, opts)
	if err != nil {
		return outcome{}, fmt.Errorf("score: %w", err)
	}
	if f, name, err := owners.Find(a.cfg.GitHub.Workspace, os.ReadFile); err != nil {
		a.log.Warningf("%s: %v; owners are left out", name, err)
	} else if f != nil {
		f.Annotate(rep.Tests, a.cfg.GitHub.Workspace)
	}
	trend := score.Compare(prev.report, rep)
	for _, s := range rep.SkippedFiles {
		a.log.Warningf("skipped %s: %s", s.Path, s.Error)
	}

	aiSection := ""
	if a.cfg.AIEnabled() {
		_ = a.stage("AI root causes", func() error {
			aiSection = a.explain(ctx, rep)
			return nil
		})
	}

	files := map[string][]byte{}
	if err := a.stage("Write reports", func() error {
		for name, f := range map[string]func(io.Writer, *score.Report) error{
			reportFile: render.JSON, "report.csv": render.CSV, "report.html": render.HTML,
		} {
			var b bytes.Buffer
			if err := f(&b, rep); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			files[name] = b.Bytes()
		}
		var md bytes.Buffer
		if err := render.Markdown(&md, rep, render.MarkdownOptions{Title: "flakegate report"}); err != nil {
			return err
		}
		files["report.md"] = md.Bytes()
		var hb bytes.Buffer
		if err := history.Encode(&hb, full); err != nil {
			return err
		}
		files[historyFile] = hb.Bytes()
		return a.writeFiles(files)
	}); err != nil {
		return outcome{}, err
	}

	summary, err := a.summary(rep, trend, aiSection, summaryBudget)
	if err != nil {
		return outcome{}, err
	}
	if _, err := publish.AppendSummary(a.cfg.GitHub.StepSummary, summary); err != nil {
		a.log.Warningf("job summary: %v", err)
	}
	if a.cfg.UploadArtifact {
		_ = a.stage("Upload report artifact", func() error { a.upload(ctx, files); return nil })
	}
	if a.cfg.TrackingIssue {
		_ = a.stage("Tracking issue", func() error { a.trackingIssue(ctx, rep, trend); return nil })
	}
	a.log.Infof("flakegate: %d flaky tests of %d analysed", rep.FlakyCount, rep.TestsAnalyzed)
	return outcome{verdict: "pass", flaky: rep.FlakyCount, jsonPath: filepath.Join(a.reportDir, reportFile)}, nil
}

// summary renders the job summary: the report, the trend, the AI section
// and annotations that did not fit the log's caps.
func (a *run) summary(rep *score.Report, trend *score.Trend, ai string, budget int) (string, error) {
	var tail bytes.Buffer
	if trend != nil {
		if err := render.TrendMarkdown(&tail, trend); err != nil {
			return "", err
		}
	}
	if ai != "" {
		tail.WriteString("\n" + ai + "\n")
	}
	tail.WriteString(a.overflow())
	var md bytes.Buffer
	err := render.Markdown(&md, rep, render.MarkdownOptions{Title: "flakegate report", MaxBytes: max(4096, budget-min(tail.Len(), budget/2)),
		ArtifactHint: fmt.Sprintf("the %s artifact", render.EscapeMarkdown(a.cfg.ArtifactName))})
	if err != nil {
		return "", err
	}
	out := md.String()
	if len(out)+tail.Len() <= budget {
		out += tail.String()
	}
	return out, nil
}

// overflow lists the messages over GitHub's annotation caps, for the job
// summary: nothing is left out silently.
func (a *run) overflow() string {
	n := len(a.log.Overflow)
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n<details><summary>%d more messages (over GitHub's annotation limits)</summary>\n\n", n)
	for _, an := range a.log.Overflow {
		fmt.Fprintf(&b, "- %s: %s\n", an.Level, render.EscapeMarkdown(render.Truncate(an.Message, 500)))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// workflowFile returns this run's workflow file name, from
// GITHUB_WORKFLOW_REF ("owner/repo/.github/workflows/f.yml@ref").
func (a *run) workflowFile() string {
	ref, _, _ := strings.Cut(a.cfg.GitHub.WorkflowRef, "@")
	return path.Base(ref)
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

// previousReport finds the newest successful run of this workflow on
// branch, other than this one, with a report artifact, and reads its report
// and history. Runs of other branches are never read: a report made on a
// feature branch must not move the baseline of every pull request.
func (a *run) previousReport(ctx context.Context, branch string) (previous, error) {
	c, err := a.client()
	if err != nil {
		return previous{}, err
	}
	wf := a.workflowFile()
	if wf == "" || wf == "." {
		return previous{}, errors.New("GITHUB_WORKFLOW_REF is not set: cannot find this workflow's earlier runs")
	}
	if branch == "" {
		return previous{}, errors.New("no branch to read the last report from")
	}
	runs, err := c.ListWorkflowRuns(ctx, a.repo(), ghapi.RunFilter{Workflow: wf, Branch: branch, Status: "success", MaxRuns: 20})
	if err != nil {
		return previous{}, err
	}
	for _, r := range runs {
		// One workflow may both gate pull requests and report on a
		// schedule: only report runs leave a report.
		switch r.GetEvent() {
		case "pull_request", "pull_request_target", "workflow_run":
			continue
		}
		if r.GetID() == a.cfg.GitHub.RunID {
			continue
		}
		arts, err := c.ListRunArtifacts(ctx, a.repo(), r.GetID(), a.cfg.ArtifactName)
		if err != nil {
			return previous{}, err
		}
		for _, art := range arts {
			if art.GetName() != a.cfg.ArtifactName || art.GetExpired() {
				continue
			}
			data, err := c.DownloadArtifact(ctx, a.repo(), art.GetID(), maxReportArtifact)
			if errors.Is(err, ghapi.ErrExpired) {
				continue
			}
			if err != nil {
				return previous{}, fmt.Errorf("artifact %q of run %d: %w", art.GetName(), r.GetID(), err)
			}
			p, err := readReportArtifact(data)
			if errors.Is(err, errNoReport) {
				continue // a gate run's artifact
			}
			if err != nil {
				return previous{}, fmt.Errorf("artifact %q of run %d: %w", art.GetName(), r.GetID(), err)
			}
			a.log.Infof("previous report: run %d on %s (%s)", r.GetID(), branch, r.GetCreatedAt().Format(time.RFC3339))
			p.runID = r.GetID()
			return p, nil
		}
	}
	return previous{}, fmt.Errorf("no earlier successful run of this workflow on %s has a report artifact", branch)
}

// readReportArtifact reads report.json and history.json.gz from a report
// artifact zip, in memory.
func readReportArtifact(data []byte) (previous, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return previous{}, fmt.Errorf("not a zip archive: %w", err)
	}
	var p previous
	for _, f := range zr.File {
		switch f.Name {
		case reportFile:
			rc, err := f.Open()
			if err != nil {
				return previous{}, err
			}
			var rep score.Report
			err = json.NewDecoder(io.LimitReader(rc, maxReportArtifact)).Decode(&rep)
			rc.Close()
			if err != nil {
				return previous{}, fmt.Errorf("%s: %w", reportFile, err)
			}
			p.report = &rep
		case historyFile:
			rc, err := f.Open()
			if err != nil {
				return previous{}, err
			}
			p.history, err = history.Decode(rc)
			rc.Close()
			if err != nil {
				return previous{}, err
			}
		}
	}
	if p.report == nil {
		return previous{}, errNoReport
	}
	return p, nil
}

// collectRuns downloads the JUnit artifacts of runs in the window that the
// carried history does not already hold.
func (a *run) collectRuns(ctx context.Context, branch string, carried *history.History, now time.Time) (*history.History, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	var known map[string]bool
	if carried != nil {
		known = carried.Keys()
	}
	a.log.Infof("reading runs on branch %q from the last %d days", branch, a.cfg.LookbackDays)
	h, st, err := collect.GitHub(ctx, c, collect.GitHubOptions{
		TempDir: a.cfg.GitHub.RunnerTemp,
		Repo:    a.repo(), Workflows: a.cfg.Workflows, Branch: branch,
		Since: now.AddDate(0, 0, -a.cfg.LookbackDays), MaxRuns: a.cfg.MaxRuns,
		Match: a.cfg.MatchArtifact, Known: known, Exclude: a.notOfBranch(nil, false),
	})
	if err != nil {
		return nil, fmt.Errorf("collect: %w", err)
	}
	a.log.Infof("runs listed %d, left out %d (forks' runs, this run), already known %d, artifacts downloaded %d (%d bytes), API requests %d",
		st.RunsListed, st.RunsExcluded, st.RunsKnown, st.Downloaded, st.Bytes, c.Stats().Requests)
	return h, nil
}

func (a *run) readLocal(ctx context.Context, globs []string) (*history.History, error) {
	srcs, missing, err := collect.LocalIn(a.cfg.GitHub.Workspace, globs)
	if err != nil {
		return nil, err
	}
	h, err := history.Load(ctx, srcs, history.Options{})
	if err != nil {
		return nil, err
	}
	h.Skipped = append(missing, h.Skipped...)
	return h, nil
}

// resolve makes workspace-relative globs absolute.

// upload sends the report files as the report artifact. Failures degrade to
// warnings: the files stay in report-dir.
func (a *run) upload(ctx context.Context, files map[string][]byte) {
	c, err := artifact.FromEnv(a.env.Getenv, artifact.Options{})
	if errors.Is(err, artifact.ErrNotAvailable) {
		a.log.Noticef("artifact upload skipped: ACTIONS_RESULTS_URL is not set; the report is in %s for actions/upload-artifact", a.reportDir)
		return
	}
	if err != nil {
		a.log.Warningf("artifact upload: %v; the report is in %s", err, a.reportDir)
		return
	}
	res, err := c.Upload(ctx, a.cfg.ArtifactName, files, artifact.UploadOptions{RetentionDays: 90, MaxRetentionDays: a.cfg.GitHub.RetentionDays})
	if err != nil {
		a.log.Warningf("artifact upload: %v; the report is in %s", err, a.reportDir)
		return
	}
	a.log.Infof("uploaded artifact %s (id %d, %d bytes)", res.Name, res.ID, res.Size)
}

// trackingIssue creates or updates the one issue that tracks flaky tests.
func (a *run) trackingIssue(ctx context.Context, rep *score.Report, trend *score.Trend) {
	c, err := a.client()
	if err != nil {
		a.log.Warningf("tracking issue: %v", err)
		return
	}
	body, err := a.summary(rep, trend, "", maxIssueBody)
	if err != nil {
		a.log.Warningf("tracking issue: %v", err)
		return
	}
	is, created, err := c.UpsertIssue(ctx, a.repo(), issueMarker, ghapi.IssueSpec{
		Title: "flakegate: " + strconv.Itoa(rep.FlakyCount) + " flaky tests", Body: body, State: "open"})
	if err != nil {
		a.log.Warningf("tracking issue: %v", err)
		return
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	a.log.Infof("tracking issue #%d %s", is.GetNumber(), verb)
}

// explain asks Gemini for root causes; any failure becomes a note.
func (a *run) explain(ctx context.Context, rep *score.Report) string {
	in := explain.Input{Source: rep.Source, TestsAnalyzed: rep.TestsAnalyzed, FlakyCount: rep.FlakyCount, RunsAnalyzed: rep.Runs}
	for _, t := range rep.Flaky() {
		et := explain.Test{Name: t.Name, Score: t.FlakeScore, Evidence: strings.Join(t.Evidence, ","), Failures: t.Failures, Runs: t.Runs, Messages: t.ErrorMessages}
		for _, s := range t.Signatures {
			et.Signatures = append(et.Signatures, s.Hash)
		}
		in.Tests = append(in.Tests, et)
	}
	g, err := explain.NewGemini(explain.Options{APIKey: a.cfg.GeminiAPIKey.Value(), Model: a.cfg.GeminiModel, BaseURL: a.env.GeminiBaseURL, HTTPClient: a.env.HTTPClient})
	if err != nil {
		return explain.Markdown(explain.Result{Note: explain.Note(err)})
	}
	res := explain.Run(ctx, g, in)
	if res.Note != "" {
		a.log.Warningf("AI root causes: %s", res.Note)
	}
	return explain.Markdown(res)
}
