package render

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/score"
)

// TestAppendTestMatchesEncodingJSON compares the hand-written encoder with
// encoding/json on random tests full of awkward strings and numbers.
func TestAppendTestMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	strs := []string{"", "plain", `q"uote`, `back\slash`, "<img src=x>", "a & b", "tab\there", "nl\nx", "\x00\x1f",
		"ünïcödé", "\u2028\u2029", "bad\xffutf8", "@everyone", strings.Repeat("x", 300), "emoji 🎉"}
	floats := []float64{0, 1, 0.5, 1.0 / 3, 1e-7, 2.5e-9, 1e21, 123456789.125, 0.1 + 0.2, -0, 3e-6, 0.000001}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	pickF := func() float64 { return floats[rng.IntN(len(floats))] * (1 + float64(rng.IntN(3))) }
	list := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+rng.IntN(3))
		for i := range out {
			out[i] = pick()
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		tc := score.Test{Name: pick(), Score: pickF(), Commits: rng.IntN(1000), FlakyCommits: rng.IntN(100), IsFlaky: rng.IntN(2) == 0,
			CommitsWhereFlaky: list(), ErrorMessages: list(), ScoreInterval: score.Interval{Low: pickF(), High: pickF()},
			Runs: rng.IntN(500), Attempts: rng.IntN(900), Failures: rng.IntN(50), FailureRate: pickF(),
			FailureInterval: score.Interval{Low: pickF(), High: pickF()}, Evidence: list(), Episodes: rng.IntN(9),
			IntermittentCommits: rng.IntN(9), FlakeScore: pickF(), RankScore: pickF()}
		if rng.IntN(3) > 0 {
			for k := 0; k < rng.IntN(3); k++ {
				tc.Signatures = append(tc.Signatures, score.Signature{Hash: pick(), Runs: rng.IntN(9), Failures: rng.IntN(9), Message: pick()})
			}
			if tc.Signatures == nil {
				tc.Signatures = []score.Signature{}
			}
		}
		if rng.IntN(2) == 0 {
			tc.File, tc.Line, tc.Timeline, tc.Owners = pick(), rng.IntN(3), pick(), list()
		}
		want, err := json.MarshalIndent(&tc, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := appendTest(nil, &tc); string(got) != string(want) {
			t.Fatalf("case %d differs:\nwant %s\ngot  %s", i, want, got)
		}
	}
	if err := checkFloats(&score.Test{Score: math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
}

// TestAppendFloatMatchesEncodingJSON: every float appendFloat writes, whole
// numbers (the integer path) and fractions alike, is what encoding/json
// writes, at the edges of the integer path and of the exponent forms.
func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	fs := []float64{0, math.Copysign(0, -1), 1, -1, 60, 0.5, -0.25, 1e14, 1e15 - 1, 1e15, -1e15 + 1, -1e15, 1e15 + 0.5,
		1 << 53, 1<<53 + 2, 1e20, 1e21, 1e-6, 1e-7, 5e-324, math.MaxFloat64, -math.MaxFloat64, 0.1 + 0.2, 2.0 / 3}
	rng := rand.New(rand.NewPCG(7, 9))
	for range 20000 {
		switch rng.IntN(3) {
		case 0:
			fs = append(fs, float64(rng.Int64N(2e15)-1e15))
		case 1:
			fs = append(fs, math.Float64frombits(rng.Uint64()))
		default:
			fs = append(fs, float64(rng.IntN(1000))/float64(1+rng.IntN(1000)))
		}
	}
	for _, f := range fs {
		want, err := json.Marshal(f)
		if err != nil {
			continue // NaN and infinities: refused before appendFloat
		}
		if got := appendFloat(nil, f); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, encoding/json %s", f, got, want)
		}
	}
}
