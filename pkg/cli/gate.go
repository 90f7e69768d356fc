package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/flakegate/flakegate/pkg/collect"
	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/internal/glob"
	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
	"github.com/flakegate/flakegate/pkg/sprt"
)

// list is a repeatable flag; each value may also hold comma- or
// newline-separated items (glob.SplitList: a comma inside "{a,b}" is the
// pattern's).
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }

func (l *list) Set(s string) error {
	*l = append(*l, glob.SplitList(s)...)
	return nil
}

func gateCmd(ctx context.Context, env Env, args []string) error {
	var opt gate.Options
	var base, head, hist, labels, protected list
	flags := newFlags("gate", env, args)
	flags.Var(&base, "base", "JUnit files of the base repetitions: `GLOB`, file or directory (repeatable)")
	flags.Var(&head, "head", "JUnit files of the head repetitions: `GLOB`, file or directory (repeatable)")
	flags.Var(&hist, "history", "JUnit files of base-branch runs, one per run, for the baseline failure rate p0: `GLOB` (repeatable)")
	ledgerFile := flags.String("ledger", "", "the quarantine ledger at head (`FILE`)")
	baseLedgerFile := flags.String("base-ledger", "", "the quarantine ledger at base (`FILE`), the one that exempts; without it, --ledger is read as the head's alone and exempts nothing")
	diffFile := flags.String("diff", "", "the PR's unified diff (`FILE`), for the property checks")
	bodyFile := flags.String("pr-body", "", "the PR description (`FILE`), for a Test-Changes: declaration")
	flags.Var(&labels, "label", "a PR `LABEL` (repeatable)")
	flags.Var(&protected, "protected-paths", "`GLOBS` of paths whose edits need a declaration (default tests/**, **/conftest.py, pytest.ini; none for no path)")
	newFiles := &choice{value: "declare", allowed: []string{"declare", "allow"}}
	flags.Var(newFiles, "protected-new-files", "what a new file under a protected path needs (`POLICY`): declare (a declaration, as any edit there) or allow (none, but for files a pattern names, such as conftest.py)")
	jsonFile := flags.String("json", "", "write the JSON report to `FILE`")
	applyPolicy := statFlags(flags, &opt)
	opt.MaxRuns, opt.FirstLook = gate.DefaultMaxRuns, gate.DefaultFirstLook
	flags.Var(integer{&opt.MaxRuns}, "max-runs", "head-run budget per test, `N`, the last look (matrix's -k)")
	flags.Var(integer{&opt.FirstLook}, "first-look", "`N` head runs at the first look of the schedule")
	expired := &choice{value: "fail", allowed: []string{"fail", "warn"}}
	flags.Var(expired, "expired-ledger", "what an expired ledger entry does: `fail or warn`")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: flakegate gate --base GLOB --head GLOB [flags]\n\nExit status: 0 pass or inconclusive (with the default --on-inconclusive neutral), 1 block or error, 2 bad usage.\n\n")
		flags.PrintDefaults()
	}
	rest, err := parseInterspersed(flags, args)
	if err != nil {
		return flagError(err)
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q: results are given with --base and --head", rest[0])
	}
	if len(base) == 0 || len(head) == 0 {
		return usagef("--base and --head are required: the JUnit files of the base and head repetitions")
	}
	if *jsonFile == "-" {
		return usagef("--json -: want a file name; the verdict is printed on standard output")
	}
	applyPolicy()
	opt.ExpiredLedgerWarn = expired.value == "warn"
	opt.ProtectedPaths = protectedPaths(protected)
	opt.AllowNewProtected = newFiles.value == "allow"
	// Every option starts at its default: a zero given is checked as zero.
	if err := opt.Check(); err != nil {
		return usagef("%v", err)
	}

	t, err := now(env)
	if err != nil {
		return err
	}
	in := gate.Input{Labels: labels, Now: t}
	sides := map[string]*history.History{}
	var notes []string
	for _, s := range []struct {
		flag  string
		globs list
	}{{"--base", base}, {"--head", head}, {"--history", hist}} {
		if len(s.globs) == 0 {
			continue
		}
		h, err := loadSide(ctx, env, s.flag, s.globs)
		if errors.Is(err, collect.ErrPaths) {
			return usagef("%v", err)
		}
		if err != nil {
			return fmt.Errorf("%v", err)
		}
		sides[s.flag] = h
	}
	// The files of one repetition (shards, a file per class) are one run:
	// see collect.JoinParts.
	var warnings []string
	sides["--base"], sides["--head"], notes, warnings = collect.JoinSides("--base", "--head", sides["--base"], sides["--head"], true, true)
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "flakegate: %s\n", render.Plain(n))
	}
	for _, w := range warnings {
		fmt.Fprintf(env.Stderr, "flakegate: warning: %s\n", render.Plain(w))
	}
	notes = append(notes, warnings...)
	for _, flag := range []string{"--base", "--head"} {
		for _, w := range collect.Collapsed(flag, sides[flag]) {
			fmt.Fprintf(env.Stderr, "flakegate: warning: %s\n", render.Plain(w))
		}
	}
	if h := sides["--history"]; h != nil {
		var notes []string
		sides["--history"], notes = collect.GateHistory(h, sides["--base"], sides["--head"], score.Defaults())
		for _, n := range notes {
			fmt.Fprintf(env.Stderr, "flakegate: %s\n", n)
		}
	}
	in.Tests = gate.Join(sides["--base"], sides["--head"], sides["--history"])
	in.Collected = gate.CollectedCounts(sides["--base"], sides["--head"], model.DefaultInfra)
	var other []string
	in.Unread, other = gate.UnreadFiles(sides["--base"], sides["--head"])
	in.Notes = append(notes, other...)

	if *diffFile != "" {
		text, err := readArg(*diffFile)
		if err != nil {
			return fmt.Errorf("--diff: %v", err)
		}
		if in.Changes, err = gate.ParseUnifiedDiff(string(text)); err != nil {
			return fmt.Errorf("--diff %s: %v", *diffFile, err)
		}
		in.ChangesKnown = true
	}
	if *bodyFile != "" {
		b, err := readArg(*bodyFile)
		if err != nil {
			return fmt.Errorf("--pr-body: %v", err)
		}
		in.PRBody = string(b)
	}
	if *baseLedgerFile == "" && *ledgerFile != "" {
		// A checkout of the PR holds the head's ledger: read as the base's
		// too, it let a PR exempt its own failure by adding an entry.
		in.BaseLedgerUnknown = true
		in.Notes = append(in.Notes, "no --base-ledger: the ledger given (--ledger) is read as the head's, checked alone, and exempts nothing, as exemption comes from the base's ledger only; give the base's file too (git show origin/main:"+render.Plain(*ledgerFile)+" > base-ledger.yml), or the same file when it is the base's")
	}
	headIsBase := *baseLedgerFile != "" && *ledgerFile == ""
	if headIsBase {
		// Read as absent, the head's ledger unfroze every entry of the
		// base's: an unfreeze error and a freeze-set violation each.
		in.Notes = append(in.Notes, "no --ledger: the head's ledger is taken to be the base's (--base-ledger), so its changes are not checked; give the head's file too (--ledger) to check them")
	}
	for _, l := range []struct {
		flag, path string
		dst        **ledger.Ledger
	}{{"--base-ledger", *baseLedgerFile, &in.BaseLedger}, {"--ledger", *ledgerFile, &in.HeadLedger}} {
		if l.path == "" {
			continue
		}
		data, err := collect.ReadRegular(l.path, ledger.MaxFileSize)
		if errors.Is(err, fs.ErrNotExist) {
			// No ledger on that side; said, as a misspelt path reads the same.
			fmt.Fprintf(env.Stderr, "flakegate: %s %s: no such file: no ledger on that side\n", l.flag, render.Plain(l.path))
			continue
		}
		if err == nil {
			*l.dst, err = ledger.Parse(data)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %v", l.flag, l.path, err)
		}
	}

	if headIsBase {
		in.HeadLedger = in.BaseLedger
	}
	res, err := gate.Evaluate(in, opt)
	if err != nil {
		return err
	}
	if *jsonFile != "" {
		if err := writeFile(*jsonFile, &res, render.GateJSON); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	printGate(env.Stdout, res)
	if res.Verdict == gate.VerdictBlock {
		return errBlocked
	}
	return nil
}

