package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	p := Policy{}.WithDefaults(Policy{MaxRetries: 4, BackoffBase: time.Second, MaxBackoff: 30 * time.Second, MaxWait: time.Minute})
	p.Jitter = func(d time.Duration) time.Duration { return d }
	var got []time.Duration
	for a := range 7 {
		got = append(got, p.Backoff(a))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoff = %v, want %v seconds", got, want)
		}
	}
	if (Policy{MaxRetries: -1}).WithDefaults(Policy{MaxRetries: 4}).MaxRetries != 0 {
		t.Error("MaxRetries < 0 should mean none")
	}
	for range 1000 {
		if d := HalfJitter(10 * time.Second); d < 5*time.Second || d > 10*time.Second {
			t.Fatalf("HalfJitter(10s) = %v, want in [5s, 10s]", d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a done context = %v", err)
	}
}

func TestTransientAndRedact(t *testing.T) {
	for _, err := range []error{io.ErrUnexpectedEOF, fmt.Errorf("read: %w", syscall.ECONNRESET), syscall.ECONNREFUSED} {
		if !Transient(err) {
			t.Errorf("Transient(%v) = false", err)
		}
	}
	if Transient(errors.New("HTTP 404")) {
		t.Error("a plain error is not transient")
	}
	err := Redact(&url.Error{Op: "Get", URL: "https://blob.example/a.zip?sig=SECRET&se=1", Err: io.EOF})
	if s := err.Error(); s != `Get "https://blob.example/a.zip": EOF` {
		t.Errorf("redacted = %s", s)
	}
}
