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

	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/sprt"
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
	PolicyFail    Policy = "fail"    // the PR verdict is block: nothing unverified passes, and alpha-pr no longer bounds clean PRs' failures
	PolicyPass    Policy = "pass"    // the PR verdict is pass; the tests are still listed
	PolicyNeutral Policy = "neutral" // the PR verdict is inconclusive, and the check does not fail (the default)
)

// minP1 is the least p1, exclusive: every baseline rate p0 ≤ 0.5 that the
// SPRT can weigh lies below a regression's rate (action.yml, config).
const minP1 = 0.5

// Defaults for Options' zero values.
const (
	DefaultMaxRuns = 20
	// minScheduleRuns is the shortest schedule the calibration covers,
	// whatever the budget. Calibrated for 5 head runs only, the gate
	// spent its whole budget on them and trusted the fitted prior at its
	// weakest, the rates of the flakes hidden among the tests never seen
	// failing (in S without history, the fit's chance of two failures in
	// five runs there was a median 0.52 of the truth, quartiles 0.34 and
	// 0.79, over 30 draws): clean PRs of a small project without history
	// failed 7.3% of the time (1,000 seeded PRs), of B's 6.5% (400).
	// Calibrated for 20, the same draws failed 5.0% and 3.5%, and a batch
	// of 5 pairs gets the same verdict from `matrix -k 5`, `gate` and the
	// action.
	minScheduleRuns = 20
	// minMargin is the share of alpha-pr the calibration spends when the
	// head runs read reach the end of its schedule (fitMargin).
	minMargin = 0.5
	// MaxMaxRuns bounds the look schedule. The path counting costs
	// (distinct base-side tallies) × max-runs² in time and memory: on 600
	// tests with 300 distinct tallies, 100 takes 1.9 s and 150 MB, 200
	// 6.5 s and 470 MB, 300 16 s and 940 MB, 1000 2.5 min and 7.6 GB
	// (audit3-gate, finding 11). The allocation by power (allocate.go)
	// counts paths once per threshold a group can take: 100 takes 2.4 s,
	// 50 0.34 s, 20 0.04 s there.
	MaxMaxRuns           = 100
	DefaultAlphaPR       = 0.05
	DefaultFirstLook     = 1
	DefaultDeclareLabel  = "test-changes-declared"
	DefaultApprovalLabel = "flaky-ledger-approved"
)

// fitMargin is the share of alpha-pr that the calibration spends when the
// most head runs a compared test has is read, in a schedule of last runs:
// all of it up to a quarter of the schedule (5 of 20 runs, the
// quickstarts' batch), then less, down to minMargin from half of it on.
//
// The calibration trusts the fitted prior, and the fit is biased low
// where it is weakest: the flakes hidden among the tests never seen
// failing, and the spread of the few flakes' rates (an NPMLE puts its
// mass on the rates the tallies showed). Summed over the tests of 40
// seeded suites, the true chance of a block at 20 head runs was 1.7 times
// what the fitted prior gave for A's tests never seen failing in 10
// history and 20 base runs, and 1.8 times for S's flakes with 30 history
// runs. A batch shorter than the schedule leaves part of the budget on
// looks it never reaches, which absorbs part of the error, the more the
// shorter the batch. In the PR experiment (400–1,000 seeded PRs a row),
// with all of alpha-pr, the worst population's clean PRs failed 4.2% at 5
// pairs (S without history; 4.67% over three more seeds), 6.3% at 10
// (S without history), 8.4% at 20 (S with 30 history runs), and B's with
// 150 history runs 2.1%, 4.8% and 6.0%. A margin of 0.75 at 15 pairs
// left S at 4.9%; half from 10 pairs on keeps every row within the bound
// (the experiment's K=10, 15 and 20 rows).
func fitMargin(read, last int) float64 {
	return max(minMargin, min(1, 1.5-2*float64(read)/float64(last)))
}

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
	// neutral (default), fail or pass. Neutral keeps the PR-level
	// guarantee: only blocks fail the check.
	OnInconclusive Policy
	// MaxRuns is the head-run budget per test: while a test is undecided
	// with fewer head runs than this, it is pending and a driver may run
	// more pairs. It is also the last look of the schedule the PR-level
	// calibration covers, or minScheduleRuns when that is more. Default 20.
	MaxRuns int
	// FirstLook is the number of head runs at the first look; the schedule
	// then looks after every run up to MaxRuns. A batch of K repetitions is
	// read in run order as the sequential driver reads it, so the same runs
	// give the same verdict either way. Default DefaultFirstLook (1): a look
	// after every run, so that a failure early in the runs weighs more than
	// the same failure after many passes, and a budget too small to block
	// every single failure still blocks the early ones.
	FirstLook int
	// ProtectedPaths need a declaration to be edited; nil means
	// DefaultProtectedPaths.
	ProtectedPaths []string
	// AllowNewProtected lets a PR add files under a protected path without
	// a declaration (protected-new-files: allow): a new test weakens no
	// existing one. A new file that a pattern names outright, with no
	// wildcard in its last element (conftest.py, pytest.ini), can change
	// how existing tests run, and still needs one. Default false, the
	// seed's rule: any edit there needs a declaration.
	AllowNewProtected bool
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
		o.OnInconclusive = PolicyNeutral
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	if o.FirstLook == 0 {
		o.FirstLook = DefaultFirstLook
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

// Validate reports every bad option (as *model.OptionError, joined),
// naming it and what is accepted. Zero values are defaults and valid.
func (o Options) Validate() error { return o.withDefaults().Check() }

// Check is Validate for options given in full, as the action's inputs are:
// a zero is checked as zero, not taken as the default.
func (o Options) Check() error {
	var errs []error
	bad := func(name string, v any, want string) {
		errs = append(errs, &model.OptionError{Name: name, Value: v, Want: want})
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"alpha-pr", o.AlphaPR}, {"alpha", o.Alpha}, {"beta", o.Beta}} {
		if !(p.v > 0 && p.v < 1) {
			bad(p.name, p.v, "want a number strictly between 0 and 1")
		}
	}
	if !(o.P1 > minP1 && o.P1 < 1) {
		bad("p1", o.P1, fmt.Sprintf("want a number above %v and below 1 (the failure rate of a regression, above every baseline rate the gate judges)", minP1))
	}
	if o.Alpha > 0 && o.Alpha < 1 && o.Beta > 0 && o.Beta < 1 && o.Alpha+o.Beta >= 1 {
		bad("beta", o.Beta, fmt.Sprintf("alpha + beta must be below 1 (alpha is %v), or the SPRT bounds cross", o.Alpha))
	}
	switch o.OnInconclusive {
	case PolicyFail, PolicyPass, PolicyNeutral:
	default:
		bad("on-inconclusive", o.OnInconclusive, "want one of neutral, fail, pass")
	}
	if o.MaxRuns < 0 || o.MaxRuns > MaxMaxRuns {
		bad("max-runs", o.MaxRuns, fmt.Sprintf("want 0 (the default, %d) or an integer up to %d (the calibration's cost grows with its square)", DefaultMaxRuns, MaxMaxRuns))
	}
	if o.FirstLook < 0 {
		bad("first-look", o.FirstLook, fmt.Sprintf("want 0 (the default, %d) or a positive integer", DefaultFirstLook))
	}
	if budget := cmp.Or(o.MaxRuns, DefaultMaxRuns); o.FirstLook > budget && o.MaxRuns >= 0 && o.MaxRuns <= MaxMaxRuns {
		bad("first-look", o.FirstLook, fmt.Sprintf("want at most max-runs (%d): the first look is one of the schedule's", budget))
	}
	for _, p := range o.ProtectedPaths {
		if err := validPattern(p); err != nil {
			bad("protected-paths", p, err.Error())
		}
	}
	return errors.Join(errs...)
}

