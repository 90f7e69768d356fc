package heapgoal

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		floor, live uint64
		want        int
	}{
		{64 << 20, 0, 1600},        // nothing live yet: the least goal is 64 MiB
		{64 << 20, 2 << 20, 1600},  // goal max(64 MiB, 34 MiB)
		{64 << 20, 16 << 20, 300},  // goal 64 MiB
		{64 << 20, 32 << 20, 100},  // twice the live heap from here on
		{64 << 20, 500 << 20, 100}, // a large history: Go's default
		{1 << 20, 0, 100},          // a floor below Go's least goal
	} {
		if got := percentFor(c.floor, c.live); got != c.want {
			t.Errorf("percentFor(%d, %d) = %d, want %d", c.floor, c.live, got, c.want)
		}
	}
}

// TestStart: after Start, collections leave GOGC at the value that makes
// the next goal the floor while the live heap is small, and at 100 once
// it is more than half the floor. An environment that sets GOGC is left
// alone.
func TestStart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	Start(1<<40, func(k string) string { return map[string]string{"GOGC": "50"}[k] })
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC set in the environment: Start changed GOGC to %d", p)
	}

	const floor = 64 << 20
	Start(floor, func(string) string { return "" })
	for range 3 {
		runtime.GC()
		runtime.Gosched()
	}
	waitFor(t, func() bool { return gogc() > 100 })

	keep := make([][]byte, 0, 64)
	for range 48 {
		keep = append(keep, make([]byte, 1<<20)) // 48 MiB live: more than half the floor
	}
	for range 3 {
		runtime.GC()
	}
	waitFor(t, func() bool { return gogc() == 100 })
	runtime.KeepAlive(keep)
	keep = nil
	// Once the heap is small again, so is the collector's work.
	waitFor(t, func() bool { return gogc() > 100 })
}

// waitFor polls ok while cleanups, which run on their own goroutine,
// catch up.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for range 200 {
		if ok() {
			return
		}
		runtime.GC()
		runtime.Gosched()
	}
	t.Fatalf("GOGC is %d", gogc())
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
