// Package matrix is the sequential driver behind `flakegate matrix`: it runs
// a test command on the base and the head revision of a git repository in
// turns, collects the JUnit file of every run, and lets the gate decide
// (DESIGN.md, "Local CLI"; SEEDS.md, articles B and C).
//
// The experiment is article B's "2 commits × K repetitions, one
// environment": base and head are checked out into two temporary worktrees,
// and the command runs base run 1, head run 1, base run 2, head run 2, … on
// this host, in a pinned environment, each run a fresh process tree with a
// fresh temporary directory. After an initial batch of pairs the gate
// evaluates; while it reports tests pending (more head runs could decide
// them) and none blocks, the driver runs pairs up to its next look, twice
// as many pairs (5, 10, 20, up to K), and stops at the first look where
// every test that failed on either side has a verdict or one blocks. Each
// look gets a share of alpha-pr that grows with the pairs read
// (gate.LookAlpha): evaluated after every pair at all of it, the looks
// together failed up to a fifth of clean PRs.
package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/render"
)

// DefaultInitial is the number of pairs run before the gate first looks:
// article B's K = 5, enough to detect, not to estimate.
const DefaultInitial = 5

// DefaultGrace is how long a cancelled command has between SIGTERM and
// SIGKILL, and how long processes a finished command left behind may keep
// its output open before they are killed.
const DefaultGrace = 2 * time.Second

// Side is base or head.
type Side string

// The two sides of the experiment.
const (
	Base Side = "base"
	Head Side = "head"
)

// pinned is the environment every run gets, whatever the caller's says
// (article B: pin the environment). TMPDIR is pinned too, to a fresh
// directory per run, and GOFLAGS gets -count=1 (see noTestCache).
// Everything else comes from Options.Env.
var pinned = []string{"TZ=UTC", "LC_ALL=C.UTF-8", "PYTHONHASHSEED=0"}

// unset are variables removed from the command's environment: they would
// point git inside the command at the caller's repository instead of the
// worktree the command runs in.
var unset = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX"}

