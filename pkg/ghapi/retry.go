package ghapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// Rate-limit headers.
const (
	headerLimit      = "X-Ratelimit-Limit"
	headerRemaining  = "X-Ratelimit-Remaining"
	headerReset      = "X-Ratelimit-Reset"
	headerRetryAfter = "Retry-After"
)

// maxErrorBody bounds how much of a 403 body is read to tell a secondary
// rate limit from a permission error.
const maxErrorBody = 64 << 10

// retryTransport retries one HTTP request. It sits below go-github, so that
// go-github sees only the final answer: go-github remembers rate limits
// against the wall clock and would refuse a retry that an injected clock
// allows.
//
// It retries network errors, 5xx, 429 and rate-limit 403s, waiting as
// rateLimitWait says. A primary limit (remaining 0) waits until its reset
// only when that fits MaxWait: it may last an hour. Everything else is
// returned as is. POSTs are retried too, as octokit's retry plugin does: a
// 5xx after GitHub stored a comment can, rarely, duplicate it; the next
// UpsertComment edits the first one found by its marker.
//
// Each attempt has its own timeout, which runs until its body is closed; the
// waits between attempts are bounded by MaxWait instead. Before each attempt
// to the API, pace waits for the request's share of the budget.
type retryTransport struct {
	base              http.RoundTripper
	opts              Options
	requests, retries *atomic.Int64
	rate              *counters // nil for the blob host
	blob              bool
	pace              *pacer        // nil: not paced
	timeout           time.Duration // per attempt; 0: none
	// stalls counts the attempts in a row, over every call, that timed out
	// before any answer; an answer resets it. At MaxStalls the host is
	// taken as down: a hung GitHub would otherwise hold the job for each
	// request's attempts in turn, hours for a long collection.
	stalls atomic.Int64
}

// MaxStalls is how many attempts in a row may time out, with no answer,
// before a host is asked nothing more (ErrUnresponsive): more than one
// call's attempts, and more than the downloads and listings in flight at
// once, so that one slow request or one slow wave does not stop a
// collection.
const MaxStalls = 12

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		if n := t.stalls.Load(); n >= MaxStalls {
			return nil, fmt.Errorf("%s: %w: %d requests in a row had no answer within %s", req.URL.Host, ErrUnresponsive, n, t.timeout)
		}
		if err := t.pace.wait(ctx, req.Method); err != nil {
			return nil, err
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if t.timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, t.timeout)
		}
		r := req.WithContext(actx)
		if attempt > 0 {
			r = req.Clone(actx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					cancel()
					return nil, err
				}
				r.Body = body
			}
		}
		t.requests.Add(1)
		resp, err := t.base.RoundTrip(r)
		switch {
		case resp != nil:
			t.stalls.Store(0)
		case ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded):
			t.stalls.Add(1)
		}
		if resp != nil {
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		} else {
			cancel()
		}
		t.noteRate(resp)
		wait, retry := t.decide(ctx, attempt, resp, err)
		if !retry && resp != nil && !t.blob {
			// The answer is final: read its body here, within the
			// attempt's timeout, so that a connection that breaks in the
			// middle of it (or a body that never ends) is this attempt's
			// failure, retried as any other, rather than a decoding error
			// of go-github's after the transport is done.
			if rerr := readWhole(resp, req.URL.Host); rerr != nil {
				if errors.Is(rerr, ErrTooLarge) {
					return nil, rerr
				}
				if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
					t.stalls.Add(1)
				}
				if resp.StatusCode < 300 && (req.Method == http.MethodPost || req.Method == http.MethodPatch) {
					// GitHub did the write (a comment, an issue, a check
					// run, a batch of annotations) before the answer
					// broke: sent again, it would be done twice.
					return nil, rerr
				}
				resp, err = nil, rerr
				wait, retry = t.decide(ctx, attempt, nil, err)
			}
		}
		if !retry || !replayable || attempt >= t.opts.Retry.MaxRetries || waited+wait > t.opts.Retry.MaxWait {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
		}
		t.retries.Add(1)
		if err := t.opts.Retry.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		waited += wait
	}
}

