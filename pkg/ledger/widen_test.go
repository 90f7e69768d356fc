package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/sprt"
)

// TestRegressionBoundOnTheReplay: three failures at p0 = 0.33728 take
// the LLR to 2.94444, just past A = ln(0.95/0.05) = 2.944439, so Wald's test
// (and the gate's sprt.Run, and EvidenceFrom) says REGRESSION there.
// Recorded to three decimals, as EvidenceFrom writes, the cumulative is
// 2.944, within Tolerance of the replay but below A: the check that a trace
// reached REGRESSION read the recorded value and accepted the four greens
// after it as FLAKE evidence.
func TestRegressionBoundOnTheReplay(t *testing.T) {
	tr := sprt.Test{P0: 0.33728, P1: 0.9, Alpha: 0.05, Beta: 0.05}
	outcomes := []bool{false, false, false, true, true, true, true}
	if got := tr.Run(outcomes, 0).Decision; got != sprt.Regression {
		t.Fatalf("sprt.Run says %s; the example needs REGRESSION", got)
	}
	e := seedEntry()
	e.Evidence = Evidence{PFlakeBaseline: 0.33728, PRegression: 0.9, Alpha: 0.05, Beta: 0.05, Decision: sprt.Flake,
		Trace: []sprt.Step{
			{Passed: false, Step: 0.981, Cumulative: 0.981}, {Passed: false, Step: 0.981, Cumulative: 1.963}, {Passed: false, Step: 0.981, Cumulative: 2.944},
			{Passed: true, Step: -1.891, Cumulative: 1.053}, {Passed: true, Step: -1.891, Cumulative: -0.838}, {Passed: true, Step: -1.891, Cumulative: -2.729}, {Passed: true, Step: -1.891, Cumulative: -4.620},
		}}
	ps := Verify(withEntries(e))
	if len(ps) == 0 || !strings.Contains(ps[len(ps)-1].Message, "REGRESSION bound at run 3") {
		t.Errorf("Verify = %v; want the decision refused: the replay reaches REGRESSION at run 3", ps)
	}
}

// TestEvidenceWidened: a PR that keeps an entry (same test and
// signature) but rewrites what it exempts widens the exemption as surely
// as extending its expiry, which needs the approval label. It raised the
// recorded flake rate (0.3 → 0.99, with p1 0.999999 so that one green is
// FLAKE), or dropped scope_file_changed, with no finding at all.
func TestEvidenceWidened(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	seed := seedEntry()
	obs := map[string]Observation{seed.Test: {BaseFailures: 15, BaseRuns: 155, HeadRuns: 5}}
	wideTest := sprt.Test{P0: 0.99, P1: 0.999999, Alpha: 0.05, Beta: 0.05}
	wide := seedEntry()
	wide.Evidence = EvidenceFrom(wideTest, wideTest.Run([]bool{true}, 0))
	if ps := Verify(withEntries(wide)); len(ps) != 0 {
		t.Fatalf("the widened entry must replay: %v", ps)
	}
	fewer := seedEntry()
	fewer.ReleaseTriggers = []Trigger{SignatureChanged}
	for _, tc := range []struct {
		name string
		head Entry
	}{{"rate raised", wide}, {"release trigger dropped", fewer}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := Check(withEntries(seed), withEntries(tc.head), Context{Now: now, Observed: obs, ApprovalLabel: "flaky-ledger-approved"})
			errs := 0
			for _, f := range fs {
				if f.Severity == Error {
					errs++
				}
			}
			if errs == 0 {
				t.Errorf("no error without the approval label: %v", fs)
			}
			if tc.name == "release trigger dropped" {
				for _, f := range Check(withEntries(seed), withEntries(tc.head), Context{Now: now, Observed: obs, Approved: true}) {
					if f.Severity == Error {
						t.Errorf("approved: %v", f)
					}
				}
			}
		})
	}
}

// TestEvidenceParameters: `ledger verify` checks the arithmetic of a
// trace under the SPRT the entry itself names, and the gate asked no more
// of new evidence. An SPRT of its own choosing (beta 0.9, or p1 0.999999)
// makes a single green FLAKE evidence, and a recorded rate far above what
// the base side shows (0.99 against 15 of 155) exempts a test broken
// outright once merged. New evidence must be the gate's SPRT (p1, alpha,
// beta as configured; Context.SPRT, the seed's defaults when zero) at a rate the base side allows (at most the Wilson
// 95% upper bound of its failures, SEEDS.md article B).
func TestEvidenceParameters(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	mk := func(tr sprt.Test, outcomes ...bool) Entry {
		e := seedEntry()
		e.Test, e.Signature = "tests/test_ws.py::test_reconnect", "sha256:0123456789ab"
		e.Evidence = EvidenceFrom(tr, tr.Run(outcomes, 0))
		return e
	}
	obs := map[string]Observation{"tests/test_ws.py::test_reconnect": {BaseFailures: 15, BaseRuns: 155, HeadRuns: 5}}
	for _, tc := range []struct {
		name string
		e    Entry
		want string
	}{
		{"beta 0.9", mk(sprt.Test{P0: 0.1, P1: 0.9, Alpha: 0.05, Beta: 0.9}, true), "beta"},
		{"p1 0.999999", mk(sprt.Test{P0: 0.1, P1: 0.999999, Alpha: 0.05, Beta: 0.05}, true), "p_regression"},
		{"rate above the base side's", mk(sprt.Test{P0: 0.8, P1: 0.9, Alpha: 0.05, Beta: 0.05}, true, true, true, true, true, true), "p_flake_baseline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ps := Verify(withEntries(tc.e)); len(ps) != 0 {
				t.Fatalf("replays: %v", ps)
			}
			fs := Check(nil, withEntries(tc.e), Context{Now: now, Observed: obs, Approved: true})
			if len(fs) == 0 || fs[0].Rule != RuleEvidence || !strings.Contains(fs[0].Message, tc.want) {
				t.Errorf("findings %v; want an evidence error naming %s", fs, tc.want)
			}
		})
	}
	// The gate's own evidence for that test passes.
	honest := mk(sprt.Test{P0: 0.1, P1: 0.9, Alpha: 0.05, Beta: 0.05}, true, true)
	if fs := Check(nil, withEntries(honest), Context{Now: now, Observed: obs, Approved: true}); len(fs) != 0 {
		t.Errorf("honest evidence: %v", fs)
	}
}