// Options configure Run. The zero value of every field but Base, Head,
// JUnit and Command is a default.
type Options struct {
	// Repo is a directory inside the git working tree to test; default ".".
	// When it is a subdirectory, the command runs in the same subdirectory
	// of each worktree.
	Repo string
	// Base and Head are the revisions to compare (anything git rev-parse
	// takes: a branch, a tag, a SHA, HEAD~1). Both are checked out as
	// committed; uncommitted changes are not tested. When Base has commits
	// that Head does not (the head branch is behind its base: a pull
	// request's base.sha is the base branch's tip, not where the branch
	// left it), the base side is their merge base, where Head branched off,
	// unless ExactBase: the base's later commits (tests added, fixed or
	// removed there) would otherwise read as the patch's.
	Base, Head string
	// ExactBase compares with Base itself even when Head is behind it.
	ExactBase bool
	// JUnit is where the command writes its JUnit XML file, relative to the
	// directory the command runs in. It must stay inside the worktree.
	JUnit string
	// Command is the test command and its arguments, run without a shell.
	// A relative program path ("./run.sh") is taken relative to the
	// worktree. `go test` does not replay cached results: GOFLAGS gets
	// -count=1 (see Env).
	Command []string
	// K is the most pairs to run; default Gate.MaxRuns, or
	// gate.DefaultMaxRuns (20).
	K int
	// Initial is the number of pairs run before the gate first looks;
	// default DefaultInitial (5), or K if smaller.
	Initial int
	// Gate tunes the gate. MaxRuns defaults to K, and must equal K when
	// both are set. FirstLook keeps the gate's default (the first head run):
	// the looks before Initial are read when the driver first evaluates.
	Gate gate.Options
	// Input carries what the gate needs besides the test results: the diff,
	// the PR body and labels, the ledgers. Its Tests are replaced by the
	// runs' results at each look; a zero Now is taken from the clock.
	Input gate.Input
	// History are base-branch JUnit documents, one per run, for the
	// baseline failure rate p0 (see gate.EstimateP0).
	History []history.Source
	// HistoryFilter, when set, is applied to History at each look with the
	// base and head runs so far, as flakegate gate applies it to its
	// --history (collect.GateHistory: the head's commits, runs the base side
	// holds too, infrastructure failures), so that the driver's verdict is
	// the one gate gives on the same files. It returns what it left out, to
	// note.
	HistoryFilter func(hist, base, head *history.History) (*history.History, []string)
	// Env is the environment the command starts from; nil means this
	// process's. TZ=UTC, LC_ALL=C.UTF-8, PYTHONHASHSEED=0, TMPDIR (a fresh
	// directory per run) and PWD override it; GIT_DIR, GIT_WORK_TREE,
	// GIT_INDEX_FILE, GIT_COMMON_DIR and GIT_PREFIX are removed, so that git
	// inside the command sees the worktree. GOFLAGS keeps its flags and
	// gets -count=1 unless it has a -count, so that go test runs every
	// test each time instead of replaying the result cache. The rest passes
	// as it is.
	Env []string
	// Stdout and Stderr receive the command's output, unprefixed; nil
	// discards it. As with os/exec, one writer given for both gets one
	// write at a time; two different writers may be written concurrently.
	Stdout, Stderr io.Writer
	// Log receives one line per run and look, for a person to follow; nil
	// discards them.
	Log io.Writer
	// ResultsDir receives every run's file (its JUnit file with the run's
	// own test case, see RunTest), named base-01.xml,
	// head-01.xml, … (numbers zero-padded to the width of K, so that they
	// sort in run order). It must be empty or absent; it is created if
	// absent. Default: a new directory under os.TempDir(). It is kept.
	ResultsDir string
	// WorkDir is where the temporary worktrees and per-run temporary
	// directories are made; default os.TempDir(). They are removed when Run
	// returns.
	WorkDir string
	// Grace defaults to DefaultGrace.
	Grace time.Duration
	// RunTimeout bounds one run of the command; 0 means none. A run past
	// it is killed (its process group, as on cancel) and counted as a
	// failed run: its test case (RunTest) fails, saying so, and the
	// matrix goes on. A patch that makes the suite hang is then a failure
	// the gate reads, not a job that runs until CI kills it.
	RunTimeout time.Duration
	// TimeLimit bounds the whole matrix, from the start of Run; 0 means
	// none. The driver never starts a pair that, taking as long as the
	// longest pair so far, would end past it: it stops and gives the
	// gate's verdict on the pairs done (fewer runs, so more tests may stay
	// undecided, never a run cut short on one side only). When the first
	// base run leaves too little of it for the first head run, Run fails
	// saying so. Set it below the CI job's own limit (timeout-minutes), so
	// that a slow suite ends in a verdict instead of a cancelled job, which
	// a required check reads as a failure.
	TimeLimit time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Revision is one side's revision as given and as resolved: SHA is the
// commit run, Tip the commit Rev names when the commit run is another (the
// base side's merge base with head, Options.Base).
type Revision = model.MatrixRevision

// RunRecord is one run of the command.
type RunRecord struct {
	Side  Side `json:"side"`
	Index int  `json:"index"` // 1-based, per side: base run i pairs with head run i
	// ExitCode is the command's exit status: non-zero is normal when tests
	// fail. It is −1 when a signal ended the command.
	ExitCode int           `json:"exit_code"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration_ns"`
	JUnit    string        `json:"junit"` // the run's file in ResultsDir
	// Failure is why the run's own test case (RunTest) failed: the command
	// exited non-zero with no failing test in its JUnit file, or left no
	// usable JUnit file. "" when it passed.
	Failure string `json:"failure,omitempty"`
	// unusable is true when the command left no usable JUnit file.
	unusable bool
}

// Name is "base run 3", as errors and logs say it.
func (r RunRecord) Name() string { return fmt.Sprintf("%s run %d", r.Side, r.Index) }

// Report is what Run found.
type Report struct {
	// Result is the gate's answer on all the runs, as `flakegate gate`
	// would give it on the files in ResultsDir.
	Result     gate.Result `json:"result"`
	Base       Revision    `json:"base"`
	Head       Revision    `json:"head"`
	ResultsDir string      `json:"results_dir"`
	// DiffFile is the diff of head against base the gate read (git diff
	// base...head), in ResultsDir as DiffFile; "" when it was not read.
	DiffFile string `json:"diff_file,omitempty"`
	Pairs    int    `json:"pairs"`
	// Runs are the runs, in the order they ran, each with its file in
	// ResultsDir. A run the driver could not complete is in the *RunError
	// instead.
	Runs []RunRecord `json:"runs"`
	// Stop says why the driver stopped adding pairs.
	Stop string `json:"stop"`
	// Notes are things a reader should know: a dirty working tree that was
	// not tested, history files left out, a worktree that could not be
	// removed.
	Notes []string `json:"notes,omitempty"`
}

// RunError is a run the driver could not complete: the command could not
// start, or was cancelled, or the driver failed to write the run's file. A
// command that crashed, or left no usable JUnit file, is a run like any
// other: its file says so (see RunTest).
type RunError struct {
	Run RunRecord // as far as it got
	Err error
}

func (e *RunError) Error() string { return fmt.Sprintf("%s: %v", e.Run.Name(), e.Err) }

func (e *RunError) Unwrap() error { return e.Err }

// ended is ctx's error with its cause, when it has one of its own: the
// signal that cancelled the matrix ("context canceled (interrupt)"), not
// only "context canceled". errors.Is(err, context.Canceled) still holds.
func ended(ctx context.Context) error {
	err := ctx.Err()
	if c := context.Cause(ctx); c != nil && c != err {
		return fmt.Errorf("%w (%v)", err, c)
	}
	return err
}

// errTimeLimit: a run was still going when Options.TimeLimit ended, and was
// killed. Its pair is left out: a run cut short on one side only would
// read as that side's failure.
var errTimeLimit = errors.New("still running at the time limit, and killed")

func (o Options) withDefaults() Options {
	if o.Repo == "" {
		o.Repo = "."
	}
	if o.K == 0 {
		o.K = o.Gate.MaxRuns
	}
	if o.K == 0 {
		o.K = gate.DefaultMaxRuns
	}
	if o.Gate.MaxRuns == 0 {
		o.Gate.MaxRuns = o.K
	}
	if o.Initial == 0 {
		o.Initial = min(DefaultInitial, o.K)
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// validate reports the first bad option, naming it and what is accepted.
// ErrUsage marks an error in what Run was asked (an option, a revision that
// does not resolve, a results directory in use) rather than in the runs.
var ErrUsage = errors.New("bad usage")

func (o Options) validate() error {
	if err := o.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return nil
}

// check is validate without the ErrUsage mark.
func (o Options) check() error {
	switch {
	case o.Base == "":
		return errors.New("base revision: required")
	case o.Head == "":
		return errors.New("head revision: required")
	case len(o.Command) == 0 || o.Command[0] == "":
		return errors.New("command: required: the test command to run on each side")
	case o.JUnit == "":
		return errors.New("junit path: required: where the command writes its JUnit XML file")
	case !filepath.IsLocal(o.JUnit):
		return fmt.Errorf("junit path %q: must be relative and stay inside the worktree", o.JUnit)
	case filepath.Clean(o.JUnit) == ".":
		return fmt.Errorf("junit path %q: names the checkout itself: give the path of the JUnit file the command writes", o.JUnit)
	case strings.ContainsAny(o.JUnit, "*?"):
		return fmt.Errorf("junit path %q: a pattern: matrix reads the one JUnit file each run writes, at this path; patterns and directories are not read (have the command write, or merge its reports into, one file)", o.JUnit)
	case o.K < 0:
		return fmt.Errorf("k = %d: must be at least 1", o.K)
	case o.Initial < 0:
		return fmt.Errorf("initial pairs = %d: must be at least 1", o.Initial)
	case o.Grace < 0:
		return fmt.Errorf("grace = %v: must not be negative", o.Grace)
	case o.RunTimeout < 0:
		return fmt.Errorf("run timeout = %v: must not be negative (0: no limit)", o.RunTimeout)
	case o.TimeLimit < 0:
		return fmt.Errorf("time limit = %v: must not be negative (0: no limit)", o.TimeLimit)
	}
	d := o.withDefaults()
	if o.K != 0 && o.Gate.MaxRuns != 0 && o.K != o.Gate.MaxRuns {
		return fmt.Errorf("k = %d and gate max runs = %d: must be equal (the head-run budget is the pair budget)", o.K, o.Gate.MaxRuns)
	}
	if d.Initial > d.K {
		return fmt.Errorf("initial pairs = %d: must be at most k = %d", d.Initial, d.K)
	}
	if err := d.Gate.Validate(); err != nil {
		return fmt.Errorf("gate options: %w", err)
	}
	return nil
}

// driver is one Run in progress.
// xmlEscaper escapes what XML writers escape in attribute values.
var xmlEscaper = strings.NewReplacer("&", "&amp;", "'", "&apos;", `"`, "&quot;", "<", "&lt;", ">", "&gt;")

type driver struct {
	opt     Options
	repo    checkout
	root    string // temporary: worktrees and per-run TMPDIRs
	dirs    map[Side]string
	shas    map[Side]string
	width   int     // digits of run numbers in file names
	looks   []int   // the pairs after which the gate may look
	alpha   float64 // alpha-pr over all the looks
	hist    *history.History
	rep     *Report
	cleanup []func(context.Context) error
	// tops are the worktrees' directories, as made and as resolved, that
	// the runs' files are made to name relatively (see relative).
	tops      [][]byte
	relSaid   bool              // the note that paths were made relative is given
	stateSaid bool              // the note that stateDirs are reset is given
	start     time.Time         // when Run began, for Options.TimeLimit
	deadline  time.Time         // when Options.TimeLimit ends, by the real clock; zero without one
	diffRead  bool              // diff and changes were read
	diff      string            // git diff base...head, as read
	changes   []gate.FileChange // diff, parsed
}

// Run runs the experiment and returns the gate's result with the runs that
// led to it. An error means the experiment could not be completed: bad
// options, a revision that does not resolve, a run the driver could not
// complete (a *RunError naming it), neither side's first run leaving a
// usable JUnit file (a wrong JUnit path, most likely), or ctx ending
// (errors.Is(err, context.Canceled)). A run that crashed is no error: its
// file says so (see RunTest), and the driver goes on. Except for bad options, the Report is returned even
// then, with the runs done so far and the results directory if one was
// made, for the caller to show; its Result is then the zero value. The
// worktrees and temporary directories are removed in every case.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	d := &driver{opt: opt.withDefaults(), rep: &Report{}, dirs: map[Side]string{}, shas: map[Side]string{}}
	d.width = len(strconv.Itoa(d.opt.K))
	// Each look gets a share of alpha-pr (gate.LookAlpha).
	d.looks = gate.SequentialLooks(d.opt.Initial, d.opt.K)
	d.alpha = d.opt.Gate.AlphaPR
	if d.alpha == 0 {
		d.alpha = gate.DefaultAlphaPR
	}
	err := d.run(ctx)
	// Clean up even when ctx is done, but not forever.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		if cerr := d.cleanup[i](cctx); cerr != nil {
			d.note("cleanup: %v", cerr)
		}
	}
	if err != nil {
		d.rep.Result = gate.Result{}
		return d.rep, err
	}
	return d.rep, nil
}

