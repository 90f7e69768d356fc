package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/render"
)

// runOnce runs the command once on one side and writes the run's file to
// the results directory: its JUnit file with the run's own test case
// (see evidence). An error is a run the driver could not complete: the
// command did not start, ctx ended, or the driver's own work failed.
func (d *driver) runOnce(ctx context.Context, side Side, index int) (RunRecord, error) {
	opt := d.opt
	rec := RunRecord{Side: side, Index: index}
	fail := func(format string, args ...any) (RunRecord, error) {
		return rec, &RunError{Run: rec, Err: fmt.Errorf(format, args...)}
	}
	dir := d.dirs[side]
	junit := filepath.Join(dir, opt.JUnit)
	// The previous run's file must not pass for this run's.
	if fi, err := os.Lstat(junit); err == nil && fi.IsDir() {
		return fail("the JUnit path %s is a directory in the checkout: give the path of the one JUnit file the command writes (patterns and directories are not read)", filepath.ToSlash(opt.JUnit))
	}
	if err := os.Remove(junit); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("removing the previous run's JUnit file: %w", err)
	}
	if err := d.resetState(ctx, side); err != nil {
		return fail("%w", err)
	}
	// A fresh temporary directory per run: nothing carries over.
	tmp := filepath.Join(d.root, "tmp", fmt.Sprintf("%s-%d", side, index))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fail("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	runCtx := ctx
	if opt.RunTimeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, opt.RunTimeout)
		defer cancel()
	}
	// The time limit holds whatever the run does: a run still going at
	// its end (a hang, with no --run-timeout to kill it) is cut, and its
	// pair left out (errTimeLimit).
	limitCtx := runCtx
	if !d.deadline.IsZero() {
		var cancel context.CancelFunc
		limitCtx, cancel = context.WithDeadline(runCtx, d.deadline)
		defer cancel()
	}
	cmd := exec.CommandContext(limitCtx, opt.Command[0], opt.Command[1:]...)
	cmd.Dir = dir
	cmd.Env = runEnv(opt.Env, dir, tmp)
	cmd.Stdin = nil // /dev/null: a run never waits on a terminal
	cmd.Stdout, cmd.Stderr = opt.Stdout, opt.Stderr
	ownGroup(cmd)
	// Which limit killed the run is decided when it is killed: by the
	// time Wait returns (a grace later, a reap later) the other may have
	// passed too, and a cut read as the run timeout's is a failed run of
	// one side; a run that ended on its own just before the limit is no
	// cut.
	var cut, timedOut atomic.Bool
	cmd.Cancel = func() error {
		switch {
		case ctx.Err() != nil: // cancelled: said as such below
		case runCtx.Err() != nil:
			timedOut.Store(true)
		default:
			cut.Store(true)
		}
		return terminate(cmd)
	}
	cmd.WaitDelay = opt.Grace

	fmt.Fprintf(opt.Log, "flakegate matrix: %s (%s) in %s: %s\n", rec.Name(), model.ShortSHA(d.shas[side]), dir, strings.Join(opt.Command, " "))
	rec.Start = opt.Now()
	spawning.Lock() // reapOrphans must not take it for an orphan before it is tracked
	err := cmd.Start()
	var done func()
	if err == nil {
		done = track(cmd.Process.Pid)
	}
	spawning.Unlock()
	if err == nil {
		err = cmd.Wait()
		// Whatever the command left running goes with it: the next run
		// starts from a clean process table.
		_ = kill(cmd)
		done()
		if n := reapOrphans(cmd.Process.Pid, false); n > 0 {
			d.note("%s left %d process(es) running in a session of its own (setsid), out of reach of its group's kill: killed, so that the next run starts without them", rec.Name(), n)
		}
	}
	rec.Duration = opt.Now().Sub(rec.Start)
	if ctx.Err() != nil {
		return rec, &RunError{Run: rec, Err: ended(ctx)}
	}
	if cut.Load() || (cmd.ProcessState == nil && limitCtx.Err() != nil && runCtx.Err() == nil) {
		return rec, &RunError{Run: rec, Err: errTimeLimit}
	}
	if cmd.ProcessState == nil {
		if runCtx.Err() != nil && opt.RunTimeout > 0 {
			return fail("command %q did not start within the run timeout (%s): give --run-timeout at least the time a run takes", opt.Command[0], opt.RunTimeout)
		}
		return fail("command %q did not start: %w", opt.Command[0], err)
	}
	rec.ExitCode = cmd.ProcessState.ExitCode()
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fail("command: %w", err)
		}
	}

	rec.JUnit = filepath.Join(d.rep.ResultsDir, fmt.Sprintf("%s-%0*d.xml", side, d.width, index))
	exit := exitText(cmd.ProcessState)
	if timedOut.Load() {
		exit = fmt.Sprintf("did not finish within the run timeout (%s) and was killed", opt.RunTimeout)
		if rec.ExitCode == 0 {
			rec.ExitCode = -1 // a run cut short did not succeed, whatever its status
		}
	}
	doc, err := d.evidence(ctx, &rec, junit, exit)
	if err != nil {
		return rec, &RunError{Run: rec, Err: err}
	}
	if err := writeNew(rec.JUnit, doc); err != nil {
		return fail("%w", err)
	}
	// Read it as the gate will: a file the driver wrote that does not
	// read as the run is the driver's fault, and stops it.
	h, err := history.Load(ctx, []history.Source{d.source(rec)}, history.Options{Workers: 1})
	if err != nil {
		return rec, &RunError{Run: rec, Err: err}
	}
	if len(h.Skipped) > 0 || len(h.Runs) != 1 {
		return fail("the run's file %s: %d runs, %v: want one readable run", rec.JUnit, len(h.Runs), h.Skipped)
	}
	cases, failed := h.Totals.Testcases-1, h.Totals.Failed+h.Totals.Errors
	what := fmt.Sprintf("%d test case(s), %d failed", cases, failed)
	if rec.Failure != "" {
		what = fmt.Sprintf("%d test case(s), %d failed; %s failed: %s", cases, failed-1, RunTest, rec.Failure)
	}
	// exit says how the command ended ("exited with status 1", "was
	// killed by signal 11 (segmentation fault)"), where the code alone
	// reads -1 for a signal.
	fmt.Fprintf(opt.Log, "flakegate matrix: %s: the command %s after %s; %s\n",
		rec.Name(), exit, rec.Duration.Round(time.Millisecond), render.Plain(what))
	return rec, nil
}

