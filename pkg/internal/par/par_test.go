package par

import (
	"runtime"
	"sync"
	"testing"
)

// TestParts: the parts cover [0, n) exactly once, in contiguous pieces of
// at least minPart items, one per core at most.
func TestParts(t *testing.T) {
	for _, c := range []struct{ n, minPart int }{{0, 256}, {1, 256}, {255, 256}, {256, 256}, {1000, 256}, {100000, 1}, {7, 0}} {
		var mu sync.Mutex
		seen := make([]int, c.n)
		parts := 0
		Parts(c.n, c.minPart, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			parts++
			if hi-lo < max(c.minPart, 1) && parts > 1 {
				t.Errorf("n=%d: part [%d, %d) smaller than %d", c.n, lo, hi, c.minPart)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("n=%d: item %d seen %d times", c.n, i, k)
			}
		}
		if parts > runtime.GOMAXPROCS(0) && parts > 1 {
			t.Errorf("n=%d: %d parts on %d cores", c.n, parts, runtime.GOMAXPROCS(0))
		}
	}
}

// TestEach: every k is done once, by a worker numbered below the workers
// asked for.
func TestEach(t *testing.T) {
	for _, c := range []struct{ n, workers int }{{0, 2}, {1, 8}, {1000, 3}, {50, 0}} {
		var mu sync.Mutex
		seen := make([]int, c.n)
		Each(c.n, c.workers, func(w, k int) {
			mu.Lock()
			defer mu.Unlock()
			seen[k]++
			if limit := c.workers; limit > 0 && w >= limit || w < 0 {
				t.Errorf("n=%d: worker %d of %d", c.n, w, c.workers)
			}
		})
		for k, v := range seen {
			if v != 1 {
				t.Fatalf("n=%d workers=%d: k=%d done %d times", c.n, c.workers, k, v)
			}
		}
	}
}
