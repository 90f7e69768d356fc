// Package sprt implements Wald's sequential probability ratio test on
// Bernoulli test runs, as flakegate's gate and quarantine ledger use it
// (SEEDS.md, article C).
//
// H0 ("flake") says a run fails with probability P0, the failure rate
// measured on the base. H1 ("regression") says it fails with probability P1
// (0.9 by default). Each run adds a step to the log-likelihood ratio (LLR):
//
//	pass: ln(1−P1) − ln(1−P0)
//	fail: ln(P1) − ln(P0)
//
// The test decides REGRESSION once the LLR reaches A = ln((1−β)/α), FLAKE once
// it falls to B = ln(β/(1−α)), and says CONTINUE in between. With
// α = β = 0.05 the bounds are ±2.944.
//
// The package is pure: no I/O, no clock, no randomness.
package sprt

import (
	"encoding/json"
	"fmt"
	"math"
)

// Decision is the verdict of the test after some runs.
type Decision string

// The three verdicts of the SPRT.
const (
	Regression Decision = "REGRESSION" // LLR ≥ A: the failure rate is p1, not p0
	Flake      Decision = "FLAKE"      // LLR ≤ B: the failures are the baseline flake
	Continue   Decision = "CONTINUE"   // B < LLR < A: more runs are needed
)

// Valid reports whether d is one of the three verdicts.
func (d Decision) Valid() bool { return d == Regression || d == Flake || d == Continue }

// Defaults from the seed (article C).
const (
	DefaultP1    = 0.9
	DefaultAlpha = 0.05
	DefaultBeta  = 0.05
)

// Test holds the parameters of one SPRT.
type Test struct {
	P0    float64 // failure rate under H0 (the flake baseline)
	P1    float64 // failure rate under H1 (the regression)
	Alpha float64 // tolerated rate of false REGRESSION verdicts
	Beta  float64 // tolerated rate of missed regressions (false FLAKE verdicts)
}

// Validate checks that every parameter lies in (0, 1), that P0 < P1 and that
// α + β < 1, the conditions under which the bounds are ordered and each step
// moves the LLR the right way.
func (t Test) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"p0", t.P0}, {"p1", t.P1}, {"alpha", t.Alpha}, {"beta", t.Beta}} {
		if !(p.v > 0 && p.v < 1) { // also rejects NaN
			return fmt.Errorf("%s = %v: must be strictly between 0 and 1", p.name, p.v)
		}
	}
	if t.P0 >= t.P1 {
		return fmt.Errorf("p0 = %v must be below p1 = %v", t.P0, t.P1)
	}
	if t.Alpha+t.Beta >= 1 {
		return fmt.Errorf("alpha + beta = %v must be below 1", t.Alpha+t.Beta)
	}
	return nil
}

// Bounds returns Wald's decision bounds: upper A = ln((1−β)/α) and lower
// B = ln(β/(1−α)).
func (t Test) Bounds() (upper, lower float64) {
	return math.Log((1 - t.Beta) / t.Alpha), math.Log(t.Beta / (1 - t.Alpha))
}

// Steps returns the LLR increments of a passing and of a failing run.
func (t Test) Steps() (pass, fail float64) {
	return math.Log(1-t.P1) - math.Log(1-t.P0), math.Log(t.P1) - math.Log(t.P0)
}

// Decide maps a cumulative LLR to a verdict using the bounds.
func (t Test) Decide(llr float64) Decision {
	upper, lower := t.Bounds()
	switch {
	case llr >= upper:
		return Regression
	case llr <= lower:
		return Flake
	default:
		return Continue
	}
}

// RegressionAt returns the index of the first step of trace whose
// cumulative LLR reaches the REGRESSION bound, or -1. A trace that reaches
// it and goes on is REGRESSION whatever it ends at: Wald's test stops at the
// first bound reached, and more runs until the LLR falls back are the
// rerun-until-green the SPRT replaces (SEEDS.md, article C). A single look
// after a batch (Run with firstLook <= 0) keeps to that too.
func (t Test) RegressionAt(trace []Step) int {
	upper, _ := t.Bounds()
	for i, s := range trace {
		if s.Cumulative >= upper {
			return i
		}
	}
	return -1
}

// Step is one run in an LLR trace. It encodes in JSON (and in the ledger) as
// the triple [passed, step, cumulative], as in the seed's trace.
type Step struct {
	Passed     bool
	Step       float64
	Cumulative float64
}

// MarshalJSON encodes the step as [passed, step, cumulative].
func (s Step) MarshalJSON() ([]byte, error) {
	return json.Marshal([3]any{s.Passed, s.Step, s.Cumulative})
}