// statFlags registers the statistical options gate and matrix share, at the
// gate's defaults, and returns what applies the --on-inconclusive choice.
// Ranges are checked once, by gate.Options.Validate.
func statFlags(flags *flag.FlagSet, opt *gate.Options) func() {
	opt.AlphaPR, opt.P1, opt.Alpha, opt.Beta = gate.DefaultAlphaPR, sprt.DefaultP1, sprt.DefaultAlpha, sprt.DefaultBeta
	flags.Var(number{&opt.AlphaPR}, "alpha-pr", "the most a PR that changes nothing may be blocked, over all its tests together (`NUMBER`)")
	flags.Var(number{&opt.P1}, "p1", "failure rate of a regression in the SPRT recorded as ledger evidence (`NUMBER`)")
	flags.Var(number{&opt.Alpha}, "alpha", "per-test level (`NUMBER`): a test that fails this unusually often for its base rate is worth more runs; also the SPRT's")
	flags.Var(number{&opt.Beta}, "beta", "the SPRT's missed-regression rate (`NUMBER`)")
	policy := &choice{value: string(gate.PolicyNeutral), allowed: []string{"neutral", "fail", "pass"}}
	flags.Var(policy, "on-inconclusive", "what an undecided test does to the verdict (`POLICY`): neutral (the check passes), fail or pass")
	return func() { opt.OnInconclusive = gate.Policy(policy.value) }
}

