// Package ghapi is flakegate's thin adapter over go-github v60. It adds what
// go-github leaves to its callers: pagination with per_page=100, retries with
// backoff for server errors, network errors, 429 and secondary rate limits,
// pacing that keeps under the secondary limits (Pace), a typed stop when the
// primary rate limit is spent, a request counter for budgets, a token that
// never leaves the API host (not on redirects, not to the blob host),
// artifact downloads streamed to disk and retried when the connection
// breaks, and typed errors (ErrNotFound, ErrForbidden, ErrReadOnly,
// ErrExpired, …).
//
// It renders nothing and decides nothing: callers pass bodies in and get
// go-github values out.
//
// # Run attempts and their artifacts
//
// The runs list shows each run's latest attempt only (run_attempt = N).
// Earlier attempts are reached with GET
// /repos/{o}/{r}/actions/runs/{id}/attempts/{n}, which returns the run as of
// attempt n: its conclusion and start time (RunFilter.AllAttempts does this).
// Artifacts belong to the run, not to an attempt: the artifacts list
// (GET …/runs/{id}/artifacts) has no attempt field and always shows the
// run's current set; a name can be used once per run (upload-artifact v4
// refuses a second upload of the same name with 409 unless it overwrites);
// and after a re-run of all jobs the artifacts of earlier attempts are no
// longer listed or served (actions/upload-artifact#585), while a re-run of
// failed jobs keeps those of the jobs it did not re-run. Evidence from every
// attempt therefore needs the attempt in the artifact name (e.g.
// junit-${{ github.run_attempt }}) or in the JUnit properties (run_attempt).
package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// Platform limits.
const (
	perPage = 100 // GitHub: per_page "max 100"
	// DefaultAPIURL is github.com's REST API.
	DefaultAPIURL = "https://api.github.com/"
)

// Defaults for the zero Options.
const (
	defaultMaxRetries       = 4
	defaultBackoffBase      = time.Second
	defaultMaxBackoff       = 30 * time.Second
	defaultMaxWait          = 2 * time.Minute
	defaultTimeout          = 60 * time.Second
	defaultDownloadTimeout  = 5 * time.Minute
	defaultMaxArtifactBytes = 512 << 20
	// secondaryMinWait is how long to wait after a secondary rate limit that
	// names no time.
	secondaryMinWait = time.Minute // GitHub: "wait for at least one minute before retrying"
)

// Options tune a Client. The zero value is the default.
type Options struct {
	// Retry is the retry policy (pkg/internal/retry); its zero fields take
	// the defaults: 4 retries, backoff from 1s doubling to 30s, and at most
	// 2 minutes of waiting per request, Retry-After included. Its Sleep
	// also paces requests (Pace).
	Retry retry.Policy
	// Now is the clock, for x-ratelimit-reset; default time.Now.
	Now func() time.Time
	// BlobClient fetches artifact zips from the signed URL GitHub redirects
	// to. It must not add credentials. Default: a fresh client, never the
	// one given to New.
	BlobClient *http.Client
	// CommentAuthor is the login whose comments FindComment and
	// UpsertComment (and whose issues FindIssue and UpsertIssue) may take
	// as theirs. Default: the token's identity, that is any bot account (a
	// GITHUB_TOKEN writes as github-actions[bot], an app as <app>[bot]) or,
	// for a personal access token, its owner, whom GitHub is asked once
	// (GET /user) when a person's marked comment or issue is found.
	CommentAuthor string
	// UserAgent defaults to "flakegate".
	UserAgent string
	// Pace paces the API requests ahead of GitHub's secondary rate limits,
	// with Now and Sleep; the zero value is the default.
	Pace Pace
}

func (o Options) withDefaults() Options {
	o.Retry = o.Retry.WithDefaults(retry.Policy{MaxRetries: defaultMaxRetries, BackoffBase: defaultBackoffBase, MaxBackoff: defaultMaxBackoff, MaxWait: defaultMaxWait})
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.UserAgent == "" {
		o.UserAgent = "flakegate"
	}
	return o
}

// Repo names a repository.
type Repo struct {
	Owner, Name string
}

