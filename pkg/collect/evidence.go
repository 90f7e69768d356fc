package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/owners"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"

	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// KeepHistory bounds the carried history: runs older than this are
// dropped when the next report is made.
const KeepHistory = 365 * 24 * time.Hour

// Logger is where the evidence stages say what they read and what they
// left out; the action's log satisfies it.
type Logger interface {
	Infof(format string, args ...any)
	Noticef(format string, args ...any)
	Warningf(format string, args ...any)
}

// Scope is where the action reads workflow runs: the repository, the
// workflows, the branch and the window.
type Scope struct {
	Repo ghapi.Repo
	// FullName is owner/name: runs whose head lives elsewhere (a fork's
	// branch of the same name) are not this repository's history.
	FullName  string
	Workflows []string // file names or ids; empty means every workflow
	Branch    string
	Since     time.Time // runs created before are not listed
	MaxRuns   int
	Match     func(artifactName string) bool // which artifacts hold JUnit XML
	Self      int64                          // this run's id, never read
	TempDir   string                         // downloads spool there
	Workspace string                         // local globs are relative to it
}

// Report is a report's evidence.
type Report struct {
	// Window is what is scored: the runs in the lookback window of the
	// workflows selected (carried runs of other workflows are left out),
	// or every local result whatever its date.
	Window *history.History
	// Full is what the next report carries: the previous report's history
	// and every run read now, within KeepHistory.
	Full *history.History
	// Previous is the last report. Its History is nil: what it carried is
	// in Full (within KeepHistory), and holding it as well kept a second
	// copy of the carried history for the rest of the report.
	Previous Previous
	// Filtered says what the window left out, for the summary and the log;
	// empty when nothing was.
	Filtered string
}

// ReportOptions configures ForReport.
type ReportOptions struct {
	Scope
	// Client reads workflow runs and the previous report; nil reads local
	// results only.
	Client *ghapi.Client
	// Results are local globs. With them, no workflow runs are listed: the
	// user gave the results to score. The previous report still adds its
	// trend when a client is given.
	Results []string
	// Previous locates the last report.
	Previous PreviousOptions
	// Uploads: this report's artifact will be the next report's last, so
	// a history that lacks the carried runs must not be made (the action's
	// upload-artifact).
	Uploads bool
	Now     time.Time
}