func (d *driver) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.rep.Notes = append(d.rep.Notes, msg)
	fmt.Fprintf(d.opt.Log, "flakegate matrix: note: %s\n", render.Plain(msg))
}

// behind makes the base side the merge base of base and head when base has
// commits head does not (Options.Base), and says so. A head that is an
// ancestor of base has no commit of its own: the merge base is head itself,
// and the run would compare head with itself, finding nothing whatever the
// patch; that is an error.
func (d *driver) behind(ctx context.Context) error {
	base, head := d.shas[Base], d.shas[Head]
	mb, ahead, ok := d.repo.mergeBase(ctx, head, base)
	switch {
	case ok && mb == head && head != base:
		return fmt.Errorf("%w: head %s (%s) is an ancestor of base %s (%s): it has no commit of its own, so the base side would run at head itself and find nothing whatever changed; were --base and --head swapped? (--exact-base compares %s with %s as given)",
			ErrUsage, d.rep.Head.Rev, model.ShortSHA(head), d.rep.Base.Rev, model.ShortSHA(base), d.rep.Base.Rev, d.rep.Head.Rev)
	case !ok:
		d.note("base %s and head %s have no common ancestor here (a shallow clone? fetch-depth: 0 fetches it): base is run as given, and what changed on it since head branched off reads as the patch's",
			model.ShortSHA(base), model.ShortSHA(head))
	case mb != base:
		d.note("head %s is %d commit(s) behind base %s (%s): base is run at their merge base %s, where head branched off, so that what changed on the base since (tests added, fixed or removed) is not read as the patch's; --exact-base runs %s itself",
			model.ShortSHA(head), ahead, d.rep.Base.Rev, model.ShortSHA(base), model.ShortSHA(mb), d.rep.Base.Rev)
		d.shas[Base] = mb
		d.rep.Base.SHA, d.rep.Base.Tip = mb, base
	}
	return nil
}

