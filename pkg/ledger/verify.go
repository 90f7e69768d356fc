package ledger

import (
	"fmt"
	"math"
	"time"

	"github.com/flakegate/flakegate/pkg/sprt"
)

// Tolerance is how far a recorded step or cumulative LLR may be from its
// replay: the ledger stores them to three decimals.
const Tolerance = 0.001

// Verify replays every entry's evidence. For each run it recomputes the step
// from p_flake_baseline (p0) and p_regression (p1) and the running total, and
// both must match the recorded values within Tolerance. The decision replayed
// from the final LLR and the alpha/beta bounds must equal the recorded one,
// and it must be FLAKE: only FLAKE evidence can freeze a test. Malformed
// entries are reported too. Each problem names the entry and the field.
func Verify(l *Ledger) []Problem {
	if l == nil {
		return []Problem{{Entry: -1, Message: "no ledger"}}
	}
	ps := validateLedger(l, nil)
	for i, e := range l.Entries {
		ps = append(ps, replay(i, e)...)
	}
	return ps
}

// VerifyFile parses a ledger file and verifies it, returning every problem
// in file order, with its line and the file's name (the first 100, then one
// that counts the rest). It backs `flakegate ledger verify [FILE]`, which
// exits non-zero when the list is not empty. A field that could not be read
// stops only the checks that depend on it: the other fields and entries are
// checked, and an entry's trace is replayed unless the trace or the SPRT's
// parameters could not be read, so that one run lists every problem. An
// entry that expired before now is a problem too: the gate fails on it
// unless told to warn.
func VerifyFile(name string, data []byte, now time.Time) []Problem {
	l, p, err := read(data)
	var ps []Problem
	if err != nil {
		ps = err.Problems
	} else {
		p.validate(l)
		for i, e := range l.Entries {
			broken := func(field string) bool { return p.broken(i, field) }
			if !sprtBroken(broken) && !broken("evidence.llr_trace") {
				for _, pr := range replay(i, e) {
					p.addAt(pr)
				}
			}
			if e.Expires.ExpiredAt(now) {
				p.addAt(Problem{Entry: i, Test: e.Test, Field: "expires",
					Message: fmt.Sprintf("expired on %s (today is %s): the gate fails on an expired entry unless told to warn (the action's fail-on-expired-ledger: false, gate --expired-ledger warn); renew it with fresh evidence or remove it",
						e.Expires, now.UTC().Format(time.DateOnly))})
			}
		}
		ps = p.problems()
	}
	for i := range ps {
		ps[i].File = name
	}
	return ps
}

// replay checks one entry's trace against the SPRT it claims.
func replay(i int, e Entry) []Problem {
	ev := e.Evidence
	t := ev.Test()
	if t.Validate() != nil || len(ev.Trace) == 0 {
		return nil // validateEntry reported it; there is nothing to replay
	}
	var ps []Problem
	bad := func(field, msg string, args ...any) {
		ps = append(ps, Problem{Entry: i, Test: e.Test, Field: field, Message: fmt.Sprintf(msg, args...)})
	}
	pass, fail := t.Steps()
	cum := 0.0
	// The replayed trace: whether it reached REGRESSION is the replay's
	// to say, not the recorded values', which may be Tolerance off (a
	// cumulative 0.0004 past the bound recorded as 2.944, below it).
	replayed := make([]sprt.Step, 0, len(ev.Trace))
	for j, s := range ev.Trace {
		want, what := fail, "fail"
		if s.Passed {
			want, what = pass, "pass"
		}
		cum += want
		replayed = append(replayed, sprt.Step{Passed: s.Passed, Step: want, Cumulative: cum})
		if math.Abs(s.Step-want) > Tolerance {
			bad(fmt.Sprintf("evidence.llr_trace[%d][1]", j),
				"step %.3f, but a %s at p0=%v, p1=%v adds %.3f", s.Step, what, ev.PFlakeBaseline, ev.PRegression, want)
		}
		if math.Abs(s.Cumulative-cum) > Tolerance {
			bad(fmt.Sprintf("evidence.llr_trace[%d][2]", j),
				"cumulative %.3f, but the replay gives %.3f", s.Cumulative, cum)
		}
	}
	upper, lower := t.Bounds()
	got := t.Decide(cum)
	reached := ""
	if j := t.RegressionAt(replayed); j >= 0 && j < len(replayed)-1 {
		got = sprt.Regression
		reached = fmt.Sprintf("; the trace reaches the REGRESSION bound at run %d (LLR %.4f, bound %.4f) and goes on: Wald's test stops there, and runs until the LLR falls back are rerun-until-green", j+1, replayed[j].Cumulative, upper)
	}
	switch {
	case !ev.Decision.Valid():
		// reported by validateEntry
	case got != ev.Decision:
		bad("evidence.decision", "recorded %s, but replaying the trace gives %s (LLR %.3f, bounds %.3f and %.3f)%s",
			ev.Decision, got, cum, lower, upper, reached)
	case got != sprt.Flake:
		bad("evidence.decision", "%s evidence cannot freeze a test: only FLAKE does", got)
	}
	return ps
}

// EvidenceFrom records an SPRT result as ledger evidence. The baseline p0 is
// rounded to four decimals and every step is recomputed from it, then steps
// and running totals are rounded to three decimals, so that the recorded
// trace replays within Tolerance. The decision is the replay's: a result
// whose decision only held before rounding p0 comes back as what it now is,
// and Verify will refuse to freeze on it unless it is FLAKE.
func EvidenceFrom(t sprt.Test, r sprt.Result) Evidence {
	ev := Evidence{
		PFlakeBaseline: round(t.P0, 4),
		PRegression:    t.P1,
		Alpha:          t.Alpha,
		Beta:           t.Beta,
		Decision:       sprt.Continue,
	}
	rt := ev.Test()
	if rt.Validate() != nil {
		return ev
	}
	outcomes := make([]bool, len(r.Trace))
	for i, s := range r.Trace {
		outcomes[i] = s.Passed
	}
	rr := rt.Run(outcomes, 0)
	ev.Decision = rr.Decision
	for _, s := range rr.Trace {
		ev.Trace = append(ev.Trace, sprt.Step{Passed: s.Passed, Step: round(s.Step, 3), Cumulative: round(s.Cumulative, 3)})
	}
	return ev
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}