// UnmarshalJSON decodes [passed, step, cumulative].
func (s *Step) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("trace step: %w", err)
	}
	if len(raw) != 3 {
		return fmt.Errorf("trace step: want [passed, step, cumulative], got %d elements", len(raw))
	}
	if err := json.Unmarshal(raw[0], &s.Passed); err != nil {
		return fmt.Errorf("trace step passed: %w", err)
	}
	if err := json.Unmarshal(raw[1], &s.Step); err != nil {
		return fmt.Errorf("trace step step: %w", err)
	}
	if err := json.Unmarshal(raw[2], &s.Cumulative); err != nil {
		return fmt.Errorf("trace step cumulative: %w", err)
	}
	return nil
}

// Result is the outcome of running the test over a sequence of runs.
type Result struct {
	// P0 and P1 are the rates the test weighed (Test.P0, Test.P1): a
	// ledger entry's p_flake_baseline and p_regression, for its trace to
	// replay.
	P0       float64  `json:"p0"`
	P1       float64  `json:"p1"`
	Decision Decision `json:"decision"`
	LLR      float64  `json:"llr"`   // cumulative LLR at the decision (or after the last run)
	Trace    []Step   `json:"trace"` // one step per run used, in run order
}

// Run replays outcomes (true = the run passed) in order and returns the
// verdict with its trace.
//
// The test looks at the LLR after run firstLook and after every run from then
// on, and stops at the first look whose LLR crosses a bound; later runs are
// not used and not in the trace. firstLook = 1 is Wald's classic test, which
// looks after every run. firstLook <= 0 (or beyond the data) means a single
// look after all the runs given: the gate uses that for a batch of K
// repetitions that were all run before anyone looked. Wald's error bounds
// hold for any such look schedule, because the likelihood ratio is a
// martingale under each hypothesis (Ville's inequality).
//
// The caller must have validated t.
func (t Test) Run(outcomes []bool, firstLook int) Result {
	pass, fail := t.Steps()
	if firstLook <= 0 || firstLook > len(outcomes) {
		firstLook = len(outcomes)
	}
	r := Result{P0: t.P0, P1: t.P1, Decision: Continue, Trace: make([]Step, 0, len(outcomes))}
	for i, passed := range outcomes {
		s := fail
		if passed {
			s = pass
		}
		r.LLR += s
		r.Trace = append(r.Trace, Step{Passed: passed, Step: s, Cumulative: r.LLR})
		if i+1 >= firstLook {
			if d := t.Decide(r.LLR); d != Continue {
				if t.RegressionAt(r.Trace) >= 0 {
					d = Regression // reached before this look
				}
				r.Decision = d
				return r
			}
		}
	}
	if i := t.RegressionAt(r.Trace); i >= 0 {
		// Reached before the look: the look's FLAKE or CONTINUE would be
		// a green after a regression.
		r.Decision = Regression
	}
	return r
}

// GreensToFlake returns how many consecutive passes take the LLR from 0 to the
// lower bound B. It returns ok = false when passes never get there (P0 ≥ P1).
// The seed: for P1 = 0.9 one green never reaches B when P0 ≤ 0.5 and two
// always do; P0 = 0.8 needs five.
func (t Test) GreensToFlake() (n int, ok bool) {
	pass, _ := t.Steps()
	_, lower := t.Bounds()
	return stepsTo(lower, pass)
}

// FailsToRegression returns how many consecutive failures take the LLR from 0
// to the upper bound A, with ok = false when failures never get there.
func (t Test) FailsToRegression() (n int, ok bool) {
	_, fail := t.Steps()
	upper, _ := t.Bounds()
	return stepsTo(upper, fail)
}

// maxSteps caps stepsTo so that a step of nearly zero cannot loop for long.
const maxSteps = 1 << 20

func stepsTo(bound, step float64) (int, bool) {
	if step == 0 || math.Signbit(step) != math.Signbit(bound) || math.IsNaN(step) {
		return 0, false
	}
	sum := 0.0
	for n := 1; n <= maxSteps; n++ {
		sum += step
		if math.Abs(sum) >= math.Abs(bound) {
			return n, true
		}
	}
	return 0, false
}

// ExpectedRuns returns Wald's approximations of the average number of runs the
// test needs to decide, when H0 is true and when H1 is true:
//
//	E0[N] ≈ (α·A + (1−α)·B) / E0[step]
//	E1[N] ≈ ((1−β)·A + β·B) / E1[step]
//
// where E_i[step] is the expected LLR increment of one run under H_i. Either
// is +Inf when the steps do not drift towards the right bound (P0 ≥ P1).
func (t Test) ExpectedRuns() (underH0, underH1 float64) {
	pass, fail := t.Steps()
	upper, lower := t.Bounds()
	d0 := t.P0*fail + (1-t.P0)*pass
	d1 := t.P1*fail + (1-t.P1)*pass
	underH0, underH1 = math.Inf(1), math.Inf(1)
	if d0 < 0 {
		underH0 = (t.Alpha*upper + (1-t.Alpha)*lower) / d0
	}
	if d1 > 0 {
		underH1 = ((1-t.Beta)*upper + t.Beta*lower) / d1
	}
	return underH0, underH1
}
