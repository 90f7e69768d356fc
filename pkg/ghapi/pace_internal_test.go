package ghapi

import (
	"context"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// TestPaceStaysUnderSecondaryLimits drives the default pacing as hard as it
// goes: every request is sent the moment the pacer lets it, a random mix of
// reads and writes, for an hour of fake time. No sliding minute may hold
// more than GitHub's 900 points or 80 writes.
func TestPaceStaysUnderSecondaryLimits(t *testing.T) {
	for _, writeShare := range []float64{0, 0.1, 0.5, 1} {
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		p := newPacer(Pace{}, func() time.Time { return now }, func(_ context.Context, d time.Duration) error {
			now = now.Add(d)
			return nil
		})
		type sent struct {
			at     time.Time
			points int
			write  bool
		}
		var log []sent
		rng := rand.New(rand.NewPCG(1, uint64(writeShare*100)))
		end := now.Add(time.Hour)
		for now.Before(end) {
			write := rng.Float64() < writeShare
			method := http.MethodGet
			points := pointsRead
			if write {
				method, points = http.MethodPost, pointsWrite
			}
			if err := p.wait(context.Background(), method); err != nil {
				t.Fatal(err)
			}
			log = append(log, sent{now, points, write})
		}
		lo, points, writes, maxPoints, maxWrites := 0, 0, 0, 0, 0
		for _, s := range log {
			points += s.points
			if s.write {
				writes++
			}
			for log[lo].at.Add(time.Minute).Compare(s.at) <= 0 {
				points -= log[lo].points
				if log[lo].write {
					writes--
				}
				lo++
			}
			maxPoints, maxWrites = max(maxPoints, points), max(maxWrites, writes)
		}
		if maxPoints > secondaryPointsPerMinute || maxWrites > secondaryWritesPerMinute {
			t.Errorf("writes %.0f%%: a minute held %d points and %d writes; GitHub allows %d and %d",
				writeShare*100, maxPoints, maxWrites, secondaryPointsPerMinute, secondaryWritesPerMinute)
		}
		// A bucket lets through its burst and a minute's refill, and the
		// request that takes the last of it: 100 + 600 + 5 points.
		if wantPoints, wantWrites := defaultPointsBurst+defaultPointsPerMinute+pointsWrite, defaultWritesBurst+defaultWritesPerMinute+1; maxPoints > wantPoints || maxWrites > wantWrites {
			t.Errorf("writes %.0f%%: a minute held %d points and %d writes; the pacing promises at most %d and %d",
				writeShare*100, maxPoints, maxWrites, wantPoints, wantWrites)
		}
		t.Logf("writes %.0f%%: %d requests in an hour; busiest minute %d points, %d writes", writeShare*100, len(log), maxPoints, maxWrites)
	}
}
