package gate

import (
	"fmt"
	"math"

	"github.com/flakegate/flakegate/pkg/internal/wilson"
)

// The honest baseline failure rate p0.
//
// K base repetitions detect; they do not estimate (article B): zero failures
// in five runs is compatible with any rate up to 0.43 (Wilson 95% upper
// bound). So p0 pools every base-side observation the gate has, the K base
// repetitions and the base-branch history, and states how it got there:
//
//   - Pooling. Runs and failures of the K base repetitions and of the history
//     are added with equal weight. History should be a recent window of the
//     base branch in which the test's failure rate was stationary; a test
//     that was broken for a stretch inflates it.
//   - Prior. The point estimate is the posterior mean under Jeffreys'
//     Beta(½, ½) prior, (failures + ½) / (runs + 1). It is never 0 and never 1,
//     and with many runs it converges to the observed rate. It is the usual
//     non-informative choice for a binomial rate and adds half a failure, not
//     the full failure that Laplace's rule adds (which would inflate the rate of
//     a test seen in five runs to 1/7).
//   - Floor. The SPRT uses max(posterior mean, P0Floor) with P0Floor = 0.05.
//     Article C notes that suites with p0 < 0.05 gain little from the test,
//     and history from CI hosts cannot certify lower rates for the pinned
//     gate host. The floor also keeps article C's rule "a red buys exactly one
//     more rerun": the fail step ln(0.9/0.05) = 2.890 stays below A = 2.944,
//     so a single red never decides REGRESSION on its own, whereas an estimate
//     of 0.01 would turn every red into a veto.
//
// The result also carries the Wilson 95% upper bound, the rate the data
// cannot rule out, so that a reader sees how much "clean" means.

// P0Floor is the lowest baseline failure rate the SPRT uses.
const P0Floor = 0.05

// P0 is the baseline failure rate used for one test, with what it rests on.
type P0 struct {
	// Estimate is the base rate the test is judged against: max(Mean,
	// P0Floor) for a test the table decides, the suite prior's posterior
	// mean for one the calibrated statistic judges. The recorded SPRT's
	// H0 is max(Estimate, P0Floor), in its result (sprt.Result.P0).
	Estimate float64 `json:"estimate"`
	Source   string  `json:"source"`   // what the estimate rests on, in words
	Runs     int     `json:"runs"`     // pooled base runs (K repetitions + history)
	Failures int     `json:"failures"` // pooled base failures
	Mean     float64 `json:"mean"`     // Jeffreys posterior mean before the floor
	Upper    float64 `json:"upper"`    // Wilson 95% upper bound on the pooled rate (1 with no runs)
}

// EstimateP0 pools the K base repetitions and the base-branch history into
// an honest baseline failure rate; see the package notes above.
func EstimateP0(base, history Tally) P0 {
	runs := base.Runs + history.Runs
	fails := base.Failures + history.Failures
	mean := (float64(fails) + 0.5) / (float64(runs) + 1)
	p := P0{
		Estimate: math.Max(mean, P0Floor),
		Runs:     runs,
		Failures: fails,
		Mean:     mean,
		Upper:    WilsonUpper(fails, runs),
	}
	var from string
	switch {
	case base.Runs > 0 && history.Runs > 0:
		from = fmt.Sprintf("%d/%d base runs + %d/%d history runs failed", base.Failures, base.Runs, history.Failures, history.Runs)
	case base.Runs > 0:
		from = fmt.Sprintf("%d/%d base runs failed, no base-branch history", base.Failures, base.Runs)
	case history.Runs > 0:
		from = fmt.Sprintf("%d/%d history runs failed, no base repetitions", history.Failures, history.Runs)
	default:
		from = "no base runs and no history"
	}
	if mean < P0Floor {
		p.Source = fmt.Sprintf("floor %.2f (Jeffreys posterior mean %.4f; %s)", P0Floor, mean, from)
	} else {
		p.Source = fmt.Sprintf("Jeffreys Beta(1/2,1/2) posterior mean (%s)", from)
	}
	return p
}

// WilsonUpper returns the upper end of the Wilson 95% score interval for
// failures out of runs; 1 when there are no runs (wilson.Upper).
func WilsonUpper(failures, runs int) float64 { return wilson.Upper(failures, runs) }
