package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/flakegate/flakegate/pkg/gate"
)

// GateJSON writes the gate's result as json.MarshalIndent(r, "", "  ")
// writes it, with a final newline: the bytes the gate's report contract
// has always had. The tests list, nearly all of a large report, is encoded
// without reflection, in chunks on every core, and written a few chunks at
// a time, so the whole document is never held at once.
// TestGateJSONMatchesEncodingJSON keeps the two byte-for-byte equal, and
// fails when gate.TestResult gains a field this encoder does not write.
func GateJSON(w io.Writer, r *gate.Result) error {
	if r == nil {
		return fmt.Errorf("gate json: %w", errNilReport)
	}
	if err := writeGateJSON(w, r); err != nil {
		return fmt.Errorf("gate json: %w", err)
	}
	return nil
}

func writeGateJSON(w io.Writer, r *gate.Result) error {
	shell := *r
	if len(r.Tests) > 0 {
		shell.Tests = []gate.TestResult{}
	}
	return writeWithTests(w, &shell, r.Tests, appendGateTest, func(t *gate.TestResult) string { return t.Name })
}

// appendGateTest appends t as json.MarshalIndent(t, "    ", "  ") writes
// it. The SPRT trace, present for few tests, goes through encoding/json.
func appendGateTest(b []byte, t *gate.TestResult) ([]byte, error) {
	const in1, in2 = "\n      ", "\n        "
	for _, f := range []float64{t.P0.Estimate, t.P0.Mean, t.P0.Upper} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("json: unsupported value: %v", f)
		}
	}
	b = append(b, '{')
	b = appendKey(b, in1, "name")
	b = appendString(b, t.Name)
	b = appendKey(b, ","+in1, "base")
	b = appendSide(b, t.Base, in1, in2)
	b = appendKey(b, ","+in1, "head")
	b = appendSide(b, t.Head, in1, in2)
	b = appendKey(b, ","+in1, "history")
	b = append(b, '{')
	b = appendKey(b, in2, "runs")
	b = strconv.AppendInt(b, int64(t.History.Runs), 10)
	b = appendKey(b, ","+in2, "failures")
	b = strconv.AppendInt(b, int64(t.History.Failures), 10)
	b = append(b, in1...)
	b = append(b, '}')
	b = appendKey(b, ","+in1, "bucket")
	b = appendString(b, string(t.Bucket))
	b = appendKey(b, ","+in1, "decision")
	b = appendString(b, string(t.Decision))
	b = appendKey(b, ","+in1, "p0")
	b = append(b, '{')
	b = appendKey(b, in2, "estimate")
	b = appendFloat(b, t.P0.Estimate)
	b = appendKey(b, ","+in2, "source")
	b = appendString(b, t.P0.Source)
	b = appendKey(b, ","+in2, "runs")
	b = strconv.AppendInt(b, int64(t.P0.Runs), 10)
	b = appendKey(b, ","+in2, "failures")
	b = strconv.AppendInt(b, int64(t.P0.Failures), 10)
	b = appendKey(b, ","+in2, "mean")
	b = appendFloat(b, t.P0.Mean)
	b = appendKey(b, ","+in2, "upper")
	b = appendFloat(b, t.P0.Upper)
	b = append(b, in1...)
	b = append(b, '}')
	if s := t.Stat; s != nil {
		for _, f := range []float64{s.Tail, s.Best, s.Threshold, s.PRLevel, s.OwnRuns} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return b, fmt.Errorf("json: unsupported value: %v", f)
			}
		}
		b = appendKey(b, ","+in1, "stat")
		b = append(b, '{')
		b = appendKey(b, in2, "tail")
		b = appendFloat(b, s.Tail)
		b = appendKey(b, ","+in2, "best")
		b = appendFloat(b, s.Best)
		b = appendKey(b, ","+in2, "best_at")
		b = strconv.AppendInt(b, int64(s.BestAt), 10)
		b = appendKey(b, ","+in2, "threshold")
		b = appendFloat(b, s.Threshold)
		b = appendKey(b, ","+in2, "pr_level")
		b = appendFloat(b, s.PRLevel)
		if s.OwnRuns != 0 {
			b = appendKey(b, ","+in2, "own_runs")
			b = appendFloat(b, s.OwnRuns)
		}
		b = append(b, in1...)
		b = append(b, '}')
	}
	if t.SPRT != nil {
		j, err := json.MarshalIndent(t.SPRT, "      ", "  ")
		if err != nil {
			return b, err
		}
		b = appendKey(b, ","+in1, "sprt")
		b = append(b, j...)
	}
	if len(t.Signatures) > 0 {
		b = appendKey(b, ","+in1, "signatures")
		b = append(b, '[')
		for i, s := range t.Signatures {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in2...)
			b = appendString(b, s)
		}
		b = append(b, in1...)
		b = append(b, ']')
	}
	b = appendKey(b, ","+in1, "reason")
	b = appendString(b, t.Reason)
	if t.Pending {
		b = appendKey(b, ","+in1, "pending")
		b = append(b, "true"...)
	}
	b = append(b, "\n    }"...)
	return b, nil
}

func appendSide(b []byte, s gate.Side, in, inner string) []byte {
	b = append(b, '{')
	b = appendKey(b, inner, "runs")
	b = strconv.AppendInt(b, int64(s.Runs), 10)
	b = appendKey(b, ","+inner, "failures")
	b = strconv.AppendInt(b, int64(s.Failures), 10)
	b = appendKey(b, ","+inner, "class")
	b = appendString(b, string(s.Class))
	b = append(b, in...)
	return append(b, '}')
}
