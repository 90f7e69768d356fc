// Package heapgoal sets the garbage collector's goal for a short-lived
// command: let the heap grow to a floor before collecting at all, then
// collect as Go's default does (GOGC=100, a goal of twice the live heap)
// once that is the larger.
//
// With Go's defaults a command that builds 15 MB of live data from a
// 45 MB history collects five times on its way there, from a 4 MB goal
// up, which cost about a tenth of its time. A fixed memory limit instead
// (GOGC=off with GOMEMLIMIT) collects without end once the live heap
// nears the limit, and a larger GOGC lets a large history's heap grow to
// many times its live data. The goal here is max(floor, 2 × live), so the
// peak stays within the floor for small inputs and within Go's own
// bound for large ones, and the collector never runs more often than
// under the defaults.
package heapgoal

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minGoal is the least heap goal at GOGC=100. Go scales it with GOGC:
// at GOGC=n the goal is never below minGoal × n/100.
const minGoal = 4 << 20

var once sync.Once

// Start sets the heap goal to max(floor, 2 × live heap) for the rest of
// the process. It does nothing when the environment chooses GC settings
// (GOGC or GOMEMLIMIT, as getenv reads them), and only its first call
// counts.
func Start(floor uint64, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	once.Do(func() {
		t := &tuner{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		debug.SetGCPercent(percentFor(floor, 0))
		t.arm()
	})
}

type tuner struct {
	floor  uint64
	sample []metrics.Sample
}

// arm asks to be told when the next collection has run: a cleanup runs
// once the object it watches is found unreachable.
func (t *tuner) arm() {
	watched := new([32]byte) // not tiny: tiny objects are batched
	runtime.AddCleanup(watched, func(t *tuner) { t.collected() }, t)
}

// collected sets GOGC for the next cycle from the live heap the last one
// left, and arms again.
func (t *tuner) collected() {
	metrics.Read(t.sample)
	if v := t.sample[0].Value; v.Kind() == metrics.KindUint64 {
		debug.SetGCPercent(percentFor(t.floor, v.Uint64()))
	}
	t.arm()
}

// percentFor is the GOGC that makes the next goal max(floor, 2 × live):
// the goal is live × (1 + GOGC/100), and at least minGoal × GOGC/100.
func percentFor(floor, live uint64) int {
	if floor <= 2*live {
		return 100
	}
	p := uint64(floor) * 100 / minGoal
	if live > 0 {
		p = min(p, (floor-live)*100/live)
	}
	return int(max(p, 100))
}
