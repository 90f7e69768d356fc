package sprt

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func seedTest(p0 float64) Test {
	return Test{P0: p0, P1: DefaultP1, Alpha: DefaultAlpha, Beta: DefaultBeta}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func TestBoundsMatchSeed(t *testing.T) {
	upper, lower := seedTest(0.3).Bounds()
	if got := round3(upper); got != 2.944 {
		t.Errorf("A = %.4f, want +2.944", upper)
	}
	if got := round3(lower); got != -2.944 {
		t.Errorf("B = %.4f, want -2.944", lower)
	}
}

func TestStepsMatchSeed(t *testing.T) {
	tests := []struct {
		p0         float64
		pass, fail float64
	}{
		{0.3, -1.946, 1.099},
		{0.5, -1.609, 0.588},
	}
	for _, tc := range tests {
		pass, fail := seedTest(tc.p0).Steps()
		if round3(pass) != tc.pass || round3(fail) != tc.fail {
			t.Errorf("p0=%v: steps (pass %.4f, fail %.4f), want (%v, %v)", tc.p0, pass, fail, tc.pass, tc.fail)
		}
	}
}

// TestSeedWorkedTrace pins article C's worked trace to three decimals.
func TestSeedWorkedTrace(t *testing.T) {
	outcomes := []bool{false, true, true, true}
	want := []struct {
		step, cum float64
		decision  Decision
	}{
		{1.099, 1.099, Continue},
		{-1.946, -0.847, Continue},
		{-1.946, -2.793, Continue},
		{-1.946, -4.739, Flake},
	}
	tt := seedTest(0.3)
	for n := 1; n <= len(outcomes); n++ {
		r := tt.Run(outcomes[:n], 1)
		if r.Decision != want[n-1].decision {
			t.Errorf("after run %d: decision %s, want %s", n, r.Decision, want[n-1].decision)
		}
	}
	r := tt.Run(outcomes, 1)
	if len(r.Trace) != len(want) {
		t.Fatalf("trace has %d steps, want %d", len(r.Trace), len(want))
	}
	for i, s := range r.Trace {
		if s.Passed != outcomes[i] || round3(s.Step) != want[i].step || round3(s.Cumulative) != want[i].cum {
			t.Errorf("run %d: [%v, %.3f, %.3f], want [%v, %v, %v]", i+1, s.Passed, s.Step, s.Cumulative, outcomes[i], want[i].step, want[i].cum)
		}
	}
	if round3(r.LLR) != -4.739 {
		t.Errorf("LLR = %.4f, want -4.739", r.LLR)
	}
}

func TestRunLooks(t *testing.T) {
	tt := seedTest(0.3)
	// Crosses B after two passes, then comes back above it.
	outcomes := []bool{true, true, false, false, false}
	tests := []struct {
		name      string
		firstLook int
		want      Decision
		used      int
	}{
		{"wald looks after every run", 1, Flake, 2},
		{"first look after run 3", 3, Continue, 5},
		{"single look at the end", 0, Continue, 5},
		{"first look beyond the data means the end", 9, Continue, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tt.Run(outcomes, tc.firstLook)
			if r.Decision != tc.want || len(r.Trace) != tc.used {
				t.Errorf("Run(firstLook=%d) = %s after %d runs, want %s after %d", tc.firstLook, r.Decision, len(r.Trace), tc.want, tc.used)
			}
		})
	}
	if r := tt.Run(nil, 0); r.Decision != Continue || len(r.Trace) != 0 || r.LLR != 0 {
		t.Errorf("Run(nil) = %+v, want CONTINUE with an empty trace", r)
	}
	if r := tt.Run([]bool{false, false, false}, 0); r.Decision != Regression {
		t.Errorf("three fails at p0=0.3: %s, want REGRESSION", r.Decision)
	}
}

// TestGreensNeeded pins the seed's "two independent greens" property and
// "p0 = 0.8 needs five greens".
func TestGreensNeeded(t *testing.T) {
	for p0 := 0.01; p0 <= 0.5+1e-9; p0 += 0.01 {
		n, ok := seedTest(p0).GreensToFlake()
		if !ok || n != 2 {
			t.Errorf("p0=%.2f: %d greens to reach B (ok=%v), want exactly 2", p0, n, ok)
		}
		pass, _ := seedTest(p0).Steps()
		if _, lower := seedTest(p0).Bounds(); pass <= lower {
			t.Errorf("p0=%.2f: one green (%.3f) reaches B", p0, pass)
		}
	}
	if n, ok := seedTest(0.8).GreensToFlake(); !ok || n != 5 {
		t.Errorf("p0=0.8: %d greens (ok=%v), want 5", n, ok)
	}
	if _, ok := seedTest(0.95).GreensToFlake(); ok {
		t.Errorf("p0=0.95 > p1: passes should never reach B")
	}
	// Monotone: the flakier the baseline, the more greens and the more reds it takes.
	prevG, prevF := 0, 0
	for p0 := 0.05; p0 < 0.9; p0 += 0.05 {
		g, _ := seedTest(p0).GreensToFlake()
		f, _ := seedTest(p0).FailsToRegression()
		if g < prevG || f < prevF {
			t.Errorf("p0=%.2f: greens %d (prev %d), fails %d (prev %d): not monotone", p0, g, prevG, f, prevF)
		}
		prevG, prevF = g, f
	}
}

