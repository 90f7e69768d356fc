package ghapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

var repo = ghapi.Repo{Owner: "octo", Name: "app"}

// sleeper records the waits the client asks for instead of sleeping.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

var t0 = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

func newClient(t *testing.T, s *ghfake.Server, token string, opts ghapi.Options) (*ghapi.Client, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	if opts.Retry.Sleep == nil {
		opts.Retry.Sleep = sl.Sleep
	}
	if opts.Retry.Jitter == nil {
		opts.Retry.Jitter = func(d time.Duration) time.Duration { return d }
	}
	c, err := ghapi.New(token, s.URL, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

func requestsTo(s *ghfake.Server, pathSuffix string) []ghfake.Request {
	var out []ghfake.Request
	for _, r := range s.Requests(ghfake.HostAPI) {
		if strings.HasSuffix(r.Path, pathSuffix) {
			out = append(out, r)
		}
	}
	return out
}

func TestParseRepo(t *testing.T) {
	tests := []struct {
		in      string
		want    ghapi.Repo
		wantErr bool
	}{
		{"octo/app", ghapi.Repo{Owner: "octo", Name: "app"}, false},
		{"octo", ghapi.Repo{}, true},
		{"/app", ghapi.Repo{}, true},
		{"octo/app/x", ghapi.Repo{}, true},
	}
	for _, tc := range tests {
		got, err := ghapi.ParseRepo(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseRepo(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseRepo(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestListWorkflowRunsPaginates(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	for i := range 250 {
		branch, wf := "main", "ci.yml"
		if i%5 == 0 {
			branch = "dev"
		}
		if i%10 == 1 {
			wf = "nightly.yml"
		}
		r.AddRun(ghfake.Run{Workflow: wf, HeadBranch: branch, CreatedAt: t0.Add(-time.Duration(i) * time.Hour)})
	}
	tests := []struct {
		name     string
		filter   ghapi.RunFilter
		wantRuns int
		wantReqs int
		wantQ    url.Values // expected in every list request
	}{
		{"all pages", ghapi.RunFilter{}, 250, 3, url.Values{"per_page": {"100"}, "status": {"completed"}}},
		{"max runs", ghapi.RunFilter{MaxRuns: 150}, 150, 2, url.Values{"per_page": {"100"}}},
		{"branch", ghapi.RunFilter{Branch: "dev"}, 50, 1, url.Values{"branch": {"dev"}}},
		{"workflow file", ghapi.RunFilter{Workflow: "nightly.yml"}, 25, 1, url.Values{}},
		{"created since", ghapi.RunFilter{CreatedSince: t0.Add(-48 * time.Hour)}, 61, 1, url.Values{"created": {">=2025-03-08"}}},
		{"any status", ghapi.RunFilter{Status: ghapi.StatusAny, MaxRuns: 10}, 10, 1, url.Values{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.RequestCount(ghfake.HostAPI)
			c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
			runs, err := c.ListWorkflowRuns(context.Background(), repo, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != tc.wantRuns {
				t.Errorf("got %d runs, want %d", len(runs), tc.wantRuns)
			}
			for i := 1; i < len(runs); i++ {
				if runs[i].CreatedAt.After(runs[i-1].CreatedAt) {
					t.Fatalf("runs not newest first at %d", i)
				}
			}
			reqs := s.Requests(ghfake.HostAPI)[before:]
			if len(reqs) != tc.wantReqs || c.Stats().Requests != int64(tc.wantReqs) {
				t.Errorf("got %d requests (counter %d), want %d", len(reqs), c.Stats().Requests, tc.wantReqs)
			}
			for _, req := range reqs {
				q, _ := url.ParseQuery(req.RawQuery)
				for k, v := range tc.wantQ {
					if diff := cmp.Diff(v, q[k]); diff != "" {
						t.Errorf("query %s (-want +got):\n%s", k, diff)
					}
				}
				if tc.filter.Status == ghapi.StatusAny && q.Has("status") {
					t.Errorf("status sent for StatusAny: %q", req.RawQuery)
				}
			}
		})
	}
}

func TestListWorkflowRunsAllAttempts(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	rerun := r.AddRun(ghfake.Run{Attempts: 3, AttemptConclusions: []string{"failure", "cancelled"}, Conclusion: "success", CreatedAt: t0})
	once := r.AddRun(ghfake.Run{CreatedAt: t0.Add(-time.Hour), Conclusion: "failure"})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})

	runs, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{AllAttempts: true})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID         int64
		Attempt    int
		Conclusion string
	}
	var got []row
	for _, run := range runs {
		got = append(got, row{run.ID, run.Attempt, run.Conclusion})
	}
	want := []row{
		{rerun.ID, 3, "success"}, {rerun.ID, 2, "cancelled"}, {rerun.ID, 1, "failure"},
		{once.ID, 1, "failure"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if n := len(requestsTo(s, "/attempts/2")) + len(requestsTo(s, "/attempts/1")); n != 2 {
		t.Errorf("attempt requests = %d, want 2", n)
	}
}

func TestRetries(t *testing.T) {
	now := t0
	tests := []struct {
		name      string
		faults    []ghfake.Fault
		opts      ghapi.Options
		wantWaits []time.Duration
		wantReqs  int64
		wantErr   error // nil: success
		check     func(t *testing.T, err error)
	}{
		{
			name:      "two 502s then success",
			faults:    []ghfake.Fault{{Times: 2, Kind: ghfake.ServerError}},
			wantWaits: []time.Duration{time.Second, 2 * time.Second},
			wantReqs:  3,
		},
		{
			name:      "500 and 503 and 504",
			faults:    []ghfake.Fault{{Status: 500}, {Status: 503}, {Status: 504}},
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			wantReqs:  4,
		},
		{
			name:      "server errors outlast the retries",
			faults:    []ghfake.Fault{{Times: -1, Kind: ghfake.ServerError}},
			opts:      ghapi.Options{Retry: retry.Policy{MaxRetries: 2}},
			wantWaits: []time.Duration{time.Second, 2 * time.Second},
			wantReqs:  3,
			check: func(t *testing.T, err error) {
				var ae *ghapi.APIError
				if !errors.As(err, &ae) || ae.StatusCode != 502 {
					t.Errorf("error = %v, want *APIError 502", err)
				}
			},
		},
		{
			name:      "backoff is capped",
			faults:    []ghfake.Fault{{Times: 3}},
			opts:      ghapi.Options{Retry: retry.Policy{BackoffBase: 10 * time.Second, MaxBackoff: 15 * time.Second}},
			wantWaits: []time.Duration{10 * time.Second, 15 * time.Second, 15 * time.Second},
			wantReqs:  4,
		},
		{
			name:      "retries disabled",
			faults:    []ghfake.Fault{{}},
			opts:      ghapi.Options{Retry: retry.Policy{MaxRetries: -1}},
			wantReqs:  1,
			wantWaits: nil,
			check: func(t *testing.T, err error) {
				if err == nil {
					t.Error("want an error")
				}
			},
		},
		{
			name:      "dropped connection",
			faults:    []ghfake.Fault{{Kind: ghfake.Disconnect}},
			wantWaits: []time.Duration{time.Second},
			wantReqs:  2,
		},
		{
			name:      "429 honours Retry-After",
			faults:    []ghfake.Fault{{Kind: ghfake.TooManyRequests, RetryAfter: 7 * time.Second}},
			wantWaits: []time.Duration{7 * time.Second},
			wantReqs:  2,
		},
		{
			// GitHub sends the primary window's headers on a 429 too:
			// remaining above 0, reset up to an hour away.
			name:      "429 with requests left waits a minute, not until x-ratelimit-reset",
			faults:    []ghfake.Fault{{Kind: ghfake.TooManyRequests, Reset: now.Add(40 * time.Minute)}},
			wantWaits: []time.Duration{time.Minute},
			wantReqs:  2,
		},
		{
			name:      "429 and secondary limits back off past a minute",
			faults:    []ghfake.Fault{{Kind: ghfake.TooManyRequests, Times: 2}},
			opts:      ghapi.Options{Retry: retry.Policy{BackoffBase: 50 * time.Second, MaxBackoff: 5 * time.Minute, MaxWait: 5 * time.Minute}},
			wantWaits: []time.Duration{time.Minute, 100 * time.Second},
			wantReqs:  3,
		},
		{
			name:      "429 without Retry-After beyond the wait budget",
			faults:    []ghfake.Fault{{Kind: ghfake.TooManyRequests, Times: -1, Reset: now.Add(40 * time.Minute)}},
			opts:      ghapi.Options{Retry: retry.Policy{MaxRetries: 9}},
			wantWaits: []time.Duration{time.Minute, time.Minute},
			wantReqs:  3,
			wantErr:   ghapi.ErrRateLimited,
			check: func(t *testing.T, err error) {
				var rl *ghapi.RateLimitError
				if !errors.As(err, &rl) || rl.Primary || !rl.Reset.IsZero() {
					t.Fatalf("error = %#v, want a secondary *RateLimitError without the primary window's reset", err)
				}
				if msg := err.Error(); strings.Contains(msg, "resets at") || !strings.HasSuffix(msg, "secondary rate limit; retry after a minute or more") {
					t.Errorf("message %q gives the primary window's reset for a secondary limit", msg)
				}
			},
		},
		{
			name:     "429 beyond the wait budget",
			faults:   []ghfake.Fault{{Kind: ghfake.TooManyRequests, RetryAfter: 10 * time.Minute}},
			wantReqs: 1,
			wantErr:  ghapi.ErrRateLimited,
			check: func(t *testing.T, err error) {
				var rl *ghapi.RateLimitError
				if !errors.As(err, &rl) || rl.Primary || rl.RetryAfter != 10*time.Minute {
					t.Errorf("error = %#v, want a secondary *RateLimitError with RetryAfter 10m", err)
				}
			},
		},
		{
			name:      "secondary limit honours Retry-After",
			faults:    []ghfake.Fault{{Kind: ghfake.SecondaryRateLimit, RetryAfter: 3 * time.Second}},
			wantWaits: []time.Duration{3 * time.Second},
			wantReqs:  2,
		},
		{
			name:      "secondary limit without Retry-After waits a minute",
			faults:    []ghfake.Fault{{Kind: ghfake.SecondaryRateLimit, Reset: now.Add(40 * time.Minute)}},
			wantWaits: []time.Duration{time.Minute},
			wantReqs:  2,
		},
		{
			name:      "primary limit resetting within the wait budget waits until the reset",
			faults:    []ghfake.Fault{{Kind: ghfake.PrimaryRateLimit, Reset: now.Add(30 * time.Second)}},
			wantWaits: []time.Duration{30 * time.Second},
			wantReqs:  2,
		},
		{
			name:     "primary limit stops at once",
			faults:   []ghfake.Fault{{Kind: ghfake.PrimaryRateLimit, Reset: now.Add(42 * time.Minute)}},
			wantReqs: 1,
			wantErr:  ghapi.ErrRateLimited,
			check: func(t *testing.T, err error) {
				var rl *ghapi.RateLimitError
				if !errors.As(err, &rl) || !rl.Primary || !rl.Reset.Equal(now.Add(42*time.Minute)) {
					t.Fatalf("error = %#v, want a primary *RateLimitError resetting at +42m", err)
				}
				if msg := err.Error(); !strings.Contains(msg, "resets at 2025-03-10T12:42:00Z (in 42m0s)") || !strings.HasPrefix(msg, "workflow runs of octo/app: ") {
					t.Errorf("message %q does not say what and when", msg)
				}
			},
		},
		{
			name:     "not found is not retried",
			faults:   nil,
			wantReqs: 1,
			wantErr:  ghapi.ErrNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			s.SetClock(func() time.Time { return now })
			if tc.name != "not found is not retried" {
				s.Repo("octo/app").AddRun(ghfake.Run{})
			}
			for _, f := range tc.faults {
				s.Inject(f)
			}
			opts := tc.opts
			opts.Now = func() time.Time { return now }
			c, sl := newClient(t, s, ghfake.Token, opts)
			runs, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{})
			if tc.wantErr == nil && tc.check == nil && (err != nil || len(runs) != 1) {
				t.Fatalf("got %d runs, error %v; want 1 run", len(runs), err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, err)
			}
			if diff := cmp.Diff(tc.wantWaits, sl.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if got := c.Stats().Requests; got != tc.wantReqs {
				t.Errorf("requests = %d, want %d", got, tc.wantReqs)
			}
			if got := int64(s.RequestCount(ghfake.HostAPI)); got != tc.wantReqs {
				t.Errorf("fake saw %d requests, want %d", got, tc.wantReqs)
			}
		})
	}
}

func TestRetryReplaysBody(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	s.Inject(ghfake.Fault{Method: "POST", Path: "/repos/*/*/issues/*/comments", Times: 2, Status: 503})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	if _, err := c.CreateComment(context.Background(), repo, pr.Number, "hello"); err != nil {
		t.Fatal(err)
	}
	posts := requestsTo(s, "/comments")
	if len(posts) != 3 {
		t.Fatalf("%d POSTs, want 3", len(posts))
	}
	for i, p := range posts {
		if !bytes.Contains(p.Body, []byte(`"hello"`)) {
			t.Errorf("POST %d body %q lacks the comment", i, p.Body)
		}
	}
	if got := r.Comments(pr.Number); len(got) != 1 || got[0].Body != "hello" {
		t.Errorf("comments = %+v, want one \"hello\"", got)
	}
}

func TestRequestBudget(t *testing.T) {
	s := ghfake.New(t)
	s.SetRateLimit(3, t0.Add(time.Hour))
	s.SetClock(func() time.Time { return t0 })
	s.Repo("octo/app").AddRun(ghfake.Run{})
	c, sl := newClient(t, s, ghfake.Token, ghapi.Options{Now: func() time.Time { return t0 }})
	ctx := context.Background()
	for i := range 3 {
		if _, err := c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	st := c.Stats()
	if st.Requests != 3 || st.RateRemaining != 0 || !st.RateReset.Equal(t0.Add(time.Hour)) {
		t.Errorf("stats = %+v, want 3 requests, 0 remaining, reset at +1h", st)
	}
	_, err := c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{})
	var rl *ghapi.RateLimitError
	if !errors.As(err, &rl) || !rl.Primary {
		t.Fatalf("4th call error = %v, want a primary *RateLimitError", err)
	}
	if len(sl.Waits()) != 0 {
		t.Errorf("slept %v on a primary limit", sl.Waits())
	}
}

func TestListRunArtifacts(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	for i := range 130 {
		name := fmt.Sprintf("junit-%03d", i)
		if i%2 == 1 {
			name = fmt.Sprintf("coverage-%03d", i)
		}
		r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: name, Files: map[string][]byte{"x": nil}})
	}
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	tests := []struct {
		pattern  string
		want     int
		wantErr  bool
		wantReqs int
	}{
		{"", 130, false, 2},
		{"junit-*", 65, false, 2},
		{"junit-00?", 5, false, 2},
		{"nothing", 0, false, 2},
		{"[", 0, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			before := s.RequestCount(ghfake.HostAPI)
			arts, err := c.ListRunArtifacts(context.Background(), repo, run.ID, tc.pattern)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if len(arts) != tc.want {
				t.Errorf("got %d artifacts, want %d", len(arts), tc.want)
			}
			if got := s.RequestCount(ghfake.HostAPI) - before; got != tc.wantReqs {
				t.Errorf("requests = %d, want %d", got, tc.wantReqs)
			}
		})
	}
}

func TestArtifactsNamed(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	main := r.AddRun(ghfake.Run{HeadBranch: "main", HeadSHA: ghfake.SHA("main")})
	fork := r.AddRun(ghfake.Run{HeadBranch: "main", HeadRepo: "someone/app", Event: "pull_request"})
	// 250 "report" artifacts, a minute apart (the newest last), every
	// tenth a fork run's, every 25th expired; and "junit" artifacts
	// between them that the name leaves out.
	var want []ghapi.RepoArtifact
	for i := range 250 {
		run, same := main, true
		if i%10 == 9 {
			run, same = fork, false
		}
		at := t0.Add(time.Duration(i) * time.Minute)
		a := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "report", Files: map[string][]byte{"x": nil}, CreatedAt: at, Expired: i%25 == 0})
		r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: map[string][]byte{"x": nil}, CreatedAt: at})
		size := int64(len(mustZip(t, map[string][]byte{"x": nil})))
		want = append(want, ghapi.RepoArtifact{Artifact: ghapi.Artifact{ID: a.ID, Name: "report", Size: size, Expired: i%25 == 0},
			CreatedAt: at, RunID: run.ID, HeadBranch: "main", HeadSHA: run.HeadSHA, SameRepo: same})
	}
	slices.Reverse(want)
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	tests := []struct {
		name     string
		max      int
		stopAt   int // yield returns false at this artifact (1-based); 0: never
		want     int
		wantReqs int
	}{
		{"all", 1000, 0, 250, 3},
		{"default max", 0, 0, 100, 1},
		{"max 150", 150, 0, 150, 2},
		{"max 200", 200, 0, 200, 2},
		{"stop in the first page", 1000, 3, 3, 1},
		{"stop at the first of the second page", 1000, 101, 101, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.RequestCount(ghfake.HostAPI)
			var got []ghapi.RepoArtifact
			err := c.ArtifactsNamed(context.Background(), repo, "report", tc.max, func(a ghapi.RepoArtifact) bool {
				got = append(got, a)
				return len(got) != tc.stopAt
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[:tc.want], got); diff != "" {
				t.Errorf("artifacts (-want +got):\n%s", diff)
			}
			if n := s.RequestCount(ghfake.HostAPI) - before; n != tc.wantReqs {
				t.Errorf("requests = %d, want %d", n, tc.wantReqs)
			}
		})
	}
	for _, rq := range requestsTo(s, "/actions/artifacts") {
		q, _ := url.ParseQuery(rq.RawQuery)
		if q.Get("name") != "report" || q.Get("per_page") != "100" {
			t.Errorf("request %s?%s: want name=report and per_page=100", rq.Path, rq.RawQuery)
		}
	}

	t.Run("not found", func(t *testing.T) {
		err := c.ArtifactsNamed(context.Background(), ghapi.Repo{Owner: "octo", Name: "gone"}, "report", 0, func(ghapi.RepoArtifact) bool { return true })
		if !errors.Is(err, ghapi.ErrNotFound) {
			t.Errorf("error = %v, want ErrNotFound", err)
		}
	})
}

