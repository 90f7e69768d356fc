package gate

import "fmt"

// Tally counts the pass/fail results of one test on one side. Skipped results
// are not counted: they are no evidence. Runs counts passes and failures.
type Tally struct {
	Runs     int `json:"runs"`
	Failures int `json:"failures"`
}

// Passes returns Runs − Failures.
func (t Tally) Passes() int { return t.Runs - t.Failures }

func (t Tally) validate() error {
	if t.Runs < 0 || t.Failures < 0 || t.Failures > t.Runs {
		return fmt.Errorf("tally %d failures in %d runs: want 0 <= failures <= runs", t.Failures, t.Runs)
	}
	return nil
}

// TallyOf counts outcomes (true = passed).
func TallyOf(outcomes []bool) Tally {
	t := Tally{Runs: len(outcomes)}
	for _, passed := range outcomes {
		if !passed {
			t.Failures++
		}
	}
	return t
}

// Class is the seed's classification of one side of one test (article B).
type Class string

// The four classes.
const (
	Untested Class = "untested" // no pass or fail results
	Clean    Class = "clean"    // no failures
	Broken   Class = "broken"   // no passes
	Flaky    Class = "flaky"    // both
)

// Classify applies article B's rule to a tally.
func Classify(t Tally) Class {
	switch {
	case t.Runs == 0:
		return Untested
	case t.Failures == 0:
		return Clean
	case t.Failures == t.Runs:
		return Broken
	default:
		return Flaky
	}
}

// classOf is Classify for a side of which retried runs failed, then
// passed on a retry inside the run: they count as failures for the rate,
// but the test passed in them, so a side whose every run failed that way
// is flaky, not broken (article B: broken is no passes).
func classOf(t Tally, retried int) Class {
	c := Classify(t)
	if c == Broken && retried > 0 {
		return Flaky
	}
	return c
}

// Bucket names the (base class, head class) pair, as in DESIGN.md's table.
type Bucket string

// The buckets of DESIGN.md's table, one per cell, plus NotRun for a test
// that has no results on either side.
const (
	NewOK              Bucket = "new test ok"                     // untested → clean
	NewFlaky           Bucket = "new flaky test"                  // untested → flaky: block
	NewFailing         Bucket = "new failing test"                // untested → broken: block
	OK                 Bucket = "ok"                              // clean → clean
	PatchInducedFlake  Bucket = "patch-induced flake"             // clean → flaky: block
	Regression         Bucket = "regression"                      // clean → broken: block
	Removed            Bucket = "removed"                         // any → untested
	FlakeNotReproduced Bucket = "flake not reproduced"            // flaky → clean (info)
	PreExistingFlake   Bucket = "pre-existing flake"              // flaky → flaky: pass unless the SPRT says REGRESSION
	FlakyToBroken      Bucket = "flaky base, broken head"         // flaky → broken: the SPRT decides
	Fixed              Bucket = "patch fixes it"                  // broken → clean
	BaseRed            Bucket = "base red: attribution undefined" // broken → flaky or broken: invalid
	NotRun             Bucket = "not run"                         // untested → untested
	// Not compared, outside the table's cells:
	Unstable    Bucket = "unstable id"        // in some base runs only and in no head run: not evidence of a removal
	HeadLeftOut Bucket = "head runs left out" // ran on head only in runs left out as infrastructure failures
	// In the base runs, then in none of the base branch's later runs, nor
	// on head: the branch dropped it after the base commit (a pull
	// request's base.sha goes stale), not the patch.
	GoneFromBase Bucket = "removed on the base branch"
)

// BucketOf maps a (base, head) pair of classes to its bucket.
func BucketOf(base, head Class) Bucket {
	if head == Untested {
		if base == Untested {
			return NotRun
		}
		return Removed
	}
	switch base {
	case Untested:
		return map[Class]Bucket{Clean: NewOK, Flaky: NewFlaky, Broken: NewFailing}[head]
	case Clean:
		return map[Class]Bucket{Clean: OK, Flaky: PatchInducedFlake, Broken: Regression}[head]
	case Flaky:
		return map[Class]Bucket{Clean: FlakeNotReproduced, Flaky: PreExistingFlake, Broken: FlakyToBroken}[head]
	default: // Broken
		if head == Clean {
			return Fixed
		}
		return BaseRed
	}
}
