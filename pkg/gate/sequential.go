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
// evaluation gets a share of alpha-pr: by the union bound the chance that
// any of them blocks a clean PR stays within alpha-pr.
//
// The shares grow with the pairs read (LookAlpha): 5/35, 10/35 and 20/35 of
// alpha-pr after 5, 10 and 20 pairs. A patch's induced flake from a stable
// test shows in the first pairs, at a count no clean PR reaches, and needs
// little of alpha-pr; a test made flakier, or a flake among a tail of
// near-stable tests, shows only over many pairs, where the calibration also
// spends half (fitMargin). Against equal thirds, on the seeded PR
// experiment: a test of a tail-heavy suite turned flaky was blocked in
// 95.7% of PRs against 90.7%, a suite of 35 tests without history 86.9%
// against 79.1%, a test made flakier (0.03 to 0.3) 47.3% against 44.2%;
// clean PRs failed 1.2–4.0% against 0.5–3.7%.

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

// LookAlpha returns the share of alpha a driver's look after pairs pairs
// takes, with looks from SequentialLooks: alpha × looks[i] / Σ looks, where
// looks[i] is the first scheduled look at or after pairs (the last one past
// them all, as when a time limit stops the driver between looks). Each of
// the driver's looks falls to another i, so the shares it spends sum to at
// most alpha.
func LookAlpha(alpha float64, looks []int, pairs int) float64 {
	if len(looks) == 0 {
		return alpha
	}
	sum, at := 0, len(looks)-1
	for i, n := range looks {
		sum += n
		if n >= pairs && i < at {
			at = i
		}
	}
	return alpha * float64(looks[at]) / float64(sum)
}
