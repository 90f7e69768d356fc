package gate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/wilson"
	"github.com/flakegate/flakegate/pkg/ledger"
	"github.com/flakegate/flakegate/pkg/sprt"
)

const reviewSig = "sha256:9f2c4e1a0b"

// reviewSuite is one flaky test plus stable tests, as a PR's gate sees it.
func reviewSuite(name string, base, history Tally, head string, stable int) []TestInput {
	ts := []TestInput{{Name: name, Base: base, History: history, Head: runs(head), Signatures: []string{reviewSig}}}
	for i := range stable {
		ts = append(ts, TestInput{Name: fmt.Sprintf("z::%03d", i), Base: Tally{base.Runs, 0}, History: Tally{history.Runs, 0}, Head: runs(strings.Repeat("P", len(head)))})
	}
	return ts
}

// entryFrom writes the entry the README's steps 1-3 give from a gate.json
// test result: sprt's p0, p1, decision and trace as written, alpha and
// beta from params.
func entryFrom(t *testing.T, res Result, name string) ledger.Entry {
	t.Helper()
	for _, r := range res.Tests {
		if r.Name != name {
			continue
		}
		if r.SPRT == nil || r.SPRT.Decision != sprt.Flake {
			t.Fatalf("%s: no FLAKE evidence in gate.json: %+v", name, r.SPRT)
		}
		return ledger.Entry{
			Test: name, Signature: reviewSig, Owner: "@team", Issue: "https://example.com/1", Replacement: name + "_replacement",
			Evidence: ledger.Evidence{PFlakeBaseline: r.SPRT.P0, PRegression: r.SPRT.P1, Alpha: res.Params.Alpha, Beta: res.Params.Beta,
				Trace: r.SPRT.Trace, Decision: r.SPRT.Decision},
			ReleaseTriggers: []ledger.Trigger{ledger.ScopeFileChanged, ledger.SignatureChanged},
		}
	}
	t.Fatalf("%s not in the result", name)
	return ledger.Entry{}
}

