package ghapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// TestDownloadRetriesBrokenBody: a connection that breaks mid-download is
// downloaded again from the start, from a fresh signed URL once the old
// one may have expired.
func TestDownloadRetriesBrokenBody(t *testing.T) {
	files := map[string][]byte{"report.xml": bytes.Repeat([]byte("<testcase name='x'/>\n"), 5000)}
	zipped, err := ghfake.ZipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		breaks    int // blob downloads cut mid-body; -1: all
		backoff   time.Duration
		wantErr   error
		wantAPI   int // download requests to the API (signed URLs)
		wantBlob  int
		wantWaits []time.Duration
	}{
		{name: "once", breaks: 1, wantAPI: 1, wantBlob: 2, wantWaits: []time.Duration{time.Second}},
		{name: "twice", breaks: 2, wantAPI: 1, wantBlob: 3, wantWaits: []time.Duration{time.Second, 2 * time.Second}},
		{
			// After a 70s wait the URL (valid for a minute) has expired: a
			// fresh one is asked for rather than refused by the blob host.
			name: "after the URL expired", breaks: 1, backoff: 70 * time.Second,
			wantAPI: 2, wantBlob: 2, wantWaits: []time.Duration{70 * time.Second},
		},
		{
			name: "every time", breaks: -1, wantErr: io.ErrUnexpectedEOF, wantAPI: 1, wantBlob: 5,
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			clock := &fakeClock{now: t0, advance: true}
			s.SetClock(clock.Now)
			r := s.Repo("octo/app")
			run := r.AddRun(ghfake.Run{})
			art := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: files})
			s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.DisconnectMidBody, Times: tc.breaks})
			c, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{Now: clock.Now, Retry: retry.Policy{Sleep: clock.Sleep, BackoffBase: tc.backoff,
				MaxBackoff: max(tc.backoff, time.Minute), Jitter: func(d time.Duration) time.Duration { return d }}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.DownloadArtifact(context.Background(), repo, art.ID, 0)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("error = %v, want %v", err, tc.wantErr)
				}
				if err != nil && strings.Contains(err.Error(), "sig=") {
					t.Errorf("error %q shows the URL signature", err)
				}
			case err != nil:
				t.Fatal(err)
			case !bytes.Equal(got, zipped):
				t.Errorf("downloaded %d bytes, want the %d-byte zip", len(got), len(zipped))
			}
			if n := len(requestsTo(s, "/zip")); n != tc.wantAPI {
				t.Errorf("API download requests = %d, want %d", n, tc.wantAPI)
			}
			blob := s.Requests(ghfake.HostBlob)
			if len(blob) != tc.wantBlob {
				t.Errorf("blob requests = %d, want %d", len(blob), tc.wantBlob)
			}
			for _, b := range blob {
				if b.Status != 200 {
					t.Errorf("blob answered %d: a stale URL was used", b.Status)
				}
				if b.Header.Get("Authorization") != "" {
					t.Errorf("blob host got a credential")
				}
			}
			if diff := cmp.Diff(tc.wantWaits, clock.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if st := c.Stats(); st.Retries != int64(len(tc.wantWaits)) {
				t.Errorf("retries counted %d, want %d", st.Retries, len(tc.wantWaits))
			}
		})
	}
}

// TestDownloadArtifactToFile streams into a file: what a broken attempt and
// the file's earlier content left there is gone.
func TestDownloadArtifactToFile(t *testing.T) {
	files := map[string][]byte{"report.xml": bytes.Repeat([]byte("<testcase name='y'/>\n"), 5000)}
	zipped, err := ghfake.ZipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	art := r.AddArtifact(ghfake.Artifact{RunID: r.AddRun(ghfake.Run{}).ID, Name: "junit", Files: files})
	s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.DisconnectMidBody})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	f, err := os.CreateTemp(t.TempDir(), "zip")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Repeat([]byte("junk"), 100_000)); err != nil {
		t.Fatal(err)
	}
	n, err := c.DownloadArtifactTo(context.Background(), repo, art.ID, 0, f)
	if err != nil || n != int64(len(zipped)) {
		t.Fatalf("got %d bytes, %v; want %d", n, err, len(zipped))
	}
	got, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(got, zipped) {
		t.Errorf("file holds %d bytes (%v), want the %d-byte zip", len(got), err, len(zipped))
	}
}