func (d *driver) run(ctx context.Context) error {
	opt := d.opt
	d.start = opt.Now()
	adopt()
	if opt.TimeLimit > 0 {
		d.deadline = time.Now().Add(opt.TimeLimit) // the real clock: it kills runs
	}
	var err error
	if d.repo, err = openRepo(ctx, opt.Repo); err != nil {
		return err
	}
	for _, s := range []struct {
		side Side
		flag string
		rev  string
		dst  *Revision
	}{{Base, "base revision", opt.Base, &d.rep.Base}, {Head, "head revision", opt.Head, &d.rep.Head}} {
		sha, err := d.repo.resolve(ctx, s.flag, s.rev)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		d.shas[s.side] = sha
		*s.dst = Revision{Rev: s.rev, SHA: sha}
	}
	if !opt.ExactBase {
		if err := d.behind(ctx); err != nil {
			return err
		}
	}
	d.readDiff(ctx)
	if d.repo.dirty(ctx) {
		d.note("the working tree %s has uncommitted changes; they are not tested: base and head are checked out as committed", d.repo.top)
	}
	if n := d.repo.untracked(ctx); n > 0 {
		d.note("the working tree %s has %d untracked file(s); they are not tested: the worktrees hold committed files only", d.repo.top, n)
	}
	if deps := d.repo.ignoredDeps(ctx); len(deps) > 0 {
		d.note("the working tree has %s, which git ignores, so the worktrees lack it: install dependencies in the command, once per worktree (e.g. -- sh -c '[ -d node_modules ] || npm ci; npx jest --ci')", strings.Join(deps, " and "))
	}
	for _, side := range []Side{Base, Head} {
		if d.repo.submodules(ctx, d.shas[side]) {
			d.note("%s declares submodules (.gitmodules); they are not initialised in the worktrees, so tests in them do not run", side)
			break
		}
	}
	if len(opt.History) > 0 {
		if d.hist, err = history.Load(ctx, opt.History, history.Options{}); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		for _, s := range d.hist.Skipped {
			d.note("history: left out %s: %s", s.Path, s.Error)
		}
	}
	if err := d.makeResultsDir(); err != nil {
		return err
	}
	if err := d.writeManifest(); err != nil {
		return err
	}
	if d.root, err = os.MkdirTemp(opt.WorkDir, "flakegate-matrix-"); err != nil {
		return fmt.Errorf("work directory: %w", err)
	}
	untrack := trackRoot(d.root, d.repo.top)
	d.cleanup = append(d.cleanup, func(context.Context) error { defer untrack(); return os.RemoveAll(d.root) })
	for _, side := range []Side{Base, Head} {
		dir := filepath.Join(d.root, string(side))
		// Registered first: an add cut short by ctx may leave a half-made
		// worktree behind.
		d.cleanup = append(d.cleanup, func(ctx context.Context) error { return d.repo.removeWorktree(ctx, dir) })
		if err := d.repo.addWorktree(ctx, dir, d.shas[side]); err != nil {
			return fmt.Errorf("%s: %w", side, err)
		}
		paths := []string{dir}
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
			paths = append(paths, real)
		}
		for _, p := range paths {
			p += string(filepath.Separator)
			d.tops = append(d.tops, []byte(p))
			// As JUnit writes it in an attribute, "&" and "'" escaped.
			if esc := xmlEscaper.Replace(p); esc != p {
				d.tops = append(d.tops, []byte(esc))
			}
		}
		slices.SortFunc(d.tops, func(a, b []byte) int { return len(b) - len(a) })
		d.dirs[side] = filepath.Join(dir, d.repo.prefix)
		if fi, err := os.Stat(d.dirs[side]); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s %s has no directory %s to run the command in", side, model.ShortSHA(d.shas[side]), filepath.ToSlash(d.repo.prefix))
		}
	}

	looked := 0 // the pairs the gate last looked at
	next := 0   // the pairs of the next look
	for pair := 1; ; pair++ {
		if stop := d.noRoomFor(pair); stop != "" {
			if looked < pair-1 {
				if d.rep.Result, err = d.evaluate(ctx); err != nil {
					return err
				}
			}
			d.stop(pair-1, timeStop(d.rep.Result, pair-1, stop))
			// In the verdict's reasons too, so that the JSON report and the
			// printed verdict say that it rests on fewer pairs than K.
			d.rep.Result.Reasons = append(d.rep.Result.Reasons, fmt.Sprintf("flakegate matrix stopped after %d of at most %d pairs: %s", pair-1, opt.K, stop))
			return nil
		}
		for _, side := range []Side{Base, Head} {
			if ctx.Err() != nil {
				return ended(ctx)
			}
			if side == Head && pair == 1 {
				if err := d.roomForFirstHead(); err != nil {
					return err
				}
			}
			rec, err := d.runOnce(ctx, side, pair)
			if errors.Is(err, errTimeLimit) {
				return d.cutByTimeLimit(ctx, pair, rec)
			}
			if err != nil {
				return err
			}
			d.rep.Runs = append(d.rep.Runs, rec)
		}
		d.rep.Pairs = pair
		if b, h := d.rep.Runs[0], d.rep.Runs[1]; pair == 1 && b.unusable && h.unusable {
			// Nothing to compare, and most likely nothing ever will be.
			return fmt.Errorf("neither side's first run left a usable JUnit file: check the JUnit path %s, and that the command runs in a fresh checkout of each side (%s: %s)",
				filepath.ToSlash(opt.JUnit), h.Name(), h.Failure)
		}
		if pair < opt.Initial || pair < next {
			continue
		}
		res, err := d.evaluate(ctx)
		if err != nil {
			return err
		}
		d.rep.Result, looked = res, pair
		// A block is the verdict once any look finds it (the looks share
		// alpha-pr): more pairs for the tests still pending cannot undo it.
		crashes := res.Crashes != nil && res.Crashes.More
		// A block by on-inconclusive=fail is no block yet: more pairs can
		// decide the tests it waits on (it stopped the driver).
		// Property and ledger findings do not change with more pairs, and
		// the action's gate reads them with the PR's own body, labels and
		// protected-paths: they must not cut the runs it reads short.
		blocked := testsBlock(res)
		pending := res.Pending()
		if len(pending) == 0 && !crashes && !blocked && pair < opt.K && pair < DefaultInitial {
			// Pending is judged at this look's share of alpha-pr, which
			// after 1 or 2 pairs (--initial 1 or 2) is too small for any
			// count to block, and one base run rules out only a rate above
			// 0.79: a test failing every head run read as one no more runs
			// could settle, and the driver stopped, inconclusive. Before
			// DefaultInitial pairs, an undecided test waits for more. From
			// there on the rule is the one TestPRExperiment measures.
			pending = res.Undecided()
		}
		if (len(pending) > 0 || crashes) && pair < opt.K && !blocked {
			next = d.looks[slices.IndexFunc(d.looks, func(n int) bool { return n > pair })]
			what := fmt.Sprintf("%d test(s) pending: %s", len(pending), render.Plain(strings.Join(pending, ", ")))
			if crashes {
				// Head runs in which most of the suite failed, more than
				// base runs: an outage or a crash the patch causes, which
				// more pairs tell apart.
				c := res.Crashes
				what = fmt.Sprintf("%d of %d head runs failed most of the suite against %d of %d base runs", c.HeadOutages, c.HeadRuns, c.BaseOutages, c.BaseRuns)
				if len(pending) > 0 {
					what += fmt.Sprintf(", and %d test(s) pending: %s", len(pending), render.Plain(strings.Join(pending, ", ")))
				}
			}
			fmt.Fprintf(opt.Log, "flakegate matrix: after %d pairs, %s; running %s before the next look\n", pair, what, pairsUpTo(pair, next))
			continue
		}
		d.stop(pair, stopReason(res, pair, opt.K))
		return nil
	}
}