// TestInput is what the gate knows of one test.
type TestInput struct {
	Name string // "classname::name"
	// File is the test's source file, when known (JUnit's file attribute).
	// The ledger's scope_file_changed trigger uses it.
	File string
	// Line is the test's line in File, 0 when unknown.
	Line int
	// Base tallies the K interleaved base repetitions.
	Base Tally
	// Head lists the head runs in run order, true for a pass. Skipped runs
	// are left out. A run in which the test failed, then passed on a retry,
	// counts as failed (Join): a rerun does not hide the failure.
	Head []bool
	// BaseRetried and HeadRetried count the runs of each side that failed,
	// then passed on a retry inside the run: failures for the rates, but
	// passes too, so a side whose every run did so is flaky, not broken.
	BaseRetried, HeadRetried int
	// History tallies base-branch runs outside the K repetitions: a recent
	// window in which the test's failure rate was steady.
	History Tally
	// HistoryCleanSince counts the newest history runs in a row in which
	// the test did not fail (Join); with History it tells a test broken on
	// the branch and fixed since from a flake (fixedSince).
	HistoryCleanSince int
	// Signatures are the normalised failure signatures ("sha256:…") seen in
	// the head failures.
	Signatures []string
	// LeftOut are the base and head runs the test ran in that were left out
	// as infrastructure failures (JoinInfra): Base, Head and the retried
	// counts do not hold them. Tests may share the slice.
	LeftOut []Outage
	// BaseMissing counts the base runs, not left out, that did not collect
	// the test at all. A test missing from some base runs has no stable
	// identity there (a random parameter in its name), so its absence on
	// head is no evidence that it was removed.
	BaseMissing int
	// HeadMissing counts the head runs, not left out, that did not
	// collect a test that head collected in other runs: the file of a
	// shard that crashed, was cancelled or was not given. Its head runs
	// are then fewer than the others', and a crash the patch causes looks
	// the same.
	HeadMissing int
	// LeftBaseBranch counts the base-branch history runs after the last
	// base run that collected the test, none of which collected it, when
	// they show that the branch dropped it after the base commit (see
	// leftBaseBranch); 0 otherwise. A pull request's base.sha is the
	// branch's tip when it was opened; a head that took the branch in
	// since lacks what the branch removed.
	LeftBaseBranch int
	// BaseSkipped counts the base runs, not left out, in which the test
	// was collected and skipped: a test skipped at run time on base too
	// (pytest.skip, a non-strict xfail that failed) is not newly skipped
	// when head skips it (plausibleSkips).
	BaseSkipped int
	// HeadSkipped counts the head runs, not left out, in which the test
	// was collected and skipped: a test with no result on head that head
	// skipped was not deleted, it was skipped.
	HeadSkipped int
	// AcrossLegs says the two sides told the test apart by different legs
	// of a matrix (or projects), one by leg and the other not, say: it is
	// compared under its plain name, a run failing when any leg failed
	// (see sameIdentities).
	AcrossLegs bool
	// HeadFailedAs lists, for a test compared across legs, the identities
	// its head failures had before (its legs on head, "c::n
	// [junit-windows]"); empty when head did not tell its legs apart.
	HeadFailedAs []string
	// VaryingNames counts the names compared as this one test: names that
	// change from run to run (a seed, a hash code, a UUID), whose varying
	// part Name writes "…" (see varyingNames); 0 for a test of one name.
	VaryingNames int
}

// leftOut counts the test's runs of one side left out as outages.
func (t TestInput) leftOut(side string) int {
	n := 0
	for _, o := range t.LeftOut {
		if o.Side == side {
			n++
		}
	}
	return n
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
	// ChangesCut says Changes is the first part of the PR's files only
	// (GitHub lists at most 3,000): the checks saw only those.
	ChangesCut bool
	PRBody     string   // for a "Test-Changes:" declaration
	Labels     []string // the PR's labels
	// Collected are the collected test counts, per run (CollectedCounts);
	// nil counts the distinct tests with pass/fail results on each side.
	Collected *Counts
	// BaseLedger and HeadLedger are the ledger as it is on each side; nil
	// for an absent file.
	BaseLedger, HeadLedger *ledger.Ledger
	// BaseLedgerUnknown says the base's ledger was not given (the command
	// line's --ledger alone, which a PR's checkout gives as the head's):
	// nothing is exempted, as exemption comes from the base's ledger only,
	// and HeadLedger is checked alone (expiry), not for growth.
	BaseLedgerUnknown bool
	Now               time.Time
	// Unread are the base and head runs' result files that could not be
	// read (UnreadFiles): a verdict on partial evidence is not a pass.
	Unread []Unread
	// Notes say how the inputs were read (files joined into runs, files
	// that look like parts of runs): listed with the reasons.
	Notes []string
}

// Unread is a result file of the base or head runs left out, and why.
type Unread struct {
	Side  string `json:"side"` // "base" or "head"
	Path  string `json:"path"`
	Error string `json:"error"`
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
	Stat     *Stat        `json:"stat,omitempty"` // for a compared test with head failures
	SPRT     *sprt.Result `json:"sprt,omitempty"` // article C's SPRT on a flaky base, the ledger's evidence
	// Signatures are the failure signatures ("sha256:…") of the test's head
	// failures: a ledger entry's signature is one of them.
	Signatures []string `json:"signatures,omitempty"`
	Reason     string   `json:"reason"`
	// Pending is set when the test is undecided and more head runs, within
	// the budget, could decide it.
	Pending bool `json:"pending,omitempty"`
}

// Stat is the calibrated statistic of a compared test with head failures
// (family.go).
type Stat struct {
	// Tail is P(this many head failures or more | the patch changed nothing),
	// after all the head runs.
	Tail float64 `json:"tail"`
	// Best is the smallest tail at any look of the schedule, at BestAt head
	// runs: the test blocks when it is at or below Threshold.
	Best   float64 `json:"best"`
	BestAt int     `json:"best_at"`
	// Threshold is the test's calibrated tail threshold (0: nothing it
	// could show blocks), its group's share of alpha-pr (family.go).
	Threshold float64 `json:"threshold"`
	// PRLevel is the PR-level p-value: the chance, if the patch changed
	// nothing, that any compared test blocks at any look, under the
	// thresholds the calibration gives as it spends the budget, at the
	// point where they first block this test's count (1 when they do not
	// within 4 × alpha-pr). The test blocks when it is at most alpha-pr,
	// and OwnRuns is too.
	PRLevel float64 `json:"pr_level"`
	// OwnRuns is Fisher's exact p-value of the head's failures against the
	// test's own base-side runs (family.go), at the first look where the
	// tail crossed the boundary and it was at most alpha-pr (the test
	// blocks), or else at the last look where the tail crossed (the test
	// is held back); 0 when the tail never crossed.
	OwnRuns float64 `json:"own_runs,omitempty"`
}

// Params echoes the statistical parameters in force.
type Params struct {
	AlphaPR        float64 `json:"alpha_pr"`
	P1             float64 `json:"p1"`
	Alpha          float64 `json:"alpha"`
	Beta           float64 `json:"beta"`
	P0Floor        float64 `json:"p0_floor"`
	FirstLook      int     `json:"first_look"`
	MaxRuns        int     `json:"max_runs"`
	OnInconclusive Policy  `json:"on_inconclusive"`
}

// Family describes the compared tests and the calibration the PR-level
// guarantee rests on.
type Family struct {
	Tests     int     `json:"tests"`     // compared tests: a base that is not red and head runs
	Failing   int     `json:"failing"`   // of them, with head failures
	Threshold float64 `json:"threshold"` // the largest test's threshold (Stat.Threshold); 0 when nothing can block
	Cost      float64 `json:"cost"`      // P(any block | nothing changed) at the tests' thresholds, at most alpha_pr × margin
	// Margin is the share of alpha_pr the calibration spends: familyShare
	// (0.95: the rest is the outage checks'), times less than 1 when the
	// head runs read are more than a quarter of the schedule (fitMargin).
	// A test's PR-level p-value is its cost over the margin, so that it
	// blocks exactly when that is at most alpha_pr.
	Margin float64 `json:"margin"`
	// HistoryTests counts compared tests with base-branch history, and
	// HistoryRuns their history runs.
	HistoryTests int `json:"history_tests"`
	HistoryRuns  int `json:"history_runs"`
	// Prior summarises the suite prior: the share of tests per band of
	// baseline failure rate.
	Prior []Band  `json:"prior"`
	Floor float64 `json:"prior_floor"`
	// Reference is the weight of Jeffreys' prior mixed into the fit,
	// 1/(tests + 1): the fit's own uncertainty (prior.go).
	Reference float64 `json:"prior_reference"`
}

// Band is a range of failure rates and the prior's share of tests in it.
type Band struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Share float64 `json:"share"`
}

// Result is the gate's answer for a PR. Its JSON encoding is the gate's
// report contract.
type Result struct {
	Verdict    Verdict          `json:"verdict"`
	Reasons    []string         `json:"reasons"`
	Params     Params           `json:"params"`
	Family     Family           `json:"family"`
	Tests      []TestResult     `json:"tests"`
	Properties []Violation      `json:"properties"`
	Ledger     []ledger.Finding `json:"ledger"`
	// Unread are the result files left out (Input.Unread).
	Unread []Unread `json:"unread"`
	// Outages are the base and head runs left out as infrastructure
	// failures (TestInput.LeftOut), base first, in run order.
	Outages []Outage `json:"outages"`
	// Crashes compares the head runs left out so with the base runs, when
	// some head runs were and not all; nil otherwise.
	Crashes *CrashSplit `json:"crashes,omitempty"`
	// Missing compares, for the tests collected in every base run, the
	// head runs with no result for them (a shard's file missing) with the
	// base runs (none), when some head runs lack them; nil otherwise.
	Missing *CrashSplit `json:"missing,omitempty"`
}

// CrashSplit is the split of runs that failed most of the suite (Outages)
// between base and head. Base and head run interleaved, on the same hosts,
// so an infrastructure failure falls on either side alike: head runs failing
// so far more often than base runs are the patch's doing, a crash it causes
// now and then, and block like a test's failures would.
type CrashSplit struct {
	BaseRuns    int `json:"base_runs"`
	BaseOutages int `json:"base_outages"`
	HeadRuns    int `json:"head_runs"`
	HeadOutages int `json:"head_outages"`
	// P is Fisher's exact one-sided p-value for that many head outages or
	// more, if both sides' runs failed so at one rate; Level is what it
	// blocks at (crashLevel × alpha-pr).
	P     float64 `json:"p"`
	Level float64 `json:"level"`
	Block bool    `json:"block"`
	// More says that more head runs could settle it: a sequential driver
	// runs more pairs.
	More bool `json:"more,omitempty"`
}

