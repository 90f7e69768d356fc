package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/matrix"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
	"github.com/flakegate/flakegate/pkg/sprt"
)

// gateCommand is the `flakegate gate` command line that reads the matrix's
// files to the same verdict: one decision procedure, whoever runs it. It
// carries every option that is not gate's default, and the history globs.
func gateCommand(rep *matrix.Report, opt matrix.Options, hist []string, bodyFile string) string {
	k := opt.K
	if k == 0 {
		k = gate.DefaultMaxRuns
	}
	g := opt.Gate
	cmd := fmt.Sprintf("flakegate gate --base %s --head %s --max-runs %d",
		shellQuote(filepath.Join(rep.ResultsDir, "base-*.xml")), shellQuote(filepath.Join(rep.ResultsDir, "head-*.xml")), k)
	if g.FirstLook != 0 {
		cmd += fmt.Sprintf(" --first-look %d", g.FirstLook)
	}
	for _, f := range []struct {
		name      string
		v, preset float64
	}{{"alpha-pr", rep.Result.Params.AlphaPR, gate.DefaultAlphaPR}, {"p1", g.P1, sprt.DefaultP1}, {"alpha", g.Alpha, sprt.DefaultAlpha}, {"beta", g.Beta, sprt.DefaultBeta}} {
		if f.v != 0 && f.v != f.preset {
			cmd += fmt.Sprintf(" --%s %s", f.name, strconv.FormatFloat(f.v, 'g', -1, 64))
		}
	}
	if p := g.OnInconclusive; p != "" && p != gate.PolicyNeutral {
		cmd += " --on-inconclusive " + string(p)
	}
	for _, h := range hist {
		cmd += " --history " + shellQuote(h)
	}
	if rep.DiffFile != "" {
		cmd += " --diff " + shellQuote(rep.DiffFile)
	}
	if bodyFile != "" {
		if abs, err := filepath.Abs(bodyFile); err == nil {
			bodyFile = abs // as the results' paths: the command may be run elsewhere
		}
		cmd += " --pr-body " + shellQuote(bodyFile)
	}
	for _, l := range opt.Input.Labels {
		cmd += " --label " + shellQuote(l)
	}
	for _, p := range g.ProtectedPaths {
		cmd += " --protected-paths " + shellQuote(p)
	}
	if g.ProtectedPaths != nil && len(g.ProtectedPaths) == 0 {
		cmd += " --protected-paths none"
	}
	if g.AllowNewProtected {
		cmd += " --protected-new-files allow"
	}
	if strings.ContainsAny(rep.ResultsDir, "*?[{,\n") {
		// gate reads these as a pattern, or splits its lists at them.
		cmd += "   (the results directory's name holds glob or list characters (* ? [ { , or a newline), which gate reads as a pattern or a list: move the files to give them to gate)"
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// matrixCmd runs the suite on base and head in turns and gates the result.
func matrixCmd(ctx context.Context, env Env, args []string) error {
	var opt matrix.Options
	var hist list
	flags := newFlags("matrix", env, args)
	flags.StringVar(&opt.Base, "base", "", "base revision (`REV`), e.g. origin/main")
	flags.StringVar(&opt.Head, "head", "HEAD", "head revision (`REV`)")
	flags.BoolVar(&opt.ExactBase, "exact-base", false, "run --base itself even when head is behind it (by default their merge base, where head branched off)")
	flags.Var(count{&opt.K, 1, gate.MaxMaxRuns, fmt.Sprintf("-k must be 1 to %d", gate.MaxMaxRuns), gate.DefaultMaxRuns}, "k", "most base/head pairs to run, `K`")
	flags.Var(count{&opt.Initial, 1, gate.MaxMaxRuns, fmt.Sprintf("--initial must be 1 to %d", gate.MaxMaxRuns), matrix.DefaultInitial}, "initial", "`N` pairs run before the first look")
	flags.StringVar(&opt.JUnit, "junit", "", "the JUnit file each run writes, relative to the checkout (`PATH`)")
	flags.StringVar(&opt.ResultsDir, "results", "", "keep each run's JUnit file in `DIR` (must be empty)")
	flags.Var(&hist, "history", "JUnit files of base-branch runs for the baseline failure rate: `GLOB` (repeatable)")
	jsonFile := flags.String("json", "", "write the JSON report to `FILE`")
	bodyFile := flags.String("pr-body", "", "the PR description (`FILE`), for a Test-Changes: declaration")
	var labels, protected list
	flags.Var(&labels, "label", "a PR `LABEL` (repeatable)")
	flags.Var(&protected, "protected-paths", "`GLOBS` of paths whose edits need a declaration (default tests/**, **/conftest.py, pytest.ini; none for no path), as the action's protected-paths")
	newFiles := &choice{value: "declare", allowed: []string{"declare", "allow"}}
	flags.Var(newFiles, "protected-new-files", "what a new file under a protected path needs (`POLICY`): declare or allow, as the action's protected-new-files")
	flags.Var(duration{&opt.RunTimeout}, "run-timeout", "kill a run of CMD after `DURATION` (e.g. 15m) and count it as a failed run; 0: no limit")
	blockExit := new(int)
	*blockExit = 1
	flags.Var(integer{blockExit}, "block-exit-code", "exit status `N` on a block (0: leave the verdict to a later step, such as the action, which reads the base branch's history)")
	flags.Var(duration{&opt.TimeLimit}, "time-limit", "start no pair that would end more than `DURATION` (e.g. 45m, below the CI job's timeout) after the start, and gate the pairs done; 0: no limit")
	applyPolicy := statFlags(flags, &opt.Gate)
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: flakegate matrix --base REV [--head REV] [--exact-base] [-k MAX] [--time-limit DURATION] --junit PATH -- CMD...\n\nRuns CMD in two worktrees, base then head, in turns, with TZ=UTC, LC_ALL=C.UTF-8,\nPYTHONHASHSEED=0, -count=1 added to GOFLAGS (go test runs every test each time\ninstead of replaying its result cache) and a fresh TMPDIR per run, until every test\nfailing on either side has a verdict or K pairs ran. When head is behind base,\nthe base side runs at their merge base. Prints and saves the same report\nas gate.\n\n")
		flags.PrintDefaults()
	}
	// Everything after "--" is the command; flags come before it.
	var cmd []string
	for i, a := range args {
		if a == "--" {
			args, cmd = args[:i], args[i+1:]
			break
		}
	}
	if err := flags.Parse(args); err != nil {
		return flagError(err)
	}
	if *blockExit < 0 || *blockExit > 125 {
		return usagef("--block-exit-code %d: want 0 to 125", *blockExit)
	}
	if flags.NArg() > 0 || len(cmd) == 0 || opt.Base == "" || opt.JUnit == "" {
		var missing []string
		for _, m := range []struct {
			miss bool
			what string
		}{{opt.Base == "", "--base"}, {opt.JUnit == "", "--junit"}, {len(cmd) == 0, "a command after --"}} {
			if m.miss {
				missing = append(missing, m.what)
			}
		}
		why := "missing " + strings.Join(missing, ", ")
		if len(missing) == 0 {
			why = fmt.Sprintf("%q before --: the command comes after --", flags.Arg(0))
		}
		return usagef("%s: --base, --junit and a command after -- are required, e.g.\n  flakegate matrix --base origin/main --junit out/junit.xml -- go test ./... (with a JUnit writer)", why)
	}
	opt.Command = cmd
	applyPolicy()
	opt.Gate.ProtectedPaths = protectedPaths(protected)
	opt.Gate.AllowNewProtected = newFiles.value == "allow"
	opt.Input.Labels = labels
	if *bodyFile != "" {
		b, err := readArg(*bodyFile)
		if err != nil {
			return usagef("--pr-body: %v", err)
		}
		opt.Input.PRBody = string(b)
	}
	if len(hist) > 0 {
		srcs, missing, err := collect.Local(hist)
		if err != nil {
			return usagef("--history: %v", err)
		}
		for _, m := range missing {
			fmt.Fprintf(env.Stderr, "flakegate: --history: skipped %s: %s\n", render.Plain(m.Path), render.Plain(m.Error))
		}
		if len(srcs) == 0 {
			// As gate refuses it: a history glob that matches nothing is a
			// typo, and the matrix would run without the history asked for
			// (and print a gate command that fails).
			return usagef("--history %s: no JUnit XML files found", strings.Join(hist, ","))
		}
		opt.History = srcs
		// The history as gate reads it (see matrix.Options.HistoryFilter).
		opt.HistoryFilter = func(h, base, head *history.History) (*history.History, []string) {
			return collect.GateHistory(h, base, head, score.Defaults())
		}
	}
	if err := opt.Gate.Check(); err != nil {
		return usagef("%v", err)
	}
	// The command's output goes to stderr, so stdout keeps the report.
	raw := env.rawStderr
	if raw == nil {
		raw = env.Stderr
	}
	opt.Stdout, opt.Stderr, opt.Log = raw, raw, env.Stderr
	if *jsonFile != "" {
		// Said before the pairs run, not after they all have.
		if err := writable(*jsonFile); err != nil {
			return usagef("--json: %v", err)
		}
	}
	rep, err := matrix.Run(ctx, opt)
	if errors.Is(err, matrix.ErrUsage) {
		return usagef("%v", strings.TrimPrefix(err.Error(), matrix.ErrUsage.Error()+": "))
	}
	if err != nil {
		if rep != nil && rep.ResultsDir != "" && len(rep.Runs) > 0 {
			return fmt.Errorf("%w (the files of the %d runs done are in %s)", err, len(rep.Runs), rep.ResultsDir)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "%d pairs run (%s); results in %s\n", rep.Pairs, render.Plain(rep.Stop), rep.ResultsDir)
	fmt.Fprintf(env.Stdout, "the same verdict from the files: %s\n", gateCommand(rep, opt, hist, *bodyFile))
	if *jsonFile != "" {
		// The JSON is gate's, with what the run was: the commits, the
		// pairs, why it stopped and its notes (printed on the terminal).
		res := rep.Result
		res.Reasons = append(slices.Clip(res.Reasons), fmt.Sprintf("flakegate matrix: base %s (%s) against head %s (%s), %d pairs: %s",
			rep.Base.Rev, rep.Base.SHA, rep.Head.Rev, rep.Head.SHA, rep.Pairs, rep.Stop))
		for _, n := range rep.Notes {
			res.Reasons = append(res.Reasons, "flakegate matrix: note: "+n)
		}
		if err := writeFile(*jsonFile, &res, render.GateJSON); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	printGate(env.Stdout, rep.Result)
	if rep.Result.Verdict == gate.VerdictBlock && *blockExit != 0 {
		return &exitError{code: *blockExit}
	}
	return nil
}

// writable says why a file cannot be written at path, as far as can be
// told without writing it: its directory is missing or not a directory, or
// the path is a directory.
func writable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: want a file path", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("the directory of %s: %v", path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
