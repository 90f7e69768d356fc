package collect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"

	"github.com/flakegate/flakegate/pkg/internal/defaults"
)

// DefaultConcurrency is how many GitHub requests GitHub runs at once by
// default. GitHub allows 100 concurrent requests (secondary limit); eight
// keeps well clear of it. The client paces the requests under the 900
// points per minute (ghapi.Pace).
const DefaultConcurrency = 8

// GitHubOptions select the workflow runs and artifacts to collect. The zero
// value of a field means its default.
type GitHubOptions struct {
	Repo ghapi.Repo
	// Workflows are workflow file names ("ci.yml") or numeric ids; empty
	// lists the runs of every workflow of the repository.
	Workflows []string
	// Branch, Event and HeadSHA filter the runs; "" does not filter.
	Branch, Event, HeadSHA string
	// Since keeps runs created at or after it; zero keeps all. GitHub
	// filters whole UTC days; the exact bound is applied here.
	Since time.Time
	// MaxRuns caps the runs collected, newest first, over all Workflows;
	// 0 means GitHub's cap of ghapi.MaxFilteredRuns per workflow.
	MaxRuns int
	// Match says which artifacts hold JUnit XML (the action passes
	// config.MatchArtifact); nil accepts every artifact.
	Match func(artifactName string) bool
	// Exclude, when set, leaves out the listed runs it returns true for,
	// before their artifacts are listed: the gate leaves out runs of the
	// pull request's head commit, pull request runs and its own run.
	Exclude func(ghapi.Run) bool
	// Known holds the history.RunKey of every run in the carried history
	// (history.Keys). A run whose latest attempt is known is not read again.
	Known map[string]bool
	// MaxRead, when positive, caps the runs read (listed, not excluded, not
	// known), newest first: each costs an artifact listing and a download
	// or more of the repository's API budget. Stats.RunsUnread counts the
	// others.
	MaxRead int
	// Concurrency bounds the GitHub requests in flight and the artifact
	// zips held at once, downloaded and not yet parsed; default
	// DefaultConcurrency.
	Concurrency int
	// MemoryBudget bounds the zip bytes held in memory at once over all
	// downloads; default DefaultMemoryBudget. An artifact that GitHub lists
	// at no more than MemoryBudget/Concurrency bytes is downloaded into
	// memory when the budget has room; any other zip, and one that
	// outgrows its listed size, is written to a temporary file in TempDir
	// and read from there. A negative value keeps every zip on disk.
	MemoryBudget int64
	// TempDir holds those temporary files, each removed as soon as its
	// zip is read; default os.TempDir(). In an action, RUNNER_TEMP is the
	// place: the runner empties it after the job. At most Concurrency
	// files exist at once, each at most Limits.Download bytes.
	TempDir string
	// Limits cap each artifact zip; zero fields take the defaults.
	Limits ZipLimits
	// Workers is the number of parse workers; default GOMAXPROCS.
	Workers int
}

func (o GitHubOptions) withDefaults() GitHubOptions {
	defaults.Positive(&o.Concurrency, DefaultConcurrency)
	defaults.Positive(&o.Workers, runtime.GOMAXPROCS(0))
	if o.Match == nil {
		o.Match = func(string) bool { return true }
	}
	defaults.Count(&o.MemoryBudget, DefaultMemoryBudget)
	o.Limits = o.Limits.withDefaults()
	return o
}