// crashLevel is the share of alpha-pr each of the two splits (Crashes and
// Missing) blocks at. Each is one more test beside the family's, which
// spends familyShare of alpha-pr, so that by the union bound the chance
// that a clean PR is blocked stays within alpha-pr. With a base ledger
// that has entries, ledgerShare more goes to the test that refuses an
// entry's exemption (contradicts), out of the family's.
const (
	crashLevel  = 0.025
	familyShare = 1 - 2*crashLevel
	ledgerShare = 0.05
)

// missingSplit compares, for the test collected in every base run that
// lacks results in the most head runs (TestInput.HeadMissing), those head
// runs with the base runs, or returns nil when no such test lacks any.
func missingSplit(tests []TestInput, opt Options) *CrashSplit {
	var worst *TestInput
	for i, t := range tests {
		if shardMissing(t) && (worst == nil || t.HeadMissing > worst.HeadMissing) {
			worst = &tests[i]
		}
	}
	if worst == nil {
		return nil
	}
	got := len(worst.Head) + worst.HeadSkipped
	return split(worst.Base.Runs, 0, got+worst.HeadMissing, worst.HeadMissing, opt)
}

// split is the Fisher comparison of bad runs, base against head.
func split(baseRuns, baseBad, headRuns, headBad int, opt Options) *CrashSplit {
	c := &CrashSplit{BaseRuns: baseRuns, BaseOutages: baseBad, HeadRuns: headRuns, HeadOutages: headBad, Level: crashLevel * opt.AlphaPR}
	c.P = fisherTail(Tally{Runs: c.BaseRuns, Failures: c.BaseOutages}, c.HeadRuns, c.HeadOutages)
	c.Block = c.P <= c.Level
	if !c.Block && c.HeadRuns < opt.MaxRuns {
		// Would every further pair, its base run clean and its head run
		// failing so, settle it?
		n := opt.MaxRuns - c.HeadRuns
		c.More = fisherTail(Tally{Runs: c.BaseRuns + n, Failures: c.BaseOutages}, c.HeadRuns+n, c.HeadOutages+n) <= c.Level
	}
	return c
}

