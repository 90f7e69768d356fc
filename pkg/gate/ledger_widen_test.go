package gate

import (
	"fmt"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/sprt"
)

// TestWidenThenBreak: PR 1 "refreshes" a quarantined flake's evidence,
// keeping its test and signature but recording a rate of 0.99 (p1
// 0.999999, so one green replays as FLAKE). No label, no declaration: it
// passed with no ledger finding. Merged, the entry is the base's, and PR 2
// breaks the test outright (10 of 10 head runs, the flake's signature):
// exempt, verdict pass, where the honest entry (0.1) blocks it as
// contradicted. PR 1 must not pass.
func TestWidenThenBreak(t *testing.T) {
	const sig = "sha256:9f2c4e1a"
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	mk := func(tr sprt.Test, outcomes string) ledger.Entry {
		return ledger.Entry{
			Test: "tests/test_upload.py::test_retry_after_429", Signature: sig, Owner: "@storage-team",
			Issue: "https://github.com/acme/shop/issues/12", Replacement: "tests/test_upload.py::test_retry_header_parsed",
			Evidence:        ledger.EvidenceFrom(tr, tr.Run(runs(outcomes), 0)),
			ReleaseTriggers: []ledger.Trigger{ledger.ScopeFileChanged, ledger.SignatureChanged},
		}
	}
	honest := mk(sprt.Test{P0: 0.1, P1: 0.9, Alpha: 0.05, Beta: 0.05}, "FPPP")
	wide := mk(sprt.Test{P0: 0.99, P1: 0.999999, Alpha: 0.05, Beta: 0.05}, "P")
	suite := func(head string) []TestInput {
		ts := []TestInput{{Name: honest.Test, Base: Tally{5, 1}, History: Tally{150, 15}, Head: runs(head), Signatures: []string{sig}}}
		for i := range 300 {
			ts = append(ts, TestInput{Name: fmt.Sprintf("z::%03d", i), Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PPPPP")})
		}
		return ts
	}
	one := func(e ledger.Entry) *ledger.Ledger { return &ledger.Ledger{Version: 1, Entries: []ledger.Entry{e}} }

	pr2 := func(base ledger.Entry) Result {
		res, err := Evaluate(Input{Tests: suite("FFFFFFFFFF"), BaseLedger: one(base), HeadLedger: one(base), Now: now}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := pr2(honest); res.Verdict != VerdictBlock {
		t.Fatalf("with the honest entry the broken test must block: %s %v", res.Verdict, res.Reasons)
	}
	if res := pr2(wide); res.Verdict == VerdictPass {
		t.Logf("with the widened entry on base, the broken test is %s: %.200s", res.Tests[0].Decision, res.Tests[0].Reason)
	}
	res, err := Evaluate(Input{Tests: suite("PPPPP"), BaseLedger: one(honest), HeadLedger: one(wide), Now: now}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictBlock {
		t.Errorf("PR 1 (the entry widened, no label): verdict %s, ledger findings %v; want block", res.Verdict, res.Ledger)
	}
}

// TestGateEvidenceAdmitted: the evidence the gate records for a test
// (gate.json's sprt), written into a new entry as the README says, is
// admitted by the stricter rules: the gate's SPRT, at a rate its base side
// allows (the floor of 0.05 included).
func TestGateEvidenceAdmitted(t *testing.T) {
	for _, tc := range []struct {
		base, history Tally
		head          string
	}{
		{Tally{5, 1}, Tally{200, 0}, "PPPPP"}, // estimate below the floor
		{Tally{10, 3}, Tally{}, "PPPPP"},
		{Tally{5, 2}, Tally{150, 45}, "PFPPP"},
	} {
		in := Input{Tests: []TestInput{{Name: "c::t", Base: tc.base, History: tc.history, Head: runs(tc.head)}}}
		res, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Tests[0]
		if r.SPRT == nil || r.SPRT.Decision != sprt.Flake {
			t.Fatalf("%+v: no FLAKE evidence: %+v", tc, r.SPRT)
		}
		e := ledger.Entry{
			Test: r.Name, Signature: "sha256:0123456789abcdef", Owner: "@team", Issue: "https://example.com/1", Replacement: "c::t2",
			Evidence:        ledger.Evidence{PFlakeBaseline: r.SPRT.P0, PRegression: r.SPRT.P1, Alpha: res.Params.Alpha, Beta: res.Params.Beta, Trace: r.SPRT.Trace, Decision: r.SPRT.Decision},
			ReleaseTriggers: []ledger.Trigger{ledger.ScopeFileChanged},
		}
		in.BaseLedger, in.HeadLedger = &ledger.Ledger{Version: 1}, &ledger.Ledger{Version: 1, Entries: []ledger.Entry{e}}
		in.Labels, in.PRBody = []string{DefaultApprovalLabel}, "Test-Changes: quarantine c::t"
		res, err = Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Ledger {
			if f.Severity == ledger.Error {
				t.Errorf("%+v: the gate's own evidence refused: %v", tc, f)
			}
		}
	}
}
