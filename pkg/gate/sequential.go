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
// few points, doubling the pairs each time (5, 10, 20), and spends
// alpha-pr over them in proportion to the pairs each adds (Lan and DeMets'
// linear spending function: a quarter at 5 of 20 pairs, a quarter at 10,
// a half at 20): by the union bound the chance that any of them blocks a
// clean PR stays within alpha-pr. Spending in proportion rather than in
// equal thirds keeps most of the budget for the last look, where a test
// made flakier has the runs to show it, while a regression needs little
// budget to block at the first (made flakier 0.03 → 0.3: 38% → 43%
// blocked; B's induced flakes 92.5% → 95.5%; the same seeded PRs).

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

// LookAlpha is the share of alpha a driver with these looks spends at the
// look after pairs pairs: alpha × (its pairs − the previous look's) / the
// last look's. A look between two of the schedule (a driver stopped by its
// time limit) takes the share of the next, which it replaces; one past
// the last takes the last's.
func LookAlpha(alpha float64, looks []int, pairs int) float64 {
	if len(looks) == 0 {
		return alpha
	}
	prev := 0
	for _, n := range looks {
		if n >= pairs {
			return alpha * float64(n-prev) / float64(looks[len(looks)-1])
		}
		prev = n
	}
	last := looks[len(looks)-1]
	if len(looks) > 1 {
		prev = looks[len(looks)-2]
	} else {
		prev = 0
	}
	return alpha * float64(last-prev) / float64(last)
}
