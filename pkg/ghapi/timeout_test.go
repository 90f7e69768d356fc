package ghapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// deadlineSleeper stands in for a real sleep without taking the time: it
// records d, and fails as a timer would if the context's deadline comes
// before d is up. A timeout over the whole retry sequence therefore cuts a
// long Retry-After here as it would in production.
type deadlineSleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *deadlineSleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return context.DeadlineExceeded
	}
	return ctx.Err()
}

// TestRetryAfterOutlastsTheRequestTimeout: GitHub's usual secondary-limit
// answer asks for 60 s; the client's per-request timeout, also 60 s by
// default, bounds each attempt, not the wait between them.
func TestRetryAfterOutlastsTheRequestTimeout(t *testing.T) {
	tests := []struct {
		name string
		hc   *http.Client
		kind ghfake.FaultKind
	}{
		{"429, default client", nil, ghfake.TooManyRequests},
		{"403 secondary, default client", nil, ghfake.SecondaryRateLimit},
		{"429, caller's client with a 30s timeout", &http.Client{Timeout: 30 * time.Second}, ghfake.TooManyRequests},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			s.Repo("octo/app").AddRun(ghfake.Run{})
			s.Inject(ghfake.Fault{Path: "/repos/*/*/actions/runs", Kind: tc.kind, RetryAfter: 60 * time.Second})
			sl := &deadlineSleeper{}
			c, err := ghapi.New(ghfake.Token, s.URL, tc.hc, ghapi.Options{Retry: retry.Policy{Sleep: sl.Sleep}})
			if err != nil {
				t.Fatal(err)
			}
			runs, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{})
			if err != nil || len(runs) != 1 {
				t.Fatalf("got %d runs, error %v; want the run after waiting 60s", len(runs), err)
			}
			if diff := cmp.Diff([]time.Duration{60 * time.Second}, sl.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n := s.RequestCount(ghfake.HostAPI); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

// TestTimeoutPerAttempt: an attempt that outlasts the timeout is cut and
// retried like any other network failure.
func TestTimeoutPerAttempt(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app").AddRun(ghfake.Run{})
	s.SetLatency(time.Second)
	sl := &deadlineSleeper{}
	c, err := ghapi.New(ghfake.Token, s.URL, &http.Client{Timeout: 50 * time.Millisecond}, ghapi.Options{Retry: retry.Policy{
		Sleep: sl.Sleep, MaxRetries: 2, Jitter: func(d time.Duration) time.Duration { return d }}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("took %v: the attempts were not cut at 50ms", d)
	}
	if got := c.Stats().Requests; got != 3 {
		t.Errorf("%d attempts, want 3 (each timed out and was retried)", got)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, sl.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestUnresponsiveHostIsLeftAlone: a GitHub that takes connections and
// never answers. Each call's attempts time out in turn; once MaxStalls in a
// row have, every later call fails at once with ErrUnresponsive instead of
// waiting out its own attempts, and an answer in between starts the count
// again.
func TestUnresponsiveHostIsLeftAlone(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app").AddRun(ghfake.Run{})
	s.SetLatency(time.Second)
	sl := &deadlineSleeper{}
	c, err := ghapi.New(ghfake.Token, s.URL, &http.Client{Timeout: 20 * time.Millisecond}, ghapi.Options{Retry: retry.Policy{
		Sleep: sl.Sleep, MaxRetries: 4}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := 0
	for ; calls < ghapi.MaxStalls; calls++ {
		if _, err := c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{}); errors.Is(err, ghapi.ErrUnresponsive) {
			break
		}
	}
	if got := c.Stats().Requests; got != ghapi.MaxStalls {
		t.Errorf("%d attempts before giving up, want MaxStalls = %d", got, ghapi.MaxStalls)
	}
	_, err = c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{})
	if !errors.Is(err, ghapi.ErrUnresponsive) || !strings.Contains(err.Error(), "requests in a row had no answer within 20ms") {
		t.Errorf("error = %v, want ErrUnresponsive saying why", err)
	}
	if n := c.Stats().Requests; n != ghapi.MaxStalls {
		t.Errorf("%d attempts in all: the call after should not have asked", n)
	}
}

// TestOneSlowAnswerDoesNotStall: timeouts that an answer interrupts never
// add up to MaxStalls.
func TestOneSlowAnswerDoesNotStall(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app").AddRun(ghfake.Run{})
	c, err := ghapi.New(ghfake.Token, s.URL, &http.Client{Timeout: 100 * time.Millisecond}, ghapi.Options{Retry: retry.Policy{
		Sleep: (&deadlineSleeper{}).Sleep, MaxRetries: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < ghapi.MaxStalls/3+1; i++ { // 3 stalls a call: more than MaxStalls in all
		s.SetLatency(time.Second) // this call's 3 attempts time out
		if _, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{}); errors.Is(err, ghapi.ErrUnresponsive) {
			t.Fatalf("call %d: %v after answers in between", i, err)
		}
		s.SetLatency(0)
		if _, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}