func TestExpectedRuns(t *testing.T) {
	e0, e1 := seedTest(0.3).ExpectedRuns()
	if !(e0 > 1 && e0 < 4 && e1 > 2 && e1 < 5) {
		t.Errorf("p0=0.3: ASN (%.2f, %.2f), want small", e0, e1)
	}
	prev := 0.0
	for _, p0 := range []float64{0.1, 0.3, 0.5, 0.7, 0.8} {
		_, e1 := seedTest(p0).ExpectedRuns()
		if e1 <= prev {
			t.Errorf("E1[N] not increasing at p0=%v: %.2f after %.2f", p0, e1, prev)
		}
		prev = e1
	}
	if e0, e1 := (Test{P0: 0.9, P1: 0.9, Alpha: 0.05, Beta: 0.05}).ExpectedRuns(); !math.IsInf(e0, 1) || !math.IsInf(e1, 1) {
		t.Errorf("p0 = p1: ASN (%v, %v), want +Inf", e0, e1)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		t    Test
		ok   bool
	}{
		{"seed", seedTest(0.3), true},
		{"p0 zero", seedTest(0), false},
		{"p0 NaN", seedTest(math.NaN()), false},
		{"p0 equals p1", seedTest(0.9), false},
		{"alpha one", Test{P0: 0.3, P1: 0.9, Alpha: 1, Beta: 0.05}, false},
		{"alpha plus beta", Test{P0: 0.3, P1: 0.9, Alpha: 0.6, Beta: 0.5}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.t.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestStepJSON(t *testing.T) {
	r := seedTest(0.3).Run([]bool{false, true}, 1)
	b, err := json.Marshal(r.Trace)
	if err != nil {
		t.Fatal(err)
	}
	var back []Step
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("round trip of %s: %v", b, err)
	}
	if diff := cmp.Diff(r.Trace, back, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var raw [][]any
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 2 || raw[0][0] != false || raw[1][0] != true {
		t.Errorf("encoding %s is not [[passed, step, cumulative], ...]", b)
	}
	for _, bad := range []string{`[true, 1]`, `{"a":1}`, `["x", 1, 2]`, `[true, "1", 2]`} {
		var s Step
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}

// TestMonteCarloErrorRates checks the achieved error rates against Wald's
// bounds: false REGRESSION ≤ α/(1−β) and missed regression (FLAKE under H1)
// ≤ β/(1−α), each ≈ 0.0526 here, with a margin for sampling error (the
// standard error at 20,000 trials is below 0.002). Truncation at a budget only
// turns decisions into CONTINUE, which lowers both rates.
func TestMonteCarloErrorRates(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte-Carlo check skipped under -short")
	}
	const trials = 20000
	rng := rand.New(rand.NewPCG(2024, 6))
	for _, p0 := range []float64{0.05, 0.1, 0.3, 0.5} {
		for _, sched := range []struct {
			name             string
			firstLook, limit int
		}{{"wald", 1, 1000}, {"batch5-budget20", 5, 20}} {
			tt := seedTest(p0)
			falseReg, missed := 0, 0
			for range trials {
				if runUntilDecided(tt, p0, sched.firstLook, sched.limit, rng) == Regression {
					falseReg++
				}
				if runUntilDecided(tt, tt.P1, sched.firstLook, sched.limit, rng) == Flake {
					missed++
				}
			}
			fr, mr := float64(falseReg)/trials, float64(missed)/trials
			boundA := tt.Alpha / (1 - tt.Beta)
			boundB := tt.Beta / (1 - tt.Alpha)
			t.Logf("p0=%.2f %-16s false regression %.4f (bound %.4f), missed %.4f (bound %.4f)", p0, sched.name, fr, boundA, mr, boundB)
			if fr > boundA+0.006 {
				t.Errorf("p0=%.2f %s: false regression rate %.4f exceeds %.4f", p0, sched.name, fr, boundA)
			}
			if mr > boundB+0.006 {
				t.Errorf("p0=%.2f %s: missed regression rate %.4f exceeds %.4f", p0, sched.name, mr, boundB)
			}
		}
	}
}

// runUntilDecided draws runs failing with probability p, one at a time, and
// looks as Run does, up to limit runs.
func runUntilDecided(tt Test, p float64, firstLook, limit int, rng *rand.Rand) Decision {
	pass, fail := tt.Steps()
	llr := 0.0
	for n := 1; n <= limit; n++ {
		if rng.Float64() < p {
			llr += fail
		} else {
			llr += pass
		}
		if n >= firstLook {
			if d := tt.Decide(llr); d != Continue {
				return d
			}
		}
	}
	return Continue
}

// TestRunMatchesIncremental checks that Run over a prefix agrees with an
// incremental replay, for random sequences.
func TestRunMatchesIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tt := seedTest(0.2)
	for range 500 {
		n := 1 + rng.IntN(12)
		out := make([]bool, n)
		for i := range out {
			out[i] = rng.Float64() < 0.6
		}
		r := tt.Run(out, 1)
		pass, fail := tt.Steps()
		llr := 0.0
		want := Continue
		used := 0
		for i, ok := range out {
			if ok {
				llr += pass
			} else {
				llr += fail
			}
			used = i + 1
			if want = tt.Decide(llr); want != Continue {
				break
			}
		}
		if r.Decision != want || len(r.Trace) != used || math.Abs(r.LLR-llr) > 1e-12 {
			t.Fatalf("Run(%v) = %s after %d (llr %v), want %s after %d (llr %v)", out, r.Decision, len(r.Trace), r.LLR, want, used, llr)
		}
	}
}

// A trace that reaches the REGRESSION bound before the first look is
// REGRESSION whatever the look says (RegressionAt's rule), also when the
// look itself crosses the FLAKE bound.
func TestRegressionBeforeTheFirstLook(t *testing.T) {
	tt := Test{P0: 0.1, P1: 0.9, Alpha: 0.05, Beta: 0.05}
	r := tt.Run([]bool{false, false, true, true, true, true}, 6)
	if r.Decision != Regression {
		t.Errorf("decision %s, trace %v (RegressionAt %d)", r.Decision, r.Trace, tt.RegressionAt(r.Trace))
	}
}
