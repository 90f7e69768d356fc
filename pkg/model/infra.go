package model

// InfraRule says which runs are infrastructure failures: a run of at least
// MinTests tests in which more than Threshold of them failed every attempt.
// Such a run says nothing about any one test. The report, the base-branch
// history and the gate's own repetitions all use it.
type InfraRule struct {
	Threshold float64
	MinTests  int
}

// DefaultInfra is the rule's default: half of at least 5 tests.
var DefaultInfra = InfraRule{Threshold: 0.5, MinTests: 5}

// Is reports whether a run of tests tests, failed of them failed, is an
// infrastructure failure.
func (r InfraRule) Is(tests, failed int) bool {
	return tests >= r.MinTests && float64(failed) > r.Threshold*float64(tests)
}
