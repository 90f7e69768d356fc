// Package gate decides, test by test, whether a PR's red tests are flaky or
// broken by the patch, and turns that into a PR verdict with its reasons
// (DESIGN.md, "Gate mode: attribution and SPRT").
//
// Input is a tally per test: the K interleaved base repetitions, the head
// runs in order, and base-branch history. Each side is classified (untested,
// clean, flaky, broken) and the pair picks a bucket of DESIGN.md's table.
// Where head failures meet a flaky baseline, Wald's SPRT (package sprt)
// decides between "the baseline flake" and "a regression", against an honest
// baseline rate p0 (see EstimateP0). Property checks on the diff and the
// quarantine ledger rules (package ledger) complete the verdict.
//
// The package is pure: no I/O, the clock comes in Input.Now.
package gate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/gate/sprt"
	"github.com/flakegate/flakegate/pkg/ledger"
)

// Decision is the gate's decision for one test.
type Decision string

// Test decisions.
const (
	Block        Decision = "block"        // the patch broke it: fails the PR
	Pass         Decision = "pass"         // nothing to hold against the patch
	Exempt       Decision = "exempt"       // would block, but a live ledger entry with a matching signature exempts it
	Invalid      Decision = "invalid"      // base red: attribution undefined, neither pass nor block
	Inconclusive Decision = "inconclusive" // the SPRT has not decided, or the test is too flaky to gate
)

// Verdict is the PR-level outcome.
type Verdict string

// PR verdicts.
const (
	VerdictPass         Verdict = "pass"
	VerdictBlock        Verdict = "block"
	VerdictInconclusive Verdict = "inconclusive"
)

// Policy says what an inconclusive test does to the PR verdict.
type Policy string

// Policies for Options.OnInconclusive.
const (
	PolicyFail    Policy = "fail"    // the PR verdict is block (the default: nothing unverified passes)
	PolicyPass    Policy = "pass"    // the PR verdict is pass; the tests are still listed
	PolicyNeutral Policy = "neutral" // the PR verdict is inconclusive
)

// Defaults for Options' zero values.
const (
	DefaultMaxRuns       = 20
	DefaultAlphaPR       = 0.05
	DefaultDeclareLabel  = "test-changes-declared"
	DefaultApprovalLabel = "flaky-ledger-approved"
)

// DefaultProtectedPaths are the seed's protected paths (article C): the test
// tree, pytest's conftest.py at any depth, and pytest.ini. See MatchPath for
// the pattern syntax.
var DefaultProtectedPaths = []string{"tests/**", "conftest.py", "pytest.ini"}

// Options tune the gate. The zero value is the default.
type Options struct {
	P1    float64 // regression failure rate, H1 of the SPRT; default 0.9
	Alpha float64 // default 0.05
	Beta  float64 // default 0.05
	// AlphaPR bounds the chance that a PR that changes nothing is blocked,
	// over all its tests together; default DefaultAlphaPR (0.05).
	AlphaPR float64
	// OnInconclusive decides the PR verdict when a test stays inconclusive:
	// fail (default), pass or neutral.
	OnInconclusive Policy
	// MaxRuns is the head-run budget per test: while an SPRT says CONTINUE
	// with fewer head runs than this, the test is pending and a driver may
	// run more pairs. It also bounds "too flaky to gate". Default 20.
	MaxRuns int
	// FirstLook is the number of head runs after which the SPRT first looks;
	// it then looks after every run and stops at the first crossing (see
	// sprt.Test.Run). 0 means one look at all the head runs given, right for
	// a batch of K repetitions run before the gate; the matrix driver passes
	// its initial number of pairs.
	FirstLook int
	// ProtectedPaths need a declaration to be edited; nil means
	// DefaultProtectedPaths.
	ProtectedPaths []string
	// DeclareLabel is the PR label that declares test changes, like a
	// "Test-Changes:" line in the PR body. Default "test-changes-declared" (as action.yml).
	DeclareLabel string
	// ApprovalLabel approves ledger growth and extended expiries.
	// Default "flaky-ledger-approved" (as action.yml).
	ApprovalLabel string
	// ExpiredLedgerWarn makes an expired ledger entry a warning instead of
	// a failure.
	ExpiredLedgerWarn bool
}