// pairsUpTo says which pairs come after pair, up to next.
func pairsUpTo(pair, next int) string {
	if next == pair+1 {
		return fmt.Sprintf("pair %d", next)
	}
	return fmt.Sprintf("pairs %d-%d", pair+1, next)
}

// joinInts writes 5, 10 and 20.
func sumInts(ns []int) int {
	sum := 0
	for _, n := range ns {
		sum += n
	}
	return sum
}

// stop ends the matrix after pairs pairs, for reason.
func (d *driver) stop(pairs int, reason string) {
	d.rep.Stop = reason
	d.noteRedBase()
	fmt.Fprintf(d.opt.Log, "flakegate matrix: stopped after %d pairs: %s\n", pairs, render.Plain(reason))
}

// noRoomFor says why pair, taking as long as the longest pair so far,
// would end past Options.TimeLimit, or "" when it would not (or there is no
// limit, or no pair has run).
func (d *driver) noRoomFor(pair int) string {
	limit := d.opt.TimeLimit
	if limit <= 0 || pair == 1 {
		return ""
	}
	var longest time.Duration
	runs := d.rep.Runs
	for i := 0; i+1 < len(runs); i += 2 {
		longest = max(longest, runs[i].Duration+runs[i+1].Duration)
	}
	elapsed := d.opt.Now().Sub(d.start)
	if elapsed+longest <= limit {
		return ""
	}
	return fmt.Sprintf("the time limit (%s) leaves no room for pair %d: %s gone, the longest pair took %s",
		limit, pair, elapsed.Round(time.Second), longest.Round(time.Second))
}