// Stats says what a collection did.
type Stats struct {
	RunsListed   int // workflow runs listed (latest attempts), after Since and MaxRuns
	RunsExcluded int // of those, runs left out because Exclude returned true
	RunsKnown    int // of those, runs left out because Known holds their latest attempt
	RunsUnread   int // of those, runs left out by MaxRead
	// RunsOverMax counts the runs in the window that MaxRuns (or GitHub's
	// cap of ghapi.MaxFilteredRuns runs per query) left unread: GitHub's
	// total_count less the runs listed, plus the listed runs cut to
	// MaxRuns over all workflows. History.Skipped says so. With
	// RunsOverMaxAtMost it is an upper bound: GitHub filters whole UTC
	// days, so some of the runs it counts may predate Since.
	RunsOverMax       int
	RunsOverMaxAtMost bool
	// WorkflowIDs maps each of Workflows to its workflow id, as the runs
	// listed show; a workflow with no run listed has no entry.
	WorkflowIDs map[string]int64
	// Attempts is how many earlier attempts were looked up (one request
	// each) to date the documents that name them.
	Attempts int

	Artifacts int // artifacts listed on the runs read
	Matched   int // of those, artifacts Match accepted
	// Unmatched are a few distinct names of artifacts Match refused, for a
	// hint when none matched.
	Unmatched  []string
	Expired    int   // matched artifacts GitHub no longer serves (listed as expired, or 410)
	Downloaded int   // zips downloaded
	Bytes      int64 // compressed bytes downloaded
	Spooled    int   // of those, zips written to a temporary file rather than held in memory

	Entries int // entries in the downloaded zips
	Ignored int // entries not read because their names do not end in .xml (directories too)
	Parsed  int // entries handed to the JUnit reader
	LeftOut int // inputs in History.Skipped: artifacts, entries and runs
	// PeakHeld is the most zip bytes held in memory at once, downloaded and
	// not yet parsed. It is at most MemoryBudget.
	PeakHeld int64

	// Requests is the API requests the client made during the collection,
	// retries included; BlobRequests those to the artifact blob host, which
	// do not count against the rate limit. Both are deltas of the client's
	// counters: a client shared with concurrent work inflates them.
	Requests, BlobRequests int64

	// NoResults are the keys (history.RunKey of the latest attempt) of runs
	// read in full that gave no document: no artifact matched, or every
	// match expired or held no JUnit. They never will, so a caller may add
	// them to the next Known to save their artifact listing.
	NoResults []string
	// Incomplete are the keys of runs not read in full because the
	// collection stopped with an error. Empty when the error is nil.
	Incomplete []string
}

// maxUnmatched bounds Stats.Unmatched.
const maxUnmatched = 5