func (o Options) withDefaults() Options {
	if o.P1 == 0 {
		o.P1 = sprt.DefaultP1
	}
	if o.Alpha == 0 {
		o.Alpha = sprt.DefaultAlpha
	}
	if o.Beta == 0 {
		o.Beta = sprt.DefaultBeta
	}
	if o.AlphaPR == 0 {
		o.AlphaPR = DefaultAlphaPR
	}
	if o.OnInconclusive == "" {
		o.OnInconclusive = PolicyFail
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	if o.ProtectedPaths == nil {
		o.ProtectedPaths = DefaultProtectedPaths
	}
	if o.DeclareLabel == "" {
		o.DeclareLabel = DefaultDeclareLabel
	}
	if o.ApprovalLabel == "" {
		o.ApprovalLabel = DefaultApprovalLabel
	}
	return o
}

// Validate reports the first bad option, naming it and what is accepted.
// Zero values are defaults and valid.
func (o Options) Validate() error {
	o = o.withDefaults()
	for _, p := range []struct {
		name string
		v    float64
	}{{"p1", o.P1}, {"alpha", o.Alpha}, {"beta", o.Beta}} {
		if !(p.v > 0 && p.v < 1) {
			return fmt.Errorf("%s = %v: must be strictly between 0 and 1", p.name, p.v)
		}
	}
	if o.Alpha+o.Beta >= 1 {
		return fmt.Errorf("alpha + beta = %v: must be below 1", o.Alpha+o.Beta)
	}
	if o.P1 <= P0Floor {
		return fmt.Errorf("p1 = %v: must be above the p0 floor %v", o.P1, P0Floor)
	}
	switch o.OnInconclusive {
	case PolicyFail, PolicyPass, PolicyNeutral:
	default:
		return fmt.Errorf("on-inconclusive = %q: want fail, pass or neutral", o.OnInconclusive)
	}
	if o.MaxRuns < 1 {
		return fmt.Errorf("max runs = %d: must be at least 1", o.MaxRuns)
	}
	if o.FirstLook < 0 {
		return fmt.Errorf("first look = %d: must be 0 (one look at all runs) or positive", o.FirstLook)
	}
	for _, p := range o.ProtectedPaths {
		if err := validPattern(p); err != nil {
			return fmt.Errorf("protected path %q: %w", p, err)
		}
	}
	return nil
}

// TestInput is what the gate knows of one test.
type TestInput struct {
	Name string // "classname::name"
	// File is the test's source file, when known (JUnit's file attribute).
	// The ledger's scope_file_changed trigger uses it.
	File string
	// Base tallies the K interleaved base repetitions.
	Base Tally
	// Head lists the head runs in run order, true for a pass. Skipped runs
	// are left out. Attempts retried inside one run count as runs of their
	// own, in order.
	Head []bool
	// History tallies base-branch runs outside the K repetitions: a recent
	// window in which the test's failure rate was steady.
	History Tally
	// Signatures are the normalised failure signatures ("sha256:…") seen in
	// the head failures.
	Signatures []string
}

// Counts are collected test counts.
type Counts struct {
	Base int `json:"base"`
	Head int `json:"head"`
}

// Input is everything the gate decides on.
type Input struct {
	Tests []TestInput
	// Changes is the PR diff, from ParseUnifiedDiff or from the PR files
	// API. ChangesKnown says a diff was given at all: without one, the
	// protected-path and skip-marker checks do not run, and the result says
	// so.
	Changes      []FileChange
	ChangesKnown bool
	PRBody       string   // for a "Test-Changes:" declaration
	Labels       []string // the PR's labels
	// Collected are the collected test counts; nil counts the tests with
	// pass/fail results on each side.
	Collected *Counts
	// BaseLedger and HeadLedger are the ledger as it is on each side; nil
	// for an absent file.
	BaseLedger, HeadLedger *ledger.Ledger
	Now                    time.Time
}

// Side summarises one side of a test.
type Side struct {
	Runs     int   `json:"runs"`
	Failures int   `json:"failures"`
	Class    Class `json:"class"`
}

// TestResult is the gate's finding for one test.
type TestResult struct {
	Name     string       `json:"name"`
	Base     Side         `json:"base"`
	Head     Side         `json:"head"`
	History  Tally        `json:"history"`
	Bucket   Bucket       `json:"bucket"`
	Decision Decision     `json:"decision"`
	P0       P0           `json:"p0"`
	SPRT     *sprt.Result `json:"sprt,omitempty"` // when a flaky baseline meets head runs
	Reason   string       `json:"reason"`
	// Pending is set when the SPRT says CONTINUE with head-run budget left:
	// more head runs could settle the test.
	Pending bool `json:"pending,omitempty"`
}

// Params echoes the statistical parameters in force.
type Params struct {
	P1             float64 `json:"p1"`
	Alpha          float64 `json:"alpha"`
	Beta           float64 `json:"beta"`
	P0Floor        float64 `json:"p0_floor"`
	MaxRuns        int     `json:"max_runs"`
	OnInconclusive Policy  `json:"on_inconclusive"`
}

// Result is the gate's answer for a PR. Its JSON encoding is the gate's
// report contract.
type Result struct {
	Verdict    Verdict          `json:"verdict"`
	Reasons    []string         `json:"reasons"`
	Params     Params           `json:"params"`
	Tests      []TestResult     `json:"tests"`
	Properties []Violation      `json:"properties"`
	Ledger     []ledger.Finding `json:"ledger"`
}

// Pending lists the tests whose SPRT could still decide with more head runs.
// A sequential driver runs another base/head pair while it is not empty and
// the budget allows.
func (r Result) Pending() []string {
	var out []string
	for _, t := range r.Tests {
		if t.Pending {
			out = append(out, t.Name)
		}
	}
	return out
}

// Evaluate runs the gate. It returns an error only for bad options or
// malformed input (a duplicate or empty test name, an impossible tally);
// findings, blocking ones included, are in the Result.
func Evaluate(in Input, opt Options) (Result, error) {
	if err := opt.Validate(); err != nil {
		return Result{}, fmt.Errorf("gate options: %w", err)
	}
	opt = opt.withDefaults()
	if err := validateTests(in.Tests); err != nil {
		return Result{}, fmt.Errorf("gate input: %w", err)
	}
	declared, declaredBy := Declared(in.PRBody, in.Labels, opt.DeclareLabel)

	res := Result{
		Params: Params{P1: opt.P1, Alpha: opt.Alpha, Beta: opt.Beta, P0Floor: P0Floor,
			MaxRuns: opt.MaxRuns, OnInconclusive: opt.OnInconclusive},
		Tests:      make([]TestResult, 0, len(in.Tests)),
		Properties: []Violation{},
		Ledger:     []ledger.Finding{},
	}
	lctx := ledger.Context{
		Now:           in.Now,
		ChangedFiles:  changedPaths(in.Changes),
		Observed:      map[string]ledger.Observation{},
		Approved:      hasLabel(in.Labels, opt.ApprovalLabel),
		ApprovalLabel: opt.ApprovalLabel,
		ExpiredWarn:   opt.ExpiredLedgerWarn,
	}
	for _, ti := range in.Tests {
		head := TallyOf(ti.Head)
		lctx.Observed[ti.Name] = ledger.Observation{
			BaseFailures: ti.Base.Failures + ti.History.Failures,
			HeadRuns:     head.Runs,
			HeadFailures: head.Failures,
			Signatures:   ti.Signatures,
			File:         ti.File,
		}
	}

	for _, ti := range in.Tests {
		tr := evaluateTest(ti, opt, declared, declaredBy)
		if (tr.Decision == Block || tr.Decision == Inconclusive) && tr.Head.Failures > 0 && in.BaseLedger != nil {
			// Exemption reads the base ledger only: see package ledger.
			if ok, why := in.BaseLedger.Exempt(ti.Name, lctx.Observed[ti.Name], lctx); ok {
				tr.Reason = fmt.Sprintf("exempt: %s; without it: %s: %s", why, tr.Decision, tr.Reason)
				tr.Decision, tr.Pending = Exempt, false
			} else if why != "no ledger entry" {
				tr.Reason += "; not exempt: " + why
			}
		}
		res.Tests = append(res.Tests, tr)
	}
	slices.SortFunc(res.Tests, func(a, b TestResult) int { return cmp.Compare(a.Name, b.Name) })

	res.Properties = append(res.Properties, checkProperties(in, opt, declared)...)
	if in.BaseLedger != nil || in.HeadLedger != nil {
		res.Ledger = append(res.Ledger, ledger.Check(in.BaseLedger, in.HeadLedger, lctx)...)
	}
	res.Verdict, res.Reasons = verdict(res, in, opt, declared, declaredBy)
	return res, nil
}

func validateTests(tests []TestInput) error {
	seen := make(map[string]bool, len(tests))
	var errs []error
	for i, t := range tests {
		switch {
		case t.Name == "":
			errs = append(errs, fmt.Errorf("test %d: empty name", i))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("test %q: listed twice", t.Name))
		}
		seen[t.Name] = true
		if err := t.Base.validate(); err != nil {
			errs = append(errs, fmt.Errorf("test %q: base %w", t.Name, err))
		}
		if err := t.History.validate(); err != nil {
			errs = append(errs, fmt.Errorf("test %q: history %w", t.Name, err))
		}
	}
	return errors.Join(errs...)
}