// evidence is the run's file: the command's JUnit file with the run's own
// test case added (see RunTest), or that case alone when the command left
// no usable file. It sets rec.Failure. An error is the driver's own: the
// case could not be added to a file that reads as JUnit.
func (d *driver) evidence(ctx context.Context, rec *RunRecord, junit, exit string) ([]byte, error) {
	path := filepath.ToSlash(d.opt.JUnit)
	doc, missing, err := readJUnit(junit)
	var rep report
	switch {
	case err != nil:
		rep.broken = err.Error()
	case !missing:
		doc = d.relative(doc)
		if rep, err = readReport(ctx, rec.JUnit, doc); err != nil {
			return nil, err
		}
	}
	rec.Failure = runFailure(rec.ExitCode, exit, rep, path, missing)
	if rec.unusable = missing || rep.broken != ""; rec.unusable {
		return standalone(runSuite(rec.Failure, model.Run{}, rec.Start)), nil
	}
	// The case goes with the run the file states, if it states one, so
	// that gate reads one run from the file.
	var props model.Run
	if len(rep.runs) == 1 {
		props = rep.runs[0].Run
	}
	out, err := withSuite(doc, runSuite(rec.Failure, props, rec.Start))
	if err != nil {
		return nil, fmt.Errorf("adding the run's test case to the JUnit file %s: %w", path, err)
	}
	after, err := readReport(ctx, rec.JUnit, out)
	if err != nil {
		return nil, err
	}
	if after.broken != "" || len(after.runs) != max(1, len(rep.runs)) || after.cases != rep.cases+1 {
		return nil, fmt.Errorf("adding the run's test case to the JUnit file %s: the result does not read as the same run with one more test case (%s)", path, after.broken)
	}
	return out, nil
}

