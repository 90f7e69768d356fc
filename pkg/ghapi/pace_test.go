package ghapi_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// fakeClock is a clock that only its Sleep moves (when advance is set).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	advance bool
	waits   []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	if c.advance {
		c.now = c.now.Add(d)
	}
	return ctx.Err()
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}

func repeat(d time.Duration, n int) []time.Duration {
	var out []time.Duration
	for range n {
		out = append(out, d)
	}
	return out
}

// TestPaceDefault: by default a client spends a burst of 100 points, then
// 10 a second (600 a minute, of GitHub's 900), before GitHub has to say so.
func TestPaceDefault(t *testing.T) {
	s := ghfake.New(t)
	s.SetRateLimit(1_000_000, t0.Add(time.Hour))
	run := s.Repo("octo/app").AddRun(ghfake.Run{})
	clock := &fakeClock{now: t0, advance: true}
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Now: clock.Now, Retry: retry.Policy{Sleep: clock.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 110 {
		if _, err := c.WorkflowRun(context.Background(), repo, run.ID); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if diff := cmp.Diff(repeat(100*time.Millisecond, 10), clock.Waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if st := c.Stats(); st.Paced != 10 || st.PaceWait != time.Second {
		t.Errorf("stats: %d paced, %v waited; want 10 and 1s", st.Paced, st.PaceWait)
	}
}

// TestPaceShared: concurrent callers share one budget. With the clock
// stopped, the requests beyond the burst wait 1s, 2s, … in turn: at 60
// points a minute, one a second.
func TestPaceShared(t *testing.T) {
	s := ghfake.New(t)
	run := s.Repo("octo/app").AddRun(ghfake.Run{})
	clock := &fakeClock{now: t0}
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Now: clock.Now, Retry: retry.Policy{Sleep: clock.Sleep},
		Pace: ghapi.Pace{PointsPerMinute: 60, PointsBurst: 8}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 { // the collector's default concurrency
		wg.Go(func() {
			for range 3 {
				if _, err := c.WorkflowRun(context.Background(), repo, run.ID); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var want []time.Duration
	for i := 1; i <= 16; i++ {
		want = append(want, time.Duration(i)*time.Second)
	}
	got := clock.Waits()
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestPaceWrites: a write costs 5 points, and writes have their own,
// smaller budget.
func TestPaceWrites(t *testing.T) {
	tests := []struct {
		name  string
		pace  ghapi.Pace
		posts int
		want  []time.Duration
	}{
		{"points: 5 a write", ghapi.Pace{PointsPerMinute: 60, PointsBurst: 10}, 3, []time.Duration{5 * time.Second}},
		{"writes a minute", ghapi.Pace{WritesPerMinute: 6, WritesBurst: 2}, 4, repeat(10*time.Second, 2)},
		{"off", ghapi.Pace{PointsPerMinute: -1, WritesPerMinute: 1, WritesBurst: 1}, 4, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			pr := s.Repo("octo/app").AddPullRequest(ghfake.PullRequest{})
			clock := &fakeClock{now: t0, advance: true}
			c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Now: clock.Now, Retry: retry.Policy{Sleep: clock.Sleep}, Pace: tc.pace})
			if err != nil {
				t.Fatal(err)
			}
			for range tc.posts {
				if _, err := c.CreateComment(context.Background(), repo, pr.Number, "hi"); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, clock.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPaceSkipsTheBlobHost: downloads cost their API request only.
func TestPaceSkipsTheBlobHost(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	art := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: map[string][]byte{"r.xml": []byte("<testsuite/>")}})
	clock := &fakeClock{now: t0, advance: true}
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Now: clock.Now, Retry: retry.Policy{Sleep: clock.Sleep},
		Pace: ghapi.Pace{PointsPerMinute: 60, PointsBurst: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.DownloadArtifact(context.Background(), repo, art.ID, 0); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(repeat(time.Second, 2), clock.Waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}