// GitHub collects the JUnit results of a repository's workflow runs.
//
// It lists the completed runs of each workflow (newest first, filtered by
// branch, event, head SHA and Since, capped by MaxRuns) and leaves out the
// runs Exclude rejects and those whose latest attempt is Known. For every other run it lists the
// artifacts once (artifacts belong to the run, not to an attempt), keeps
// those Match accepts, downloads them Concurrency at a time and parses
// their .xml entries while other downloads go on, Workers at a time, each
// worker with its own history.Builder. Small zips are held in memory within
// MemoryBudget, others streamed to temporary files; either way only the
// zip's directory and its .xml entries are read, so a large trace or video
// beside the JUnit costs disk, not memory.
//
// Run metadata comes from the workflow run: commit SHA, run id, time
// (run_started_at, else created_at), workflow name, branch and event; it
// wins over the documents' properties. The attempt is the run's when it has
// one attempt. When it has several, the artifacts cannot say which attempt
// made them, so the document's run_attempt property decides; a document
// that names none, or names an attempt the run does not have, is counted
// for the latest attempt. Each attempt is dated by its own run_started_at,
// looked up (one request) only for earlier attempts some document names.
//
// A run is known when Known holds its latest attempt's key. A run re-run
// since the carried history was made has a new latest attempt and is read
// again; the caller joins what was read with history.Replace, which
// replaces every attempt of the run read before (a document that names no
// attempt was filed under the attempt that was latest then, and is filed
// under the new latest attempt now: joined by run key, it would count
// twice). Holding only an earlier attempt's key is not
// enough: the documents of a re-run may all name earlier attempts, and the
// run would then be read again at each collection, which costs requests
// but loses nothing; the other way round would lose a re-run's evidence.
//
// API requests: one page per 100 runs of each workflow, one artifact
// listing per run not known (per 100 artifacts), one per download (the blob
// host does not count against the rate limit), one per earlier attempt
// named, plus retries. Runs without results still cost their listing until
// the caller adds Stats.NoResults to Known.
//
// Everything left out is in History.Skipped with the reason: expired
// artifacts, downloads that failed after retries, archives that are not
// zips, hold no .xml entry or are over a cap of Limits, entries with unsafe
// names, documents that do not parse, and the runs in the window beyond
// MaxRuns (Stats.RunsOverMax).
//
// Each run read records its workflow (history.Run.WorkflowID, and
// WorkflowFile when Workflows named it by file). A run read with a
// transient failure (artifacts not listed, or a download that failed
// after retries) is history.Run.Partial: History.Keys leaves it out of the
// next Known, so the next collection reads it again.
//
// A hard failure stops the collection and is returned: the primary rate
// limit or a secondary limit that outlasted the retries, a host that
// stopped answering (ghapi.ErrUnresponsive), bad credentials,
// ctx ending, or a failure to list the runs. The History is then partial,
// never nil: what was parsed so far, one Skipped entry saying how many runs
// were not read, and Stats.Incomplete naming them. Report it as partial and
// do not carry it forward as the next Known: a run read in part would be
// taken as known.
func GitHub(ctx context.Context, c *ghapi.Client, o GitHubOptions) (*history.History, Stats, error) {
	o = o.withDefaults()
	col := &collector{c: c, o: o, start: c.Stats(), overrides: map[string]string{}, mem: &budget{limit: o.MemoryBudget}}
	runs, err := col.listRuns(ctx)
	if err != nil {
		h := &history.History{Skipped: []history.Skipped{{Path: "workflow runs of " + o.Repo.String(), Error: "not listed: " + err.Error()}}}
		col.stats.LeftOut = 1
		return h, col.finishStats(), err
	}
	if s, ok := col.overMax(); ok {
		col.skipped = append(col.skipped, s)
	}
	var jobs []*runJob
	for _, r := range runs {
		if o.Exclude != nil && o.Exclude(r) {
			col.stats.RunsExcluded++
			continue
		}
		j := newRunJob(r)
		j.file = col.files[r.ID]
		if o.Known[j.key] {
			col.stats.RunsKnown++
			continue
		}
		jobs = append(jobs, j)
	}
	if o.MaxRead > 0 && len(jobs) > o.MaxRead {
		col.stats.RunsUnread = len(jobs) - o.MaxRead
		jobs = jobs[:o.MaxRead]
	}
	builders := col.pipeline(ctx, jobs)
	if ctx.Err() != nil {
		col.fail(context.Cause(ctx))
	}
	h := history.Merge(builders...)
	for i, s := range h.Skipped {
		if why, ok := col.overrides[s.Path]; ok {
			h.Skipped[i].Error = why
		}
	}
	h.Skipped = append(h.Skipped, col.skipped...)
	col.attributeAttempts(ctx, h, jobs)
	err = col.failure()
	if err != nil {
		for _, j := range jobs {
			if !j.listed.Load() || j.pending.Load() > 0 {
				col.stats.Incomplete = append(col.stats.Incomplete, j.key)
			}
		}
		h.Skipped = append(h.Skipped, history.Skipped{Path: "workflow runs of " + o.Repo.String(),
			Error: fmt.Sprintf("%d of %d runs not read in full: %v", len(col.stats.Incomplete), len(jobs), err)})
		err = fmt.Errorf("collection from %s stopped (%d of %d runs not read in full): %w", o.Repo, len(col.stats.Incomplete), len(jobs), err)
	}
	// Combine with an empty history re-sorts after the attempt attribution,
	// joins runs that now share a key, and drops the tests a document that
	// failed to parse left without results.
	h, _ = history.Combine(&history.History{}, h, time.Time{})
	seen := map[string]bool{}
	for _, r := range h.Runs {
		seen[r.RunID] = true
	}
	for _, j := range jobs {
		if j.listed.Load() && j.pending.Load() == 0 && !j.transient.Load() && !seen[j.meta.RunID] {
			col.stats.NoResults = append(col.stats.NoResults, j.key)
		}
	}
	byID := make(map[string]*runJob, len(jobs))
	for _, j := range jobs {
		byID[j.meta.RunID] = j
	}
	for i := range h.Runs {
		r := &h.Runs[i]
		if j := byID[r.RunID]; j != nil {
			r.WorkflowID, r.WorkflowFile = j.wfID, j.file
			r.Partial = j.transient.Load() || !j.listed.Load() || j.pending.Load() > 0
		}
	}
	slices.Sort(col.stats.NoResults)
	slices.Sort(col.stats.Incomplete)
	col.stats.LeftOut = len(h.Skipped)
	return h, col.finishStats(), err
}