// ForReport gathers a report's evidence: local results when given, else
// the JUnit artifacts of the runs in the window that the last report's
// history does not hold yet; the last report's history is added in both
// cases (for the trend and the carried history).
func ForReport(ctx context.Context, o ReportOptions, log Logger) (Report, error) {
	var ev Report
	// What of the previous report could not be read, for report.json's
	// skipped_files and the summary; reset says that the carried history
	// starts anew.
	var unread []history.Skipped
	reset := ""
	if o.Client != nil {
		p, err := PreviousReport(ctx, o.Client, o.Previous)
		switch {
		case errors.Is(err, ErrFirstReport):
			log.Noticef("previous report: none, as no earlier run of this workflow on %s succeeded (a first report): no trend yet, and every run in the window is read", o.Previous.Branch)
		case err != nil && (len(o.Results) == 0 || o.Uploads) && retryable(ctx, err):
			// This report would carry only the window's runs, and the
			// next one would take them as the whole history: the runs
			// carried from before the window would be lost for good
			// because of a 5xx or a broken connection. A failed run is
			// not a previous report: a re-run (or next week's report)
			// reads the one there is. A report of the results input is
			// no different when it uploads its artifact (Uploads): that
			// is the next report's last, and carries only the results.
			// (Without the upload, it works without GitHub.)
			return Report{}, fmt.Errorf("previous report: %w: it could not be read, and this report would replace the history it carries with the window's runs; re-run the job", err)
		case errors.Is(err, ErrNoReportArtifact):
			// Expired, or not uploaded; or an artifact-name changed on
			// purpose, to start the carried history anew: said in the log.
			log.Warningf("previous report: %v; this report has no trend and reads every run in the window", err)
		case err != nil:
			// Not fatal: the trend and the carried history are left out,
			// and the summary says so.
			log.Warningf("previous report: %v; this report has no trend and reads every run in the window", err)
			reset = fmt.Sprintf("the previous report could not be read (%v): this report has no trend, and its carried history starts anew with the runs read now", err)
			unread = append(unread, history.Skipped{Path: "the previous report", Error: err.Error() + "; no trend, and the carried history starts anew"})
		default:
			log.Infof("previous report: run %d on %s (%s)", p.RunID, o.Previous.Branch, p.Created.UTC().Format(time.RFC3339))
			if p.ReportErr != nil {
				log.Warningf("previous report: %v; this report has no trend, and the history it carried is read all the same", p.ReportErr)
				unread = append(unread, history.Skipped{Path: fmt.Sprintf("%s of the previous report (run %d)", render.ReportJSONFile, p.RunID),
					Error: p.ReportErr.Error() + "; this report has no trend"})
			}
			if p.HistoryErr != nil {
				var ve *history.VersionError
				if errors.As(p.HistoryErr, &ve) && ve.Newer() {
					// Carrying on would replace the runs it holds with
					// this report's, for good.
					return Report{}, fmt.Errorf("previous report: %w: a newer flakegate wrote it, and this report would replace the runs it carries with a history of its own. "+
						"Upgrade flakegate (the workflow's uses: line) to the release that wrote it or a later one; or, to start the carried history anew and lose its runs, "+
						"set artifact-name to a name no earlier report used (and the gates that read this report to the same name)", p.HistoryErr)
				}
				reset = fmt.Sprintf("the history carried in the previous report (run %d) could not be read: it starts anew with the runs read now, and the runs it held that are older than the window are lost", p.RunID)
				log.Warningf("previous report: %v; the trend is kept, but every run in the window is read again and the carried history starts anew", p.HistoryErr)
				unread = append(unread, history.Skipped{Path: fmt.Sprintf("%s of the previous report (run %d)", render.HistoryFile, p.RunID),
					Error: p.HistoryErr.Error() + "; the carried history starts anew"})
			}
			ev.Previous = p
		}
	}
	var collected, local *history.History
	var st Stats
	stopped := "" // why the collection stopped early, for the summary
	switch {
	case len(o.Results) > 0:
		h, err := loadInput(ctx, o.Workspace, "results", o.Results, log)
		if err != nil {
			return Report{}, err
		}
		local = h
	case o.Client != nil:
		var known map[string]bool
		if ev.Previous.History != nil {
			known = ev.Previous.History.Keys()
		}
		log.Infof("reading runs on branch %q since %s", o.Branch, o.Since.UTC().Format(time.DateOnly))
		h, stats, err := GitHub(ctx, o.Client, GitHubOptions{
			TempDir: o.TempDir, Repo: o.Repo, Workflows: o.Workflows, Branch: o.Branch,
			Since: o.Since, MaxRuns: o.MaxRuns, Match: o.Match, Known: known, Exclude: o.notOfBranch(nil, false),
		})
		switch {
		case err == nil:
		case ctx.Err() == nil && (errors.Is(err, ghapi.ErrRateLimited) || errors.Is(err, ghapi.ErrUnresponsive)):
			// What was read is kept and carried: runs not read in full
			// are left out of the next report's known runs (Partial,
			// or not carried at all), so it reads them. Throwing it away
			// would make a repository over its request budget start from
			// nothing every week, and fail the same way.
			stopped = fmt.Sprintf("the collection stopped early (%v): the report covers the runs read, and the next report reads the rest", err)
			log.Warningf("%s", stopped)
		default:
			return Report{}, fmt.Errorf("collect: %w", err)
		}
		st = stats
		for _, s := range h.Skipped {
			log.Warningf("skipped %s: %s", s.Path, s.Error)
		}
		log.Infof("runs listed %d, left out %d (forks' runs, this run), already known %d, artifacts downloaded %d (%d bytes), API requests %d",
			stats.RunsListed, stats.RunsExcluded, stats.RunsKnown, stats.Downloaded, stats.Bytes, o.Client.Stats().Requests)
		collected = h
	default:
		return Report{}, errors.New("no results: give the results input, or a github-token to read workflow runs")
	}

	if local != nil {
		full, err := history.Combine(ev.Previous.History, local, o.Now.Add(-KeepHistory))
		if err != nil {
			return Report{}, err
		}
		ev.Full = full
		ev.Previous.History = nil
		// Local results are scored whatever their dates: the user named
		// them. The carried history adds nothing to them but the trend.
		ev.Window = withUnread(local, unread)
		ev.Filtered = reset
		ev.Full = boundCarried(history.Stamped(ev.Full, o.Now), log)
		return ev, nil
	}
	// A run read now replaces every attempt of it the previous report
	// carried: re-run since, or read in part then.
	full := history.Replace(ev.Previous.History, collected, o.Now.Add(-KeepHistory))
	ev.Full = full
	// Both are in full now: neither is held while the window is made.
	totals, skipped, legs := collected.Totals, collected.Skipped, collected.Legs
	ev.Previous.History, collected = nil, nil
	// The window is the runs since Since of the workflows selected now:
	// the carried history may hold runs of workflows the previous report
	// read and this one does not. They stay in Full, for a report that
	// selects them again.
	sel := selectWorkflows(o.Workflows, st.WorkflowIDs)
	var old, other, undecided int
	inWindow := func(r history.Run) bool {
		if !o.Since.IsZero() && !r.Time.IsZero() && r.Time.Before(o.Since) {
			old++
			return false
		}
		keep, known := sel.keep(r)
		if !known {
			undecided++
		}
		if !keep {
			other++
		}
		return keep
	}
	keep := make([]bool, len(full.Runs))
	every := true
	for i, r := range full.Runs {
		keep[i] = inWindow(r)
		every = every && keep[i]
	}
	var window *history.History
	if every {
		// The window shares full's runs and tests, which FilterRuns would
		// copy unchanged: a window of every run carried held a second
		// copy of its cells.
		w := *full
		window = &w
	} else {
		i := -1 // FilterRuns asks of full's runs once each, in order
		window = history.FilterRuns(full, func(history.Run) bool { i++; return keep[i] })
	}
	var filtered []string
	if reset != "" {
		filtered = append(filtered, reset)
	}
	if stopped != "" {
		filtered = append(filtered, stopped)
	}
	if st.Artifacts > 0 && st.Matched == 0 {
		filtered = append(filtered, fmt.Sprintf("none of the %d artifacts of the runs read matched artifact-pattern (names seen: %s)", st.Artifacts, strings.Join(st.Unmatched, ", ")))
	}
	if old > 0 {
		filtered = append(filtered, fmt.Sprintf("%d runs older than %s were left out of the window (lookback-days)", old, o.Since.UTC().Format(time.DateOnly)))
	}
	if other > 0 {
		filtered = append(filtered, fmt.Sprintf("%d runs carried from the previous report, of workflows not in %s, were left out of the window (workflows)", other, strings.Join(o.Workflows, ", ")))
	}
	ev.Filtered = strings.Join(filtered, "; ")
	if undecided > 0 {
		log.Noticef("%d runs carried from the previous report cannot be matched to the workflows input (a history written by an earlier flakegate records no workflow): they are kept in the window whatever their workflow", undecided)
	}
	window.Totals, window.Skipped, window.Legs = totals, skipped, legs
	ev.Window = withUnread(window, unread)
	// A run with no time (a local file that states none, carried by an
	// earlier report) gets this report's: it leaves the carried history
	// after KeepHistory, and the window after lookback-days, as any run.
	ev.Full = boundCarried(history.Stamped(ev.Full, o.Now), log)
	return ev, nil
}