func mustZip(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	z, err := ghfake.ZipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestDownloadArtifact(t *testing.T) {
	files := map[string][]byte{"report.xml": []byte(strings.Repeat("<testcase/>", 200))}
	zipped, err := ghfake.ZipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		setup        func(s *ghfake.Server, r *ghfake.Repo, id int64)
		maxBytes     int64
		wantErr      error
		wantAPI      int // download requests to the API
		wantBlob     int
		wantBlobWait []time.Duration
	}{
		{name: "302 then blob", wantAPI: 1, wantBlob: 1},
		{name: "expired", setup: func(s *ghfake.Server, r *ghfake.Repo, id int64) { r.ExpireArtifact(id) }, wantErr: ghapi.ErrExpired, wantAPI: 1},
		{name: "over the size cap", maxBytes: int64(len(zipped)) - 1, wantErr: ghapi.ErrTooLarge, wantAPI: 1, wantBlob: 1},
		{name: "exactly the size cap", maxBytes: int64(len(zipped)), wantAPI: 1, wantBlob: 1},
		{
			name: "blob 500 is retried",
			setup: func(s *ghfake.Server, r *ghfake.Repo, id int64) {
				s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Status: 500})
			},
			wantAPI: 1, wantBlob: 2, wantBlobWait: []time.Duration{time.Second},
		},
		{
			name: "expired signature: redirect requested again",
			setup: func(s *ghfake.Server, r *ghfake.Repo, id int64) {
				s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.BlobAuthFailure})
			},
			wantAPI: 2, wantBlob: 2,
		},
		{
			name:    "signature refused twice",
			setup:   func(s *ghfake.Server, r *ghfake.Repo, id int64) { s.SetSignedURLTTL(-time.Minute) },
			wantErr: ghapi.ErrForbidden, wantAPI: 2, wantBlob: 2,
		},
		{
			// Azure sends no x-ratelimit-* headers and has no minute rule.
			name: "blob 429 without Retry-After waits the backoff",
			setup: func(s *ghfake.Server, r *ghfake.Repo, id int64) {
				s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.TooManyRequests})
			},
			wantAPI: 1, wantBlob: 2, wantBlobWait: []time.Duration{time.Second},
		},
		{
			name: "blob 429 honours Retry-After",
			setup: func(s *ghfake.Server, r *ghfake.Repo, id int64) {
				s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.TooManyRequests, RetryAfter: 5 * time.Second})
			},
			wantAPI: 1, wantBlob: 2, wantBlobWait: []time.Duration{5 * time.Second},
		},
		{
			name: "API 502 on the redirect is retried",
			setup: func(s *ghfake.Server, r *ghfake.Repo, id int64) {
				s.Inject(ghfake.Fault{Path: "/repos/*/*/actions/artifacts/*/zip"})
			},
			wantAPI: 2, wantBlob: 1, wantBlobWait: []time.Duration{time.Second},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			run := r.AddRun(ghfake.Run{})
			art := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: files})
			if tc.setup != nil {
				tc.setup(s, r, art.ID)
			}
			c, sl := newClient(t, s, ghfake.Token, ghapi.Options{})
			got, err := c.DownloadArtifact(context.Background(), repo, art.ID, tc.maxBytes)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(got, zipped) {
				t.Errorf("downloaded %d bytes, want the %d-byte zip", len(got), len(zipped))
			}
			if n := len(requestsTo(s, "/zip")); n != tc.wantAPI {
				t.Errorf("API download requests = %d, want %d", n, tc.wantAPI)
			}
			blob := s.Requests(ghfake.HostBlob)
			if len(blob) != tc.wantBlob || c.Stats().BlobRequests != int64(tc.wantBlob) {
				t.Errorf("blob requests = %d (counter %d), want %d", len(blob), c.Stats().BlobRequests, tc.wantBlob)
			}
			for _, b := range blob {
				for k, v := range b.Header {
					if strings.EqualFold(k, "Authorization") || strings.Contains(strings.Join(v, " "), ghfake.Token) {
						t.Errorf("blob host got credential header %s: %q", k, v)
					}
				}
			}
			for _, a := range s.Requests(ghfake.HostAPI) {
				if a.Header.Get("Authorization") != "Bearer "+ghfake.Token {
					t.Errorf("API request %s lacks the token", a.Path)
				}
			}
			if err != nil && strings.Contains(err.Error(), "sig=") {
				t.Errorf("error %q shows the URL signature", err)
			}
			if diff := cmp.Diff(tc.wantBlobWait, sl.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConcurrentDownloads runs downloads in parallel against a slow fake
// (run it with -race).
func TestConcurrentDownloads(t *testing.T) {
	s := ghfake.New(t)
	s.SetLatency(20 * time.Millisecond)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	var ids []int64
	for i := range 16 {
		a := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: fmt.Sprint("junit-", i), Files: map[string][]byte{"r.xml": []byte(fmt.Sprint(i))}})
		ids = append(ids, a.ID)
	}
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	sem := make(chan struct{}, 8)
	start := time.Now()
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := c.DownloadArtifact(context.Background(), repo, id, 1<<20)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	st := c.Stats()
	if st.Requests != 16 || st.BlobRequests != 16 {
		t.Errorf("stats = %+v, want 16 API and 16 blob requests", st)
	}
	if s.MaxConcurrent() < 2 {
		t.Errorf("max concurrency %d: downloads did not overlap", s.MaxConcurrent())
	}
	// 32 requests of 20ms each, 8 at a time: well under the 640ms of a serial run.
	if d := time.Since(start); d > 600*time.Millisecond {
		t.Logf("concurrent downloads took %v", d)
	}
}