// collector holds one collection's state.
type collector struct {
	c     *ghapi.Client
	o     GitHubOptions
	start ghapi.Stats

	mu        sync.Mutex
	stats     Stats
	skipped   []history.Skipped
	overrides map[string]string // document label → why reading stopped short
	files     map[int64]string  // run id → the workflow file Workflows listed it by
	mem       *budget
	err       error
	cancel    context.CancelCauseFunc
	capped    bool // a workflow listed GitHub's cap of runs, and its count says no more
}

func (col *collector) count(f func(s *Stats)) {
	col.mu.Lock()
	defer col.mu.Unlock()
	f(&col.stats)
}

func (col *collector) skip(path, why string) {
	col.mu.Lock()
	defer col.mu.Unlock()
	col.skipped = append(col.skipped, history.Skipped{Path: path, Error: why})
}

func (col *collector) finishStats() Stats {
	col.stats.PeakHeld = col.mem.peakHeld()
	end := col.c.Stats()
	col.stats.Requests = end.Requests - col.start.Requests
	col.stats.BlobRequests = end.BlobRequests - col.start.BlobRequests
	return col.stats
}

// hard reports whether err must stop the collection, and records it.
// Errors after ctx ended are the cancellation's, not their own.
func (col *collector) hard(ctx context.Context, err error) bool {
	var ae *ghapi.APIError
	switch {
	case ctx.Err() != nil:
		col.fail(context.Cause(ctx))
	case errors.Is(err, ghapi.ErrRateLimited), errors.Is(err, ghapi.ErrUnresponsive), errors.As(err, &ae) && ae.StatusCode == http.StatusUnauthorized:
		col.fail(err)
	default:
		return false
	}
	return true
}

func (col *collector) fail(err error) {
	col.mu.Lock()
	if col.err == nil {
		col.err = err
	}
	col.mu.Unlock()
	col.cancel(err)
}

func (col *collector) failure() error {
	col.mu.Lock()
	defer col.mu.Unlock()
	return col.err
}