// retryable reports whether err is a failure a later attempt may not
// meet: a server error, a rate limit, a host that stopped answering, a
// broken connection or a timeout (not ctx's own end).
func retryable(ctx context.Context, err error) bool {
	var ae *ghapi.APIError
	switch {
	case ctx.Err() != nil:
		return false
	case errors.Is(err, ghapi.ErrRateLimited), errors.Is(err, ghapi.ErrUnresponsive):
		return true
	case errors.As(err, &ae):
		return ae.StatusCode >= 500 || ae.StatusCode == 429
	}
	return retry.Transient(err)
}

// withUnread adds to h's skipped inputs the parts of the previous report
// that could not be read, so that report.json and the summary list them.
func withUnread(h *history.History, unread []history.Skipped) *history.History {
	if len(unread) == 0 {
		return h
	}
	c := *h
	c.Skipped = append(slices.Clip(h.Skipped), unread...)
	return &c
}

// workflows is a selection of workflows (Scope.Workflows) as runs record
// them (history.Run.WorkflowID and WorkflowFile); nil selects every run.
type workflows struct {
	ids   map[int64]bool
	files map[string]bool
	// unresolved: a workflow named by file had no run listed, so its id
	// is unknown, and a run that records only an id may be of it.
	unresolved bool
}

// selectWorkflows selects wfs (file names or ids); ids are the ids of the
// workflows named by file, as the runs listed showed (Stats.WorkflowIDs).
// Empty wfs select every workflow.
func selectWorkflows(wfs []string, ids map[string]int64) *workflows {
	if len(wfs) == 0 {
		return nil
	}
	s := &workflows{ids: map[int64]bool{}, files: map[string]bool{}}
	for _, wf := range wfs {
		if id, err := strconv.ParseInt(wf, 10, 64); err == nil {
			s.ids[id] = true
			continue
		}
		s.files[path.Base(wf)] = true
		if id, ok := ids[wf]; ok {
			s.ids[id] = true
		} else {
			s.unresolved = true
		}
	}
	return s
}

// keep reports whether r is of a selected workflow; known is false when
// r does not record enough to tell, and is then kept.
func (s *workflows) keep(r history.Run) (keep, known bool) {
	switch {
	case s == nil:
		return true, true
	case r.WorkflowID == 0 && r.WorkflowFile == "":
		return true, false
	case s.ids[r.WorkflowID] || r.WorkflowFile != "" && s.files[r.WorkflowFile]:
		return true, true
	case r.WorkflowFile == "" && s.unresolved:
		return true, false
	}
	return false, true
}

// notOfBranch reports the runs listed on a branch that are not that
// branch's history: this run, runs whose head commit lives in another
// repository (a fork's branch of the same name), and runs of the commits in
// skip. With prRuns, pull request runs too: they test a PR's head branch,
// which a fork may name like the base, or a merge into another base.
func (s Scope) notOfBranch(skip map[string]bool, prRuns bool) func(ghapi.Run) bool {
	return func(r ghapi.Run) bool {
		switch ev := r.Event; {
		case skip[r.HeadSHA], r.ID == s.Self,
			prRuns && (ev == "pull_request" || ev == "pull_request_target"):
			return true
		}
		return r.HeadRepo != "" && s.FullName != "" && !strings.EqualFold(r.HeadRepo, s.FullName)
	}
}