// stateDirs are directories where test tools keep what one run learnt
// for the next: Hypothesis replays the failing examples it saved in
// .hypothesis/ first, so once one run of a side found one, every later run
// of that side failed with it, and a flaky property test read as a
// regression on whichever side found it first.
var stateDirs = []string{".hypothesis"}

// resetState puts the stateDirs of side's worktree (at its top and where
// the command runs) back as committed before each run, and says so once.
func (d *driver) resetState(ctx context.Context, side Side) error {
	top := filepath.Join(d.root, string(side))
	for _, name := range stateDirs {
		for _, dir := range slices.Compact([]string{top, d.dirs[side]}) {
			p := filepath.Join(dir, name)
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if _, err := git(ctx, top, "clean", "-fdxq", "--", rel); err != nil {
				// Not fatal: the run goes on with what is there, said.
				d.note("%s could not be put back as committed before %s's runs: %v", rel, side, err)
				continue
			}
			// What is committed there, if anything, comes back as it was.
			_, _ = git(ctx, top, "checkout", "-q", "HEAD", "--", rel) // an error: nothing is committed there
			if !d.stateSaid {
				d.stateSaid = true
				d.note("%s is put back as committed before each run: a run's saved examples would replay in the next runs of its side only", rel)
			}
		}
	}
	return nil
}

// relative makes the paths inside the worktrees that doc names relative
// to them: base and head run in directories of their own, and a tool that
// writes where a test is (doctest's classname, a pytest id built from a
// path, PHPUnit's file) would give the same test another name on each
// side, every test "removed" and "new" on a clean patch. A document in
// UTF-16 is left as it is.
func (d *driver) relative(doc []byte) []byte {
	if bytes.HasPrefix(doc, []byte{0xFF, 0xFE}) || bytes.HasPrefix(doc, []byte{0xFE, 0xFF}) {
		return doc
	}
	changed := false
	for _, top := range d.tops { // longest first: a resolved path may end with the other
		if bytes.Contains(doc, top) {
			doc, changed = bytes.ReplaceAll(doc, top, nil), true
		}
		// The worktree itself, where a path ends ("root[$PWD]").
		bare := top[:len(top)-1]
		for from := 0; ; {
			i := bytes.Index(doc[from:], bare)
			if i < 0 {
				break
			}
			i += from
			if end := i + len(bare); end == len(doc) || bytes.IndexByte([]byte("\"'])<>,:; \t\r\n"), doc[end]) >= 0 {
				doc = slices.Concat(doc[:i], []byte("."), doc[end:])
				changed = true
				from = i + 1
				continue
			}
			from = i + 1
		}
	}
	if changed && !d.relSaid {
		d.relSaid = true
		d.note("the test command's JUnit file names paths inside the worktree (%s…): they are kept relative to it, so that a test has one name on both sides", d.tops[0])
	}
	return doc
}

// runEnv is the command's environment: the caller's, with git's pointers
// to another repository removed, and the pinned variables, TMPDIR, PWD
// and GOFLAGS set.
func runEnv(base []string, dir, tmp string) []string {
	if base == nil {
		base = os.Environ()
	}
	goflags := ""
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			goflags = v
		}
	}
	set := append(slices.Clone(pinned), "TMPDIR="+tmp, "PWD="+dir, "GOFLAGS="+noTestCache(goflags))
	drop := slices.Clone(unset)
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop = append(drop, k)
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// noTestCache adds -count=1 to GOFLAGS, the caller's value, unless it has
// a -count already: go test replays a passing package's cached result
// instead of running it again, and the worktrees' paths stay the same for
// all of one side's runs, so a test that fails now and then would be seen
// failing only until it first passed. Any -count turns the cache off; go
// applies a GOFLAGS flag only to the go commands that know it, and a
// -count on the command line still wins.
func noTestCache(goflags string) string {
	for _, f := range strings.Fields(goflags) {
		if strings.HasPrefix(f, "-count=") || strings.HasPrefix(f, "--count=") {
			return goflags
		}
	}
	if strings.TrimSpace(goflags) == "" {
		return "-count=1"
	}
	return goflags + " -count=1"
}

// writeNew writes a new file at dst: a file already there is an error,
// not overwritten.
func writeNew(dst string, data []byte) (err error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = out.Write(data)
	return err
}
