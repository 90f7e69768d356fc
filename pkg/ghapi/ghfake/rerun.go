package ghfake

import "fmt"

// Rerun re-runs run id as GitHub does when the whole run, or its failed
// jobs, are re-run and the new attempt completes: the run keeps its id,
// head commit and created_at; its run_attempt goes one up; run_started_at
// is the new attempt's (renderings start attempt n ten minutes after the
// run's creation times n-1); conclusion is the new attempt's, and the
// attempt that was latest keeps the conclusion it had (GET
// …/attempts/{n} shows it). The artifacts stay the run's, whichever
// attempt uploaded them: add the new attempt's with AddArtifact. It
// returns the run as it now is, and an error when there is no such run
// or it has not completed (GitHub answers 403 "This workflow is already
// running").
func (r *Repo) Rerun(id int64, conclusion string) (Run, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, run := range r.state().runs {
		if run.ID != id {
			continue
		}
		if run.Status != "completed" {
			return Run{}, fmt.Errorf("run %d is %s, not completed", id, run.Status)
		}
		for len(run.AttemptConclusions) < run.Attempts-1 {
			run.AttemptConclusions = append(run.AttemptConclusions, "") // "failure", as Run documents
		}
		run.AttemptConclusions = append(run.AttemptConclusions[:run.Attempts-1], run.Conclusion)
		run.Attempts++
		run.Conclusion = conclusion
		out := *run
		return out, nil
	}
	return Run{}, fmt.Errorf("no run %d", id)
}