// Gate is a pull request gate's evidence.
type Gate struct {
	Base, Head *history.History
	// History is the base branch's recent runs, for p0; nil when there is
	// none.
	History *history.History
	// LastReport is the last report on the base branch, for the flaky
	// tests the comment lists; nil when there is none.
	LastReport *score.Report
	// Notes say how the local base and head results were read: files
	// joined into runs (JoinParts), files that look like parts of runs
	// (Fragments). The gate lists them with its reasons.
	Notes []string
	// Tested is flakegate matrix's record, beside the base-results files,
	// of the commits it ran (model.MatrixManifestFile), which the files do
	// not name; nil when there is none, or the base side is not local.
	Tested *model.MatrixManifest
}

// GateOptions configures ForGate.
type GateOptions struct {
	// Scope's Branch is the base branch.
	Scope
	Client *ghapi.Client // nil: local results only
	// BaseResults, HeadResults and History are local globs; an empty one
	// is read from the artifacts of runs on BaseSHA, HeadSHA and the base
	// branch.
	BaseResults, HeadResults, History []string
	BaseSHA, HeadSHA                  string
	Previous                          PreviousOptions
	Now                               time.Time
	// Infra tells an infrastructure failure (score.Options.IsInfraRun):
	// such runs are left out of the base-branch history, where every test
	// that failed in an outage would otherwise look like a flake.
	Infra score.Options
}

// ForGate gathers a gate's evidence. The base-branch history is the
// history input, or else the artifacts of recent runs of the workflows on
// the base branch; plus, either way, the history carried in the last
// report on that branch. A missing history source degrades to a notice or
// a warning: p0 then rests on the base runs and what was read.
func ForGate(ctx context.Context, o GateOptions, log Logger) (Gate, error) {
	var ev Gate
	var err error
	if ev.Base, err = o.side(ctx, "base-results", o.BaseResults, o.BaseSHA, log); err != nil {
		return Gate{}, err
	}
	if ev.Head, err = o.side(ctx, "head-results", o.HeadResults, o.HeadSHA, log); err != nil {
		return Gate{}, err
	}
	// The files of one repetition (shards, a file per class) are one run.
	var notes, warnings []string
	ev.Base, ev.Head, notes, warnings = JoinSides("base-results", "head-results", ev.Base, ev.Head, len(o.BaseResults) > 0, len(o.HeadResults) > 0)
	for _, n := range notes {
		log.Noticef("%s", n)
	}
	for _, w := range warnings {
		log.Warningf("%s", w)
	}
	ev.Notes = append(append(ev.Notes, notes...), warnings...)
	if ev.Head == nil || len(ev.Head.Runs) == 0 {
		left := ""
		if ev.Head != nil && len(ev.Head.Skipped) > 0 {
			left = fmt.Sprintf(" (%d input(s) left out, listed above)", len(ev.Head.Skipped))
		}
		return Gate{}, fmt.Errorf("no head results%s: give head-results, or run the suite on the PR's head commit %s with JUnit artifacts in a completed run (this run's own artifacts are not read: it is still running; download them with actions/download-artifact and give head-results)", left, model.ShortSHA(o.HeadSHA))
	}
	if ev.Base == nil || len(ev.Base.Runs) == 0 {
		if ev.Base == nil && len(o.BaseResults) == 0 && o.Client == nil {
			return Gate{}, errors.New("no base results: give base-results, or a github-token to read the artifacts of runs on the PR's base commit")
		}
		// No base run read (none ran on the base commit, or its
		// artifacts expired): the base side rests on base-branch history,
		// and the evidence is partial, which the verdict says.
		if ev.Base == nil {
			ev.Base = &history.History{}
		}
		ev.Base.Skipped = append(ev.Base.Skipped, history.Skipped{Path: "runs of the base commit " + model.ShortSHA(o.BaseSHA),
			Error: "no JUnit results read from them (no completed run with a matching artifact, or its artifacts expired): the base side rests on base-branch history"})
		log.Warningf("base-results: no runs of the base commit %s were read; the base side rests on base-branch history", model.ShortSHA(o.BaseSHA))
	}
	if len(o.BaseResults) == 0 && len(o.HeadResults) == 0 {
		ev.Base, ev.Head = o.sameWorkflows(ctx, ev.Base, ev.Head, log)
	}
	if len(o.BaseResults) > 0 {
		ev.Tested = matrixManifest(o.Workspace, ev.Base, log)
	}
	for _, side := range []struct {
		input string
		h     *history.History
	}{{"base-results", ev.Base}, {"head-results", ev.Head}} {
		for _, w := range Collapsed(side.input, side.h) {
			log.Warningf("%s", w)
		}
	}
	ev.History, ev.LastReport, err = o.baseHistory(ctx, ev.Base, ev.Head, log)
	return ev, err
}