// cutByTimeLimit ends the matrix when a run of pair was still going at
// Options.TimeLimit: the pair is left out (its base run's file too, so
// that gate reads the pairs matrix read), and the verdict rests on the
// pairs before it; with none, there is no verdict.
func (d *driver) cutByTimeLimit(ctx context.Context, pair int, cut RunRecord) error {
	for _, r := range d.rep.Runs[2*(pair-1):] {
		if err := os.Remove(r.JUnit); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	d.rep.Runs = d.rep.Runs[:2*(pair-1)]
	why := fmt.Sprintf("the time limit (%s) ended while %s was running (%s in): it was killed, and pair %d is left out", d.opt.TimeLimit, cut.Name(), cut.Duration.Round(time.Second), pair)
	if d.opt.RunTimeout <= 0 {
		why += "; a run that hangs is killed and counted as a failed run with --run-timeout"
	}
	if pair == 1 {
		return fmt.Errorf("%s, so no pair is left to give a verdict", why)
	}
	res, err := d.evaluate(ctx)
	if err != nil {
		return err
	}
	d.rep.Result, d.rep.Pairs = res, pair-1
	d.stop(pair-1, timeStop(res, pair-1, why))
	d.rep.Result.Reasons = append(d.rep.Result.Reasons, fmt.Sprintf("flakegate matrix stopped after %d of at most %d pairs: %s", pair-1, d.opt.K, why))
	return nil
}

// roomForFirstHead fails when the first base run, taken as the first head
// run's length, leaves too little of Options.TimeLimit for it: one pair
// does not fit, and no verdict can come of the runs.
func (d *driver) roomForFirstHead() error {
	limit := d.opt.TimeLimit
	if limit <= 0 {
		return nil
	}
	b := d.rep.Runs[0]
	elapsed := d.opt.Now().Sub(d.start)
	if elapsed+b.Duration <= limit {
		return nil
	}
	return fmt.Errorf("the time limit (%s) cannot hold one pair: %s took %s and %s of the limit is gone, so head run 1 would end past it; raise the time limit (and the CI job's timeout-minutes with it), or run fewer tests",
		limit, b.Name(), b.Duration.Round(time.Second), elapsed.Round(time.Second))
}

// timeStop is the reason the driver stopped after pairs pairs at the time
// limit (stop says how), with what the gate's look at them left undecided.
func timeStop(res gate.Result, pairs int, stop string) string {
	undecided := res.Undecided()
	if len(undecided) == 0 {
		return fmt.Sprintf("%s; every test has a verdict after %d pairs", stop, pairs)
	}
	return fmt.Sprintf("%s; %d test(s) still undecided after %d pairs: %s", stop, len(undecided), pairs, strings.Join(undecided, ", "))
}

// noteRedBase says so when the command failed as a whole in every base
// run: its test case (RunTest) is then red on base, which the gate
// attributes to neither side.
func (d *driver) noteRedBase() {
	first := ""
	for _, r := range d.rep.Runs {
		if r.Side != Base {
			continue
		}
		if r.Failure == "" {
			return
		}
		if first == "" {
			first = r.Failure
		}
	}
	d.note("the test command failed as a whole in every base run (base run 1: %s): the base is red, so the gate attributes nothing that %s shows to the patch: fix the base, or the command", first, RunTest)
}

// testsBlock reports whether the runs block: a test, the suite's crashes
// or missing results, leaving out property and ledger findings, which more
// pairs do not change and a later gate may read otherwise (the PR's
// declaration, its protected-paths).
func testsBlock(res gate.Result) bool {
	res.Properties, res.Ledger = nil, nil
	return len(res.Blocking()) > 0
}

// stopReason says why the driver stopped after pair pairs.
func stopReason(res gate.Result, pair, k int) string {
	failing := 0
	var undecided []string
	for _, t := range res.Tests {
		if t.Base.Failures > 0 || t.Head.Failures > 0 {
			failing++
		}
		if t.Decision == gate.Inconclusive {
			undecided = append(undecided, t.Name)
		}
	}
	pending := res.Pending()
	switch {
	case res.Crashes != nil && res.Crashes.Block:
		c := res.Crashes
		return fmt.Sprintf("%d of %d head runs failed most of the suite against %d of %d base runs after %d pairs: the patch crashes the suite now and then", c.HeadOutages, c.HeadRuns, c.BaseOutages, c.BaseRuns, pair)
	case res.Crashes != nil && !testsBlock(res) && (!res.Crashes.More || pair >= k):
		c := res.Crashes
		return fmt.Sprintf("%d of %d head runs failed most of the suite against %d of %d base runs after %d pairs: an outage or a crash the patch causes, which the budget of %d pairs cannot tell apart", c.HeadOutages, c.HeadRuns, c.BaseOutages, c.BaseRuns, pair, k)
	case failing == 0 && len(res.Outages) > 0:
		return fmt.Sprintf("no test failed on either side in %d pairs, apart from the runs left out as infrastructure failures (%d)", pair, len(res.Outages))
	case failing == 0:
		return fmt.Sprintf("no test failed on either side in %d pairs", pair)
	case testsBlock(res) && len(pending) > 0 && pair < k:
		return fmt.Sprintf("a test blocks after %d pairs, which more pairs cannot undo; %d test(s) left pending: %s", pair, len(pending), strings.Join(pending, ", "))
	case len(undecided) == 0:
		return fmt.Sprintf("every test failing on either side (%d) has a verdict after %d pairs", failing, pair)
	case pair >= k:
		return fmt.Sprintf("the budget of %d pairs is spent with %d test(s) still undecided: %s", k, len(undecided), strings.Join(undecided, ", "))
	default:
		return fmt.Sprintf("after %d pairs no test failing on either side can be settled by more runs; %d test(s) inconclusive: %s",
			pair, len(undecided), strings.Join(undecided, ", "))
	}
}

// writeManifest records in the results directory the commits the runs are
// of (model.MatrixManifestFile), for the action to name them: the runs'
// files do not.
// readDiff reads what head changes since it left base, for the gate's
// property checks (protected paths, skip markers, tests removed as
// declared), as the action reads a pull request's files. Without it they
// did not run, and a test removal could never pass matrix.
func (d *driver) readDiff(ctx context.Context) {
	text, err := d.repo.diff(ctx, d.shas[Base], d.shas[Head])
	if err == nil {
		d.changes, err = gate.ParseUnifiedDiff(text)
	}
	if err != nil {
		d.changes = nil
		d.note("the diff of head against base was not read (%v): the protected-path and skip-marker checks did not run", err)
		return
	}
	d.diff, d.diffRead = text, true
}

// DiffFile is the name of the diff of head against base in the results
// directory.
const DiffFile = "flakegate-matrix.diff"

func (d *driver) writeManifest() error {
	b, err := json.MarshalIndent(model.MatrixManifest{Base: d.rep.Base, Head: d.rep.Head, Looks: len(d.looks), LookPairs: d.looks, K: d.opt.K}, "", "  ")
	if err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	name := filepath.Join(d.rep.ResultsDir, model.MatrixManifestFile)
	if err := writeNew(name, append(b, '\n')); err != nil {
		return err
	}
	if d.diffRead {
		// For the gate command that reads the runs (--diff).
		d.rep.DiffFile = filepath.Join(d.rep.ResultsDir, DiffFile)
		if err := writeNew(d.rep.DiffFile, []byte(d.diff)); err != nil {
			return err
		}
	}
	// Gone again if no run completes, so that the directory can be given
	// again: it must be empty.
	d.cleanup = append(d.cleanup, func(context.Context) error {
		if len(d.rep.Runs) == 0 {
			err := os.Remove(name)
			if d.rep.DiffFile != "" {
				err = errors.Join(err, os.Remove(d.rep.DiffFile))
			}
			return err
		}
		return nil
	})
	return nil
}

func (d *driver) makeResultsDir() error {
	dir := d.opt.ResultsDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "flakegate-matrix-results-"); err != nil {
			return fmt.Errorf("results directory: %w", err)
		}
		// Removed again, with the copy of a file a run's check refused,
		// if no run completed: the error names what was wrong.
		d.cleanup = append(d.cleanup, func(context.Context) error {
			if len(d.rep.Runs) == 0 {
				d.rep.ResultsDir = ""
				return os.RemoveAll(dir)
			}
			return nil
		})
	} else {
		entries, err := os.ReadDir(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("results directory: %w", err)
			}
		case err != nil:
			if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
				return fmt.Errorf("%w: results directory %s: is a file: give an empty or new directory", ErrUsage, dir)
			}
			return fmt.Errorf("results directory: %w", err)
		case len(entries) > 0:
			return fmt.Errorf("%w: results directory %s: not empty: give an empty or new directory, so that no earlier run's file is read as this experiment's", ErrUsage, dir)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	d.rep.ResultsDir = abs
	return nil
}

