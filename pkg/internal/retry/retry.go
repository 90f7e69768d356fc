// Package retry is the one retry policy of flakegate's HTTP clients (the
// GitHub API and the artifact service): capped exponential backoff with
// jitter, a total wait per call, and what counts as a transient transport
// error.
package retry

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/defaults"
)

// Policy is how a call is retried. The zero value of a field means its
// default (see Defaults); MaxRetries < 0 means none.
type Policy struct {
	MaxRetries  int
	BackoffBase time.Duration // doubled per attempt, up to MaxBackoff
	MaxBackoff  time.Duration
	MaxWait     time.Duration // the total wait of one call
	Sleep       func(ctx context.Context, d time.Duration) error
	Jitter      func(d time.Duration) time.Duration
}

// WithDefaults fills p's zero fields from d, and Sleep and Jitter with
// Sleep and HalfJitter.
func (p Policy) WithDefaults(d Policy) Policy {
	defaults.Count(&p.MaxRetries, d.MaxRetries)
	defaults.Positive(&p.BackoffBase, d.BackoffBase)
	defaults.Positive(&p.MaxBackoff, d.MaxBackoff)
	defaults.Positive(&p.MaxWait, d.MaxWait)
	if p.Sleep == nil {
		p.Sleep = Sleep
	}
	if p.Jitter == nil {
		p.Jitter = HalfJitter
	}
	return p
}

// Backoff is the wait before retry attempt+1: BackoffBase doubled per
// attempt, capped at MaxBackoff, jittered.
func (p Policy) Backoff(attempt int) time.Duration {
	d := p.BackoffBase << min(attempt, 30)
	if d <= 0 || d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	return p.Jitter(d)
}

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HalfJitter is a uniform wait in [d/2, d], so that clients that failed
// together do not retry together.
func HalfJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// Transient reports whether a transport error is worth retrying: a
// dropped, refused or reset connection, or a timeout.
func Transient(err error) bool {
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &opErr):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	}
	return false
}

// Redact drops the query, which holds a signature, from the URL of a
// *url.Error, so that logs never show a usable signed link.
func Redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery = ""
			ue.URL = u.String()
		}
	}
	return err
}