// sameWorkflows weighs the workflows whose base runs have no head run with
// results, read from the artifacts of both commits' runs. In a monorepo each
// workflow runs its part of the suite, most often behind a paths filter: a
// pull request that touches the backend only has no frontend run on head,
// or one whose test jobs were skipped (a job-level filter: it succeeds with
// no JUnit). Its base runs would make every frontend test look deleted by
// the patch, and the collected test count drop; they are left out instead,
// and said. The head commit's runs of every status are listed (by workflow
// id, so another workflow of the same name does not count) to tell that
// apart from what is no answer: a run still in progress, or one that ended
// otherwise (failed, cancelled, timed out: a build the patch may break)
// with no JUnit, or a listing that failed or stopped short. Their base runs
// are left out too, but their tests were not compared, so the evidence is
// partial (inconclusive), and head says why.
func (o GateOptions) sameWorkflows(ctx context.Context, base, head *history.History, log Logger) (*history.History, *history.History) {
	if base == nil || head == nil || len(head.Runs) == 0 {
		return base, head
	}
	key := func(id int64, name string) string {
		if id != 0 {
			return strconv.FormatInt(id, 10)
		}
		return "name:" + name
	}
	onHead := map[string]bool{}
	for _, r := range head.Runs {
		onHead[key(r.WorkflowID, r.Workflow)] = true
	}
	var gone []string            // keys, in order of first base run
	names := map[string]string{} // key: the workflow's name
	for _, r := range base.Runs {
		k := key(r.WorkflowID, r.Workflow)
		if !onHead[k] && names[k] == "" {
			gone = append(gone, k)
			names[k] = r.Workflow
		}
	}
	if len(gone) == 0 {
		return base, head
	}
	// What the head commit's runs of each workflow did: "running" if one
	// is in progress, else the conclusion of one that did not succeed,
	// else "success" (or skipped, neutral).
	state := map[string]string{}
	unknown := ""
	if o.Client == nil {
		unknown = "no API client to list the head commit's runs"
	} else {
		runs, total, err := o.Client.ListWorkflowRunsTotal(ctx, o.Repo, ghapi.RunFilter{HeadSHA: o.HeadSHA, Status: ghapi.StatusAny, MaxRuns: maxHeadRunsListed})
		switch {
		case err != nil:
			unknown = fmt.Sprintf("the head commit's runs could not be listed (%v)", err)
		case total > len(runs):
			unknown = fmt.Sprintf("only %d of the head commit's %d runs were listed", len(runs), total)
		}
		for _, r := range runs {
			if r.HeadSHA != "" && r.HeadSHA != o.HeadSHA {
				continue
			}
			k := key(r.WorkflowID, r.Name)
			switch c := r.Conclusion; {
			case c == "":
				state[k] = "running"
			case state[k] == "running":
			case c == "success" || c == "skipped" || c == "neutral":
				if state[k] == "" {
					state[k] = "success"
				}
			default:
				state[k] = c
			}
		}
	}
	drop := map[string]bool{}
	var quiet []string
	var skipped []history.Skipped
	for _, k := range gone {
		drop[k] = true
		what := fmt.Sprintf("workflow %q on the head commit %s", names[k], model.ShortSHA(o.HeadSHA))
		var why string
		switch st := state[k]; {
		case st == "success":
			quiet = append(quiet, names[k]+" (ran with no JUnit results: its test jobs were skipped)")
			continue
		case st == "running":
			why = "still running: its tests were not compared; run the gate again once it completes"
		case st != "":
			why = fmt.Sprintf("its run ended %q with no JUnit results (a build the patch may break, or a cancelled run): its tests were not compared", st)
		case unknown != "":
			why = "no run with JUnit results, and " + unknown + ": its tests were not compared"
		default:
			quiet = append(quiet, names[k]+" (did not run)")
			continue
		}
		log.Warningf("head-results: %s: %s", what, why)
		skipped = append(skipped, history.Skipped{Path: what, Error: why})
	}
	if len(quiet) > 0 {
		log.Noticef("base-results: the runs on the base commit of workflow(s) with no tests on the head commit %s are left out, so their tests are not compared (a paths filter): %s",
			model.ShortSHA(o.HeadSHA), strings.Join(quiet, ", "))
	}
	base = history.FilterRuns(base, func(r history.Run) bool { return !drop[key(r.WorkflowID, r.Workflow)] })
	if len(skipped) > 0 {
		c := *head
		c.Skipped = append(slices.Clip(head.Skipped), skipped...)
		head = &c
	}
	return base, head
}