// source is run rec's JUnit copy as a history source. The run id is the
// run's index and the time its start, so that the history orders the runs
// as they ran whatever the file says; the commit is the side's.
func (d *driver) source(rec RunRecord) history.Source {
	path := rec.JUnit
	return history.Source{
		Name: path,
		Open: func() (io.ReadCloser, error) { return os.Open(path) },
		Run:  &model.Run{CommitSHA: d.shas[rec.Side], RunID: strconv.Itoa(rec.Index), Time: rec.Start},
	}
}

// evaluate asks the gate about every run so far, at this look's share of
// alpha-pr.
func (d *driver) evaluate(ctx context.Context) (gate.Result, error) {
	sides := map[Side][]history.Source{}
	for _, r := range d.rep.Runs {
		sides[r.Side] = append(sides[r.Side], d.source(r))
	}
	hs := map[Side]*history.History{}
	for side, srcs := range sides {
		h, err := history.Load(ctx, srcs, history.Options{})
		if err != nil {
			return gate.Result{}, fmt.Errorf("%s results: %w", side, err)
		}
		if len(h.Skipped) > 0 {
			// Each file parsed when its run ended; it cannot fail now unless
			// something changed it since.
			s := h.Skipped[0]
			return gate.Result{}, fmt.Errorf("%s results: %s: %s", side, s.Path, s.Error)
		}
		hs[side] = h
	}
	hist := d.hist
	if hist != nil && d.opt.HistoryFilter != nil {
		var left []string
		hist, left = d.opt.HistoryFilter(hist, hs[Base], hs[Head])
		for _, n := range left {
			if !slices.Contains(d.rep.Notes, n) {
				d.note("%s", n)
			}
		}
	}
	in := d.opt.Input
	if d.diffRead {
		in.Changes, in.ChangesKnown = d.changes, true
	}
	in.Tests = gate.Join(hs[Base], hs[Head], hist)
	in.Collected = gate.CollectedCounts(hs[Base], hs[Head], model.DefaultInfra)
	if in.Now.IsZero() {
		in.Now = d.opt.Now()
	}
	pairs := 0
	for _, r := range d.rep.Runs {
		if r.Side == Head {
			pairs++
		}
	}
	opt := d.opt.Gate
	opt.AlphaPR = gate.LookAlpha(d.alpha, d.looks, pairs)
	res, err := gate.Evaluate(in, opt)
	if err != nil {
		return gate.Result{}, err
	}
	if len(d.looks) > 1 {
		shares := make([]string, len(d.looks))
		for i, n := range d.looks {
			shares[i] = fmt.Sprintf("%d/%d", n, sumInts(d.looks))
		}
		res.Reasons = append(res.Reasons, fmt.Sprintf("flakegate matrix looks at most %d times (after %s pairs, fewer when nothing is pending), at shares of alpha-pr %.3g that grow with the pairs read (%s), this look after %d pairs at %.3g, so that the chance a PR changing nothing is blocked at any look stays within %.3g",
			len(d.looks), render.Counts(d.looks), d.alpha, strings.Join(shares, ", "), pairs, opt.AlphaPR, d.alpha))
	}
	return res, nil
}
