package ghapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// Sentinel errors. Match them with errors.Is; the concrete errors are
// *APIError, *RateLimitError and *SizeError.
var (
	// ErrNotFound: 404. GitHub also answers 404 for what a token may not see.
	ErrNotFound = errors.New("not found")
	// ErrForbidden: 403 that is not a rate limit.
	ErrForbidden = errors.New("forbidden")
	// ErrReadOnly: 403 "Resource not accessible by integration", what a fork
	// PR's read-only GITHUB_TOKEN gets on every write. It is also ErrForbidden.
	ErrReadOnly = errors.New("token is read-only")
	// ErrExpired: 410 Gone, an expired artifact.
	ErrExpired = errors.New("expired")
	// ErrInvalid: 422, GitHub refused the content.
	ErrInvalid = errors.New("refused by GitHub")
	// ErrRateLimited: a primary or secondary rate limit that outlasted the
	// retry budget.
	ErrRateLimited = errors.New("rate limited")
	// ErrTooLarge: a download, file or text over a size limit.
	ErrTooLarge = errors.New("too large")
	// ErrUnresponsive: the host let MaxStalls attempts in a row time out
	// without an answer; the client asks it nothing more.
	ErrUnresponsive = errors.New("not answering")
)

// messageReadOnly is what GitHub says when a token lacks a write permission,
// as a fork PR's GITHUB_TOKEN does.
const messageReadOnly = "Resource not accessible by integration"

// APIError is an error response from GitHub that is not a rate limit.
type APIError struct {
	// What names what was being done, as a noun phrase: "comments of
	// octo/app#12".
	What             string
	StatusCode       int
	Message          string
	DocumentationURL string
	Err              error // the go-github error, when there is one
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.What, e.StatusCode, msg)
}

func (e *APIError) Unwrap() error { return e.Err }

// Is maps the status to the package's sentinel errors.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrReadOnly:
		return e.StatusCode == http.StatusForbidden && strings.Contains(e.Message, messageReadOnly)
	case ErrExpired:
		return e.StatusCode == http.StatusGone
	case ErrInvalid:
		return e.StatusCode == http.StatusUnprocessableEntity
	}
	return false
}

// RateLimitError says a rate limit stopped the client, and until when.
type RateLimitError struct {
	What string
	// Primary is true when the hourly request budget is spent; Reset says
	// when it refills. Otherwise a secondary limit or 429 outlasted the retry
	// budget, and RetryAfter says how long GitHub asked to wait (0: it named
	// no time, and asks for at least a minute); Reset is then zero.
	Primary    bool
	Limit      int
	Reset      time.Time
	RetryAfter time.Duration
	Now        time.Time // when the error was made, for the message
	Err        error
}

func (e *RateLimitError) Error() string {
	var b strings.Builder
	b.WriteString(e.What)
	b.WriteString(": ")
	if e.Primary {
		b.WriteString("GitHub API rate limit exhausted")
		if e.Limit > 0 {
			fmt.Fprintf(&b, " (%d requests per hour)", e.Limit)
		}
	} else {
		b.WriteString("GitHub secondary rate limit")
	}
	switch {
	case !e.Reset.IsZero():
		fmt.Fprintf(&b, "; resets at %s", e.Reset.UTC().Format(time.RFC3339))
		if d := e.Reset.Sub(e.Now); d > 0 && !e.Now.IsZero() {
			fmt.Fprintf(&b, " (in %s)", d.Round(time.Second))
		}
	case e.RetryAfter > 0:
		fmt.Fprintf(&b, "; retry after %s", e.RetryAfter)
	case !e.Primary:
		b.WriteString("; retry after a minute or more")
	}
	return b.String()
}

func (e *RateLimitError) Unwrap() error { return e.Err }

// Is matches ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// SizeError says something was over a size limit.
type SizeError struct {
	What  string
	Limit int64
	Size  int64 // -1 when only "more than Limit" is known
}

func (e *SizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: more than the limit of %d bytes", e.What, e.Limit)
	}
	return fmt.Sprintf("%s: %d is over the limit of %d", e.What, e.Size, e.Limit)
}

// Is matches ErrTooLarge.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// classify turns what go-github returned into the package's typed errors,
// wrapped once with what.
func (c *Client) classify(what string, resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	var (
		rl *github.RateLimitError
		ab *github.AbuseRateLimitError
		er *github.ErrorResponse
	)
	switch {
	case errors.Is(err, errOtherHost):
		return fmt.Errorf("%s: %w", what, retry.Redact(err))
	case errors.As(err, &rl):
		return &RateLimitError{What: what, Primary: true, Limit: rl.Rate.Limit, Reset: rl.Rate.Reset.Time, Now: c.now(), Err: err}
	case errors.As(err, &ab):
		e := &RateLimitError{What: what, Now: c.now(), Err: err}
		if ab.RetryAfter != nil {
			e.RetryAfter = *ab.RetryAfter
		}
		return e
	case errors.As(err, &er) && er.Response != nil:
		if e := c.rateLimitFromResponse(what, er.Response, err); e != nil {
			return e
		}
		return &APIError{What: what, StatusCode: er.Response.StatusCode, Message: er.Message, DocumentationURL: er.DocumentationURL, Err: err}
	case resp != nil && resp.Response != nil && resp.StatusCode >= 300:
		// Calls that bypass go-github's CheckResponse, such as
		// DownloadArtifact, return a plain error with the response.
		if e := c.rateLimitFromResponse(what, resp.Response, err); e != nil {
			return e
		}
		return &APIError{What: what, StatusCode: resp.StatusCode, Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// rateLimitFromResponse recognises a rate-limit answer that go-github passed
// through as a plain error: every 429, and 403 with remaining 0 or a
// Retry-After header.
func (c *Client) rateLimitFromResponse(what string, r *http.Response, err error) *RateLimitError {
	h := r.Header
	primary := h.Get(headerRemaining) == "0"
	if r.StatusCode != http.StatusTooManyRequests && (r.StatusCode != http.StatusForbidden || (!primary && h.Get(headerRetryAfter) == "")) {
		return nil
	}
	e := &RateLimitError{What: what, Primary: primary, Now: c.now(), Err: err}
	e.Limit, _ = strconv.Atoi(h.Get(headerLimit))
	// x-ratelimit-reset is the primary window's, sent on every answer: a
	// secondary limit's answer carries it too, up to an hour away, and it
	// says nothing of when that limit lifts.
	if secs, perr := strconv.ParseInt(h.Get(headerReset), 10, 64); perr == nil && secs > 0 && primary {
		e.Reset = time.Unix(secs, 0)
	}
	if secs, perr := strconv.Atoi(h.Get(headerRetryAfter)); perr == nil {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}