// ParseRepo parses "owner/name", the form of GITHUB_REPOSITORY.
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Repo{}, fmt.Errorf("repository %q: want owner/name", s)
	}
	return Repo{Owner: owner, Name: name}, nil
}

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// Stats counts what a Client did, for request budgets: a GITHUB_TOKEN gets
// 1,000 requests per hour per repository.
type Stats struct {
	// Requests is the number of HTTP requests sent to the API, retries
	// included.
	Requests int64
	// Retries is how many requests, to the API or the blob host, were
	// retries.
	Retries int64
	// BlobRequests is the number of requests sent to the artifact blob host;
	// they do not count against the API rate limit.
	BlobRequests int64
	// RateRemaining and RateReset are from the last API response that had
	// rate headers; RateRemaining is -1 before that.
	RateRemaining int
	RateReset     time.Time
	// Paced is how many API requests waited for the pacing (Options.Pace),
	// and PaceWait how long in all.
	Paced    int64
	PaceWait time.Duration
}

type counters struct {
	requests, retries, blobRequests atomic.Int64
	rateRemaining                   atomic.Int64
	rateReset                       atomic.Int64
}

// Client is the adapter. It is safe for concurrent use.
type Client struct {
	gh    *github.Client
	blob  *http.Client
	opts  Options
	stats *counters
	pace  *pacer
	who   *identity // whom the token writes as, asked once (tokenLogin)
}

// New returns a Client that authenticates with token against the REST API
// at baseURL (DefaultAPIURL when empty; a fake's URL in tests). hc carries
// the API requests (nil: a client with a 60s timeout). The token is added to
// the requests for the API host only, never to another host's: API calls
// redirected to another host fail, and downloads fetch the signed URL
// without it.
//
// hc's Timeout (and BlobClient's) bounds each attempt, from sending the
// request to reading the body, not the retries together: a secondary rate
// limit's Retry-After is commonly the whole 60 seconds.
func New(token, baseURL string, hc *http.Client, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q: want an http(s) URL", baseURL)
	}
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	st := &counters{}
	st.rateRemaining.Store(-1)
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// The token goes on each request that the API host gets, redirects
	// included, and on no other (authTransport); API calls do not follow
	// redirects to other hosts (checkRedirect).
	pace := newPacer(opts.Pace, opts.Now, opts.Retry.Sleep)
	api := &http.Client{
		Transport: &authTransport{token: token, api: u,
			base: &retryTransport{base: base, opts: opts, requests: &st.requests, retries: &st.retries, rate: st, pace: pace, timeout: hc.Timeout}},
		CheckRedirect: checkRedirect(u, hc.CheckRedirect),
		Jar:           hc.Jar,
	}
	gh := github.NewClient(api)
	gh.BaseURL = u
	gh.UserAgent = opts.UserAgent

	blob := opts.BlobClient
	if blob == nil {
		blob = &http.Client{Timeout: defaultDownloadTimeout}
	}
	blobBase := blob.Transport
	if blobBase == nil {
		blobBase = http.DefaultTransport
	}
	blob = &http.Client{
		Transport:     &retryTransport{base: blobBase, opts: opts, requests: &st.blobRequests, retries: &st.retries, blob: true, timeout: blob.Timeout},
		CheckRedirect: blob.CheckRedirect,
	}
	return &Client{gh: gh, blob: blob, opts: opts, stats: st, pace: pace, who: &identity{}}, nil
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	s := Stats{
		Requests:      c.stats.requests.Load(),
		Retries:       c.stats.retries.Load(),
		BlobRequests:  c.stats.blobRequests.Load(),
		RateRemaining: int(c.stats.rateRemaining.Load()),
	}
	if r := c.stats.rateReset.Load(); r > 0 {
		s.RateReset = time.Unix(r, 0)
	}
	if c.pace != nil {
		s.Paced, s.PaceWait = c.pace.paced.Load(), time.Duration(c.pace.waited.Load())
	}
	return s
}

func (c *Client) now() time.Time { return c.opts.Now() }

// paginate fetches pages of per_page=100 until the last page or until max
// items (max <= 0: no limit).
func paginate[T any](ctx context.Context, c *Client, what string, max int, fetch func(ctx context.Context, opts github.ListOptions) ([]T, *github.Response, error)) ([]T, error) {
	var all []T
	opts := github.ListOptions{PerPage: perPage, Page: 1}
	for {
		items, resp, err := fetch(ctx, opts)
		if err != nil {
			return all, c.classify(what, resp, err)
		}
		all = append(all, items...)
		if max > 0 && len(all) >= max {
			return all[:max], nil
		}
		if resp == nil || resp.NextPage == 0 || len(items) == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}
