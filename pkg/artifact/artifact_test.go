package artifact_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/artifact"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

var t0 = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

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

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func newClient(t *testing.T, s *ghfake.Server, token string) (*artifact.Client, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	c, err := artifact.FromEnv(env(map[string]string{
		artifact.EnvRuntimeToken: token,
		artifact.EnvResultsURL:   s.ResultsURL,
	}), artifact.Options{
		Retry: retry.Policy{Sleep: sl.Sleep, Jitter: func(d time.Duration) time.Duration { return d }},
		Now:   func() time.Time { return t0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

var report = map[string][]byte{
	"report.json":     []byte(`{"verdict":"pass"}`),
	"report.md":       []byte("# flakegate\n"),
	"history/h.jsonl": []byte("{}\n"),
}

func TestUploadRoundTrip(t *testing.T) {
	for _, camel := range []bool{false, true} {
		name := "snake_case answers"
		if camel {
			name = "camelCase answers"
		}
		t.Run(name, func(t *testing.T) {
			s := ghfake.New(t)
			s.SetTwirpCamelCase(camel)
			token := s.RuntimeToken()
			c, _ := newClient(t, s, token)

			res, err := c.Upload(context.Background(), "flakegate-report", report, artifact.UploadOptions{RetentionDays: 30, MaxRetentionDays: 14})
			if err != nil {
				t.Fatal(err)
			}
			ups := s.Uploads()
			if len(ups) != 1 {
				t.Fatalf("%d uploads, want 1", len(ups))
			}
			up := ups[0]
			sum := sha256.Sum256(up.Zip)
			wantDigest := "sha256:" + hex.EncodeToString(sum[:])
			if diff := cmp.Diff(&artifact.Result{ID: up.ID, Name: "flakegate-report", Size: int64(len(up.Zip)), Digest: wantDigest}, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if !up.Finalized || up.Hash != wantDigest || up.Size != int64(len(up.Zip)) || up.Version != 4 {
				t.Errorf("upload = %+v", up)
			}
			if want := t0.AddDate(0, 0, 14); !up.ExpiresAt.Equal(want) {
				t.Errorf("expires at %v, want %v (capped at 14 days)", up.ExpiresAt, want)
			}
			run, job, _ := s.BackendIDs(token)
			if up.RunBackendID != run || up.JobBackendID != job {
				t.Errorf("backend ids %s:%s, want %s:%s", up.RunBackendID, up.JobBackendID, run, job)
			}
			files, err := up.Files()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(report, files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}

			// The runtime token goes to the results service only; the blob
			// host gets a plain PUT.
			for _, r := range s.Requests(ghfake.HostResults) {
				if r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("twirp %s headers: %v", r.Path, r.Header)
				}
			}
			blob := s.Requests(ghfake.HostBlob)
			if len(blob) != 1 || blob[0].Method != "PUT" || blob[0].Header.Get("x-ms-blob-type") != "BlockBlob" {
				t.Fatalf("blob requests = %+v, want one block-blob PUT", blob)
			}
			if blob[0].Header.Get("Authorization") != "" {
				t.Errorf("blob host got an Authorization header")
			}
		})
	}
}

// TestUploadWireFormat checks the JSON the client sends: snake_case fields,
// int64 as strings, version 4.
func TestUploadWireFormat(t *testing.T) {
	s := ghfake.New(t)
	token := s.RuntimeToken()
	c, _ := newClient(t, s, token)
	if _, err := c.Upload(context.Background(), "r", map[string][]byte{"a": []byte("x")}, artifact.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests(ghfake.HostResults)
	if len(reqs) != 2 {
		t.Fatalf("%d twirp requests, want 2", len(reqs))
	}
	run, job, _ := s.BackendIDs(token)
	var create, finalize map[string]any
	if err := json.Unmarshal(reqs[0].Body, &create); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(reqs[1].Body, &finalize); err != nil {
		t.Fatal(err)
	}
	up := s.Uploads()[0]
	sum := sha256.Sum256(up.Zip)
	wantCreate := map[string]any{"workflow_run_backend_id": run, "workflow_job_run_backend_id": job, "name": "r", "version": float64(4)}
	wantFinalize := map[string]any{
		"workflow_run_backend_id": run, "workflow_job_run_backend_id": job, "name": "r",
		"size": strings.TrimSpace(jsonString(len(up.Zip))), "hash": "sha256:" + hex.EncodeToString(sum[:]),
	}
	if diff := cmp.Diff(wantCreate, create); diff != "" {
		t.Errorf("CreateArtifact body (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantFinalize, finalize); diff != "" {
		t.Errorf("FinalizeArtifact body (-want +got):\n%s", diff)
	}
	for i, r := range reqs {
		want := []string{"/twirp/github.actions.results.api.v1.ArtifactService/CreateArtifact", "/twirp/github.actions.results.api.v1.ArtifactService/FinalizeArtifact"}[i]
		if r.Path != want {
			t.Errorf("request %d path %s, want %s", i, r.Path, want)
		}
	}
}

func jsonString(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestUploadRetries(t *testing.T) {
	tests := []struct {
		name      string
		faults    []ghfake.Fault
		wantWaits []time.Duration
		wantErr   bool
	}{
		{"create 503 then ok", []ghfake.Fault{{Host: ghfake.HostResults, Path: "/twirp/*/CreateArtifact", Status: 503}}, []time.Duration{3 * time.Second}, false},
		{"finalize 429 Retry-After", []ghfake.Fault{{Host: ghfake.HostResults, Path: "/twirp/*/FinalizeArtifact", Kind: ghfake.TooManyRequests, RetryAfter: 5 * time.Second}}, []time.Duration{5 * time.Second}, false},
		{"blob 500 twice", []ghfake.Fault{{Host: ghfake.HostBlob, Times: 2, Status: 500}}, []time.Duration{3 * time.Second, 6 * time.Second}, false},
		{"blob connection dropped", []ghfake.Fault{{Host: ghfake.HostBlob, Kind: ghfake.Disconnect}}, []time.Duration{3 * time.Second}, false},
		{"results down", []ghfake.Fault{{Host: ghfake.HostResults, Times: -1, Status: 502}}, []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			for _, f := range tc.faults {
				s.Inject(f)
			}
			c, sl := newClient(t, s, s.RuntimeToken())
			_, err := c.Upload(context.Background(), "report", report, artifact.UploadOptions{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWaits, sl.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if !tc.wantErr {
				up := s.Uploads()[0]
				if files, err := up.Files(); err != nil || !up.Finalized || len(files) != len(report) {
					t.Errorf("upload finalized=%v files=%d err=%v", up.Finalized, len(files), err)
				}
			}
		})
	}
}

func TestUploadRefusals(t *testing.T) {
	s := ghfake.New(t)
	c, _ := newClient(t, s, s.RuntimeToken())
	ctx := context.Background()
	if _, err := c.Upload(ctx, "dup", report, artifact.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		artifact string
		files    map[string][]byte
		opts     artifact.UploadOptions
		want     string // substring of the error
	}{
		{"name used twice", "dup", report, artifact.UploadOptions{}, "already_exists"},
		{"slash in name", "a/b", report, artifact.UploadOptions{}, `contains '/'`},
		{"colon in name", "a:b", report, artifact.UploadOptions{}, `contains ':'`},
		{"newline in name", "a\nb", report, artifact.UploadOptions{}, "contains LF"},
		{"empty name", " ", report, artifact.UploadOptions{}, "must not be empty"},
		{"retention 0 days is default", "ok-default", report, artifact.UploadOptions{}, ""},
		{"retention 91", "r91", report, artifact.UploadOptions{RetentionDays: 91}, "accepted 1 to 90"},
		{"retention -1", "rneg", report, artifact.UploadOptions{RetentionDays: -1}, "accepted 1 to 90"},
		{"no files", "empty", nil, artifact.UploadOptions{}, "no files"},
		{"path escapes", "esc", map[string][]byte{"../x": nil}, artifact.UploadOptions{}, "clean path"},
		{"absolute path", "abs", map[string][]byte{"/etc/x": nil}, artifact.UploadOptions{}, "relative path"},
		{"star in path", "star", map[string][]byte{"a*.xml": nil}, artifact.UploadOptions{}, `contains '*'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Upload(ctx, tc.artifact, tc.files, tc.opts)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	var te *artifact.TwirpError
	_, err := c.Upload(ctx, "dup", report, artifact.UploadOptions{})
	if !errors.As(err, &te) || te.StatusCode != 409 || te.Code != "already_exists" {
		t.Errorf("duplicate error = %#v, want *TwirpError 409 already_exists", err)
	}
}

func TestFromEnv(t *testing.T) {
	s := ghfake.New(t)
	good := s.RuntimeToken()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	jwt := func(scp string) string {
		return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]string{"scp": scp}) + ".sig"
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr error  // sentinel, or nil
		want    string // error substring; "" = success
	}{
		{"no results URL", map[string]string{artifact.EnvRuntimeToken: good}, artifact.ErrNotAvailable, "not available"},
		{"ok", map[string]string{artifact.EnvRuntimeToken: good, artifact.EnvResultsURL: s.ResultsURL + "some/path?x=1"}, nil, ""},
		{"no token", map[string]string{artifact.EnvResultsURL: s.ResultsURL}, nil, "ACTIONS_RUNTIME_TOKEN: not set"},
		{"not a JWT", map[string]string{artifact.EnvRuntimeToken: "abc", artifact.EnvResultsURL: s.ResultsURL}, nil, "not a JWT"},
		{"no results scope", map[string]string{artifact.EnvRuntimeToken: jwt("Actions.ExecuteOrchestrationPlan"), artifact.EnvResultsURL: s.ResultsURL}, nil, "no Actions.Results scope"},
		{"bad results scope", map[string]string{artifact.EnvRuntimeToken: jwt("Actions.Results:only-one"), artifact.EnvResultsURL: s.ResultsURL}, nil, "want Actions.Results:<run>:<job>"},
		{"bad URL", map[string]string{artifact.EnvRuntimeToken: good, artifact.EnvResultsURL: "ftp://x"}, nil, "want an http(s) URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := artifact.FromEnv(env(tc.env), artifact.Options{})
			if tc.want == "" {
				if err != nil || c == nil {
					t.Fatalf("FromEnv = %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestBackendIDs(t *testing.T) {
	tok := ghfake.MakeRuntimeToken("run-guid", "job-guid", t0)
	run, job, err := artifact.BackendIDs(tok)
	if err != nil || run != "run-guid" || job != "job-guid" {
		t.Errorf("BackendIDs = %q, %q, %v", run, job, err)
	}
}

func TestRetention(t *testing.T) {
	tests := []struct {
		days, max, want int
		wantErr         bool
	}{
		{0, 0, 0, false}, {0, 5, 0, false}, {1, 0, 1, false}, {90, 0, 90, false},
		{30, 14, 14, false}, {10, 14, 10, false}, {91, 0, 0, true}, {-3, 0, 0, true}, {91, 100, 0, true},
	}
	for _, tc := range tests {
		got, err := artifact.Retention(tc.days, tc.max)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Retention(%d, %d) = %d, %v; want %d, error %v", tc.days, tc.max, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestZipIsDeterministic(t *testing.T) {
	a, err := artifact.Zip(report, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Zip(report, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("same input, different zips")
	}
	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(t0) {
			t.Errorf("%s modified %v, want %v", f.Name, f.Modified, t0)
		}
	}
	if diff := cmp.Diff([]string{"history/h.jsonl", "report.json", "report.md"}, names); diff != "" {
		t.Errorf("entry order (-want +got):\n%s", diff)
	}
}

// TestUploadAppearsInRESTAPI closes the loop: an artifact uploaded with a
// runtime token tied to a run is listed and downloadable through the REST
// API, as the next report run would fetch it.
func TestUploadAppearsInRESTAPI(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	c, _ := newClient(t, s, s.RuntimeTokenFor("octo/app", run.ID))
	res, err := c.Upload(context.Background(), "flakegate-report", report, artifact.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gh, err := ghapi.New(ghfake.Token, s.URL, nil, ghapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	arts, err := gh.ListRunArtifacts(ctx, ghapi.Repo{Owner: "octo", Name: "app"}, run.ID, "flakegate-*")
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 1 || arts[0].ID != res.ID || arts[0].Size != res.Size {
		t.Fatalf("listed %+v, want the uploaded artifact %+v", arts, res)
	}
	zipped, err := gh.DownloadArtifact(ctx, ghapi.Repo{Owner: "octo", Name: "app"}, res.ID, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(zipped)
	if res.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s does not match the downloaded zip", res.Digest)
	}
}

// TestTwirpRedirectNotFollowed: a twirp call answered with a redirect,
// even to the same host, fails with an error that names the redirect, and
// the runtime token never reaches the redirect's target. The caller's
// HTTP client is left as it was.
func TestTwirpRedirectNotFollowed(t *testing.T) {
	fake := ghfake.New(t)
	token := fake.RuntimeToken()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var stolen atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/twirp/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/collect", code)
		})
		mux.HandleFunc("/collect", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" {
				stolen.Add(1)
			}
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"ok":true,"signed_upload_url":"http://127.0.0.1:1/x"}`))
		})
		srv := httptest.NewServer(mux)
		own := &http.Client{}
		c, err := artifact.New(token, srv.URL, artifact.Options{HTTPClient: own, Retry: retry.Policy{MaxRetries: 0}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Upload(context.Background(), "report", report, artifact.UploadOptions{})
		var te *artifact.TwirpError
		if !errors.As(err, &te) || te.StatusCode != code || !strings.Contains(err.Error(), `redirected to "/collect"`) {
			t.Errorf("HTTP %d: err %v, want a twirp error naming the redirect", code, err)
		}
		if n := stolen.Load(); n != 0 {
			t.Errorf("HTTP %d: the redirect's target got the runtime token %d times", code, n)
		}
		if own.CheckRedirect != nil {
			t.Errorf("HTTP %d: the caller's client was changed", code)
		}
		srv.Close()
	}
}