// evaluateTest classifies one test, picks its bucket and decides.
func evaluateTest(ti TestInput, opt Options, declared bool, declaredBy string) TestResult {
	head := TallyOf(ti.Head)
	tr := TestResult{
		Name:    ti.Name,
		Base:    Side{Runs: ti.Base.Runs, Failures: ti.Base.Failures, Class: Classify(ti.Base)},
		Head:    Side{Runs: head.Runs, Failures: head.Failures, Class: Classify(head)},
		History: ti.History,
		P0:      EstimateP0(ti.Base, ti.History),
	}
	base, baseNote := effectiveBase(ti.Base, ti.History)
	tr.Bucket = BucketOf(base, tr.Head.Class)
	say := func(d Decision, format string, args ...any) TestResult {
		tr.Decision = d
		tr.Reason = fmt.Sprintf(format, args...)
		if baseNote != "" {
			tr.Reason += "; " + baseNote
		}
		return tr
	}
	headStr := fmt.Sprintf("%d of %d head runs failed", head.Failures, head.Runs)

	switch tr.Bucket {
	case NotRun:
		return say(Pass, "not run: no pass or fail results on either side (skipped or not collected), nothing to attribute")
	case NewOK:
		return say(Pass, "new test ok: passed all %d head runs", head.Runs)
	case OK:
		return say(Pass, "ok: clean on both sides")
	case Fixed:
		return say(Pass, "patch fixes it: red in all %d base runs, clean in %d head runs", ti.Base.Runs, head.Runs)
	case NewFlaky:
		return say(Block, "new flaky test: %s, and it has no base to compare with", headStr)
	case NewFailing:
		return say(Block, "new failing test: %s", headStr)
	case PatchInducedFlake, Regression:
		what := "patch-induced flake"
		if tr.Bucket == Regression {
			what = "regression"
		}
		return say(Block, "%s: %s, but %s", what, headStr, cleanBaseEvidence(ti, tr.P0))
	case BaseRed:
		return say(Invalid, "base red: failed all %d base runs, so the base has no reference and attribution is undefined (%s): neither the patch's fault nor a pass",
			ti.Base.Runs, headStr)
	case Removed:
		switch {
		case base == Broken:
			return say(Block, "removed: red on base (%d of %d runs failed) and gone from head; a test red on base must still exist on head",
				ti.Base.Failures+ti.History.Failures, ti.Base.Runs+ti.History.Runs)
		case declared:
			return say(Pass, "removed: no results on head (deleted, or skipped at collection), declared by %s", declaredBy)
		default:
			return say(Block, "removed: no results on head (deleted, or skipped at collection), and the PR does not declare test changes (a \"Test-Changes:\" line in the PR body or the %q label)",
				opt.DeclareLabel)
		}
	}

	// A flaky baseline meets head runs: the SPRT decides.
	t := sprt.Test{P0: tr.P0.Estimate, P1: opt.P1, Alpha: opt.Alpha, Beta: opt.Beta}
	if tr.Bucket == FlakeNotReproduced {
		if t.Validate() == nil {
			r := t.Run(ti.Head, opt.FirstLook)
			tr.SPRT = &r
		}
		return say(Pass, "flake not reproduced: flaky on base (p0 %.3f), clean in %d head runs", tr.P0.Estimate, head.Runs)
	}
	if why := tooFlaky(t, opt.MaxRuns); why != "" {
		if t.Validate() == nil {
			r := t.Run(ti.Head, opt.FirstLook)
			tr.SPRT = &r
		}
		return say(Inconclusive, "too flaky to gate: fix the test (%s; %s)", why, headStr)
	}
	r := t.Run(ti.Head, opt.FirstLook)
	tr.SPRT = &r
	llr := fmt.Sprintf("SPRT p0 %.3f vs p1 %.2f: LLR %.3f after %d runs", t.P0, t.P1, r.LLR, len(r.Trace))
	unused := ""
	if n := len(ti.Head) - len(r.Trace); n > 0 {
		unused = fmt.Sprintf(" (decided before the last %d runs)", n)
	}
	switch r.Decision {
	case sprt.Regression:
		what := "flaky test made much worse"
		if tr.Bucket == FlakyToBroken {
			what = "regression of a flaky test"
		}
		return say(Block, "%s: %s, %s ≥ A: REGRESSION%s", what, headStr, llr, unused)
	case sprt.Flake:
		what := "pre-existing flake"
		if tr.Bucket == FlakyToBroken {
			what = "failures consistent with the baseline flake"
		}
		return say(Pass, "%s: %s, %s ≤ B: FLAKE%s; exemption eligible", what, headStr, llr, unused)
	default:
		tr.Pending = head.Runs < opt.MaxRuns
		if tr.Pending {
			return say(Inconclusive, "SPRT continues: %s, %s, between the bounds; rerun (budget %d head runs)", headStr, llr, opt.MaxRuns)
		}
		return say(Inconclusive, "inconclusive: %s, %s, still between the bounds with the budget of %d head runs spent", headStr, llr, opt.MaxRuns)
	}
}

