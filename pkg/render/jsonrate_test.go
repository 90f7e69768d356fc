package render

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/flakegate/flakegate/pkg/score"
)

// TestAppendTestRateFields: the flake-rate and infrastructure fields are
// encoded as encoding/json encodes them, in struct order.
func TestAppendTestRateFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 500; i++ {
		tc := score.Test{Name: "a::b", Commits: rng.IntN(200), FlakeRate: rng.Float64(),
			FlakeRateInterval: score.Interval{Low: rng.Float64() / 2, High: 0.5 + rng.Float64()/2},
			FailedCommits:     rng.IntN(100), RateCommits: rng.IntN(200), RegressionCommits: rng.IntN(50), InfraFailures: rng.IntN(20),
			CommitsWhereFlaky: []string{}, ErrorMessages: []string{}, Evidence: []string{}, Signatures: []score.Signature{}}
		want, err := json.MarshalIndent(&tc, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := appendTest(nil, &tc); string(got) != string(want) {
			t.Fatalf("case %d differs:\nwant %s\ngot  %s", i, want, got)
		}
	}
}
