package defaults

import (
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	a, b, c := 0, int64(-3), 5*time.Second
	Positive(&a, 7)
	Positive(&b, 9)
	Positive(&c, time.Minute)
	if a != 7 || b != 9 || c != 5*time.Second {
		t.Errorf("Positive: %d %d %v", a, b, c)
	}
	x, y, z := 0, -1, 3
	Count(&x, 4)
	Count(&y, 4)
	Count(&z, 4)
	if x != 4 || y != 0 || z != 3 {
		t.Errorf("Count: %d %d %d", x, y, z)
	}
}