func readArg(path string) ([]byte, error) {
	if path == "-" {
		return nil, errors.New("standard input is not accepted: pass a file (for example: git diff origin/main > pr.diff)")
	}
	return os.ReadFile(path)
}

// loadSide reads one side's JUnit files. Each file (or each run id) is
// one run; gateCmd then joins the files of a repetition of the base and
// head sides (collect.JoinParts).
func loadSide(ctx context.Context, env Env, flagName string, globs []string) (*history.History, error) {
	h, err := collect.Load(ctx, "", globs, 0)
	if h != nil {
		for _, s := range h.Skipped {
			fmt.Fprintf(env.Stderr, "flakegate: %s: skipped %s: %s\n", flagName, render.Plain(s.Path), render.Plain(s.Error))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flagName, strings.Join(globs, ","), err)
	}
	return h, nil
}

// printGate prints the verdict, its reasons and every test that did not
// simply pass.
func printGate(w io.Writer, r gate.Result) {
	fmt.Fprintf(w, "verdict: %s\n", r.Verdict)
	for _, s := range r.Reasons {
		fmt.Fprintf(w, "  - %s\n", render.Plain(s))
	}
	f := r.Family
	margin := ""
	if f.Margin > 0 && f.Margin < 1 {
		margin = fmt.Sprintf(" × margin %.3g", f.Margin)
	}
	fmt.Fprintf(w, "compared %d tests (%d with base-branch history, %d history runs); %d failed on head; P(a test blocks | nothing changed) %.3g <= alpha-pr %.3g%s\n",
		f.Tests, f.HistoryTests, f.HistoryRuns, f.Failing, f.Cost, r.Params.AlphaPR, margin)
	for _, t := range r.Tests {
		if t.Decision == gate.Pass && (t.Bucket == gate.OK || t.Bucket == gate.NewOK) {
			continue
		}
		pending := ""
		if t.Pending {
			pending = " (more runs wanted)"
		}
		fmt.Fprintf(w, "%-12s %s%s\n  bucket: %s; base %d/%d failed, history %d/%d, head %d/%d failed; p0 %.3g\n  %s\n",
			t.Decision, render.Plain(t.Name), pending, t.Bucket, t.Base.Failures, t.Base.Runs, t.History.Failures, t.History.Runs, t.Head.Failures, t.Head.Runs, t.P0.Estimate, render.Plain(t.Reason))
		if t.Stat != nil {
			fmt.Fprintf(w, "  tail %.3g after %d head runs (smallest %.3g at run %d); PR-level p %.3g\n", t.Stat.Tail, t.Head.Runs, t.Stat.Best, t.Stat.BestAt, t.Stat.PRLevel)
		}
		if t.SPRT != nil {
			fmt.Fprintf(w, "  ledger evidence: SPRT p0 %.3g vs p1 %.2f: %s, LLR %.3f over %d runs\n", max(t.P0.Estimate, gate.P0Floor), r.Params.P1, t.SPRT.Decision, t.SPRT.LLR, len(t.SPRT.Trace))
		}
	}
	for _, v := range r.Properties {
		fmt.Fprintf(w, "property: %s\n", render.Plain(v.String()))
	}
	for _, f := range r.Ledger {
		fmt.Fprintf(w, "ledger %s (%s): %s\n", f.Rule, f.Severity, render.Plain(f.Message))
	}
}

func ledgerCmd(env Env, args []string) error {
	const help = "Usage: flakegate ledger verify [FILE]\n\nReplays every recorded SPRT trace and checks each entry, its expiry against today (or SOURCE_DATE_EPOCH) too; FILE defaults to " + ledger.DefaultPath + ".\n"
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(env.Stdout, help)
		return nil
	}
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 {
			fmt.Fprintf(env.Stderr, "flakegate ledger: unknown command %q: the one command is verify\n\n", render.Plain(args[0]))
		}
		fmt.Fprint(env.Stderr, help)
		return &exitError{code: 2}
	}
	flags := newFlags("ledger verify", env, args[1:])
	flags.Usage = func() { fmt.Fprint(flags.Output(), help) }
	if err := flags.Parse(args[1:]); err != nil {
		return flagError(err)
	}
	path := ledger.DefaultPath
	switch flags.NArg() {
	case 0:
	case 1:
		path = flags.Arg(0)
	default:
		return usagef("at most one FILE")
	}
	data, err := collect.ReadRegular(path, ledger.MaxFileSize)
	if err != nil {
		return err
	}
	t, err := now(env)
	if err != nil {
		return err
	}
	problems := ledger.VerifyFile(path, data, t)
	for _, p := range problems {
		fmt.Fprintln(env.Stderr, render.Plain(p.String()))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s) in %s", len(problems), path)
	}
	fmt.Fprintf(env.Stdout, "%s: every entry verified\n", path)
	return nil
}

// protectedPaths is --protected-paths: nil (the default paths) when not
// given, none of them for "none".
func protectedPaths(l list) []string {
	if len(l) == 1 && l[0] == "none" {
		return []string{}
	}
	return l
}