func TestUpsertComment(t *testing.T) {
	const marker = "<!-- flakegate:gate -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	r.AddComment(ghfake.Comment{Issue: pr.Number, Body: "unrelated"})
	r.AddComment(ghfake.Comment{Issue: pr.Number, Body: "I quoted " + marker, User: "someone"})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	ctx := context.Background()

	cm, created, err := c.UpsertComment(ctx, repo, pr.Number, marker, "first verdict")
	if err != nil || !created {
		t.Fatalf("first upsert: created=%v err=%v", created, err)
	}
	if want := "first verdict\n\n" + marker; cm.Body != want {
		t.Errorf("body = %q, want %q", cm.Body, want)
	}
	cm2, created, err := c.UpsertComment(ctx, repo, pr.Number, marker, "second verdict\n"+marker)
	if err != nil || created {
		t.Fatalf("second upsert: created=%v err=%v", created, err)
	}
	if cm2.ID != cm.ID {
		t.Errorf("edited comment %d, want the bot's comment %d", cm2.ID, cm.ID)
	}
	type row struct {
		User, Body string
	}
	var got []row
	for _, x := range r.Comments(pr.Number) {
		got = append(got, row{x.User, x.Body})
	}
	want := []row{{"octocat", "unrelated"}, {"someone", "I quoted " + marker}, {"github-actions[bot]", "second verdict\n" + marker}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}

	// Same body again: no write.
	before := s.RequestCount(ghfake.HostAPI)
	if _, _, err := c.UpsertComment(ctx, repo, pr.Number, marker, "second verdict\n"+marker); err != nil {
		t.Fatal(err)
	}
	if n := s.RequestCount(ghfake.HostAPI) - before; n != 1 {
		t.Errorf("unchanged upsert made %d requests, want 1 (the list)", n)
	}

	// Over the limit: refused before any request.
	before = s.RequestCount(ghfake.HostAPI)
	_, _, err = c.UpsertComment(ctx, repo, pr.Number, marker, strings.Repeat("é", ghapi.MaxCommentChars))
	if !errors.Is(err, ghapi.ErrTooLarge) {
		t.Errorf("long body error = %v, want ErrTooLarge", err)
	}
	if n := s.RequestCount(ghfake.HostAPI) - before; n != 0 {
		t.Errorf("long body made %d requests", n)
	}
}

