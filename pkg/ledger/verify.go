package ledger

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
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
	ps := validateLedger(l)
	for i, e := range l.Entries {
		ps = append(ps, replay(i, e)...)
	}
	return ps
}

// VerifyFile parses a ledger file and verifies it, returning every problem
// with its line and the file's name. It backs
// `flakegate ledger verify [FILE]`, which exits non-zero when the list is not
// empty. The trace of an entry whose evidence was read whole is replayed
// even when other fields or entries have problems, so that one run lists
// them all. An entry that expired before now is a problem too: the gate
// fails on it unless told to warn.
func VerifyFile(name string, data []byte, now time.Time) []Problem {
	l, p, err := parse(data)
	var ps []Problem
	switch {
	case err != nil && l != nil:
		ps = err.Problems
		spoilt := map[int]bool{}
		for _, pr := range ps {
			if pr.Entry < 0 || pr.Field == "evidence" || strings.HasPrefix(pr.Field, "evidence.") {
				spoilt[pr.Entry] = true
			}
		}
		for i, e := range l.Entries {
			if !spoilt[i] && !spoilt[-1] {
				ps = append(ps, replay(i, e)...)
			}
		}
	case err != nil:
		ps = err.Problems
	default:
		ps = Verify(l)
	}
	if l != nil {
		for i, e := range l.Entries {
			if e.Expires.ExpiredAt(now) {
				ps = append(ps, Problem{Entry: i, Test: e.Test, Field: "expires",
					Message: fmt.Sprintf("expired on %s (today is %s): the gate fails on an expired entry unless told to warn (the action's fail-on-expired-ledger: false, gate --expired-ledger warn); renew it with fresh evidence or remove it",
						e.Expires, now.UTC().Format(time.DateOnly))})
			}
		}
	}
	for i := range ps {
		ps[i].File = name
		if ps[i].Line == 0 && p != nil {
			ps[i].Line = p.line(ps[i].Entry, ps[i].Field)
		}
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Or(cmp.Compare(a.Entry, b.Entry), cmp.Compare(a.Line, b.Line)) })
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
	for j, s := range ev.Trace {
		want, what := fail, "fail"
		if s.Passed {
			want, what = pass, "pass"
		}
		cum += want
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
	switch {
	case !ev.Decision.Valid():
		// reported by validateEntry
	case got != ev.Decision:
		bad("evidence.decision", "recorded %s, but replaying the trace gives %s (LLR %.3f, bounds %.3f and %.3f)",
			ev.Decision, got, cum, lower, upper)
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