// notOfCommit reports the runs listed by head_sha that need not have
// tested that commit: a pull_request_target run's head_sha is the base
// branch's tip when the event came, while its jobs test what they check
// out, for most such workflows the pull request's head. Read as runs of
// the base commit, another pull request's failures became the base's, and
// a regression of this one was taken for a flake the base already had.
//
// issue_comment runs ("/retest" bots) and workflow_run runs are the same:
// GitHub gives them the default branch's tip, whatever they check out.
func notOfCommit(r ghapi.Run) bool {
	switch r.Event {
	case "pull_request_target", "issue_comment", "workflow_run":
		return true
	}
	return false
}

// maxHeadRunsListed bounds the head commit's runs listed to weigh the
// workflows with no head results: a commit has a few runs a workflow.
const maxHeadRunsListed = 300

// side reads one side's evidence: the local globs, or else the JUnit
// artifacts of workflow runs on that commit (every attempt).
func (o GateOptions) side(ctx context.Context, input string, globs []string, sha string, log Logger) (*history.History, error) {
	if len(globs) > 0 {
		return loadInput(ctx, o.Workspace, input, globs, log)
	}
	if sha == "" || o.Client == nil {
		return nil, nil
	}
	h, st, err := GitHub(ctx, o.Client, GitHubOptions{Repo: o.Repo, TempDir: o.TempDir, HeadSHA: sha, Workflows: o.Workflows, Match: o.Match, MaxRuns: o.MaxRuns,
		Exclude: notOfCommit})
	if err != nil {
		return nil, fmt.Errorf("artifacts of runs on %s: %w", sha, err)
	}
	if st.RunsExcluded > 0 {
		log.Noticef("%s: left out %d pull_request_target, issue_comment or workflow_run run(s) listed on %s: GitHub gives such a run the base branch's tip as its head_sha, whatever code its jobs checked out (most often a pull request's)",
			input, st.RunsExcluded, model.ShortSHA(sha))
	}
	for _, s := range h.Skipped {
		log.Warningf("%s: skipped %s: %s", input, s.Path, s.Error)
	}
	return h, nil
}

func (o GateOptions) baseHistory(ctx context.Context, base, head *history.History, log Logger) (*history.History, *score.Report, error) {
	branch := o.Branch
	// Runs of the PR's head commit are the patch's, not the base's. When
	// the base side was read from the artifacts of the base commit's runs,
	// those runs are the base side already and would count twice.
	skip := map[string]bool{}
	if o.HeadSHA != "" {
		skip[o.HeadSHA] = true
	}
	if len(o.BaseResults) == 0 && o.BaseSHA != "" {
		skip[o.BaseSHA] = true
	}
	api := o.Client != nil
	if api && branch == "" {
		log.Noticef("base-branch history: the base branch is unknown (no pull request, no branch input, and the event does not name the default branch); set the branch input to read it")
	}
	var prev Previous
	if api && branch != "" {
		var err error
		if prev, err = PreviousReport(ctx, o.Client, o.Previous); err != nil {
			log.Noticef("base-branch history: last report on %s: %v; no carried history is added", branch, err)
		} else {
			log.Infof("previous report: run %d on %s (%s)", prev.RunID, branch, prev.Created.UTC().Format(time.RFC3339))
			if prev.ReportErr != nil {
				log.Warningf("last report: %v; the flaky tests it lists are not named, but its carried history is read", prev.ReportErr)
			}
			if prev.HistoryErr != nil {
				log.Warningf("base-branch history: %v; no carried history is added", prev.HistoryErr)
			}
		}
	}
	var carried *history.History
	if prev.History != nil {
		carried = history.Filter(prev.History, func(r model.Run) bool {
			return !skip[r.CommitSHA] && (r.Branch == "" || r.Branch == branch)
		})
	}

	var h *history.History
	var from string
	switch {
	case len(o.History) > 0:
		local, err := loadInput(ctx, o.Workspace, "history", o.History, log)
		if err != nil {
			return nil, nil, err
		}
		h, from = local, "the history input"
	case api && branch != "":
		h, from = o.collectBase(ctx, skip, carried, log)
	}
	if h == nil && carried == nil {
		return nil, prev.Report, nil
	}
	// Runs read now, or given in the history input, replace every attempt
	// of them the report carried: a file names its run (run_id) with no
	// attempt, where the report carried the run's attempt, and the two
	// would count twice. A file that names no run is kept beside them.
	combined := history.Replace(carried, h, o.Now.Add(-KeepHistory))
	var parts []string
	read := 0
	if h != nil {
		read = len(h.Runs)
		parts = append(parts, fmt.Sprintf("%d from %s", read, from))
	}
	if carried != nil {
		parts = append(parts, fmt.Sprintf("%d carried in the report of run %d", len(combined.Runs)-read, prev.RunID))
	}
	// What the gate may not read as a baseline goes, said, before the
	// count is given.
	combined, notes := GateHistory(combined, base, head, o.Infra)
	for _, n := range notes {
		log.Infof("base-branch %s", n)
	}
	log.Infof("base-branch history for p0: %d runs (%s)", len(combined.Runs), strings.Join(parts, "; "))
	return combined, prev.Report, nil
}

