package collect

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

// maxReportArtifact bounds the download of the previous report.
const maxReportArtifact = 256 << 20

// errNoReport is an artifact without report.json: a gate run's.
var errNoReport = errors.New("no " + render.ReportJSONFile + " in the artifact")

// Previous is what the last report run left: its report and the history
// it carried.
type Previous struct {
	// Report is nil when its report.json could not be read: then
	// ReportErr says why. The history is read all the same: a report.json
	// of another shape loses the trend, not the runs carried.
	Report    *score.Report
	ReportErr error
	// History is nil when the artifact has none, or when it could not be
	// read: then HistoryErr says why (larger than Decode reads, not what
	// Encode writes, or a *history.VersionError). The report is read all
	// the same, for the trend and the flaky tests it names.
	History    *history.History
	HistoryErr error
	RunID      int64     // the run that made it
	Created    time.Time // when that run was created
}

// found reports whether p is a report artifact's: one with a report.json,
// readable or not.
func (p Previous) found() bool { return p.Report != nil || p.ReportErr != nil }

// wrap names the artifact and run in p's errors.
func (p *Previous) wrap(artifact string, run int64) {
	if p.ReportErr != nil {
		p.ReportErr = fmt.Errorf("artifact %q of run %d: %w", artifact, run, p.ReportErr)
	}
	if p.HistoryErr != nil {
		p.HistoryErr = fmt.Errorf("artifact %q of run %d: %w", artifact, run, p.HistoryErr)
	}
}

// PreviousOptions says where the last report is.
type PreviousOptions struct {
	Repo ghapi.Repo
	// Workflow is this workflow's file name: only its runs are read.
	Workflow string
	// Branch: runs of other branches are never read, so that a report made
	// on a feature branch does not move the baseline of every pull request.
	Branch string
	// ArtifactName is the report artifact's name. An artifact named
	// ArtifactName-N (a re-run's or a retried upload's, see ArtifactNames)
	// is taken as well.
	ArtifactName string
	// FormerNames are names earlier versions gave this step's report
	// artifact (a tag ending in a digit had no "-tag"), read, by exact
	// name, after ArtifactName: the carried history survives the rename.
	FormerNames []string
	// Home is the branch this workflow's report runs are on when it is not
	// Branch: a scheduled run is on the default branch whatever branch it
	// reports on. This workflow's runs there are read too; from any run,
	// a report is taken only when it is one of Branch (about).
	Home string
	// Self is this run's id, never read.
	Self int64
	// AnyWorkflow: when this workflow has left no report on the branch,
	// read the newest report of any workflow's scheduled or manual runs
	// there. A gate usually runs in a workflow of its own, on pull
	// requests only, apart from the weekly report's.
	AnyWorkflow bool
}

// reportEvents are the events of runs that another workflow's report is
// looked for in: a report runs on a schedule or by hand.
var reportEvents = []string{"schedule", "workflow_dispatch"}

