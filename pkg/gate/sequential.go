package gate

// A sequential driver's looks at the whole PR.
//
// The calibration (family.go) bounds the chance that a clean PR is blocked
// at any look at the head runs, given the base side as it stands. A driver
// that adds pairs until nothing is pending re-evaluates with a base side
// that has grown, and each evaluation is a new chance: a flake that passed
// its first base runs keeps being run while its head runs fail, and the
// pairs that follow are as likely to leave its base clean as to catch it.
// Evaluated after every pair up to 20, clean PRs failed 10% of the time in
// a suite of 2,000 tests without history and 14–20% in one of 35, although
// every single evaluation kept within its bound. So a driver evaluates at
// few points, doubling the pairs each time (5, 10, 20), and each
// evaluation gets an equal share of alpha-pr: by the union bound the chance
// that any of them blocks a clean PR stays within alpha-pr.

// SequentialLooks returns the pair counts at which a driver that starts
// with initial pairs and may run up to budget evaluates: initial, then
// doubling, and the budget last.
func SequentialLooks(initial, budget int) []int {
	initial = max(1, min(initial, budget))
	var looks []int
	for n := initial; n < budget; n *= 2 {
		looks = append(looks, n)
	}
	return append(looks, budget)
}