func TestFindCommentPaginates(t *testing.T) {
	const marker = "<!-- m -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	for i := range 230 {
		r.AddComment(ghfake.Comment{Issue: pr.Number, Body: fmt.Sprint("chatter ", i)})
	}
	want := r.AddComment(ghfake.Comment{Issue: pr.Number, Body: "report\n" + marker, User: "github-actions[bot]", Bot: true})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	got, err := c.FindComment(context.Background(), repo, pr.Number, marker)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID {
		t.Errorf("found %d, want %d", got.ID, want.ID)
	}
	if n := s.RequestCount(ghfake.HostAPI); n != 3 {
		t.Errorf("requests = %d, want 3 pages", n)
	}
	none, err := c.FindComment(context.Background(), repo, pr.Number, "<!-- other -->")
	if err != nil || none != nil {
		t.Errorf("FindComment(other) = %v, %v; want nil, nil", none, err)
	}
}

func TestForkTokenIsReadOnly(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{HeadRepo: "forker/app"})
	c, sl := newClient(t, s, ghfake.ReadOnlyToken, ghapi.Options{})
	ctx := context.Background()

	if _, err := c.PullRequest(ctx, repo, pr.Number); err != nil {
		t.Fatalf("read with a read-only token: %v", err)
	}
	writes := []struct {
		name string
		call func() error
	}{
		{"comment", func() error { _, _, err := c.UpsertComment(ctx, repo, pr.Number, "<!-- m -->", "x"); return err }},
		{"check run", func() error {
			_, err := c.CreateCheckRun(ctx, repo, ghapi.CheckRunSpec{Name: "flakegate", HeadSHA: pr.HeadSHA, Conclusion: "success"})
			return err
		}},
		{"status", func() error {
			err := c.CreateStatus(ctx, repo, pr.HeadSHA, ghapi.StatusSpec{State: "success", Context: "flakegate"})
			return err
		}},
		{"issue", func() error {
			_, _, err := c.UpsertIssue(ctx, repo, "<!-- m -->", ghapi.IssueSpec{Title: "t"})
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			err := w.call()
			if !errors.Is(err, ghapi.ErrReadOnly) || !errors.Is(err, ghapi.ErrForbidden) {
				t.Fatalf("error = %v, want ErrReadOnly and ErrForbidden", err)
			}
			var ae *ghapi.APIError
			if !errors.As(err, &ae) || ae.StatusCode != 403 || ae.Message != "Resource not accessible by integration" {
				t.Errorf("error = %#v, want *APIError 403 with GitHub's message", err)
			}
		})
	}
	if len(sl.Waits()) != 0 {
		t.Errorf("a permission 403 was retried: %v", sl.Waits())
	}
	if got := r.Comments(pr.Number); len(got) != 0 {
		t.Errorf("comments written with a read-only token: %+v", got)
	}
}

