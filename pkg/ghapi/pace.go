package ghapi

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/defaults"
)

// GitHub's secondary rate limits for REST, which the pacing stays under.
const (
	secondaryPointsPerMinute = 900 // GitHub: "No more than 900 points per minute are allowed for REST API endpoints"
	secondaryWritesPerMinute = 80  // GitHub: "no more than 80 content-generating requests per minute"
	// pointsRead and pointsWrite are what one request costs: "GET, HEAD,
	// and OPTIONS requests: 1 point; POST, PATCH, PUT, or DELETE requests:
	// 5 points" (GitHub).
	pointsRead  = 1
	pointsWrite = 5
)

// Default pacing: a bucket of Burst refilled at the per-minute rate lets at
// most Burst + rate through in any minute, and the one request that takes
// the last of it: 100 + 600 + 5 = 705 points (of 900) and 20 + 40 + 1 = 61
// writes (of 80).
const (
	defaultPointsPerMinute = 600
	defaultPointsBurst     = 100
	defaultWritesPerMinute = 40
	defaultWritesBurst     = 20
)

// Pace paces a Client's API requests so that it stays under GitHub's
// secondary rate limits instead of running into them and waiting a minute
// or more. The budget is the Client's, shared by all its concurrent
// callers (the collector runs 8 requests at once). Requests to the artifact
// blob host are not paced: they do not count against GitHub's limits. The
// zero value is the default.
type Pace struct {
	// PointsPerMinute refills the points bucket; a GET or HEAD costs 1
	// point, any other method 5. Default 600, two thirds of GitHub's 900. A
	// negative value turns pacing off.
	PointsPerMinute int
	// PointsBurst is the bucket's size, spent at once by a burst after a
	// pause; default 100.
	PointsBurst int
	// WritesPerMinute and WritesBurst bound the requests other than GET and
	// HEAD, which GitHub counts as content-creating; defaults 40 and 20,
	// against GitHub's 80 a minute.
	WritesPerMinute int
	WritesBurst     int
}

func (p Pace) withDefaults() Pace {
	if p.PointsPerMinute == 0 {
		p.PointsPerMinute = defaultPointsPerMinute
	}
	defaults.Positive(&p.PointsBurst, defaultPointsBurst)
	defaults.Positive(&p.WritesPerMinute, defaultWritesPerMinute)
	defaults.Positive(&p.WritesBurst, defaultWritesBurst)
	return p
}

// bucket is a token bucket that may go into debt: a request takes its
// tokens at once and waits until the debt is paid. A caller whose clock
// does not move (tests) therefore waits longer and longer, and never spins.
type bucket struct {
	perSecond float64
	burst     float64
	tokens    float64
	last      time.Time
}

func newBucket(perMinute, burst int) *bucket {
	return &bucket{perSecond: float64(perMinute) / 60, burst: float64(burst), tokens: float64(burst)}
}

// take takes n tokens at now and says how long to wait before using them.
func (b *bucket) take(now time.Time, n float64) time.Duration {
	if b.last.IsZero() {
		b.last = now
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.burst, b.tokens+el.Seconds()*b.perSecond)
		b.last = now
	}
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.perSecond * float64(time.Second))
}

// pacer holds a Client's buckets.
type pacer struct {
	mu             sync.Mutex
	points, writes *bucket
	now            func() time.Time
	sleep          func(ctx context.Context, d time.Duration) error
	paced          atomic.Int64 // requests that waited
	waited         atomic.Int64 // nanoseconds waited
}

// newPacer returns nil when pacing is off.
func newPacer(p Pace, now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) *pacer {
	if p.PointsPerMinute < 0 {
		return nil
	}
	p = p.withDefaults()
	return &pacer{points: newBucket(p.PointsPerMinute, p.PointsBurst), writes: newBucket(p.WritesPerMinute, p.WritesBurst), now: now, sleep: sleep}
}

// wait waits until a request with method may go.
func (p *pacer) wait(ctx context.Context, method string) error {
	if p == nil {
		return nil
	}
	write := method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions && method != ""
	cost := float64(pointsRead)
	if write {
		cost = pointsWrite
	}
	p.mu.Lock()
	now := p.now()
	d := p.points.take(now, cost)
	if write {
		d = max(d, p.writes.take(now, 1))
	}
	p.mu.Unlock()
	if d <= 0 {
		return nil
	}
	p.paced.Add(1)
	p.waited.Add(int64(d))
	return p.sleep(ctx, d)
}