// addingPR evaluates the pull request that adds e, approved and declared,
// on its own runs, and returns the result.
func addingPR(t *testing.T, tests []TestInput, e ledger.Entry) Result {
	t.Helper()
	res, err := Evaluate(Input{Tests: tests, BaseLedger: &ledger.Ledger{Version: 1}, HeadLedger: &ledger.Ledger{Version: 1, Entries: []ledger.Entry{e}},
		Labels: []string{DefaultApprovalLabel}, PRBody: "Test-Changes: quarantine " + e.Test, Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func ledgerErrors(res Result) []string {
	var out []string
	for _, f := range res.Ledger {
		if f.Severity == ledger.Error {
			out = append(out, f.Rule+": "+f.Message)
		}
	}
	return out
}

// TestEvidenceFromAnotherRun: the README's workflow takes the
// evidence from "a gate run in which the test failed on head and its base
// was flaky", then a pull request adds it. That PR's gate run has its own
// base repetitions (and a later history window): the same stationary flake
// shows fewer base failures there, and the evidence rule holds the earlier
// run's p0 against the later run's Wilson bound.
func TestEvidenceFromAnotherRun(t *testing.T) {
	const name = "tests/test_upload.py::test_retry_after_429"
	for _, tc := range []struct {
		name             string
		evBase, evHist   Tally
		addBase, addHist Tally
	}{
		// matrix --repeat 10, no history: 5 of 10 then 1 of 10 (p = 0.3: P(X<=1) = 0.15).
		{"K=10, no history", Tally{10, 5}, Tally{}, Tally{10, 1}, Tally{}},
		// K=5 with 150 history runs: the window moved between the runs (a 10% flake: 20 then 11 of 150).
		{"K=5, history 150", Tally{5, 2}, Tally{150, 20}, Tally{5, 0}, Tally{150, 11}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := Evaluate(Input{Tests: reviewSuite(name, tc.evBase, tc.evHist, "FPPPP", 100)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e := entryFrom(t, ev, name)
			if ps := ledger.Verify(&ledger.Ledger{Version: 1, Entries: []ledger.Entry{e}}); len(ps) != 0 {
				t.Fatalf("ledger verify: %v", ps)
			}
			res := addingPR(t, reviewSuite(name, tc.addBase, tc.addHist, "PPPPP", 100), e)
			bf, br := tc.addBase.Failures+tc.addHist.Failures, tc.addBase.Runs+tc.addHist.Runs
			t.Logf("recorded p0 %.4f; the adding PR's base side %d/%d, Wilson %.4f", e.Evidence.PFlakeBaseline, bf, br, wilson.Upper(bf, br))
			if errs := ledgerErrors(res); len(errs) > 0 || res.Verdict != VerdictPass {
				t.Errorf("a clean, approved, declared PR adding the gate's own evidence: verdict %s\n%s", res.Verdict, strings.Join(errs, "\n"))
			}
		})
	}
}

// TestEvidenceRefusalRate: how often the documented workflow is
// refused for a stationary flake (rate p) when the adding PR's run saw
// the test fail on base (so no-base-evidence, the older rule, is not
// what fails it). Monte Carlo with the real Evaluate.
func TestEvidenceRefusalRate(t *testing.T) {
	const name = "c::flaky"
	rng := rand.New(rand.NewPCG(1, 2))
	binom := func(n int, p float64) int {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	head := func(p float64, n int) string {
		var b strings.Builder
		for range n {
			if rng.Float64() < p {
				b.WriteByte('F')
			} else {
				b.WriteByte('P')
			}
		}
		return b.String()
	}
	for _, sc := range []struct {
		p       float64
		k, hist int
	}{{0.3, 10, 0}, {0.3, 5, 0}, {0.2, 5, 30}, {0.1, 5, 150}, {0.05, 5, 150}} {
		trials, refused := 0, 0
		for trials < 200 {
			evB, evH := Tally{sc.k, binom(sc.k, sc.p)}, Tally{sc.hist, binom(sc.hist, sc.p)}
			if evB.Failures == 0 && evH.Failures == 0 || evB.Failures == sc.k {
				continue
			}
			h := "F" + head(sc.p, 9)
			ev, _ := Evaluate(Input{Tests: reviewSuite(name, evB, evH, h, 20)}, Options{})
			if ev.Tests[0].SPRT == nil || ev.Tests[0].SPRT.Decision != sprt.Flake {
				continue
			}
			e := entryFrom(t, ev, name)
			adB, adH := Tally{sc.k, binom(sc.k, sc.p)}, Tally{sc.hist, binom(sc.hist, sc.p)}
			if adB.Failures == 0 && adH.Failures == 0 || adB.Failures == sc.k {
				continue // no-base-evidence (the older rule), or base red
			}
			trials++
			res := addingPR(t, reviewSuite(name, adB, adH, head(sc.p, 10), 20), e)
			for _, f := range res.Ledger {
				if f.Rule == ledger.RuleEvidence && f.Severity == ledger.Error {
					refused++
					break
				}
			}
		}
		t.Logf("p=%.2f K=%d history=%d: %d of %d adding PRs refused (%.0f%%)", sc.p, sc.k, sc.hist, refused, trials, 100*float64(refused)/float64(trials))
	}
}

// TestLegEntry: README: "An entry for c::n ... covers every leg".
// The flake is the Windows leg's; its gate.json result carries the SPRT.
// An entry for c::n with that evidence is held against the legs' pooled
// base side (the clean Linux leg dilutes it), in the very run that
// recorded it.
func TestLegEntry(t *testing.T) {
	win, lin := "c::n [junit-windows]", "c::n [junit-linux]"
	tests := reviewSuite(win, Tally{5, 2}, Tally{150, 30}, "PPPPP", 50)
	tests = append(tests, TestInput{Name: lin, Base: Tally{5, 0}, History: Tally{150, 0}, Head: runs("PPPPP")})
	ev, err := Evaluate(Input{Tests: tests}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{win, "c::n"} {
		e := entryFrom(t, ev, win)
		e.Test = name
		res := addingPR(t, tests, e)
		t.Logf("entry for %q, p0 %.4f: verdict %s %v", name, e.Evidence.PFlakeBaseline, res.Verdict, ledgerErrors(res))
	}
}

// TestOwnEvidenceRefused: in one and the same evaluation, the p0
// the gate records (max(posterior mean under the fitted suite prior,
// P0Floor)) is above the Wilson 95% bound of the very base side it rests
// on: the NPMLE prior lives on a grid (0.316, 0.398, 0.501, ... ), and
// with a long (carried) history the posterior sits on one grid rate while
// the Wilson interval is narrower than the grid's gaps. Copying the
// gate's own sprt, as the README says, is then refused, run after run.
func TestOwnEvidenceRefused(t *testing.T) {
	const name = "c::flaky"
	for _, hist := range []Tally{{1000, 360}, {1000, 285}, {3000, 340}, {5000, 355}} {
		tests := reviewSuite(name, Tally{5, 1}, hist, "FPPPPPPPPP", 50)
		ev, err := Evaluate(Input{Tests: tests}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := entryFrom(t, ev, name)
		res := addingPR(t, tests, e)
		bf, br := 1+hist.Failures, 5+hist.Runs
		if errs := ledgerErrors(res); len(errs) > 0 || res.Verdict != VerdictPass {
			t.Errorf("history %v: the gate's own p0 %.4f (Wilson 95%% %.4f): verdict %s\n%s", hist, e.Evidence.PFlakeBaseline, wilson.Upper(bf, br), res.Verdict, strings.Join(errs, "\n"))
		}
	}
}
