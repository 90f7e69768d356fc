package wilson

import (
	"math"
	"testing"
)

// TestUpper pins article B's worked numbers to three decimals.
func TestUpper(t *testing.T) {
	for _, tc := range []struct {
		failures, runs int
		want           float64
	}{{1, 5, 0.624}, {1, 20, 0.236}, {2, 5, 0.769}, {2, 20, 0.301}, {0, 0, 1}} {
		if got := Upper(tc.failures, tc.runs); math.Abs(got-tc.want) > 0.0005 {
			t.Errorf("Upper(%d, %d) = %.4f, want %.3f", tc.failures, tc.runs, got, tc.want)
		}
	}
}