// artifactSuffix is what an upload adds to the artifact name when the name
// is taken (a re-run of the same run): -attempt-N, or -N after a conflict.
var artifactSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-attempt-[0-9]+)?(-[0-9]+)?$`) })

// IsReportArtifact reports whether an artifact name is the report artifact
// name, possibly with the suffix a re-run's upload adds.
func IsReportArtifact(base, name string) bool {
	return len(name) >= len(base) && name[:len(base)] == base && artifactSuffix().MatchString(name[len(base):])
}

// ErrFirstReport: the workflow has no earlier successful report run on
// the branch, so there is no previous report to expect.
var ErrFirstReport = errors.New("no earlier successful run of this workflow on the branch")

// ErrNoReportArtifact: earlier successful runs there are, but none has a
// report artifact that is still served (expired, or not uploaded).
var ErrNoReportArtifact = errors.New("no report artifact")

// noReportArtifact is an ErrNoReportArtifact that says which runs.
type noReportArtifact string

func (e noReportArtifact) Error() string      { return string(e) }
func (noReportArtifact) Is(target error) bool { return target == ErrNoReportArtifact }

// PreviousReport finds the newest successful run of the workflow on the
// branch, other than this one and other than pull request runs, with a
// report artifact, and reads its report and history.
func PreviousReport(ctx context.Context, c *ghapi.Client, o PreviousOptions) (Previous, error) {
	if o.Workflow == "" || o.Workflow == "." {
		return Previous{}, errors.New("GITHUB_WORKFLOW_REF is not set: cannot find this workflow's earlier runs")
	}
	if o.Branch == "" {
		return Previous{}, errors.New("no branch to read the last report from")
	}
	runs, err := c.ListWorkflowRuns(ctx, o.Repo, ghapi.RunFilter{Workflow: o.Workflow, Branch: o.Branch, Status: "success", MaxRuns: 20})
	if err != nil {
		return Previous{}, err
	}
	if o.Home != "" && o.Home != o.Branch {
		home, err := c.ListWorkflowRuns(ctx, o.Repo, ghapi.RunFilter{Workflow: o.Workflow, Branch: o.Home, Status: "success", MaxRuns: 20})
		if err != nil {
			return Previous{}, err
		}
		runs = append(runs, home...)
		slices.SortStableFunc(runs, func(a, b ghapi.Run) int { return b.CreatedAt.Compare(a.CreatedAt) })
	}
	p, earlier, err := o.first(ctx, c, runs)
	if err != nil || p.found() {
		return p, err
	}
	if o.AnyWorkflow {
		seen := map[int64]bool{o.Self: true} // runs read already, and this one
		for _, r := range runs {
			seen[r.ID] = true
		}
		p, n, err := o.newestNamed(ctx, c, seen)
		if err != nil || p.found() {
			return p, err
		}
		if earlier+n == 0 {
			return Previous{}, ErrFirstReport
		}
		return Previous{}, noReportArtifact(fmt.Sprintf("none of the %d earlier successful runs of this workflow, and of the scheduled or manual runs of other workflows that uploaded an artifact named %q, on %s has a report artifact (expired, or not uploaded)", earlier+n, o.ArtifactName, o.Branch))
	}
	if earlier == 0 {
		return Previous{}, ErrFirstReport
	}
	return Previous{}, noReportArtifact(fmt.Sprintf("none of the %d earlier successful runs of this workflow on %s has a report artifact (expired, or not uploaded)", earlier, o.Branch))
}

// Bounds of the search for another workflow's report (newestNamed).
const (
	// maxNamedArtifacts bounds the artifacts named ArtifactName listed:
	// at most 10 requests. Pull requests' gate runs upload that name too,
	// so a week of them can stand before the weekly report.
	maxNamedArtifacts = 1000
	// maxNamedRuns bounds the runs on the branch whose artifact is looked
	// at: a request each, and a download for those of a report event.
	maxNamedRuns = 10
)

// newestNamed reads the newest report of another workflow on the branch:
// GitHub lists the repository's artifacts named ArtifactName, newest first,
// with the branch and repository of the run that uploaded each, so the
// other scheduled workflows of the repository (an hourly cron) cannot hide
// the weekly report. Artifacts of other branches, of forks (whose branch
// may be called like the base), expired ones and those of seen runs are
// passed over without a request; for at most maxNamedRuns others, the run
// is asked for (GET …/runs/{id}), and its artifact read when the run is a
// successful scheduled or manual one (reportEvents); a gate's artifact,
// without a report, is passed over. n counts those runs.
//
// GitHub's name filter is exact, so an artifact renamed by its upload (a
// re-run's name-attempt-2 when its first attempt had uploaded one, see
// publish.ArtifactNames) is not listed: the first attempt's report is read
// instead. Listing every artifact of the repository,
// or each suffix in turn, would cost more requests on every gate run than
// that case is worth. This workflow's own runs (first) still read them.
func (o PreviousOptions) newestNamed(ctx context.Context, c *ghapi.Client, seen map[int64]bool) (p Previous, n int, err error) {
	asked := 0
	listErr := c.ArtifactsNamed(ctx, o.Repo, o.ArtifactName, maxNamedArtifacts, func(a ghapi.RepoArtifact) bool {
		if a.Name != o.ArtifactName || a.RunID == 0 || seen[a.RunID] || !a.SameRepo || a.HeadBranch != o.Branch || a.Expired {
			return true
		}
		seen[a.RunID] = true
		asked++
		p, err = o.readNamed(ctx, c, a, &n)
		return err == nil && !p.found() && asked < maxNamedRuns
	})
	if err != nil {
		return Previous{}, n, err
	}
	return p, n, listErr
}

// readNamed reads the report of a listed artifact when its run is a
// successful report run; p.found() is false when it is not, or the
// artifact holds none. *n counts the successful report runs.
func (o PreviousOptions) readNamed(ctx context.Context, c *ghapi.Client, a ghapi.RepoArtifact, n *int) (Previous, error) {
	r, err := c.WorkflowRun(ctx, o.Repo, a.RunID)
	if errors.Is(err, ghapi.ErrNotFound) {
		return Previous{}, nil // deleted since
	}
	if err != nil {
		return Previous{}, err
	}
	if !slices.Contains(reportEvents, r.Event) || r.Conclusion != "success" || r.HeadBranch != o.Branch {
		return Previous{}, nil
	}
	*n++
	data, err := c.DownloadArtifact(ctx, o.Repo, a.ID, maxReportArtifact)
	if errors.Is(err, ghapi.ErrExpired) {
		return Previous{}, nil
	}
	if err != nil {
		return Previous{}, fmt.Errorf("artifact %q of run %d: %w", a.Name, r.ID, err)
	}
	p, err := ReadReportArtifact(data)
	if errors.Is(err, errNoReport) {
		return Previous{}, nil // a gate run's artifact
	}
	if err != nil {
		return Previous{}, fmt.Errorf("artifact %q of run %d: %w", a.Name, r.ID, err)
	}
	if !o.about(p, r.HeadBranch) {
		return Previous{}, nil // a report of another branch, made on this one
	}
	p.wrap(a.Name, r.ID)
	p.RunID, p.Created = r.ID, r.CreatedAt
	return p, nil
}

// first reads the report of the first of runs, newest first, that left
// one; p.found() is false when none did. earlier counts the runs looked at.
func (o PreviousOptions) first(ctx context.Context, c *ghapi.Client, runs []ghapi.Run) (p Previous, earlier int, err error) {
	for _, r := range runs {
		// One workflow may both gate pull requests and report on a
		// schedule: only report runs leave a report.
		switch r.Event {
		case "pull_request", "pull_request_target", "workflow_run":
			continue
		}
		if r.ID == o.Self {
			continue
		}
		if r.HeadBranch == o.Branch {
			earlier++ // a run on Home counts once it holds a report of Branch
		}
		arts, err := c.ListRunArtifacts(ctx, o.Repo, r.ID, "")
		if err != nil {
			return Previous{}, earlier, err
		}
		// The name itself before a re-run's copies: a step tagged "web-2"
		// uploaded "flakegate-report-web-2" before such tags got "-tag",
		// which reads as a copy of "web"'s.
		slices.SortStableFunc(arts, func(a, b ghapi.Artifact) int {
			return cmp.Compare(o.rank(a.Name), o.rank(b.Name))
		})
		for _, art := range arts {
			if o.rank(art.Name) > 2 || art.Expired {
				continue
			}
			data, err := c.DownloadArtifact(ctx, o.Repo, art.ID, maxReportArtifact)
			if errors.Is(err, ghapi.ErrExpired) {
				continue
			}
			if err != nil {
				return Previous{}, earlier, fmt.Errorf("artifact %q of run %d: %w", art.Name, r.ID, err)
			}
			p, err := ReadReportArtifact(data)
			if errors.Is(err, errNoReport) {
				continue // a gate run's artifact
			}
			if err != nil {
				return Previous{}, earlier, fmt.Errorf("artifact %q of run %d: %w", art.Name, r.ID, err)
			}
			if !o.about(p, r.HeadBranch) {
				continue // another branch's report
			}
			p.wrap(art.Name, r.ID)
			p.RunID, p.Created = r.ID, r.CreatedAt
			return p, earlier, nil
		}
	}
	return Previous{}, earlier, nil
}

// about says whether p, read from a run on runBranch, is a report of
// o.Branch. A report names the branch it read (score.Report.Branch) and
// is taken for that branch only: a scheduled run reporting on a release
// branch is on the default branch, and its report was taken as the
// default branch's last, its history carried on as the default branch's.
// A report that names none (an earlier version's) is taken from a run on
// o.Branch only, as before.
func (o PreviousOptions) about(p Previous, runBranch string) bool {
	if p.Report != nil && p.Report.Branch != "" {
		return p.Report.Branch == o.Branch
	}
	if runBranch != o.Branch {
		return false
	}
	// An earlier version's report names no branch, but the runs it
	// carries do: a report of release made on main carries release's
	// runs only, and is not main's last report.
	if p.History != nil {
		named, ours := 0, 0
		for _, r := range p.History.Runs {
			if r.Branch != "" {
				named++
				if r.Branch == o.Branch {
					ours++
				}
			}
		}
		if named > 0 && ours == 0 {
			return false
		}
	}
	return true
}

// ReadReportArtifact reads report.json and history.json.gz from a report
// artifact zip, in memory, each on its own: one that cannot be read leaves
// its field nil and sets ReportErr or HistoryErr. Only an archive that is
// not a zip, or has no report.json (a gate run's), is an error.
func ReadReportArtifact(data []byte) (Previous, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Previous{}, fmt.Errorf("not a zip archive: %w", err)
	}
	var p Previous
	for _, f := range zr.File {
		switch f.Name {
		case render.ReportJSONFile:
			p.Report, p.ReportErr = readReport(f)
		case render.HistoryFile:
			p.History, p.HistoryErr = readHistory(f)
		}
	}
	if !p.found() {
		return Previous{}, errNoReport
	}
	return p, nil
}

// readReport decodes the report.json of the artifact.
func readReport(f *zip.File) (*score.Report, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	var rep score.Report
	if err := json.NewDecoder(io.LimitReader(rc, maxReportArtifact)).Decode(&rep); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return &rep, nil
}

// readHistory decodes a carried history file of the artifact.
func readHistory(f *zip.File) (*history.History, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	return history.Decode(rc)
}

// rank orders a run's artifacts for the report lookup: the name itself
// (0), a re-run's copy of it (1), a name an earlier version used (2), and
// any other (3), not a report of this step.
func (o PreviousOptions) rank(name string) int {
	switch {
	case name == o.ArtifactName:
		return 0
	case IsReportArtifact(o.ArtifactName, name):
		return 1
	case slices.Contains(o.FormerNames, name):
		return 2
	}
	return 3
}
