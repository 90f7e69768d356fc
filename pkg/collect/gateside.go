package collect

import (
	"fmt"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"
)

// Collapsed says, for each run of a gate's side in which most tests ran
// more than once, that several repetitions were read as that one run:
// they share a run_id (a job that stamps GITHUB_RUN_ID into every
// repetition), so the gate would see one run where there were K.
func Collapsed(input string, h *history.History) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, r := range h.Runs {
		if r.Tests > 0 && 2*r.Repeated > r.Tests {
			out = append(out, fmt.Sprintf("%s: %d of the %d tests of run %q (commit %s) ran more than once in it: several repetitions share that run_id and were read as one run, so the gate sees fewer runs than it was given; give each repetition its own run_id, or none",
				input, r.Repeated, r.Tests, r.RunID, model.ShortSHA(r.CommitSHA)))
		}
	}
	return out
}

// GateHistory is base-branch history as the gate may read it, with what it
// left out: the runs of the head's commits (the patch's own failures are
// no baseline for it), runs the base side holds too (counted twice), and
// infrastructure failures by infra (when InfraMinTests is set).
func GateHistory(h, base, head *history.History, infra score.Options) (*history.History, []string) {
	if h == nil {
		return nil, nil
	}
	headCommits, baseRuns := map[string]bool{}, map[string]bool{}
	if head != nil {
		for _, r := range head.Runs {
			if r.CommitSHA != "" {
				headCommits[r.CommitSHA] = true
			}
		}
	}
	if base != nil {
		for _, r := range base.Runs {
			baseRuns[history.RunKey(r.Run)] = true
			for _, src := range r.Parts {
				// A run joined from files (JoinParts): history read
				// from the same files holds each as a run.
				part := r.Run
				part.Source = src
				baseRuns[history.RunKey(part)] = true
			}
		}
	}
	var ofHead, twice, outage int
	out := history.FilterRuns(h, func(r history.Run) bool {
		switch {
		case headCommits[r.CommitSHA]:
			ofHead++
		case baseRuns[history.RunKey(r.Run)]:
			twice++
		case infra.InfraMinTests > 0 && infra.IsInfraRun(r.Tests, r.FailedAttempt):
			outage++
		default:
			return true
		}
		return false
	})
	var notes []string
	if ofHead > 0 {
		notes = append(notes, fmt.Sprintf("history: left out %d runs of the head's commits (the patch's own results are no baseline)", ofHead))
	}
	if twice > 0 {
		notes = append(notes, fmt.Sprintf("history: left out %d runs the base side holds too (they would count twice)", twice))
	}
	if outage > 0 {
		notes = append(notes, fmt.Sprintf("history: left out %d runs in which more than %.0f%% of the tests failed (infrastructure failures)", outage, infra.InfraThreshold*100))
	}
	if len(notes) == 0 {
		return h, nil
	}
	return out, notes
}
