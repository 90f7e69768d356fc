package synth

import "time"

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