func TestCheckRunAnnotationBatches(t *testing.T) {
	mk := func(n int) []ghapi.Annotation {
		var out []ghapi.Annotation
		for i := range n {
			out = append(out, ghapi.Annotation{
				Path: "pkg/x_test.go", StartLine: i + 1, EndLine: i + 1,
				Level: "warning", Message: fmt.Sprint("flaky ", i),
				Title: strings.Repeat("t", 300),
			})
		}
		return out
	}
	tests := []struct {
		annotations int
		wantWrites  int
	}{
		{0, 1}, {1, 1}, {50, 1}, {51, 2}, {120, 3}, {150, 3}, {151, 4},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.annotations), func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
			spec := ghapi.CheckRunSpec{
				Name: "flakegate", HeadSHA: ghfake.SHA("head"), Conclusion: "neutral",
				Title: "3 flaky tests", Summary: "summary", Text: "details", Annotations: mk(tc.annotations),
			}
			cr, err := c.CreateCheckRun(context.Background(), repo, spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Stats().Requests; got != int64(tc.wantWrites) {
				t.Errorf("requests = %d, want %d", got, tc.wantWrites)
			}
			runs := r.CheckRuns()
			if len(runs) != 1 {
				t.Fatalf("%d check runs, want 1", len(runs))
			}
			got := runs[0]
			if got.ID != cr.ID || got.Writes != tc.wantWrites || got.Conclusion != "neutral" || got.Title != "3 flaky tests" || got.Text != "details" {
				t.Errorf("check run = %+v", got)
			}
			if len(got.Annotations) != tc.annotations {
				t.Fatalf("%d annotations stored, want %d", len(got.Annotations), tc.annotations)
			}
			for i, a := range got.Annotations {
				if a.StartLine != i+1 || len([]rune(a.Title)) != 255 {
					t.Fatalf("annotation %d = line %d, title %d chars; want line %d, 255 chars", i, a.StartLine, len([]rune(a.Title)), i+1)
				}
			}
		})
	}
}