// GateMaxRead caps the base-branch runs a gate reads beyond those its
// report carries, newest first; GateRateReserve is how many of the hour's
// API requests it leaves to the repository's other jobs, at about
// requestsPerRun a run (an artifact listing, a download and its redirect).
const (
	GateMaxRead     = 50
	GateRateReserve = 300
	requestsPerRun  = 3
)

// collectBase reads the JUnit artifacts of the runs of the workflows on
// the base branch in the window, leaving out the runs the carried history
// holds and those that are not base history (see notOfBranch). What it
// cannot read becomes a warning; it returns the history and where it came
// from.
func (o GateOptions) collectBase(ctx context.Context, skip map[string]bool, carried *history.History, log Logger) (*history.History, string) {
	wfs := "every workflow"
	if len(o.Workflows) > 0 {
		wfs = strings.Join(o.Workflows, ", ")
	}
	from := fmt.Sprintf("the JUnit artifacts of runs of %s on %s since %s", wfs, o.Branch, o.Since.UTC().Format(time.DateOnly))
	var known map[string]bool
	if carried != nil {
		known = carried.Keys()
	}
	// Each run read costs an artifact listing and a download or more of
	// the repository's API budget (1,000 requests an hour for a workflow's
	// token), and the gate runs on every push to every pull request: it
	// reads the newest runs its report does not carry, up to a cap, and
	// leaves a reserve for the repository's other jobs.
	maxRead := GateMaxRead
	if left := o.Client.Stats().RateRemaining; left >= 0 {
		maxRead = min(maxRead, (left-GateRateReserve)/requestsPerRun)
	}
	if maxRead <= 0 {
		log.Noticef("base-branch history: not read: %d API requests are left this hour, and the gate keeps %d for the repository's other jobs; p0 rests on the history the report carries", o.Client.Stats().RateRemaining, GateRateReserve)
		return nil, from
	}
	h, st, err := GitHub(ctx, o.Client, GitHubOptions{
		TempDir: o.TempDir, Repo: o.Repo, Workflows: o.Workflows, Branch: o.Branch,
		Since: o.Since, MaxRuns: o.MaxRuns, Match: o.Match, Known: known, Exclude: o.notOfBranch(skip, true), MaxRead: maxRead,
	})
	if st.RunsUnread > 0 {
		log.Noticef("base-branch history: the newest %d runs not carried by a report were read, %d older ones not (the gate reads at most %d a run, keeping %d API requests for the repository's other jobs); the weekly report reads them once for every gate after it",
			maxRead, st.RunsUnread, GateMaxRead, GateRateReserve)
	}
	for _, s := range h.Skipped {
		log.Warningf("base-branch history: skipped %s: %s", s.Path, s.Error)
	}
	if err != nil {
		log.Warningf("base-branch history: %v; p0 rests on what was read", err)
	}
	log.Infof("base-branch history: runs of %s on %s listed %d, left out %d (the PR's commits, pull request runs, this run), already carried %d, artifacts downloaded %d (%d bytes)",
		wfs, o.Branch, st.RunsListed, st.RunsExcluded, st.RunsKnown, st.Downloaded, st.Bytes)
	return h, from
}