// effectiveBase classes the base side from the K repetitions, corrected by
// history: a test clean in K runs that failed in history is a pre-existing
// flake the K runs missed; a test with no K runs is classed by its history.
func effectiveBase(base, history Tally) (Class, string) {
	c := Classify(base)
	switch {
	case c == Clean && history.Failures > 0:
		return Flaky, fmt.Sprintf("base class from history: clean in %d base runs, but failed %d of %d history runs, so a pre-existing flake the base runs missed",
			base.Runs, history.Failures, history.Runs)
	case c == Untested && history.Runs > 0:
		hc := Classify(history)
		return hc, fmt.Sprintf("base class from history: not run in the base repetitions, %s in %d history runs", hc, history.Runs)
	}
	return c, ""
}

// cleanBaseEvidence says what "the base was clean" rests on.
func cleanBaseEvidence(ti TestInput, p0 P0) string {
	if ti.History.Runs == 0 {
		return fmt.Sprintf("it passed all %d base runs; no base-branch history, so this rests on the %d base runs alone: they rule out only a baseline failure rate above %.2f (Wilson 95%%), so a rarer pre-existing flake would look the same; give history to tell",
			ti.Base.Runs, ti.Base.Runs, p0.Upper)
	}
	if ti.Base.Runs == 0 {
		return fmt.Sprintf("it passed all %d history runs (baseline failure rate below %.3f at 95%%)", ti.History.Runs, p0.Upper)
	}
	return fmt.Sprintf("it passed all %d base runs and all %d history runs (baseline failure rate below %.3f at 95%%)",
		ti.Base.Runs, ti.History.Runs, p0.Upper)
}

