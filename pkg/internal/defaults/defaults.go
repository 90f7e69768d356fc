// Package defaults fills options' zero values, one field a line.
package defaults

// Number is what Positive fills.
type Number interface {
	~int | ~int64 | ~float64
}

// Positive sets *v to def when it is zero or negative.
func Positive[T Number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Count sets *v to def when it is zero, and to 0 when it is negative: a
// count where a negative value means none.
func Count[T Number](v *T, def T) {
	switch {
	case *v == 0:
		*v = def
	case *v < 0:
		*v = 0
	}
}
