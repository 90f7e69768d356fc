package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

var _ ghapi.Spool = (*spool)(nil)
var _ io.ReaderAt = (*spool)(nil)

func contents(t *testing.T, sp *spool, size int) []byte {
	t.Helper()
	b := make([]byte, size)
	if n, err := sp.ReadAt(b, 0); n != size || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt: %d bytes, %v", n, err)
	}
	if n, err := sp.ReadAt(make([]byte, 1), int64(size)); n != 0 || err != io.EOF {
		t.Errorf("ReadAt past the end: %d, %v; want io.EOF", n, err)
	}
	return b
}

func files(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestSpool(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10)
	tests := []struct {
		name     string
		limit    int64 // the budget
		taken    int64 // reserved by others first
		reserve  int64
		write    []byte
		wantFile bool
	}{
		{"fits its share: memory", 1000, 0, 100, data, false},
		{"outgrows its share: file", 1000, 0, 10, data, true},
		{"budget full: file", 1000, 950, 100, data, true},
		{"size unknown: file", 1000, 0, 0, data, true},
		{"empty", 1000, 0, 0, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := &budget{limit: tc.limit}
			if tc.taken > 0 && !b.reserve(tc.taken) {
				t.Fatal("could not take the budget")
			}
			sp := newSpool(b, tc.reserve, dir)
			// Half, then start over (a broken download), then all of it.
			if _, err := sp.Write(tc.write[:len(tc.write)/2]); err != nil {
				t.Fatal(err)
			}
			if err := sp.Truncate(0); err != nil {
				t.Fatal(err)
			}
			if _, err := sp.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			for chunk := range slicesChunk(tc.write, 7) {
				if _, err := sp.Write(chunk); err != nil {
					t.Fatal(err)
				}
			}
			if got := contents(t, sp, len(tc.write)); !bytes.Equal(got, tc.write) {
				t.Errorf("read back %q, want %q", got, tc.write)
			}
			if got := files(t, dir) == 1; got != tc.wantFile || sp.spilled != tc.wantFile {
				t.Errorf("in a file: %v (spilled %v), want %v", got, sp.spilled, tc.wantFile)
			}
			if !tc.wantFile && b.held != tc.taken+tc.reserve && tc.reserve <= tc.limit-tc.taken {
				t.Errorf("budget holds %d, want %d", b.held, tc.taken+tc.reserve)
			}
			if b.peakHeld() > tc.limit {
				t.Errorf("budget peaked at %d, over its limit %d", b.peakHeld(), tc.limit)
			}
			if err := sp.Close(); err != nil {
				t.Fatal(err)
			}
			if err := sp.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if b.held != tc.taken {
				t.Errorf("after Close the budget holds %d, want %d", b.held, tc.taken)
			}
			if n := files(t, dir); n != 0 {
				t.Errorf("%d files left after Close", n)
			}
		})
	}
}

// slicesChunk yields b in pieces of n bytes.
func slicesChunk(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

// TestGitHubBrokenDownloads: a connection reset mid-download is retried,
// and the artifact is read as if nothing happened.
func TestGitHubBrokenDownloads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int64
	}{{"in memory", 0}, {"on disk", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			s, repo := newFake(t)
			const runs = 4
			for i := range runs {
				r := repo.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
				repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Files: map[string][]byte{"t.xml": bulkDoc(64 << 10)}})
			}
			// Each artifact's first download breaks off halfway.
			s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.DisconnectMidBody, Times: runs})
			dir := t.TempDir()
			// The faults are counted on the blob host, not per artifact: with
			// downloads running at once, one artifact may meet all of them.
			// Enough retries for that keeps the test deterministic.
			c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Retry: retry.Policy{MaxRetries: runs, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}})
			if err != nil {
				t.Fatal(err)
			}
			h, st, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, MemoryBudget: tc.budget, TempDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Skipped) != 0 || len(h.Runs) != runs || st.Downloaded != runs {
				t.Errorf("skipped %v, %d runs, stats %+v; want every run read", h.Skipped, len(h.Runs), st)
			}
			if st.BlobRequests != 2*runs {
				t.Errorf("%d blob requests, want %d (each download twice)", st.BlobRequests, 2*runs)
			}
			assertEmptyDir(t, dir)
		})
	}
}