// tooFlaky says why t has too little power to gate within maxRuns head
// runs, or "". The criterion: Wald's expected number of runs to decide,
// under H0 or under H1, exceeds the budget; or p0 is not below p1 at all.
// For p1 = 0.9 and a budget of 20 runs this starts near p0 = 0.67; at
// p0 = 0.8 (five greens to clear) it needs about 71 runs.
func tooFlaky(t sprt.Test, maxRuns int) string {
	if t.P0 >= t.P1 {
		return fmt.Sprintf("baseline p0 %.3f is not below p1 %.2f", t.P0, t.P1)
	}
	e0, e1 := t.ExpectedRuns()
	if e := math.Max(e0, e1); e > float64(maxRuns) {
		greens, _ := t.GreensToFlake()
		reds, _ := t.FailsToRegression()
		return fmt.Sprintf("baseline p0 %.3f is so close to p1 %.2f that the SPRT needs about %.0f runs on average to decide, over the budget of %d; %d greens in a row to clear it, %d reds to convict",
			t.P0, t.P1, e, maxRuns, greens, reds)
	}
	return ""
}

// verdict turns the findings into the PR verdict and its reasons, most
// important first.
func verdict(res Result, in Input, opt Options, declared bool, declaredBy string) (Verdict, []string) {
	var block, incon, notes []string
	var invalid, exempt, pending int
	for _, t := range res.Tests {
		line := fmt.Sprintf("%s: %s", t.Name, t.Reason)
		switch t.Decision {
		case Block:
			block = append(block, line)
		case Inconclusive:
			incon = append(incon, line)
			if t.Pending {
				pending++
			}
		case Invalid:
			invalid++
			notes = append(notes, line)
		case Exempt:
			exempt++
			notes = append(notes, line)
		}
	}
	for _, v := range res.Properties {
		block = append(block, "property "+v.String())
	}
	for _, f := range res.Ledger {
		line := fmt.Sprintf("ledger %s: %s", f.Rule, f.Message)
		if f.Severity == ledger.Error {
			block = append(block, line)
		} else {
			notes = append(notes, line)
		}
	}
	if !in.ChangesKnown {
		notes = append(notes, "no diff given: protected-path and skip-marker checks did not run")
	}
	if declared {
		notes = append(notes, "test changes declared by "+declaredBy)
	}
	if invalid > 0 {
		notes = append(notes, fmt.Sprintf("%d test(s) red on base: attribution undefined, counted neither as pass nor as block", invalid))
	}
	if exempt > 0 {
		notes = append(notes, fmt.Sprintf("%d test(s) exempted by the base ledger", exempt))
	}

	var v Verdict
	var head []string
	switch {
	case len(block) > 0:
		v = VerdictBlock
		head = append(block, incon...)
	case len(incon) > 0:
		policy := fmt.Sprintf("%d test(s) inconclusive (%d pending more runs); on-inconclusive=%s", len(incon), pending, opt.OnInconclusive)
		switch opt.OnInconclusive {
		case PolicyFail:
			v, policy = VerdictBlock, policy+": block"
		case PolicyPass:
			v, policy = VerdictPass, policy+": pass"
		default:
			v, policy = VerdictInconclusive, policy+": neutral"
		}
		head = append([]string{policy}, incon...)
	default:
		v = VerdictPass
		head = []string{fmt.Sprintf("no test blocks: %d test(s) compared, no property or ledger violation", len(res.Tests))}
	}
	return v, append(head, notes...)
}

func hasLabel(labels []string, want string) bool {
	return slices.ContainsFunc(labels, func(l string) bool { return strings.EqualFold(strings.TrimSpace(l), want) })
}