// listRuns lists the runs of every workflow, newest first.
func (col *collector) listRuns(ctx context.Context) ([]ghapi.Run, error) {
	o := col.o
	wfs := o.Workflows
	if len(wfs) == 0 {
		wfs = []string{""}
	}
	seen := map[int64]bool{}
	col.files = map[int64]string{}
	col.stats.WorkflowIDs = map[string]int64{}
	var all []ghapi.Run
	missing := 0
	for _, wf := range wfs {
		// The runs list shows the latest attempts. Earlier attempts are
		// looked up later, and only those that documents name: looking
		// them all up (RunFilter.AllAttempts) would spend a request per
		// earlier attempt, Known runs included.
		runs, total, err := col.c.ListWorkflowRunsTotal(ctx, o.Repo, ghapi.RunFilter{Workflow: wf, Branch: o.Branch, Event: o.Event,
			HeadSHA: o.HeadSHA, CreatedSince: o.Since, MaxRuns: o.MaxRuns})
		if wf != "" && errors.Is(err, ghapi.ErrNotFound) {
			// One workflow that is not there (misspelt, renamed, or
			// deleted) does not cost the others' runs: it is left out,
			// and said.
			missing++
			col.skip("workflow "+wf, fmt.Sprintf("not found in %s (misspelt, renamed or deleted? check the workflows input against .github/workflows): its runs were not read", o.Repo))
			continue
		}
		if err != nil {
			return nil, err
		}
		file := ""
		if _, err := strconv.ParseInt(wf, 10, 64); err != nil && wf != "" {
			file = path.Base(wf)
		}
		// reached: the listing went past Since, so the runs it did not
		// list are older still, out of the window.
		reached := false
		for _, r := range runs {
			if wf != "" && r.WorkflowID != 0 {
				col.stats.WorkflowIDs[wf] = r.WorkflowID
			}
			if !o.Since.IsZero() && r.CreatedAt.Before(o.Since) {
				reached = true
				continue
			}
			if !seen[r.ID] {
				seen[r.ID] = true
				all = append(all, r)
				if file != "" {
					col.files[r.ID] = file
				}
			}
		}
		switch n := total - len(runs); {
		case reached:
		case n > 0:
			col.stats.RunsOverMax += n
			// GitHub counts from the start of Since's UTC day.
			col.stats.RunsOverMaxAtMost = col.stats.RunsOverMaxAtMost || !o.Since.Equal(o.Since.Truncate(24*time.Hour))
		case !col.maxRunsBinds() && len(runs) >= ghapi.MaxFilteredRuns:
			// GitHub's cap: its count may stop there too.
			col.capped = true
		}
	}
	if missing == len(wfs) {
		return nil, fmt.Errorf("no workflow of %s found: %s (misspelt, renamed or deleted? check the workflows input against .github/workflows): %w", o.Repo, strings.Join(wfs, ", "), ghapi.ErrNotFound)
	}
	slices.SortStableFunc(all, func(a, b ghapi.Run) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if o.MaxRuns > 0 && len(all) > o.MaxRuns {
		col.stats.RunsOverMax += len(all) - o.MaxRuns
		all = all[:o.MaxRuns]
	}
	col.stats.RunsListed = len(all)
	return all, nil
}

// maxRunsBinds reports whether MaxRuns, not GitHub's cap, bounds each
// workflow's listing.
func (col *collector) maxRunsBinds() bool {
	return col.o.MaxRuns > 0 && col.o.MaxRuns <= ghapi.MaxFilteredRuns
}

// overMax says, as a Skipped entry, which runs in the window MaxRuns or
// GitHub's cap left unread; false when none did.
func (col *collector) overMax() (history.Skipped, bool) {
	o, st := col.o, col.stats
	var why string
	switch {
	case st.RunsOverMax > 0:
		n := fmt.Sprintf("%d runs", st.RunsOverMax)
		if st.RunsOverMaxAtMost {
			n = "up to " + n
		}
		if col.maxRunsBinds() {
			why = fmt.Sprintf("%s in the window were not read (max-runs is %d: the newest %d were read", n, o.MaxRuns, st.RunsListed)
		} else {
			why = fmt.Sprintf("%s in the window were not read (GitHub lists at most %d runs of a filtered query", n, ghapi.MaxFilteredRuns)
		}
		if st.RunsOverMaxAtMost {
			why += fmt.Sprintf("; GitHub counts the runs from the start of %s UTC, and the window opens at %s, so some may predate it",
				o.Since.UTC().Format(time.DateOnly), o.Since.UTC().Format("15:04"))
		}
		why += ")"
	case col.capped:
		why = fmt.Sprintf("older runs in the window, if any, not read: GitHub lists at most %d runs of a filtered query, and %d were listed", ghapi.MaxFilteredRuns, ghapi.MaxFilteredRuns)
	default:
		return history.Skipped{}, false
	}
	return history.Skipped{Path: "workflow runs of " + o.Repo.String(), Error: why}, true
}

// runJob is one run to read.
type runJob struct {
	id     int64
	latest int       // the run's latest attempt
	meta   model.Run // the latest attempt's metadata
	key    string    // history.RunKey(meta)
	// over is what the documents' runs take from the API. With several
	// attempts its Attempt and Time are left zero, for the document's
	// run_attempt to decide; attributeAttempts completes them.
	over    *model.Run
	label   string
	created time.Time

	file string // the workflow file Workflows listed the run by; "" when none did
	wfID int64  // the run's workflow

	listed    atomic.Bool  // the artifacts were listed
	pending   atomic.Int64 // matched artifacts not yet parsed or left out
	transient atomic.Bool  // something failed that a later collection may read
}

func newRunJob(r ghapi.Run) *runJob {
	t := r.StartedAt
	if t.IsZero() {
		t = r.CreatedAt
	}
	j := &runJob{id: r.ID, latest: max(1, r.Attempt), created: r.CreatedAt.UTC(), wfID: r.WorkflowID}
	j.meta = model.Run{CommitSHA: r.HeadSHA, RunID: strconv.FormatInt(j.id, 10), Attempt: j.latest, Time: t.UTC(),
		Workflow: r.Name, Branch: r.HeadBranch, Event: r.Event}
	j.key = history.RunKey(j.meta)
	over := j.meta
	j.label = fmt.Sprintf("run %d attempt %d", j.id, j.latest)
	if j.latest > 1 {
		over.Attempt, over.Time = 0, time.Time{}
		j.label = fmt.Sprintf("run %d", j.id)
	}
	j.over = &over
	return j
}

// download is one artifact to fetch.
type download struct {
	job   *runJob
	id    int64
	label string
	name  string // the artifact's
	size  int64  // as GitHub lists it
}

// fetched is a downloaded zip on its way to a parse worker, which closes
// it.
type fetched struct {
	*download
	zip  *spool
	size int64
}

// pipeline lists artifacts, downloads and parses, all at once: listers
// feed downloads, downloaders feed zips to the parse workers. At most
// Concurrency requests are in flight, and at most Concurrency zips are
// held, in memory or in temporary files: a downloader takes a token before
// it starts, and the parse worker gives it back when the zip is read and
// closed.
func (col *collector) pipeline(parent context.Context, jobs []*runJob) []*history.Builder {
	o := col.o
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	col.cancel = cancel

	net := make(chan struct{}, o.Concurrency)  // requests in flight
	held := make(chan struct{}, o.Concurrency) // zips held
	jobCh := make(chan *runJob)
	dlCh := make(chan *download)
	zipCh := make(chan *fetched, o.Concurrency)

	go func() {
		defer close(jobCh)
		for _, j := range jobs {
			select {
			case jobCh <- j:
			case <-ctx.Done():
				return
			}
		}
	}()

	var listers, downloaders, parsers sync.WaitGroup
	for range min(o.Concurrency, max(1, len(jobs))) {
		listers.Go(func() {
			for j := range jobCh {
				col.listArtifacts(ctx, net, dlCh, j)
			}
		})
	}
	go func() { listers.Wait(); close(dlCh) }()

	for range o.Concurrency {
		downloaders.Go(func() {
			for d := range dlCh {
				if ctx.Err() != nil {
					continue // drain; the run stays incomplete
				}
				select {
				case held <- struct{}{}:
				case <-ctx.Done():
					continue
				}
				if f := col.download(ctx, net, d); f != nil {
					zipCh <- f // never blocks: the channel holds as many as there are tokens
				} else {
					<-held
				}
			}
		})
	}
	go func() { downloaders.Wait(); close(zipCh) }()

	// One set of builders shares history.MaxTests: each on its own would
	// allow workers × the cap.
	builders := history.NewBuilders(o.Workers)
	for _, b := range builders {
		parsers.Go(func() {
			for f := range zipCh {
				col.parse(b, f)
				if err := f.zip.Close(); err != nil {
					col.skip(f.label, "temporary file not removed: "+err.Error())
				}
				<-held
				f.job.pending.Add(-1)
			}
		})
	}
	parsers.Wait()
	return builders
}

// call runs one request while holding a slot of net.
func call(ctx context.Context, net chan struct{}, f func() error) error {
	select {
	case net <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-net }()
	return f()
}

// listArtifacts lists a run's artifacts and queues the matching ones.
func (col *collector) listArtifacts(ctx context.Context, net chan struct{}, dlCh chan<- *download, j *runJob) {
	if ctx.Err() != nil {
		return
	}
	var arts []ghapi.Artifact
	err := call(ctx, net, func() (err error) {
		arts, err = col.c.ListRunArtifacts(ctx, col.o.Repo, j.id, "")
		return err
	})
	if err != nil {
		if !col.hard(ctx, err) {
			j.transient.Store(true)
			col.skip(j.label, "artifacts not listed: "+err.Error())
			j.listed.Store(true)
		}
		return
	}
	var queue []*download
	for _, a := range arts {
		name := a.Name
		col.count(func(s *Stats) { s.Artifacts++ })
		if !col.o.Match(name) {
			col.count(func(s *Stats) {
				if len(s.Unmatched) < maxUnmatched && !slices.Contains(s.Unmatched, name) {
					s.Unmatched = append(s.Unmatched, name)
				}
			})
			continue
		}
		col.count(func(s *Stats) { s.Matched++ })
		label := j.label + " / " + labelName(name)
		switch {
		case a.Expired:
			col.count(func(s *Stats) { s.Expired++ })
			col.skip(label, "artifact expired (GitHub lists it as expired)")
		case a.Size > col.o.Limits.Download:
			col.skip(label, fmt.Sprintf("artifact is %d bytes, over the download cap of %d bytes", a.Size, col.o.Limits.Download))
		default:
			queue = append(queue, &download{job: j, id: a.ID, label: label, name: labelName(name), size: a.Size})
		}
	}
	j.pending.Add(int64(len(queue)))
	j.listed.Store(true)
	for _, d := range queue {
		select {
		case dlCh <- d:
		case <-ctx.Done():
			return
		}
	}
}

// download fetches one zip; nil when it is left out or the collection
// stopped.
func (col *collector) download(ctx context.Context, net chan struct{}, d *download) *fetched {
	var reserve int64
	if d.size <= col.o.MemoryBudget/int64(col.o.Concurrency) {
		reserve = d.size
	}
	sp := newSpool(col.mem, reserve, col.o.TempDir)
	var n int64
	err := call(ctx, net, func() (err error) {
		n, err = col.c.DownloadArtifactTo(ctx, col.o.Repo, d.id, col.o.Limits.Download, sp)
		return err
	})
	if err != nil {
		_ = sp.Close() // an error removing it would hide the download's

		if col.hard(ctx, err) {
			return nil
		}
		switch {
		case errors.Is(err, ghapi.ErrExpired):
			col.count(func(s *Stats) { s.Expired++ })
			col.skip(d.label, "artifact expired (410 Gone)")
		case errors.Is(err, ghapi.ErrTooLarge):
			col.skip(d.label, fmt.Sprintf("artifact over the download cap of %d bytes", col.o.Limits.Download))
		default:
			d.job.transient.Store(true)
			col.skip(d.label, "download failed: "+err.Error())
		}
		d.job.pending.Add(-1)
		return nil
	}
	col.count(func(s *Stats) {
		s.Downloaded++
		s.Bytes += n
		if sp.spilled {
			s.Spooled++
		}
	})
	return &fetched{download: d, zip: sp, size: n}
}

// parse reads one zip's JUnit entries into b, or the one document of an
// artifact uploaded unarchived.
func (col *collector) parse(b *history.Builder, f *fetched) {
	if !isZip(f.zip, f.size) {
		col.parseRaw(b, f)
		return
	}
	a, err := openArchive(f.label, f.zip, f.size, col.o.Limits)
	if err != nil {
		if f.download.size > f.size {
			// A body that ended early with no error (nothing to hold it
			// to): the run is read again by the next collection, not
			// counted as read. (The sizes alone do not say it: GitHub
			// lists an older artifact's files' size, more than its zip.)
			f.job.transient.Store(true)
			col.skip(f.label, fmt.Sprintf("%v: %d of the %d bytes GitHub lists were downloaded, cut short perhaps; read again next time", err, f.size, f.download.size))
			return
		}
		col.skip(f.label, err.Error())
		return
	}
	a.name = f.name
	docs, skipped, ignored := a.scan()
	overrides := map[string]string{}
	parsed := 0
	for _, d := range docs {
		if a.spent() {
			skipped = append(skipped, history.Skipped{Path: d.label,
				Error: fmt.Sprintf("not read: the artifact's entries inflate beyond the cap of %d bytes per artifact", a.lim.Total)})
			continue
		}
		src, stopped := a.source(d, f.job.over)
		b.Add(src)
		parsed++
		// The reader's own message for a cut-off document would be about
		// the truncated XML; say which cap or corruption cut it.
		if err := stopped(); err != nil {
			overrides[d.label] = err.Error()
		}
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	col.skipped = append(col.skipped, skipped...)
	for k, v := range overrides {
		col.overrides[k] = v
	}
	col.stats.Entries += len(a.zr.File)
	col.stats.Ignored += ignored
	col.stats.Parsed += parsed
}

// parseRaw reads an artifact that is not a zip: upload-artifact's
// "archive: false" (v7 and later) uploads one file as it is and names the
// artifact after it, and GitHub serves that file where it serves a zip.
// An artifact named *.xml is read as one document, under the cap of one
// zip entry; anything else is left out, saying so.
func (col *collector) parseRaw(b *history.Builder, f *fetched) {
	ext := extOf(f.name)
	switch {
	case f.download.size > f.size:
		f.job.transient.Store(true) // as a cut zip (parse)
		col.skip(f.label, fmt.Sprintf("not a zip archive, and %d of the %d bytes GitHub lists were downloaded, cut short perhaps; read again next time", f.size, f.download.size))
		return
	case !strings.EqualFold(ext, ".xml"):
		col.skip(f.label, "not a zip archive, and not one .xml file (an artifact uploaded with archive: false is read when its name ends in .xml)")
		return
	case f.size > col.o.Limits.Entry:
		col.skip(f.label, fmt.Sprintf("unarchived artifact of %d bytes, over the cap of %d bytes per document: not read", f.size, col.o.Limits.Entry))
		return
	}
	b.Add(history.Source{Name: f.label, Leg: artifactLeg(strings.TrimSuffix(f.name, ext)), Run: f.job.over,
		Open: func() (io.ReadCloser, error) { return rawDoc{io.NewSectionReader(f.zip, 0, f.size)}, nil }})
	col.mu.Lock()
	defer col.mu.Unlock()
	col.stats.Entries++
	col.stats.Parsed++
}

// rawDoc is an unarchived artifact's document, read from its spool.
type rawDoc struct{ *io.SectionReader }

func (rawDoc) Close() error { return nil }

// isZip says whether the size bytes of r are a zip archive: they begin
// with a local file header or the end record of an empty archive, or end
// with an end record.
func isZip(r io.ReaderAt, size int64) bool {
	var sig [4]byte
	if size < int64(len(sig)) {
		return false
	}
	if _, err := r.ReadAt(sig[:], 0); err != nil {
		return false
	}
	if string(sig[:]) == "PK\x03\x04" || string(sig[:]) == "PK\x05\x06" {
		return true
	}
	// A zip with data before its first entry (archive/zip reads it, and
	// did before unarchived artifacts were read) still ends in an
	// end-of-central-directory record; an XML document cannot hold one
	// (its 0x05 0x06 bytes are not XML characters).
	_, ok := declaredEntries(r, size)
	return ok
}

// attributeAttempts completes the runs of re-run workflow runs: a document
// that named no attempt, or one the run does not have, is counted for the
// latest attempt; each attempt gets its own start time. Earlier attempts
// are looked up once each, and only when a document names them.
func (col *collector) attributeAttempts(ctx context.Context, h *history.History, jobs []*runJob) {
	multi := map[string]*runJob{}
	for _, j := range jobs {
		if j.latest > 1 {
			multi[j.meta.RunID] = j
		}
	}
	if len(multi) == 0 {
		return
	}
	type attemptKey struct {
		id int64
		n  int
	}
	started := map[attemptKey]time.Time{}
	for i := range h.Runs {
		r := &h.Runs[i].Run
		j := multi[r.RunID]
		if j == nil {
			continue
		}
		if r.Attempt < 1 || r.Attempt > j.latest {
			r.Attempt = j.latest
		}
		if r.Attempt == j.latest {
			r.Time = j.meta.Time
			continue
		}
		k := attemptKey{j.id, r.Attempt}
		t, ok := started[k]
		if !ok && ctx.Err() == nil && col.failure() == nil {
			// A failed lookup costs only the date's precision: the
			// document's timestamp stands in.
			col.stats.Attempts++
			if run, err := col.c.RunAttempt(ctx, col.o.Repo, j.id, r.Attempt); err == nil {
				t = run.StartedAt.UTC()
			}
			started[k] = t
		}
		switch {
		case !t.IsZero():
			r.Time = t
		case r.Time.IsZero():
			// The lookup failed and the document has no timestamp: the
			// run's creation is the best bound there is.
			r.Time = j.created
		}
	}
}