// maxAPIBody bounds the body of one API answer. The largest GitHub sends
// flakegate are pages of 100 workflow runs or pull request files (a few
// MB) and a file of the contents API (1 MB, base64 in JSON).
const maxAPIBody = 64 << 20

// readWhole reads resp's body into memory and closes it, leaving a reader
// of the bytes read in its place. A read error is returned as is (io.EOF
// cut short is io.ErrUnexpectedEOF, as net/http reports it); a body over
// maxAPIBody is ErrTooLarge.
func readWhole(resp *http.Response, host string) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody+1))
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("%s: reading the answer: %w", host, err)
	case len(b) > maxAPIBody:
		return &SizeError{What: host + ": API answer", Limit: maxAPIBody, Size: -1}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

// cancelBody ends an attempt's context when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *retryTransport) noteRate(resp *http.Response) {
	if t.rate == nil || resp == nil {
		return
	}
	if v, err := strconv.ParseInt(resp.Header.Get(headerRemaining), 10, 64); err == nil {
		t.rate.rateRemaining.Store(v)
	}
	if v, err := strconv.ParseInt(resp.Header.Get(headerReset), 10, 64); err == nil {
		t.rate.rateReset.Store(v)
	}
}

func (t *retryTransport) backoff(attempt int) time.Duration { return t.opts.backoff(attempt) }

// backoff is the wait before retry attempt+1 (retry.Policy.Backoff).
func (o Options) backoff(attempt int) time.Duration { return o.Retry.Backoff(attempt) }

// decide says whether to retry and after how long.
func (t *retryTransport) decide(ctx context.Context, attempt int, resp *http.Response, err error) (time.Duration, bool) {
	if err != nil {
		if ctx.Err() != nil || !retry.Transient(err) {
			return 0, false
		}
		return t.backoff(attempt), true
	}
	switch code := resp.StatusCode; {
	case code >= 500 && code != http.StatusNotImplemented:
		return t.backoff(attempt), true
	case code == http.StatusTooManyRequests:
		return t.rateLimitWait(attempt, resp)
	case code == http.StatusForbidden && !t.blob:
		if resp.Header.Get(headerRemaining) != "0" && !secondaryLimit(resp) {
			return 0, false // a missing permission
		}
		return t.rateLimitWait(attempt, resp)
	}
	return 0, false
}

// rateLimitWait is the wait GitHub asks for after a 429 or a rate-limit
// 403 ("Best practices for using the REST API", rate limits):
//  1. Retry-After, when present;
//  2. else, when x-ratelimit-remaining is 0, until x-ratelimit-reset;
//  3. else at least a minute, longer with the backoff.
//
// x-ratelimit-reset alone says nothing of a secondary limit: GitHub sends the
// primary window's headers on every answer, a secondary limit's included,
// with remaining above 0 and reset up to an hour away. RoundTrip gives up
// when the wait would pass MaxWait.
//
// The blob host (Azure storage) sends no x-ratelimit-* headers and has no
// minute rule: a 429 there without Retry-After waits the backoff.
func (t *retryTransport) rateLimitWait(attempt int, resp *http.Response) (time.Duration, bool) {
	if secs, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get(headerRetryAfter))); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t.blob {
		return t.backoff(attempt), true
	}
	if resp.Header.Get(headerRemaining) == "0" {
		secs, err := strconv.ParseInt(resp.Header.Get(headerReset), 10, 64)
		if err != nil || secs <= 0 {
			return 0, false // spent, with no word of when it refills
		}
		return max(time.Unix(secs, 0).Sub(t.opts.Now()), time.Second), true
	}
	return max(t.backoff(attempt), secondaryMinWait), true
}

// secondaryLimit reads a 403 body (and puts it back) to see whether it is a
// secondary rate limit rather than a missing permission.
func secondaryLimit(resp *http.Response) bool {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if resp.Header.Get(headerRetryAfter) != "" {
		return true
	}
	var e struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	_ = json.Unmarshal(body, &e)
	return strings.HasSuffix(e.DocumentationURL, "secondary-rate-limits") ||
		strings.HasSuffix(e.DocumentationURL, "#abuse-rate-limits") ||
		strings.Contains(strings.ToLower(e.Message), "secondary rate limit")
}
