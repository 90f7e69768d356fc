package ghfake

import (
	"net/http"
	"strconv"
	"time"
)

// FaultKind is what an injected fault does.
type FaultKind int

// Fault kinds.
const (
	// ServerError answers Status (default 502) with a JSON error body.
	ServerError FaultKind = iota
	// TooManyRequests answers 429, with Retry-After when RetryAfter is set.
	// On the API host it carries the primary window's x-ratelimit-* headers,
	// as GitHub's do: remaining is what is left (not 0) and reset is the
	// window's reset, or Reset when set.
	TooManyRequests
	// SecondaryRateLimit answers 403 with GitHub's secondary-limit message and
	// documentation link, Retry-After when RetryAfter is set, and the
	// primary window's x-ratelimit-* headers as TooManyRequests does.
	SecondaryRateLimit
	// PrimaryRateLimit answers 403 with x-ratelimit-remaining 0 and
	// x-ratelimit-reset at Reset (default in one hour).
	PrimaryRateLimit
	// Disconnect closes the connection without an answer.
	Disconnect
	// BlobAuthFailure answers 403 AuthenticationFailed as Azure does for an
	// expired or bad signature (meant for HostBlob).
	BlobAuthFailure
	// Redirect answers Status (default 307) with a Location header of
	// Location, as GitHub does for a renamed or transferred repository. The
	// body is GitHub's: message, url and documentation_url.
	Redirect
	// DisconnectMidBody answers as usual, with the full Content-Length, but
	// closes the connection after half the body (at least one byte, none
	// when the body is empty): a connection reset mid-download.
	DisconnectMidBody
)

// Fault describes failures to inject. The zero Fault makes the next REST
// request fail once with 502.
type Fault struct {
	Host   Host   // default HostAPI
	Method string // "" matches any method
	// Path is a path.Match pattern for the URL path, e.g.
	// "/repos/*/*/actions/runs"; "" matches any path.
	Path string
	// Times is how many matching requests fail: 0 means once, a negative
	// number means every one.
	Times      int
	Kind       FaultKind
	Status     int           // for ServerError (default 502) and Redirect (default 307)
	Location   string        // for Redirect: an absolute URL or a path on the same host
	RetryAfter time.Duration // Retry-After header (whole seconds), 0 = none
	// Reset is x-ratelimit-reset. Zero: for PrimaryRateLimit, one hour on;
	// for TooManyRequests and SecondaryRateLimit on the API host, the fake's
	// primary window's reset; otherwise none.
	Reset time.Time
}

type faultState struct {
	Fault
	left int // < 0: forever
}

// Inject adds a fault. Faults apply in the order they were added; each
// request takes at most one.
func (s *Server) Inject(f Fault) {
	if f.Host == "" {
		f.Host = HostAPI
	}
	left := f.Times
	if left == 0 {
		left = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Kind == PrimaryRateLimit && f.Reset.IsZero() {
		f.Reset = s.now().Add(time.Hour)
	}
	s.faults = append(s.faults, &faultState{Fault: f, left: left})
}

func (s *Server) takeFault(host Host, r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.left == 0 || f.Host != host || (f.Method != "" && f.Method != r.Method) || !pathMatch(f.Path, r.URL.Path) {
			continue
		}
		if f.left > 0 {
			f.left--
		}
		out := f.Fault
		return &out
	}
	return nil
}

func (s *Server) writeFault(host Host, w http.ResponseWriter, f *Fault) {
	h := w.Header()
	if f.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(f.RetryAfter.Round(time.Second)/time.Second)))
	}
	switch {
	case host == HostAPI && (f.Kind == TooManyRequests || f.Kind == SecondaryRateLimit):
		// A secondary limit spends nothing of the primary window, whose
		// headers GitHub still sends.
		s.mu.Lock()
		s.rollRate()
		s.rateHeaders(h, f.Reset)
		s.mu.Unlock()
	case !f.Reset.IsZero():
		h.Set("X-Ratelimit-Reset", strconv.FormatInt(f.Reset.Unix(), 10))
	}
	switch f.Kind {
	case TooManyRequests:
		writeError(w, http.StatusTooManyRequests, "API rate limit exceeded. Please retry your request again later.", docsSecondaryRate)
	case SecondaryRateLimit:
		writeError(w, http.StatusForbidden, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:FAKE.", docsSecondaryRate)
	case PrimaryRateLimit:
		h.Set("X-Ratelimit-Limit", strconv.Itoa(DefaultRateLimit))
		h.Set("X-Ratelimit-Remaining", "0")
		h.Set("X-Ratelimit-Used", strconv.Itoa(DefaultRateLimit))
		h.Set("X-Ratelimit-Resource", "core")
		writeError(w, http.StatusForbidden, "API rate limit exceeded for installation ID 4242. If you reach out to GitHub Support for help, please include the request ID 0000:FAKE.", docsPrimaryRate)
	case Redirect:
		status := f.Status
		if status == 0 {
			status = http.StatusTemporaryRedirect
		}
		h.Set("Location", f.Location)
		writeJSON(w, status, map[string]any{"message": http.StatusText(status), "url": f.Location, "documentation_url": docsRedirects})
	case BlobAuthFailure:
		h.Set("Content-Type", "application/xml")
		h.Set("x-ms-error-code", "AuthenticationFailed")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request. Signed expiry time has passed.</Message></Error>`))
	default:
		status := f.Status
		if status == 0 {
			status = http.StatusBadGateway
		}
		writeError(w, status, http.StatusText(status), "")
	}
}
