// Package par runs independent pieces of work on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parts splits [0, n) into contiguous parts, one per core but none of
// fewer than minPart items (a single part when n is smaller), calls
// fn(lo, hi) for each part on its own goroutine, and waits.
func Parts(n, minPart int, fn func(lo, hi int)) {
	parts := max(1, min(runtime.GOMAXPROCS(0), n/max(minPart, 1)))
	if parts == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(n*p/parts, n*(p+1)/parts)
		}()
	}
	wg.Wait()
}

// Each calls fn(worker, k) for every k in [0, n) on workers goroutines
// (one per core when workers is 0 or less, and never more than n), each
// taking the next k once it is done with the last, and waits. worker
// numbers the goroutine, from 0, for state it keeps between calls.
func Each(n, workers int, fn func(worker, k int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				fn(w, k)
			}
		}()
	}
	wg.Wait()
}
