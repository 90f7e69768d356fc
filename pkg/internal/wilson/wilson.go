// Package wilson is the Wilson 95% score interval's upper end, which the
// gate's baseline and the ledger's evidence rule both bound rates by.
package wilson

import "math"

// z is the two-sided 95% normal quantile.
const z = 1.959963984540054

// Upper returns the upper end of the Wilson 95% score interval for
// failures out of runs; 1 when there are no runs. Article B: 1 of 5 → 0.62,
// 1 of 20 → 0.24, 2 of 5 → 0.77, 2 of 20 → 0.30.
func Upper(failures, runs int) float64 { return UpperZ(failures, runs, z) }

// Z999 is the one-sided 99.9% normal quantile.
const Z999 = 3.090232306167813

// UpperZ is Upper at another normal quantile z.
func UpperZ(failures, runs int, z float64) float64 {
	if runs <= 0 {
		return 1
	}
	n := float64(runs)
	p := float64(failures) / n
	den := 1 + z*z/n
	centre := p + z*z/(2*n)
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return math.Min(1, (centre+half)/den)
}
