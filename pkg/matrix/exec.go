package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// runOnce runs the command once on one side and copies its JUnit file to
// the results directory.
func (d *driver) runOnce(ctx context.Context, side Side, index int) (RunRecord, error) {
	opt := d.opt
	rec := RunRecord{Side: side, Index: index}
	fail := func(format string, args ...any) (RunRecord, error) {
		return rec, &RunError{Run: rec, Err: fmt.Errorf(format, args...)}
	}
	dir := d.dirs[side]
	junit := filepath.Join(dir, opt.JUnit)
	// The previous run's file must not pass for this run's.
	if err := os.Remove(junit); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("removing the previous run's JUnit file: %w", err)
	}
	// A fresh temporary directory per run: nothing carries over.
	tmp := filepath.Join(d.root, "tmp", fmt.Sprintf("%s-%d", side, index))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fail("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	cmd := exec.CommandContext(ctx, opt.Command[0], opt.Command[1:]...)
	cmd.Dir = dir
	cmd.Env = runEnv(opt.Env, dir, tmp)
	cmd.Stdin = nil // /dev/null: a run never waits on a terminal
	cmd.Stdout, cmd.Stderr = opt.Stdout, opt.Stderr
	ownGroup(cmd)
	cmd.Cancel = func() error { return terminate(cmd) }
	cmd.WaitDelay = opt.Grace

	fmt.Fprintf(opt.Log, "flakegate matrix: %s (%s) in %s: %s\n", rec.Name(), model.ShortSHA(d.shas[side]), dir, strings.Join(opt.Command, " "))
	rec.Start = opt.Now()
	err := cmd.Run()
	rec.Duration = opt.Now().Sub(rec.Start)
	// Whatever the command left running goes with it: the next run starts
	// from a clean process table.
	_ = kill(cmd)
	if ctx.Err() != nil {
		return rec, &RunError{Run: rec, Err: ctx.Err()}
	}
	if cmd.ProcessState == nil {
		return fail("command %q did not start: %w", opt.Command[0], err)
	}
	rec.ExitCode = cmd.ProcessState.ExitCode()
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fail("command: %w", err)
		}
	}

	if _, err := os.Stat(junit); errors.Is(err, os.ErrNotExist) {
		return fail("no JUnit file at %s after the command exited with status %d: it probably crashed before writing it, or the JUnit path is wrong",
			filepath.ToSlash(opt.JUnit), rec.ExitCode)
	}
	rec.JUnit = filepath.Join(d.rep.ResultsDir, fmt.Sprintf("%s-%0*d.xml", side, d.width, index))
	if err := copyFile(rec.JUnit, junit); err != nil {
		return fail("copying the JUnit file: %w", err)
	}
	// Read it now: a broken file stops the experiment before more runs are
	// spent, and names the run that wrote it.
	h, err := history.Load(ctx, []history.Source{d.source(rec)}, history.Options{Workers: 1})
	if err != nil {
		return rec, &RunError{Run: rec, Err: err}
	}
	if len(h.Skipped) > 0 {
		return fail("JUnit file %s (copied to %s, exit status %d): %s", filepath.ToSlash(opt.JUnit), rec.JUnit, rec.ExitCode, h.Skipped[0].Error)
	}
	fmt.Fprintf(opt.Log, "flakegate matrix: %s: exit status %d after %s; %d test case(s), %d failed\n",
		rec.Name(), rec.ExitCode, rec.Duration.Round(time.Millisecond), h.Totals.Testcases, h.Totals.Failed+h.Totals.Errors)
	return rec, nil
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

func copyFile(dst, src string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}
