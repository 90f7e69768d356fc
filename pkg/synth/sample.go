package synth

import (
	"os"
	"path/filepath"
	"time"
)

// Sample is the history bundled in fixtures/history: 30 commits of a small
// Python service's suite, one run per commit, re-run on failure half the
// time, with a few tests of each kind.
func Sample() Spec {
	return Spec{
		Commits: 30, RunsPerCommit: 1, Tests: 60, Seed: 2026,
		Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), Every: 5 * time.Hour,
		Rerun: 0.5,
		Behaviors: map[int]Behavior{
			3:  {Kind: Flaky, P: 0.3},
			11: {Kind: Retried, P: 0.35},
			17: {Kind: Broken, From: 22},
			25: {Kind: Regression, From: 9, To: 11},
			40: {Kind: Flaky, P: 0.2},
			52: {Kind: Flaky, P: 0.04},
		},
		InfraRuns: []int{14},
		Names: map[int][2]string{
			3:  {"tests.test_checkout", "test_payment_times_out_under_load"},
			11: {"tests.test_upload", "test_retry_after_429"},
			17: {"tests.test_inventory", "test_reserve_stock"},
			25: {"tests.test_accounts", "test_login_sets_session"},
			40: {"tests.test_search", "test_results_are_ordered"},
			52: {"tests.test_email", "test_digest_is_sent_once"},
		},
	}
}

// Bench is the benchmark history of the README: 60 commits × 3 runs ×
// 2,000 tests, one file per run, about 44 MB and 360,000 results.
func Bench() Spec {
	return Spec{Commits: 60, RunsPerCommit: 3, Tests: 2000, Seed: 42,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]Behavior{
			7: {Kind: Flaky, P: 0.2}, 70: {Kind: Flaky, P: 0.05}, 700: {Kind: Retried, P: 0.3},
			1200: {Kind: Broken, From: 40}, 1500: {Kind: Regression, From: 20, To: 22},
		}}
}

// BenchFiles returns the files of the Bench history in the system's temp
// directory, writing them on first use.
func BenchFiles() ([]string, error) {
	dir := filepath.Join(os.TempDir(), "flakegate-bench-60x3x2000")
	spec := Bench()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(paths) == spec.Commits*spec.RunsPerCommit {
		return paths, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	return spec.WriteDir(dir)
}