// TestGitHubTempFilesRemoved: the temporary files are gone however the
// collection ends, and what was skipped is reported as before.
func TestGitHubTempFilesRemoved(t *testing.T) {
	const runs = 12
	setup := func(t *testing.T) (*ghfake.Server, *ghapi.Client) { return runsOfOneTest(t, runs) }
	t.Run("downloads that keep breaking", func(t *testing.T) {
		s, c := setup(t)
		s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.DisconnectMidBody, Times: -1})
		dir := t.TempDir()
		h, _, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, MemoryBudget: -1, TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Skipped) != runs {
			t.Fatalf("skipped %v, want all %d", h.Skipped, runs)
		}
		for _, sk := range h.Skipped {
			if !strings.HasPrefix(sk.Error, "download failed: ") || !strings.Contains(sk.Error, "unexpected EOF") || strings.Contains(sk.Error, "sig=") {
				t.Errorf("%s: %q, want a download failure that says why and shows no signature", sk.Path, sk.Error)
			}
		}
		assertEmptyDir(t, dir)
	})
	t.Run("rate limit stops the collection", func(t *testing.T) {
		s, c := setup(t)
		s.SetRateLimit(8, t0.Add(48*time.Hour))
		dir := t.TempDir()
		_, _, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, MemoryBudget: -1, TempDir: dir, Concurrency: 2})
		if !errors.Is(err, ghapi.ErrRateLimited) {
			t.Fatalf("err = %v, want the rate limit", err)
		}
		assertEmptyDir(t, dir)
	})
	t.Run("cancelled mid-download", func(t *testing.T) {
		s, c := setup(t)
		s.SetLatency(5 * time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for s.RequestCount(ghfake.HostBlob) < 3 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		dir := t.TempDir()
		_, _, err := GitHub(ctx, c, GitHubOptions{Repo: testRepo, MemoryBudget: -1, TempDir: dir, Concurrency: 4})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		assertEmptyDir(t, dir)
	})
	t.Run("temporary directory missing", func(t *testing.T) {
		_, c := setup(t)
		dir := t.TempDir() + "/missing"
		h, _, err := GitHub(context.Background(), c, GitHubOptions{Repo: testRepo, MemoryBudget: -1, TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Skipped) != runs || !strings.Contains(h.Skipped[0].Error, "temporary file") {
			t.Errorf("skipped %v, want every artifact, naming the temporary file", h.Skipped)
		}
	})
}

// TestGitHubMemoryBudget: zips held in memory never exceed the budget; a
// zip larger than its share (the budget over Concurrency) goes to disk.
func TestGitHubMemoryBudget(t *testing.T) {
	s, repo := newFake(t)
	s.SetLatency(2 * time.Millisecond)
	const runs = 16
	for i := range runs {
		r := repo.AddRun(ghfake.Run{CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		repo.AddArtifact(ghfake.Artifact{RunID: r.ID, Name: "junit-x", Zip: storedZip(t, fmt.Sprintf("t%d.xml", i), bulkDoc(200<<10))})
	}
	for _, tc := range []struct {
		name        string
		budget      int64
		wantSpooled func(n int) bool
	}{
		{"roomy", 64 << 20, func(n int) bool { return n == 0 }},
		{"share too small", 1 << 20, func(n int) bool { return n == runs }}, // 1 MiB / 8 < 200 KiB
		{"none", -1, func(n int) bool { return n == runs }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h, st, err := GitHub(context.Background(), newClient(t, s), GitHubOptions{Repo: testRepo, MemoryBudget: tc.budget, TempDir: dir, Concurrency: 8})
			if err != nil || len(h.Runs) != runs || len(h.Skipped) != 0 {
				t.Fatalf("%v: %d runs, skipped %v", err, len(h.Runs), h.Skipped)
			}
			if st.PeakHeld > max(tc.budget, 0) {
				t.Errorf("held %d bytes in memory, over the budget of %d", st.PeakHeld, tc.budget)
			}
			if !tc.wantSpooled(st.Spooled) {
				t.Errorf("%d of %d zips went to disk", st.Spooled, runs)
			}
			assertEmptyDir(t, dir)
		})
	}
}