func TestCheckRunRefusesBadSpecs(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app")
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	tests := []struct {
		name    string
		spec    ghapi.CheckRunSpec
		wantErr error
	}{
		{"no name", ghapi.CheckRunSpec{HeadSHA: "abc"}, nil},
		{"summary too long", ghapi.CheckRunSpec{Name: "n", HeadSHA: "abc", Title: "t", Summary: strings.Repeat("x", ghapi.MaxCheckText+1)}, ghapi.ErrTooLarge},
		{"annotation without path", ghapi.CheckRunSpec{Name: "n", HeadSHA: "abc", Title: "t", Summary: "s", Annotations: []ghapi.Annotation{{Message: "m"}}}, nil},
		{"annotations without output", ghapi.CheckRunSpec{Name: "n", HeadSHA: "abc", Annotations: []ghapi.Annotation{{}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateCheckRun(context.Background(), repo, tc.spec)
			if err == nil {
				t.Fatal("want an error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
		})
	}
	if n := s.RequestCount(ghfake.HostAPI); n != 0 {
		t.Errorf("bad specs made %d requests", n)
	}
}

func TestUpsertIssue(t *testing.T) {
	const marker = "<!-- flakegate:weekly -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	r.AddPullRequest(ghfake.PullRequest{Body: "a PR that mentions " + marker})
	r.AddIssue(ghfake.Issue{Title: "closed one", Body: marker, State: "closed"})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	ctx := context.Background()

	is, created, err := c.UpsertIssue(ctx, repo, marker, ghapi.IssueSpec{Title: "Flaky tests", Body: "week 1", Labels: []string{"flaky"}})
	if err != nil || !created {
		t.Fatalf("first upsert: created=%v err=%v", created, err)
	}
	is2, created, err := c.UpsertIssue(ctx, repo, marker, ghapi.IssueSpec{Title: "Flaky tests", Body: "week 2"})
	if err != nil || created || is2.Number != is.Number {
		t.Fatalf("second upsert: issue %d created=%v err=%v, want an update of %d", is2.Number, created, err, is.Number)
	}
	type row struct {
		Title, Body, State string
		Labels             []string
	}
	var got []row
	for _, x := range r.Issues() {
		got = append(got, row{x.Title, x.Body, x.State, x.Labels})
	}
	want := []row{
		{"closed one", marker, "closed", nil},
		{"Flaky tests", "week 2\n\n" + marker, "open", []string{"flaky"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("issues (-want +got):\n%s", diff)
	}
}

func TestPullRequestsForCommit(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	same := r.AddPullRequest(ghfake.PullRequest{HeadSHA: ghfake.SHA("same")})
	fork := r.AddPullRequest(ghfake.PullRequest{HeadSHA: ghfake.SHA("fork"), HeadRepo: "forker/app"})
	r.AddPullRequest(ghfake.PullRequest{HeadSHA: ghfake.SHA("other")})
	r.SetCommitPullsOmitForks(true)
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	tests := []struct {
		name     string
		sha      string
		want     []int
		wantReqs int
	}{
		{"commit endpoint", same.HeadSHA, []int{same.Number}, 1},
		{"fork: fall back to open PRs", fork.HeadSHA, []int{fork.Number}, 2},
		{"unknown", ghfake.SHA("nope"), nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.RequestCount(ghfake.HostAPI)
			prs, err := c.PullRequestsForCommit(context.Background(), repo, tc.sha)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, pr := range prs {
				got = append(got, pr.Number)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PRs (-want +got):\n%s", diff)
			}
			if n := s.RequestCount(ghfake.HostAPI) - before; n != tc.wantReqs {
				t.Errorf("requests = %d, want %d", n, tc.wantReqs)
			}
		})
	}
}

func TestPullRequestAndFiles(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	var files []ghfake.File
	for i := range 3100 {
		files = append(files, ghfake.File{Filename: fmt.Sprintf("f%04d.go", i), Additions: 1})
	}
	files[1].Status, files[1].PreviousFilename = "renamed", "old.go"
	pr := r.AddPullRequest(ghfake.PullRequest{Files: files, HeadRepo: "forker/app", Body: "body"})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	ctx := context.Background()

	got, err := c.PullRequest(ctx, repo, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if got.HeadRepo != "forker/app" || got.BaseRepo != "octo/app" || got.HeadSHA != pr.HeadSHA || !got.Fork() {
		t.Errorf("PR head %s@%s base %s", got.HeadRepo, got.HeadSHA, got.BaseRepo)
	}
	fs, err := c.PullRequestFiles(ctx, repo, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != ghapi.MaxPullRequestFiles {
		t.Errorf("%d files, want %d", len(fs), ghapi.MaxPullRequestFiles)
	}
	if fs[1].Status != "renamed" || fs[1].PreviousPath != "old.go" {
		t.Errorf("file 1 = %s %s", fs[1].Status, fs[1].PreviousPath)
	}
	if n := len(requestsTo(s, "/files")); n != 30 {
		t.Errorf("file list requests = %d, want 30", n)
	}
	if _, err := c.PullRequest(ctx, repo, 999); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("missing PR error = %v, want ErrNotFound", err)
	}
}

func TestFileContents(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	ledger := []byte("entries:\n  - test: a::b\n")
	r.SetFile("main", ".github/flaky-ledger.yml", ledger)
	r.SetFile(ghfake.SHA("base"), ".github/flaky-ledger.yml", []byte("entries: []\n"))
	r.SetFile("main", "big.bin", bytes.Repeat([]byte{'x'}, ghapi.MaxContentBytes+1))
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	tests := []struct {
		name, path, ref string
		want            []byte
		wantErr         error
	}{
		{"default branch", ".github/flaky-ledger.yml", "", ledger, nil},
		{"at a sha", ".github/flaky-ledger.yml", ghfake.SHA("base"), []byte("entries: []\n"), nil},
		{"missing", "nope.yml", "main", nil, ghapi.ErrNotFound},
		{"over 1 MB", "big.bin", "main", nil, ghapi.ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.FileContents(context.Background(), repo, tc.path, tc.ref)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateStatus(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	sha := ghfake.SHA("head")
	err := c.CreateStatus(context.Background(), repo, sha, ghapi.StatusSpec{
		State: "failure", Context: "flakegate", Description: strings.Repeat("d", 200), TargetURL: "https://example.com/run",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ghfake.Status{{SHA: sha, State: "failure", Context: "flakegate", Description: strings.Repeat("d", 139) + "…", TargetURL: "https://example.com/run"}}
	got := r.Statuses()
	for i := range got {
		got[i].ID = 0
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestOpenAPIConformance runs a mixed workload and asserts, explicitly, that
// the fake found no request or response off GitHub's OpenAPI description.
func TestOpenAPIConformance(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{Attempts: 2, PullRequests: []int{1}})
	pr := r.AddPullRequest(ghfake.PullRequest{Number: 1, Files: []ghfake.File{{Filename: "a.go"}}})
	art := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: map[string][]byte{"a.xml": nil}})
	r.SetFile("", "ledger.yml", []byte("x"))
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	ctx := context.Background()
	steps := []func() error{
		func() error {
			_, err := c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{Workflow: "ci.yml", Branch: "main", Event: "push", CreatedSince: t0, HeadSHA: run.HeadSHA, AllAttempts: true})
			return err
		},
		func() error { _, err := c.WorkflowRun(ctx, repo, run.ID); return err },
		func() error { _, err := c.ListRunArtifacts(ctx, repo, run.ID, "junit*"); return err },
		func() error {
			return c.ArtifactsNamed(ctx, repo, "junit", 0, func(ghapi.RepoArtifact) bool { return true })
		},
		func() error { _, err := c.DownloadArtifact(ctx, repo, art.ID, 0); return err },
		func() error { _, err := c.PullRequest(ctx, repo, pr.Number); return err },
		func() error { _, err := c.PullRequestFiles(ctx, repo, pr.Number); return err },
		func() error { _, err := c.PullRequestsForCommit(ctx, repo, ghfake.SHA("x")); return err },
		func() error { _, _, err := c.UpsertComment(ctx, repo, pr.Number, "<!-- m -->", "a"); return err },
		func() error { _, _, err := c.UpsertComment(ctx, repo, pr.Number, "<!-- m -->", "b"); return err },
		func() error {
			_, _, err := c.UpsertIssue(ctx, repo, "<!-- i -->", ghapi.IssueSpec{Title: "t", Labels: []string{"l"}})
			return err
		},
		func() error {
			_, _, err := c.UpsertIssue(ctx, repo, "<!-- i -->", ghapi.IssueSpec{State: "closed"})
			return err
		},
		func() error {
			cr, err := c.CreateCheckRun(ctx, repo, ghapi.CheckRunSpec{Name: "n", HeadSHA: pr.HeadSHA, Status: "in_progress"})
			if err != nil {
				return err
			}
			_, err = c.UpdateCheckRun(ctx, repo, cr.ID, ghapi.CheckRunSpec{Conclusion: "failure", Title: "t", Summary: "s"})
			return err
		},
		func() error { _, err := c.FileContents(ctx, repo, "ledger.yml", ""); return err },
		func() error {
			err := c.CreateStatus(ctx, repo, pr.HeadSHA, ghapi.StatusSpec{State: "pending"})
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Errorf("step %d: %v", i, err)
		}
	}
	if n := s.RequestCount(ghfake.HostAPI); n < len(steps) {
		t.Errorf("only %d requests", n)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("OpenAPI violations: %v", v)
	}
}

func TestFindCommentAuthor(t *testing.T) {
	const marker = "<!-- m -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	bot := r.AddComment(ghfake.Comment{Issue: pr.Number, Body: marker, User: "other-app[bot]", Bot: true})
	alice := r.AddComment(ghfake.Comment{Issue: pr.Number, Body: marker, User: "alice"})
	tests := []struct {
		author string
		want   int64
	}{
		{"", bot.ID},
		{"Alice", alice.ID},
		{"bob", 0},
	}
	for _, tc := range tests {
		t.Run(tc.author, func(t *testing.T) {
			c, _ := newClient(t, s, ghfake.Token, ghapi.Options{CommentAuthor: tc.author})
			got, err := c.FindComment(context.Background(), repo, pr.Number, marker)
			if err != nil {
				t.Fatal(err)
			}
			var id int64
			if got != nil {
				id = got.ID
			}
			if id != tc.want {
				t.Errorf("found comment %d, want %d", id, tc.want)
			}
		})
	}
}

func TestCanceledWhileWaiting(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app")
	s.Inject(ghfake.Fault{Times: -1, Status: 503})
	ctx, cancel := context.WithCancel(context.Background())
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Retry: retry.Policy{
		Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() },
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if n := s.RequestCount(ghfake.HostAPI); n != 1 {
		t.Errorf("%d requests after cancel, want 1", n)
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, u := range []string{"ftp://x/", "://", "api.github.com"} {
		if _, err := ghapi.New("t", u, nil, ghapi.Options{}); err == nil {
			t.Errorf("New(%q) accepted a bad URL", u)
		}
	}
}

// BenchmarkDownloadConcurrent downloads artifacts 8 at a time from a fake
// with 5ms of latency per request.
func BenchmarkDownloadConcurrent(b *testing.B) {
	s := ghfake.New(b)
	s.SetLatency(5 * time.Millisecond)
	s.SetRateLimit(1<<30, time.Now().Add(time.Hour))
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	var ids []int64
	for i := range 32 {
		a := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: fmt.Sprint("junit-", i), Files: map[string][]byte{"r.xml": bytes.Repeat([]byte("<testcase/>"), 1000)}})
		ids = append(ids, a.ID)
	}
	c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if _, err := c.DownloadArtifact(context.Background(), repo, id, 0); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(c.Stats().Requests)/float64(b.N), "api-req/op")
}

// TestMarkerOnlyInTrailer: a marker counts on its own line in the trailer
// that ends a body, where WithMarker writes it, or, when a person wrote
// under the trailer, as a whole line of the body. Rendered content (a test
// name in a code span) can carry another step's marker, never as a line.
func TestMarkerOnlyInTrailer(t *testing.T) {
	const marker, other = "<!-- flakegate:sticky-comment:e2e -->", "<!-- flakegate:state 0123456789abcdef -->"
	tests := []struct {
		name, body string
		want       bool
		// notComment: an issue's marker, not a comment's: a comment is
		// ours only when the marker ends its trailer (endsWithMarker).
		notComment bool
	}{
		{"trailer", "report\n\n" + marker + "\n", true, false},
		{"trailer with a state mark after", "report\n\n" + marker + "\n" + other + "\n", true, false},
		{"older trailer without a blank line", "report\n" + marker, true, false},
		{"marker alone", marker, true, false},
		{"in a code span", "pending: `t::x " + marker + "`\n\n<!-- flakegate:sticky-comment:unit -->", false, false},
		{"on its own line above the trailer", "x\n" + marker + "\n\n<!-- flakegate:sticky-comment:unit -->", false, false},
		{"at the end of a line", "report " + marker, false, false},
		{"followed by a line of text", marker + "\nreport", true, true},
		{"two comments on one line", "report\n<!-- a -->" + marker, false, false},
		// A person wrote under the trailer (a triage note): the marker
		// is still a whole line of the body, and nothing hidden ends it.
		{"a person's note under the trailer", "report\n\n" + marker + "\n" + other + "\n\nTriage: owned by @team-a, see #12.", true, true},
		{"a note, and a marker mid-line", "report " + marker + "\n\nTriage note", false, false},
	}
	// Another tool's comment that echoed a test's output, a planted marker
	// in it, then its own hidden line: a line of its trailer, but not where
	// ours ends, so not ours (an audit: test-reporter[bot]'s comment was
	// edited to the verdict). An issue's trailer rule stays HasMarker's.
	echoed := "Failed tests:\n\n" + marker + "\n<!-- test-reporter -->\n"
	{
		s := ghfake.New(t)
		r := s.Repo("octo/app")
		c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
		pr := r.AddPullRequest(ghfake.PullRequest{})
		r.AddComment(ghfake.Comment{Issue: pr.Number, User: "test-reporter[bot]", Bot: true, Body: echoed})
		ours := r.AddComment(ghfake.Comment{Issue: pr.Number, User: "github-actions[bot]", Bot: true, Body: "verdict\n\n" + marker + "\n" + other + "\n"})
		// Its marker in a code block, with no hidden line after (a review).
		r.AddComment(ghfake.Comment{Issue: pr.Number, User: "test-reporter[bot]", Bot: true, Body: "Output:\n```\n" + marker + "\n```\n"})
		found, err := c.FindComments(context.Background(), repo, pr.Number, marker)
		if err != nil || len(found) != 1 || found[0].ID != ours.ID {
			t.Errorf("FindComments with another tool's echo first = %+v, %v; want ours, %d", found, err, ours.ID)
		}
	}
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ghapi.HasMarker(tc.body, marker); got != tc.want {
				t.Errorf("HasMarker = %v, want %v", got, tc.want)
			}
			if got := ghapi.HasMarker(ghapi.WithMarker(tc.body, marker), marker); !got {
				t.Errorf("WithMarker(%q) = %q lacks the marker in its trailer", tc.body, ghapi.WithMarker(tc.body, marker))
			}
			pr := r.AddPullRequest(ghfake.PullRequest{})
			cm := r.AddComment(ghfake.Comment{Issue: pr.Number, User: "github-actions[bot]", Bot: true, Body: tc.body})
			found, err := c.FindComment(ctx, repo, pr.Number, marker)
			if want := tc.want && !tc.notComment; err != nil || (found != nil) != want || found != nil && found.ID != cm.ID {
				t.Errorf("FindComment = %+v, %v; want found %v", found, err, tc.want && !tc.notComment)
			}
			is := r.AddIssue(ghfake.Issue{Title: tc.name, Body: tc.body, User: "github-actions[bot]"})
			got, err := c.FindIssue(ctx, repo, marker, nil)
			if err != nil || (got != nil) != tc.want || got != nil && got.Number != is.Number {
				t.Errorf("FindIssue = %+v, %v; want found %v", got, err, tc.want)
			}
			if _, err := c.UpdateIssue(ctx, repo, is.Number, ghapi.IssueSpec{Body: tc.body, State: "closed"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFindIssueScanCap: FindIssue reads the 1,000 most recently updated
// open issues and pull requests. A tracking issue opened long ago but edited
// by every report is among them; one that is not says so (ErrScanCapped)
// instead of silently finding nothing.
func TestFindIssueScanCap(t *testing.T) {
	const marker = "<!-- flakegate:tracking-issue -->"
	now := t0
	s := ghfake.New(t)
	s.SetClock(func() time.Time { return now })
	r := s.Repo("octo/app")
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	ctx := context.Background()
	tracking, _, err := c.UpsertIssue(ctx, repo, marker, ghapi.IssueSpec{Title: "flaky", Body: "week 1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		now = now.Add(time.Minute)
		r.AddIssue(ghfake.Issue{Title: fmt.Sprint("bug ", i)})
	}
	got, err := c.FindIssue(ctx, repo, marker, nil)
	if !errors.Is(err, ghapi.ErrScanCapped) || got != nil || !strings.Contains(err.Error(), "1000 most recently updated") {
		t.Errorf("FindIssue past 1,000 newer issues = %+v, %v; want ErrScanCapped", got, err)
	}
	// The next report edits it (as every report does); now it is found,
	// though 1,000 open issues are newer.
	now = now.Add(time.Hour)
	if _, err := c.UpdateIssue(ctx, repo, tracking.Number, ghapi.IssueSpec{Body: ghapi.WithMarker("week 2", marker)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	for i := range 5 {
		r.AddIssue(ghfake.Issue{Title: fmt.Sprint("new bug ", i)})
	}
	got, err = c.FindIssue(ctx, repo, marker, nil)
	if err != nil || got == nil || got.Number != tracking.Number {
		t.Errorf("FindIssue of the recently updated tracking issue = %+v, %v; want #%d", got, err, tracking.Number)
	}
}