// crashSplit compares the outages of the two sides, or returns nil when no
// head run, or every one, was an outage.
func crashSplit(outs []Outage, tests []TestInput, opt Options) *CrashSplit {
	var baseRuns, baseOut, headRuns, headOut int
	for _, o := range outs {
		if o.Side == "head" {
			headOut, headRuns = headOut+1, o.Runs
		} else {
			baseOut, baseRuns = baseOut+1, o.Runs
		}
	}
	if headOut == 0 || headOut == headRuns {
		return nil
	}
	if baseOut == 0 {
		for _, t := range tests {
			baseRuns = max(baseRuns, t.Base.Runs)
		}
	}
	if baseRuns == 0 {
		return nil // no base run to compare with
	}
	return split(baseRuns, baseOut, headRuns, headOut, opt)
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

// Blocking lists what blocks the pull request: the tests decided Block by
// name (after a line saying the patch breaks the suite, when every head run
// was an outage), then each property violation and error-level ledger
// finding as a line. It is empty when nothing blocks (an inconclusive verdict under
// on-inconclusive=fail blocks with it empty).
func (r Result) Blocking() []string {
	brk, _, _ := outageReasons(r.Outages, r.Crashes, 0) // the patch breaks the suite
	out := append(append(brk, r.named(Block)...), evidenceBlocks(r)...)
	for _, v := range r.Properties {
		out = append(out, "property "+v.String())
	}
	for _, f := range r.Ledger {
		if f.Severity == ledger.Error {
			out = append(out, fmt.Sprintf("ledger %s: %s", f.Rule, f.Message))
		}
	}
	return out
}

// Undecided lists the tests decided Inconclusive.
func (r Result) Undecided() []string { return r.named(Inconclusive) }

// Invalid lists the tests red on base, whose attribution is undefined.
func (r Result) Invalid() []string { return r.named(Invalid) }

// named lists the tests with decision d.
func (r Result) named(d Decision) []string {
	var out []string
	for _, t := range r.Tests {
		if t.Decision == d {
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
	decl := declaration{declared: declared, by: declaredBy, text: strings.ToLower(declarationText(in.PRBody)),
		known: in.ChangesKnown && !in.ChangesCut, changed: changedPaths(in.Changes)}

	res := Result{
		Params: Params{AlphaPR: opt.AlphaPR, P1: opt.P1, Alpha: opt.Alpha, Beta: opt.Beta, P0Floor: P0Floor,
			FirstLook: opt.FirstLook, MaxRuns: opt.MaxRuns, OnInconclusive: opt.OnInconclusive},
		Tests:      make([]TestResult, 0, len(in.Tests)),
		Properties: []Violation{},
		Ledger:     []ledger.Finding{},
		Unread:     append([]Unread{}, in.Unread...),
	}
	lctx := ledger.Context{
		Now:           in.Now,
		ChangedFiles:  changedPaths(in.Changes),
		Observed:      map[string]ledger.Observation{},
		Approved:      hasLabel(in.Labels, opt.ApprovalLabel),
		ApprovalLabel: opt.ApprovalLabel,
		ExpiredWarn:   opt.ExpiredLedgerWarn,
		SPRT:          sprt.Test{P1: opt.P1, Alpha: opt.Alpha, Beta: opt.Beta},
		P0Floor:       P0Floor,
	}
	if declared {
		lctx.DeclaredBy = declaredBy
	}
	res.Outages = outagesOf(in.Tests)
	headUnread := headUnreadOf(in.Unread)
	for _, ti := range in.Tests {
		head := TallyOf(ti.Head)
		lctx.Observed[ti.Name] = ledger.Observation{
			BaseFailures: ti.Base.Failures + ti.History.Failures,
			BaseRuns:     ti.Base.Runs + ti.History.Runs,
			HeadRuns:     head.Runs,
			HeadFailures: head.Failures,
			Signatures:   ti.Signatures,
			File:         ti.File,
			FailedAs:     ti.HeadFailedAs,
		}
	}

	// Pass one: buckets. Pass two: the family of compared tests, its prior
	// and calibration. Pass three: decisions.
	cls := make([]classified, len(in.Tests))
	var sides []Tally
	p0s := map[[2]Tally]P0{}
	read := 0
	cloned := false
	for i, ti := range in.Tests {
		if cut, note := fixedSince(ti); note != "" {
			// Read as this test's base side from here on (the ledger's
			// observation above keeps the whole history's failures), in a
			// copy: the caller's tests stay as given.
			if !cloned {
				in.Tests, cloned = slices.Clone(in.Tests), true
			}
			ti.History = cut
			in.Tests[i] = ti
			cls[i] = classify(ti, p0s)
			cls[i].baseNote = strings.TrimPrefix(cls[i].baseNote+"; "+note, "; ")
		} else {
			cls[i] = classify(ti, p0s)
		}
		if member(cls[i].tr.Bucket) {
			sides = append(sides, cls[i].baseSide)
			read = max(read, len(ti.Head))
		}
	}
	last := max(opt.MaxRuns, minScheduleRuns)
	fitted := fitMargin(read, last)
	// The family spends alpha-pr less the outage checks' shares (Crashes,
	// Missing): by the union bound all of them together stay within it.
	share, ledgerLevel, ledgerTests := familyShare, 0.0, ledgerCandidates(in)
	if ledgerTests > 0 {
		share -= ledgerShare
		ledgerLevel = ledgerShare * opt.AlphaPR / float64(ledgerTests)
	}
	margin := fitted * share
	fam := newFamily(sides, min(opt.FirstLook, opt.MaxRuns), last, opt.AlphaPR*margin)
	fam.budget, fam.margin, fam.fitted, fam.read, fam.ledger = opt.MaxRuns, margin, fitted, read, ledgerLevel > 0
	failing := 0
	for i, ti := range in.Tests {
		if member(cls[i].tr.Bucket) {
			cls[i].group = fam.add(cls[i].baseSide, len(ti.Head))
			if cls[i].tr.Head.Failures > 0 {
				failing++
			}
			if ti.History.Runs > 0 {
				res.Family.HistoryTests++
				res.Family.HistoryRuns += ti.History.Runs
			}
		}
	}
	fam.calibrate()
	res.Family.Tests, res.Family.Failing, res.Family.Threshold, res.Family.Margin = fam.members, failing, fam.tau, margin
	if fam.prior != nil {
		res.Family.Cost = fam.spent
		res.Family.Prior, res.Family.Floor, res.Family.Reference = fam.prior.bands(), fam.prior.floor, fam.prior.reference
	}
	for i, ti := range in.Tests {
		tr := evaluateTest(ti, cls[i], fam, opt, decl, headUnread)
		if (tr.Decision == Block || tr.Decision == Inconclusive) && tr.Head.Failures > 0 && in.BaseLedger != nil && !in.BaseLedgerUnknown {
			// Exemption reads the base ledger only: see package ledger.
			e, why := in.BaseLedger.Exemption(ti.Name, lctx.Observed[ti.Name], lctx)
			var c contradiction
			if e != nil {
				c = contradicts(*e, cls[i].baseSide, ti.Head, tr.Decision == Block, opt.Alpha, ledgerLevel, ledgerTests)
			}
			switch {
			case c.blocks:
				// The entry says "a flake at rate p"; the head says far
				// worse, and so do the base's own runs.
				tr.Reason = fmt.Sprintf("the ledger does not exempt it: %s; %s; without the ledger: %s: %s", why, c.say, tr.Decision, tr.Reason)
				tr.Decision, tr.Pending = Block, false
				res.Ledger = append(res.Ledger, ledger.Finding{Rule: "contradicted", Severity: ledger.Warning, Test: ti.Name,
					Message: fmt.Sprintf("entry %s no longer fits: %s; release it (remove the entry) and fix or re-measure the test", e.Signature, c.say)})
			case e != nil:
				tr.Reason = fmt.Sprintf("exempt: %s; without it: %s: %s", why, tr.Decision, tr.Reason)
				// More head runs may still show the entry contradicted: a
				// sequential driver runs them while the gate could block
				// the test and its entry's rate does not explain the head.
				tr.Decision, tr.Pending = Exempt, tr.Pending && c.tail <= opt.Alpha
				if tr.Pending {
					tr.Reason += "; more head runs decide whether the entry still fits"
				}
			case why != "no ledger entry":
				tr.Reason += "; not exempt: " + why
			}
		}
		if tr.SPRT != nil {
			// The p0 gate.json records: new evidence at it is the gate's.
			o := lctx.Observed[ti.Name]
			o.P0 = tr.SPRT.P0
			lctx.Observed[ti.Name] = o
		}
		res.Tests = append(res.Tests, tr)
	}
	byName := func(a, b TestResult) int { return cmp.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(res.Tests, byName) {
		slices.SortFunc(res.Tests, byName)
	}

	markers := skipMarkers(in.Changes, decl.text)
	res.Properties = append(res.Properties, checkProperties(in, opt, declared, markers.found)...)
	switch {
	case in.BaseLedgerUnknown:
		res.Ledger = append(res.Ledger, ledger.Check(in.HeadLedger, in.HeadLedger, lctx)...)
	case in.BaseLedger != nil || in.HeadLedger != nil:
		res.Ledger = append(res.Ledger, ledger.Check(in.BaseLedger, in.HeadLedger, lctx)...)
	}
	res.Crashes = crashSplit(res.Outages, in.Tests, opt)
	res.Missing = missingSplit(in.Tests, opt)
	res.Verdict, res.Reasons = verdict(res, in, opt, declared, declaredBy, markers)
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
		if head := TallyOf(t.Head); t.BaseRetried < 0 || t.BaseRetried > t.Base.Failures || t.HeadRetried < 0 || t.HeadRetried > head.Failures {
			errs = append(errs, fmt.Errorf("test %q: %d base and %d head runs retried, of %d and %d failed: want 0 <= retried <= failed on each side",
				t.Name, t.BaseRetried, t.HeadRetried, t.Base.Failures, head.Failures))
		}
	}
	return errors.Join(errs...)
}

// classified is a test after pass one: its sides, bucket and base-side
// tally, before the family is calibrated.
type classified struct {
	tr       TestResult
	baseSide Tally // K base repetitions + history, as the bucket read them
	baseNote string
	// baseOutage: every base run the test ran in was left out as an
	// infrastructure failure, and it has no history to stand in.
	baseOutage bool
	base       Class      // the base class the bucket was read from
	group      *nullGroup // for members of the family
}

// member reports whether a bucket is compared under the PR-level guarantee:
// the test has a base that is not red and runs on head.
func member(b Bucket) bool {
	switch b {
	case OK, PatchInducedFlake, Regression, FlakeNotReproduced, PreExistingFlake, FlakyToBroken:
		return true
	}
	return false
}

// classify picks a test's bucket and its base-side evidence. Estimates are
// shared by tests with the same tallies.
func classify(ti TestInput, p0s map[[2]Tally]P0) classified {
	head := TallyOf(ti.Head)
	tr := TestResult{
		Name:    ti.Name,
		Base:    Side{Runs: ti.Base.Runs, Failures: ti.Base.Failures, Class: classOf(ti.Base, ti.BaseRetried)},
		Head:    Side{Runs: head.Runs, Failures: head.Failures, Class: classOf(head, ti.HeadRetried)},
		History: ti.History,
	}
	if head.Failures > 0 {
		tr.Signatures = ti.Signatures
	}
	k := [2]Tally{ti.Base, ti.History}
	p, ok := p0s[k]
	if !ok {
		p = EstimateP0(ti.Base, ti.History)
		p0s[k] = p
	}
	tr.P0 = p
	base, note := effectiveBase(ti.Base, tr.Base.Class, ti.History)
	baseOutage := false
	if n := ti.leftOut("base"); n > 0 && ti.Base.Runs == 0 {
		// Its base results are all in runs left out: not a new test.
		if ti.History.Runs > 0 {
			note = fmt.Sprintf("its %d base run(s) were all left out as infrastructure failures; %s", n, note)
		} else {
			base, baseOutage = Broken, true
		}
	}
	tr.Bucket = BucketOf(base, tr.Head.Class)
	switch {
	case tr.Head.Class == Untested && ti.leftOut("head") > 0:
		tr.Bucket = HeadLeftOut
	case tr.Bucket == Removed && ti.BaseMissing > 0 && ti.HeadSkipped == 0:
		tr.Bucket = Unstable
	case tr.Bucket == Removed && goneFromBase(ti):
		tr.Bucket = GoneFromBase
	}
	side := Tally{Runs: ti.Base.Runs + ti.History.Runs, Failures: ti.Base.Failures + ti.History.Failures}
	return classified{tr: tr, baseSide: side, baseNote: note, base: base, baseOutage: baseOutage}
}

// evaluateTest decides one test. Members of the family are judged by the
// calibrated statistic (family.go); the other buckets by DESIGN.md's table.
func evaluateTest(ti TestInput, c classified, fam *family, opt Options, decl declaration, headUnread int) TestResult {
	tr := c.tr
	say := func(d Decision, format string, args ...any) TestResult {
		tr.Decision = d
		tr.Reason = fmt.Sprintf(format, args...)
		if c.baseNote != "" {
			tr.Reason += "; " + c.baseNote
		}
		return tr
	}
	head := TallyOf(ti.Head)
	headStr := fmt.Sprintf("%d of %d head runs failed", head.Failures, head.Runs)
	base := c.base

	switch tr.Bucket {
	case NotRun:
		return say(Pass, "not run: no pass or fail results on either side (skipped or not collected), nothing to attribute")
	case NewOK:
		return say(Pass, "new test ok: passed all %d head runs", head.Runs)
	case Fixed:
		return say(Pass, "patch fixes it: red in all %d base runs, clean in %d head runs", ti.Base.Runs, head.Runs)
	case NewFlaky:
		return say(Block, "new flaky test: %s, and it has no base to compare with", headStr)
	case NewFailing:
		return say(Block, "new failing test: %s", headStr)
	case BaseRed:
		switch {
		case c.baseOutage:
			return say(Invalid, "base red: every base run it ran in (%d) failed most of the suite and was left out as an infrastructure failure, and it has no base-branch history, so the base has no reference and attribution is undefined (%s): neither the patch's fault nor a pass; re-run the base",
				ti.leftOut("base"), headStr)
		case ti.History.Runs > 0 && ti.History.Failures == 0:
			return say(Invalid, "base red: failed all %d base runs but passed all %d base-branch history runs, so the base runs look like an outage, or the base commit broke it (a branch that left the base branch while it was red), not this test's baseline: attribution is undefined (%s), neither the patch's fault nor a pass; re-run the base, or, if the base branch was fixed since the branch left it, update the branch (merge or rebase) so that its base has the fix",
				ti.Base.Runs, ti.History.Runs, headStr)
		}
		return say(Invalid, "base red: failed all %d base runs, so the base has no reference and attribution is undefined (%s): neither the patch's fault nor a pass",
			ti.Base.Runs, headStr)
	case HeadLeftOut:
		return say(Inconclusive, "not compared: every head run it ran in (%d) failed most of the suite and was left out as an infrastructure failure", ti.leftOut("head"))
	case Unstable:
		return say(Pass, "not compared: ran in %d base runs, was not collected in %d other base runs, and is in no head run: its id is not stable (a random parameter in its name?), so its absence on head is no evidence of removal",
			ti.Base.Runs, ti.BaseMissing)
	case GoneFromBase:
		return say(Pass, "removed on the base branch: ran in %d base runs, then in none of the %d base-branch runs since that ran the other tests of its class, nor on head: the branch dropped it after the base commit (a pull request's base.sha stays at the branch's tip when it was opened), not the patch",
			ti.Base.Runs, ti.LeftBaseBranch)
	case Removed:
		uncovered := ""
		if decl.declared {
			uncovered = decl.uncovered(ti)
		}
		switch {
		case headUnread > 0 && ti.HeadSkipped == 0:
			// Its results may be in a file that was not read: a failed
			// download is not a deletion.
			return say(Inconclusive, "not compared: no results on head, and %d head result file(s) could not be read (listed with the verdict), which may hold them; re-run", headUnread)
		case base == Broken && ti.HeadSkipped > 0:
			return say(Block, "newly skipped: red on base (%d of %d runs failed) and skipped in every head run it was collected in (%d); a test red on base must still run on head, and a Test-Changes declaration does not waive it",
				ti.Base.Failures+ti.History.Failures, ti.Base.Runs+ti.History.Runs, ti.HeadSkipped)
		case base == Broken:
			return say(Block, "removed: red on base (%d of %d runs failed) and gone from head; a test red on base must still exist on head",
				ti.Base.Failures+ti.History.Failures, ti.Base.Runs+ti.History.Runs)
		case ti.HeadSkipped > 0 && plausibleSkips(ti):
			return say(Pass, "skipped at run time: skipped in every head run it was collected in (%d), and in %d of %d base runs, which makes that likely enough (a skip on a missing service, a non-strict xfail that failed): not compared",
				ti.HeadSkipped, ti.BaseSkipped, ti.Base.Runs+ti.BaseSkipped)
		case ti.HeadSkipped > 0:
			// A new skip, seen in the results rather than in the diff:
			// as for a new skip marker, a declaration does not waive it.
			return say(Block, "newly skipped: ran in %d base runs and was skipped in every head run it was collected in (%d); a new skip hides the test whatever it does, and a Test-Changes declaration does not waive it",
				ti.Base.Runs, ti.HeadSkipped)
		case uncovered != "":
			return say(Block, "removed, but not as declared: no results on head, and the PR neither changes its file (%s) nor names it in its declaration (%s): a declaration covers the tests the PR deletes or renames, not a test that stopped running (a module that no longer collects); name the test in the Test-Changes line if another change removes it",
				uncovered, decl.by)
		case decl.declared:
			return say(Pass, "removed: no results on head (deleted, or skipped at collection), declared by %s", decl.by)
		default:
			return say(Block, "removed: no results on head (deleted, or skipped at collection), and the PR does not declare test changes (a \"Test-Changes:\" line in the PR body or the %q label)",
				opt.DeclareLabel)
		}
	}

	// A member: a base that is not red meets head runs.
	g := c.group
	tr.P0.Estimate = g.mean
	tr.P0.Source = fam.source(ti, g.mean)
	if base == Flaky {
		// The SPRT of article C, recorded as a quarantine ledger's evidence:
		// one look at all the head runs, so that its trace covers them all.
		t := sprt.Test{P0: max(g.mean, P0Floor), P1: opt.P1, Alpha: opt.Alpha, Beta: opt.Beta}
		if t.Validate() == nil {
			r := t.Run(ti.Head, 0)
			tr.SPRT = &r
		}
	}
	if head.Failures == 0 {
		if tr.Bucket == FlakeNotReproduced {
			return say(Pass, "flake not reproduced: flaky on base (%s), clean in %d head runs", rateStr(g.mean, ti), head.Runs)
		}
		return say(Pass, "ok: clean on both sides")
	}

	rate := "its base rate " + rateStr(g.mean, ti)
	ev := fam.judge(g, ti.Head)
	prp := fam.prLevel(c.group, ev.best)
	tr.Stat = &Stat{Tail: ev.tail, Best: ev.best, BestAt: ev.bestAt, Threshold: g.tau, PRLevel: min(prp, 1), OwnRuns: ev.fisher}
	what := map[Bucket]string{PatchInducedFlake: "patch-induced flake", Regression: "regression",
		PreExistingFlake: "flaky test made flakier", FlakyToBroken: "regression of a flaky test"}[tr.Bucket]
	// The most extreme look's probability, as the PR-level figure and the
	// report's table give it.
	at := ""
	if ev.bestAt != head.Runs {
		at = fmt.Sprintf(" (at the look after %d head runs)", ev.bestAt)
		if ev.bestAt == 1 {
			at = " (at the look after the first head run)"
		}
	}
	if ev.blocked {
		return say(Block, "%s: %s; if the patch changed nothing, a count this high has probability %.2g%s for %s; over all %d compared tests and every look, thresholds that block this count give a PR-level p of %s, within alpha-pr %.2g",
			what, headStr, ev.best, at, rate, fam.members, fam.withMargin(prp), opt.AlphaPR)
	}

	// Not blocked. Is the head unremarkable for this test, or worth more runs?
	// Not blocked. Two levels: worth more runs (the head failed more often
	// than this test's base rate predicts, at the per-test alpha), and
	// remarkable (at the PR level the evidence falls short of alpha-pr, but
	// by less than undecidedFactor). A sequential driver reruns the first;
	// only the second is reported as undecided: a count that one clean PR in
	// five would show somewhere is no evidence against this patch. Without base-branch history a test clean on base is always
	// undecided: K clean base runs cannot tell a rare flake from a new one.
	worth := ev.tail <= opt.Alpha
	remarkable := worth && prp <= undecidedFactor*opt.AlphaPR
	cleanNoHistory := ti.History.Runs == 0 && ti.Base.Failures == 0
	more, within, reachable := fam.toBlock(g, head.Runs, head.Failures)
	tr.Pending = head.Runs < opt.MaxRuns && reachable && (worth || cleanNoHistory)
	// prLevel stops at undecidedFactor × alpha-pr: past it, say so.
	prStr := fam.withMargin(prp)
	if prp >= 1 && undecidedFactor*opt.AlphaPR < 1 {
		prStr = fmt.Sprintf("more than %.2g (%d × alpha-pr)", undecidedFactor*opt.AlphaPR, undecidedFactor)
	}
	stat := fmt.Sprintf("%s; P = %.2g%s for %s; over all %d compared tests, thresholds that would block this count give a PR-level p of %s, above alpha-pr %.2g",
		headStr, ev.best, at, rate, fam.members, prStr, opt.AlphaPR)
	if ev.held {
		stat = fmt.Sprintf("%s; P = %.2g%s for %s, rare enough for the suite's calibration, but not against the test's own base-side runs: %d of %d head runs failing against %d of %d base-side runs has probability %.2g if both sides fail at one rate (Fisher's exact test), above alpha-pr %.2g",
			headStr, ev.best, at, rate, ev.heldFails, ev.heldAt, c.baseSide.Failures, c.baseSide.Runs, ev.fisher, opt.AlphaPR)
	}
	decide := ""
	if tr.Pending {
		decide = fmt.Sprintf("; more head runs decide: it blocks if %d of the next %d fail", more, within)
		if c := clearsAfter(g, head.Runs, head.Failures, opt.Alpha); c > 0 && !cleanNoHistory {
			decide += fmt.Sprintf(", and is cleared by %d more passing runs", c)
		}
	}
	tooFlaky := !reachable && unblockable(fam, g)
	switch {
	case cleanNoHistory:
		return say(Inconclusive, "undecided, no base-branch history: %s; it passed all %d base runs, which alone rule out only a rate above %.2f, so a rare pre-existing flake would look the same: give base-branch history (JUnit of recent runs on the base branch) or more runs%s",
			stat, ti.Base.Runs, tr.P0.Upper, decide)
	case remarkable && tooFlaky:
		return say(Inconclusive, "too flaky to gate: %s; no number of failures within %d head runs could block it: fix the test", stat, opt.MaxRuns)
	case remarkable && tr.Pending:
		return say(Inconclusive, "undecided: %s%s (budget %d head runs)", stat, decide, opt.MaxRuns)
	case remarkable:
		return say(Inconclusive, "undecided with the budget of %d head runs spent: %s", opt.MaxRuns, stat)
	case tooFlaky:
		return say(Pass, "consistent with %s: %s; too flaky to gate: no number of failures within %d head runs could block it, fix the test", rate, stat, opt.MaxRuns)
	case base == Flaky && tr.SPRT != nil && tr.SPRT.Decision == sprt.Regression:
		// The bucket is a pre-existing flake's, but its recorded SPRT
		// says regression: a ledger entry, which needs FLAKE, cannot
		// exempt it, and "exemption eligible" would say it can.
		return say(Pass, "pre-existing flake by its base runs, not blocked: %s; its recorded SPRT says REGRESSION, so no ledger entry can exempt it%s", stat, decide)
	case base == Flaky:
		return say(Pass, "pre-existing flake: %s; %s given how many tests failed, exemption eligible%s", stat, notBlocked(worth, "its base rate"), decide)
	default:
		return say(Pass, "%s given how many tests failed: %s%s", notBlocked(worth, rate), stat, decide)
	}
}

// undecidedFactor: a test whose PR-level p-value is above alpha-pr but
// within this factor of it is undecided, not passed.
const undecidedFactor = 4

// clearsAfter is the number of further passing runs after which h failures
// in n runs are no longer worth more runs at level (the tail grows with
// every pass), or 0 if that takes over 200 runs.
func clearsAfter(g *nullGroup, n, h int, level float64) int {
	lo, hi := 1, min(200, maxStatRuns-n)
	if hi < lo || g.tailAt(n+hi, h) <= level {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if g.tailAt(n+mid, h) > level {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// unblockable reports that no look of the schedule has a boundary within
// reach: the test is too flaky for any number of failures to stand out.
func unblockable(fam *family, g *nullGroup) bool {
	if g.tau <= 0 {
		return true
	}
	for i, L := range g.looks {
		if L <= fam.budget && g.blockAt(i, g.tau) <= L {
			return false
		}
	}
	return true
}

// rateStr shows a base rate with what it rests on.
func rateStr(mean float64, ti TestInput) string {
	if ti.History.Runs == 0 {
		return fmt.Sprintf("%.3g (%d/%d base runs failed, no base-branch history)", mean, ti.Base.Failures, ti.Base.Runs)
	}
	return fmt.Sprintf("%.3g (%d/%d base runs, %d/%d history runs failed)",
		mean, ti.Base.Failures, ti.Base.Runs, ti.History.Failures, ti.History.Runs)
}

// source says what a member's baseline rate rests on; tests with the same
// tallies share the words.
func (f *family) source(ti TestInput, mean float64) string {
	k := [2]Tally{ti.Base, ti.History}
	if s, ok := f.sources[k]; ok {
		return s
	}
	s := p0Source(ti, mean, f)
	f.sources[k] = s
	return s
}

func p0Source(ti TestInput, mean float64, fam *family) string {
	hist := "no base-branch history"
	if ti.History.Runs > 0 {
		hist = fmt.Sprintf("%d/%d history runs failed", ti.History.Failures, ti.History.Runs)
	}
	return fmt.Sprintf("posterior mean %.3g: %d/%d base runs failed, %s; suite prior fitted to %d tests' %d base-side runs (floor %.2g)",
		mean, ti.Base.Failures, ti.Base.Runs, hist, fam.prior.tests, fam.prior.runs, fam.prior.floor)
}

// effectiveBase classes the base side from the K repetitions, corrected by
// history: a test clean in K runs that failed in history is a pre-existing
// flake the K runs missed; a test with no K runs is classed by its history.
func effectiveBase(base Tally, c Class, history Tally) (Class, string) {
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

// declaration is what a PR says of its test changes, and what its diff
// shows.
type declaration struct {
	declared bool
	by       string // what declares them (Declared)
	text     string // the Test-Changes lines' values, lower-case; "" for the label alone
	known    bool   // changed lists every file the PR changes
	changed  []string
}

// uncovered returns the file of a removed test that the declaration does
// not cover, or "": with the PR's files known in full, a test whose file is
// known (the JUnit file attribute, or a path in its name) and unchanged,
// and that the declaration does not name (the test, its function or its
// file). A declaration adding one test waived ten others that vanished.
func (d declaration) uncovered(ti TestInput) string {
	if !d.known {
		return ""
	}
	file := strings.ReplaceAll(cmp.Or(ti.File, ledger.SourceFile(ti.Name)), `\`, "/")
	if file == "" {
		// Unknown, or a package's path (a Go test's id), not a file.
		return ""
	}
	for _, c := range d.changed {
		// Either may be relative to a directory the other includes: the
		// file attribute to pytest's rootdir in a monorepo, an absolute
		// path on the runner.
		if file == c || strings.HasSuffix(file, "/"+c) || strings.HasSuffix(c, "/"+file) {
			return ""
		}
	}
	fn := ti.Name[strings.LastIndex(ti.Name, "::")+2:]
	fn, _, _ = strings.Cut(fn, "[") // a parameterised case's function
	for _, name := range []string{ti.Name, fn} {
		if len(name) >= 4 && strings.Contains(d.text, strings.ToLower(name)) {
			return ""
		}
	}
	if namesFile(d.text, file, d.changed) {
		return ""
	}
	return file
}

// fixedLevel bounds the chance, if the test's rate never changed, that all
// its history failures come before its newest clean runs and its clean base
// runs (fixedSince), over the history's runs as places the change could
// be: fixedLevel / (history runs) for the one found.
const fixedLevel = 1e-4

// fixedSince cuts a test's history to the runs since it was fixed on the
// branch: when its failures (at least 3) all came before its newest clean
// runs, and, with its clean base runs after them, so long a clean stretch
// is a chance below fixedLevel / (history runs) if its rate never changed
// (Fisher's exact test of the runs before against those after, all places
// of the change counted). A test broken on the branch last week and fixed
// since read as a pre-existing flake of that rate, and a patch breaking it
// again passed ("flaky base, broken head", consistent with its rate). It
// returns the history to use and a note, or ti.History and "".
func fixedSince(ti TestInput) (Tally, string) {
	h, clean := ti.History, ti.HistoryCleanSince
	early, late := h.Runs-clean, clean+ti.Base.Runs
	if ti.Base.Failures > 0 || ti.Base.Runs == 0 || h.Failures < 3 || early <= 0 {
		return h, ""
	}
	// Every failure among the early runs: C(early, F) / C(early+late, F).
	chance := math.Exp(lnChoose(early, h.Failures) - lnChoose(early+late, h.Failures))
	if chance >= fixedLevel/float64(h.Runs) {
		return h, ""
	}
	return Tally{Runs: clean}, fmt.Sprintf("history cut to the %d runs since it was fixed: it failed %d of its first %d history runs, then passed the last %d and all %d base runs, a chance of %.2g if its rate never changed; its baseline is the runs since",
		clean, h.Failures, early, clean, ti.Base.Runs, chance)
}

// notBlocked says how a test's head failures stand against rate when they
// do not block: unusual for the test alone (its tail at most alpha), yet
// short of the PR-level bound, or consistent with it.
func notBlocked(unusual bool, rate string) string {
	if unusual {
		return "unusual for " + rate + ", yet short of blocking"
	}
	return "consistent with " + rate
}

// plausibleSkipRate is the smallest chance, at the rate its base runs
// skipped a test, of head skipping it in every run it was collected in,
// that reads as the same run-time skip rather than a new one.
const plausibleSkipRate = 0.05

// plausibleSkips reports whether head's skipping a test in every head run
// is likely at the rate its base runs skipped it.
func plausibleSkips(ti TestInput) bool {
	if ti.BaseSkipped == 0 {
		return false
	}
	rate := float64(ti.BaseSkipped) / float64(ti.BaseSkipped+ti.Base.Runs)
	return math.Pow(rate, float64(ti.HeadSkipped)) >= plausibleSkipRate
}

// plausibleAllRed is the smallest chance, at a test's history rate, of
// failing every base run that still reads as a flake's bad luck rather
// than a red base: rate 0.25 or more for K = 5.
const plausibleAllRed = 1e-3

// plausiblyFlaky reports whether a test red in every base run (Invalid)
// is, by its base-branch history, a flake that failed them all: the
// history has passes and failures, and at its rate all K failing has a
// chance of at least plausibleAllRed. A history that never failed, or
// rarely did, leaves the base red (the test broke on the base branch).
func plausiblyFlaky(t TestResult) bool {
	h := t.History
	if t.Base.Runs == 0 || t.Base.Failures != t.Base.Runs || h.Failures == 0 || h.Failures == h.Runs {
		return false
	}
	return math.Pow(float64(h.Failures)/float64(h.Runs), float64(t.Base.Runs)) >= plausibleAllRed
}

// fewerHeadRuns says how many tests, collected in every base run, have no
// result in some head runs that other tests ran in (TestInput.HeadMissing),
// or "": the evidence for them is partial, as for a file not read, and a
// crash the patch causes (a shard that writes no file) looks the same.
func fewerHeadRuns(tests []TestInput) string {
	n, first := 0, -1
	for i, t := range tests {
		if shardMissing(t) {
			if n++; first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return ""
	}
	t := tests[first]
	got := len(t.Head) + t.HeadSkipped
	return fmt.Sprintf("%d test(s) collected in every base run have no result in some head runs (%s in %d of %d): a head run with no results for them (a shard that crashed or was cancelled, a file not given) is evidence missing, and a crash the patch causes looks the same; re-run, or give the missing files",
		n, t.Name, got, got+t.HeadMissing)
}

// firstNames is the first three of names, joined, and how many more.
func firstNames(names []string) string {
	s := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d more", len(names)-3)
	}
	return s
}

// maxUnreadReasons bounds the unread files the reasons name one by one.
const maxUnreadReasons = 10

// verdict turns the findings into the PR verdict and its reasons, most
// important first.
func verdict(res Result, in Input, opt Options, declared bool, declaredBy string, markers markerScan) (Verdict, []string) {
	var block, incon, notes []string
	var invalid, exempt, pending, unstable, headLeft int
	var gone []string
	for _, t := range res.Tests {
		line := fmt.Sprintf("%s: %s", t.Name, t.Reason)
		switch {
		case t.Bucket == Unstable:
			unstable++
			continue
		case t.Bucket == GoneFromBase:
			gone = append(gone, t.Name)
			continue
		case t.Bucket == HeadLeftOut && t.Decision == Inconclusive:
			headLeft++ // said once, with the runs left out
			continue
		}
		switch t.Decision {
		case Block:
			block = append(block, line)
		case Inconclusive:
			incon = append(incon, line)
			if t.Pending {
				pending++
			}
		case Invalid:
			if plausiblyFlaky(t) {
				// A flake of its history's rate fails every base run
				// now and then (p = 0.5, K = 5: one PR in 32): no block,
				// no pass for the test, but no reason to doubt the PR.
				notes = append(notes, line+"; its history ("+fmt.Sprintf("%d of %d runs failed", t.History.Failures, t.History.Runs)+") makes a base red in every run a flake's chance, so the PR's verdict does not wait on it")
				continue
			}
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
	notes = append(notes, in.Notes...)
	if !in.ChangesKnown {
		notes = append(notes, "no diff given: protected-path and skip-marker checks did not run")
	}
	if declared {
		notes = append(notes, "test changes declared by "+declaredBy)
	}
	if len(gone) > 0 {
		notes = append(notes, fmt.Sprintf("%d test(s) of the base runs were removed on the base branch after the base commit (none of its later runs that ran their classes' other tests ran them), and are not counted as removed by the patch: %s",
			len(gone), firstNames(gone)))
	}
	if unstable > 0 {
		notes = append(notes, fmt.Sprintf("%d test id(s) collected in only some base runs and in no head run were not compared, nor counted as removed: their ids are not stable (random parameters in test names?)", unstable))
	}
	if exempt > 0 {
		notes = append(notes, fmt.Sprintf("%d test(s) exempted by the base ledger", exempt))
	}
	acrossLegs := 0
	for _, t := range in.Tests {
		if t.AcrossLegs {
			acrossLegs++
		}
	}
	var varying []string
	for _, t := range in.Tests {
		if t.VaryingNames > 0 {
			varying = append(varying, t.Name)
		}
	}
	if len(varying) > 0 {
		notes = append(notes, fmt.Sprintf("%d test(s) whose names change from run to run (a seed, a hash code or an id in the name, one such name in each run) were compared as one test each, under the name with the varying part written …: %s",
			len(varying), firstNames(varying)))
	}
	if n := acrossLegs; n > 0 {
		notes = append(notes, fmt.Sprintf("%d test(s) told apart by matrix leg on one side and not on the other were compared across their legs, a run failing when any leg failed", n))
	}

	// Result files that could not be read, or a diff cut short, leave the
	// evidence partial: the verdict cannot be a plain pass, and what is
	// missing is listed.
	var partial []string
	brk, part, more := outageReasons(res.Outages, res.Crashes, headLeft)
	block = append(append(brk, block...), evidenceBlocks(res)...)
	switch {
	case invalid > 0 && len(block) > 0:
		notes = append(notes, fmt.Sprintf("%d test(s) red on base: attribution undefined, counted neither as pass nor as block", invalid))
	case invalid > 0:
		// DESIGN.md: a red base is reported, never called the patch's
		// fault or a pass.
		partial = append(partial, fmt.Sprintf("%d test(s) red on base: attribution undefined, neither the patch's fault nor a pass (listed below)", invalid))
	}
	partial = append(partial, part...)
	notes = append(notes, more...)
	if fewer := fewerHeadRuns(in.Tests); fewer != "" && (res.Missing == nil || !res.Missing.Block) {
		partial = append(partial, fewer)
	}
	if len(res.Tests) == 0 {
		// A required check that compared nothing has checked nothing.
		partial = append(partial, "no test was compared: the base and head results hold no test with a pass or a failure")
	}
	if in.ChangesKnown {
		if n := markers.unscanned; len(n) > 0 {
			partial = append(partial, fmt.Sprintf("%d changed file(s) whose diff GitHub did not show (too large) were not checked for new skip markers: %s",
				len(n), strings.Join(n[:min(len(n), 5)], ", ")))
		}
		for _, v := range markers.named {
			notes = append(notes, fmt.Sprintf("skip marker at %s:%d declared: the Test-Changes line names its file", v.Path, v.Line))
		}
	}
	if in.ChangesKnown && in.ChangesCut {
		partial = append(partial, fmt.Sprintf("the pull request's files were listed only up to %d: protected-path and skip-marker checks saw only those", len(in.Changes)))
	}
	if n := len(in.Unread); n > 0 {
		// Head results not read may hold a failure: a required check does
		// not pass on them, whatever on-inconclusive says (that policy is
		// for what the evidence read cannot decide). Base results not read
		// can only make the gate stricter (evidenceBlocks).
		if base := n - headUnreadOf(in.Unread); base > 0 {
			partial = append(partial, fmt.Sprintf("%d result file(s) of the base runs could not be read: the evidence is incomplete", base))
		}
		for i, u := range in.Unread {
			if i == maxUnreadReasons {
				notes = append(notes, fmt.Sprintf("… and %d more file(s) not read", n-i))
				break
			}
			notes = append(notes, fmt.Sprintf("%s: not read: %s: %s", u.Side, u.Path, u.Error))
		}
	}

	var v Verdict
	var head []string
	switch {
	case len(block) > 0:
		v = VerdictBlock
		head = append(append(block, incon...), partial...)
	case len(incon) > 0 || len(partial) > 0:
		var parts []string
		if len(incon) > 0 {
			parts = append(parts, fmt.Sprintf("%d test(s) inconclusive (%d pending more runs)", len(incon), pending))
		}
		parts = append(parts, partial...)
		policy := fmt.Sprintf("%s; on-inconclusive=%s", strings.Join(parts, "; "), opt.OnInconclusive)
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
		head = []string{fmt.Sprintf("no test blocks: %d test(s) compared, no property or ledger violation", res.Family.Tests)}
	}
	return v, append(head, notes...)
}

// headNothingMatched counts the head side's patterns and paths that
// matched no file: the reasons collect gives them (nothingIn), which
// TestGateCLIHeadPatternMatchingNothing holds to.
func headNothingMatched(unread []Unread) int {
	n := 0
	for _, u := range unread {
		if u.Side == "head" && (u.Error == "matched no files" || u.Error == "no such file or directory") {
			n++
		}
	}
	return n
}

// headUnreadOf counts the head side's files and runs not read.
func headUnreadOf(unread []Unread) int {
	n := 0
	for _, u := range unread {
		if u.Side == "head" {
			n++
		}
	}
	return n
}

// shardMissing reports whether a test collected in every base run has no
// result in some head runs that other tests ran in (a shard's file missing).
func shardMissing(t TestInput) bool {
	return t.HeadMissing > 0 && len(t.Head) > 0 && t.Base.Runs > 0 && t.BaseMissing == 0
}

// evidenceBlocks says what blocks because the head's evidence is missing:
//   - head result files or runs not read, which may hold a failure: a
//     required check does not pass on them, whatever on-inconclusive says
//     (that policy is for tests the results read cannot decide);
//   - no test with a result on head while base has some, and no head run
//     left out as an outage nor file unread to explain it: a collection
//     the patch broke, or a runner that found nothing. Each test read as
//     removed, and declared, the check passed on a head that ran no test.
func evidenceBlocks(r Result) []string {
	var out []string
	if headUnread := headUnreadOf(r.Unread); headUnread > 0 {
		fix := "re-run once they are there"
		switch n := headNothingMatched(r.Unread); {
		// A re-run finds the same: the pattern is what to fix.
		case n == headUnread:
			fix = "a head pattern or path that matched no file, which a re-run matches no better: fix it (--head, head-results) or drop it"
		case n > 0:
			fix = fmt.Sprintf("%d of them a head pattern or path that matched no file, which a re-run matches no better: fix it (--head, head-results) or drop it; re-run once the others are there", n)
		}
		out = append(out, fmt.Sprintf("head results missing: %d head result file(s) or run(s) were not read (listed below: a file that failed to download or parse, a run still in progress or ended without results, a pattern that matched nothing), and a failure in them would go unseen, so the check does not pass on the rest; %s (on-inconclusive covers tests the results read cannot decide, not results missing)", headUnread, fix))
	}
	if m := r.Missing; m != nil && m.Block {
		out = append(out, fmt.Sprintf("part of the suite vanishes on head now and then: tests collected in every base run (%d) have no result in %d of %d head runs (a shard that crashed, or was not given); if the patch changed nothing, a split this uneven has probability %.2g (Fisher's exact test), within %.2g (%.2g of alpha-pr)",
			m.BaseRuns, m.HeadOutages, m.HeadRuns, m.P, m.Level, crashLevel))
	}
	base := 0
	for _, t := range r.Tests {
		if t.Head.Runs > 0 {
			return out
		}
		if t.Base.Runs > 0 {
			base++
		}
	}
	if base > 0 && len(r.Unread) == 0 && !slices.ContainsFunc(r.Outages, func(o Outage) bool { return o.Side == "head" }) {
		out = append(out, fmt.Sprintf("head ran no test: none of the %d tests with results on base has a pass or a failure on head (a test collection that broke, a runner that found none); a Test-Changes declaration does not cover removing every test", base))
	}
	return out
}

// outagesOf gathers the runs the tests' LeftOut name, base first, each in
// run order.
func outagesOf(tests []TestInput) []Outage {
	out := []Outage{}
	seen := map[Outage]bool{}
	for _, t := range tests {
		for _, o := range t.LeftOut {
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b Outage) int {
		return cmp.Or(cmp.Compare(a.Side, b.Side), cmp.Compare(a.Run, b.Run)) // "base" < "head"
	})
	return out
}

// outageReasons says what the runs left out as infrastructure failures do
// to the verdict: what blocks, what leaves the evidence partial, and notes.
//
//   - A head run that failed most of the suite is left out of the head
//     tallies, and the verdict is partial: an outage and a crash the patch
//     causes look the same, and a re-run tells them apart.
//   - Every head run so: the patch breaks the suite, one reason that blocks,
//     unless every base run failed so too (then nothing can be attributed).
//   - Some head runs so, and far more than base runs (crashes, Fisher's
//     exact test at crashLevel × alpha-pr): the patch crashes the suite now
//     and then, which blocks.
//   - A base outage run is left out of the base tallies and noted; every
//     base run so leaves the base side to history alone: partial.
func outageReasons(outs []Outage, crashes *CrashSplit, headLeft int) (block, partial, notes []string) {
	var base, head []Outage
	for _, o := range outs {
		if o.Side == "base" {
			base = append(base, o)
		} else {
			head = append(head, o)
		}
	}
	allBase := len(base) > 0 && len(base) == base[0].Runs
	allHead := len(head) > 0 && len(head) == head[0].Runs
	pct := func(os []Outage) string { return fmt.Sprintf("more than %.0f%% of the tests", 100*os[0].Threshold) }
	switch {
	case allHead && allBase:
		partial = append(partial, fmt.Sprintf("every base run and every head run failed %s (%s; %s): an infrastructure failure on both sides, or a base the suite cannot run on; nothing can be attributed: re-run",
			pct(head), listOutages(base), listOutages(head)))
		return block, partial, notes
	case allHead:
		block = append(block, fmt.Sprintf("the patch breaks the suite: every head run failed %s (%s), and the base runs did not",
			pct(head), listOutages(head)))
	case crashes != nil && crashes.Block:
		block = append(block, fmt.Sprintf("the patch crashes the suite now and then: %d of %d head runs failed %s (%s), against %d of %d base runs run beside them; if the patch changed nothing, a split this uneven has probability %.2g (Fisher's exact test), within %.2g (%.2g of alpha-pr)",
			crashes.HeadOutages, crashes.HeadRuns, pct(head), listOutages(head), crashes.BaseOutages, crashes.BaseRuns, crashes.P, crashes.Level, crashLevel))
	case len(head) > 0:
		for _, o := range head {
			partial = append(partial, fmt.Sprintf("%s: an infrastructure failure or a crash the patch causes; re-run to tell (left out of the head tallies, as a run in which %s failed)",
				o, pct(head)))
		}
		if crashes != nil {
			more := ""
			if crashes.More {
				more = "; more pairs can tell"
			}
			partial = append(partial, fmt.Sprintf("%d of %d head runs failed so, against %d of %d base runs: probability %.2g if the patch changed nothing, above %.2g, too even a split to call the patch's%s",
				crashes.HeadOutages, crashes.HeadRuns, crashes.BaseOutages, crashes.BaseRuns, crashes.P, crashes.Level, more))
		}
		if headLeft > 0 {
			partial = append(partial, fmt.Sprintf("%d test(s) ran on head only in the runs left out: not compared", headLeft))
		}
	}
	switch {
	case allBase:
		partial = append(partial, fmt.Sprintf("every base run failed %s (%s): infrastructure failures, left out, so the base side is base-branch history alone; re-run the base",
			pct(base), listOutages(base)))
	case len(base) > 0:
		notes = append(notes, fmt.Sprintf("left out of the base tallies as infrastructure failures (runs in which %s failed): %s", pct(base), listOutages(base)))
	}
	return block, partial, notes
}

// listOutages names the runs, at most maxUnreadReasons of them, or sums up
// a side whose every run was one.
func listOutages(os []Outage) string {
	if n := len(os); n > 1 && n == os[0].Runs {
		lo, hi := 1.0, 0.0
		for _, o := range os {
			f := float64(o.Failed) / float64(max(o.Tests, 1))
			lo, hi = min(lo, f), max(hi, f)
		}
		share := fmt.Sprintf("%.0f%%", 100*lo)
		if hi-lo >= 0.005 {
			share = fmt.Sprintf("%.0f–%.0f%%", 100*lo, 100*hi)
		}
		return fmt.Sprintf("all %d %s runs, in which %s of the tests failed", n, os[0].Side, share)
	}
	var parts []string
	for i, o := range os {
		if i == maxUnreadReasons {
			parts = append(parts, fmt.Sprintf("and %d more", len(os)-i))
			break
		}
		parts = append(parts, o.String())
	}
	return strings.Join(parts, ", ")
}

// contradiction is how a test's head runs weigh against its ledger entry.
type contradiction struct {
	blocks bool    // the entry does not exempt the test
	tail   float64 // the chance of the head's failures at the entry's rate (1 when none)
	say    string  // why it blocks
}

// contradicts weighs a ledgered test's head runs against the flake rate its
// entry records: the entry stops exempting when that rate does not explain
// the head's failures and the head is worse than the base by the gate's own
// tests. Either the family blocks the test (familyBlocks, within its share
// of alpha-pr) and the entry's rate gives the head's failures probability
// at most alpha; or both the entry's rate and the base side's runs (base
// runs and history, by Fisher's exact test, which holds whatever the
// test's true rate) give them probability at most level, the ledger's
// share of alpha-pr over the tests its entries may exempt. So a clean PR loses an exemption
// only within the family's share or the ledger's (the union bound), and a
// quarantined test is blocked only when the head is not the flake its
// entry promises.
func contradicts(e ledger.Entry, side Tally, head []bool, familyBlocks bool, alpha, level float64, candidates int) contradiction {
	t := TallyOf(head)
	p := e.Evidence.PFlakeBaseline
	if t.Failures == 0 || !(p > 0 && p < 1) {
		return contradiction{tail: 1}
	}
	c := contradiction{tail: binomTail(t.Runs, t.Failures, p)}
	switch fisher := fisherTail(side, t.Runs, t.Failures); {
	case familyBlocks && c.tail <= alpha:
		c.blocks = true
		c.say = fmt.Sprintf("head failed %d of %d runs, which the rate of %.2f the entry records gives probability %.2g, at most alpha %.2g, and the gate blocks as worse than the base (below)",
			t.Failures, t.Runs, p, c.tail, alpha)
	case c.tail <= level && fisher <= level:
		c.blocks = true
		c.say = fmt.Sprintf("head failed %d of %d runs, far above the rate of %.2f the entry records (probability %.2g) and above its %d of %d base-side runs (%.2g, Fisher's exact test), each at most %.2g (the ledger's share of alpha-pr, %.2g, over the %d %s its entries may exempt)",
			t.Failures, t.Runs, p, c.tail, side.Failures, side.Runs, fisher, level, ledgerShare, candidates, map[bool]string{true: "test", false: "tests"}[candidates == 1])
	}
	return c
}

// ledgerCandidates is the number of tests a base ledger entry may exempt,
// counted before any head result is read: those an entry names, or names
// a project or leg of, or whose leg it names (Ledger.Exemption). The
// ledger's test spends its share of alpha-pr over them, and gets one only
// when there are some. Over entries instead, one entry for c::n covered
// every c::n [leg] at the whole level: a review measured 0.8% of clean PRs
// blocked by the ledger alone with 10 legs, against its 0.25%.
func ledgerCandidates(in Input) int {
	if in.BaseLedger == nil || in.BaseLedgerUnknown || len(in.BaseLedger.Entries) == 0 {
		return 0
	}
	// The entries' names, and the names they refine ("c::n" for an entry
	// of "c::n [leg]"), so that each test is looked up by its own name
	// and the names it refines: linear in tests and entries.
	named, legOf := map[string]bool{}, map[string]bool{}
	for _, e := range in.BaseLedger.Entries {
		named[e.Test] = true
		for id, ok := model.Unrefined(e.Test); ok; id, ok = model.Unrefined(id) {
			legOf[id] = true
		}
	}
	n := 0
	for _, ti := range in.Tests {
		hit := named[ti.Name] || legOf[ti.Name]
		for id, ok := model.Unrefined(ti.Name); ok && !hit; id, ok = model.Unrefined(id) {
			hit = named[id]
		}
		if hit {
			n++
		}
	}
	return n
}

// binomTail is P(X ≥ k) for X ~ Binomial(n, p).
func binomTail(n, k int, p float64) float64 {
	t := 0.0
	for j := k; j <= n; j++ {
		t += math.Exp(lnChoose(n, j) + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
	}
	return min(t, 1)
}

func hasLabel(labels []string, want string) bool {
	return slices.ContainsFunc(labels, func(l string) bool { return strings.EqualFold(strings.TrimSpace(l), want) })
}