// LedgerAt reads the quarantine ledger at a commit through the contents
// API (c may be nil), or, when there is no API and checkout is true, from
// the workspace's checkout of that commit. A missing file is nil.
func LedgerAt(ctx context.Context, c *ghapi.Client, repo ghapi.Repo, path, sha, workspace string, checkout bool) (*ledger.Ledger, error) {
	var data []byte
	if c != nil && sha != "" {
		var err error
		data, err = c.FileContents(ctx, repo, path, sha)
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
		b, err := ReadSmall(workspace, path, ledger.MaxFileSize)
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

// Owners reads the workspace's CODEOWNERS from GitHub's places; nil when
// there is none. name is the file read, for messages. A pull request's
// checkout can commit the file as a link to any file the job can read (the
// checkout's credentials in .git/config, /proc/self/environ): one that
// leads out of the workspace is refused, as is one over GitHub's own limit
// for CODEOWNERS.
func Owners(workspace string) (f *owners.File, name string, err error) {
	return owners.Find(workspace, func(p string) ([]byte, error) { return ReadSmall(workspace, p, owners.MaxFileSize) })
}

// boundCarried keeps the history a report carries within
// history.MaxCarriedCells, its newest runs, and says what it left out: a
// history bounded only by time grows past what the next report can read.
func boundCarried(h *history.History, log Logger) *history.History {
	b, dropped := history.Bound(h, carriedCells)
	if dropped > 0 {
		log.Noticef("carried history: the %d oldest runs are left out, to keep it within %d results (tests × runs) for the next report", dropped, carriedCells)
	}
	return b
}

// carriedCells is history.MaxCarriedCells; tests make it small.
var carriedCells = history.MaxCarriedCells

// loadInput reads the local globs an input names, warning of each file it
// skips.
func loadInput(ctx context.Context, workspace, input string, globs []string, log Logger) (*history.History, error) {
	h, err := Load(ctx, workspace, globs, 0)
	if h != nil {
		for _, s := range h.Skipped {
			log.Warningf("%s: skipped %s: %s", input, s.Path, s.Error)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", input, err)
	}
	return h, nil
}

// maxManifest bounds the size of a matrix manifest read.
const maxManifest = 64 << 10

// matrixManifest reads flakegate matrix's record of the commits it ran
// (model.MatrixManifestFile) from the directory of base's runs' files, when
// they share one that holds it and its commits are commit SHAs; nil
// otherwise, with a warning for one that could not be used. The record is
// data like the files beside it, untrusted where they are: it only names
// commits in the comment, never a decision.
func matrixManifest(workspace string, base *history.History, log Logger) *model.MatrixManifest {
	if base == nil || len(base.Runs) == 0 {
		return nil
	}
	dir := ""
	for _, r := range base.Runs {
		if !strings.EqualFold(filepath.Ext(r.Source), ".xml") {
			// A run joined from the files of a directory (JoinParts) names
			// the directory: its parent is no results directory of
			// matrix's, and may be the workspace, which the PR writes.
			return nil
		}
		d := filepath.Dir(r.Source)
		if dir != "" && d != dir {
			return nil // runs from several directories: not one matrix's
		}
		dir = d
	}
	root := workspace
	if filepath.IsAbs(dir) {
		root = ""
	}
	name := filepath.Join(dir, model.MatrixManifestFile)
	b, err := ReadSmall(root, name, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var m model.MatrixManifest
	if err == nil {
		err = json.Unmarshal(b, &m) // fields a later matrix adds are left alone
	}
	if err == nil {
		for _, s := range []struct{ what, sha string }{{"base.sha", m.Base.SHA}, {"head.sha", m.Head.SHA}, {"base.tip", m.Base.Tip}} {
			if (s.sha != "" || s.what != "base.tip") && !model.IsCommitSHA(s.sha) {
				err = fmt.Errorf("%s %q: want a full commit SHA", s.what, render.Plain(s.sha))
				break
			}
		}
		if err == nil && (m.Looks < 0 || m.Looks > maxLooks) {
			err = fmt.Errorf("looks %d: want 0 to %d", m.Looks, maxLooks)
		}
		if err == nil && (m.K < 0 || m.K > maxK) {
			err = fmt.Errorf("k %d: want 0 to %d", m.K, maxK)
		}
		if err == nil && len(m.LookPairs) > 0 && (len(m.LookPairs) != m.Looks || !slices.IsSorted(m.LookPairs) || m.LookPairs[0] < 1 || m.LookPairs[len(m.LookPairs)-1] > maxK) {
			err = fmt.Errorf("look_pairs %v: want %d counts of pairs, rising, from 1 to %d", m.LookPairs, m.Looks, maxK)
		}
	}
	if err != nil {
		log.Warningf("base-results: %s not used: %v", filepath.ToSlash(name), err)
		return nil
	}
	// The revisions as given are for people to read: one line, short.
	for _, r := range []*model.MatrixRevision{&m.Base, &m.Head} {
		if r.Rev = render.Plain(r.Rev); len(r.Rev) > maxRev || r.Rev == "" {
			r.Rev = model.ShortSHA(r.SHA)
		}
	}
	return &m
}

// maxRev bounds a revision's name as a matrix manifest gives it.
const maxRev = 100

// maxLooks bounds a matrix manifest's looks: pairs at most 100
// (gate.MaxMaxRuns), looks doubling from 1.
const maxLooks = 8

// maxK bounds a matrix manifest's k, the pairs matrix would run at most
// (gate.MaxMaxRuns).
const maxK = 100

// TestedNotes say where the commits flakegate matrix ran (Tested) differ
// from the event's, baseSHA and headSHA: the base side at the merge base of
// head and its base branch, or a head that is not the pull request's head
// commit.
func (g Gate) TestedNotes(baseSHA, headSHA string) []string {
	tested := g.Tested
	if tested == nil {
		return nil
	}
	var notes []string
	if b := tested.Base; b.SHA != baseSHA && baseSHA != "" {
		where := "as given to flakegate matrix (" + b.Rev + ")"
		if b.Tip != "" {
			where = fmt.Sprintf("where head left %s (their merge base; %s was at %s)", b.Rev, b.Rev, model.ShortSHA(b.Tip))
		}
		notes = append(notes, fmt.Sprintf("the base runs are of %s, %s, not of the event's base commit %s",
			model.ShortSHA(b.SHA), where, model.ShortSHA(baseSHA)))
	}
	if h := tested.Head; h.SHA != headSHA && headSHA != "" {
		notes = append(notes, fmt.Sprintf("the head runs are of %s (flakegate matrix --head %s), not of the pull request's head commit %s",
			model.ShortSHA(h.SHA), h.Rev, model.ShortSHA(headSHA)))
	}
	return notes
}
