package ghfake_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, u, token string, body []byte, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}
}

func TestPaginationLinks(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	for i := range 7 {
		r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: fmt.Sprint("a", i), Files: map[string][]byte{"x": nil}})
	}
	base := fmt.Sprintf("%srepos/octo/app/actions/runs/%d/artifacts", s.URL, run.ID)
	var names []string
	next := base + "?per_page=3"
	pages := 0
	for next != "" {
		resp := do(t, "GET", next, ghfake.Token, nil, nil)
		if resp.status != 200 {
			t.Fatalf("GET %s: %d", next, resp.status)
		}
		var body struct {
			TotalCount int `json:"total_count"`
			Artifacts  []struct {
				Name string `json:"name"`
			} `json:"artifacts"`
		}
		if err := json.Unmarshal(resp.body, &body); err != nil {
			t.Fatal(err)
		}
		if body.TotalCount != 7 {
			t.Errorf("total_count = %d, want 7", body.TotalCount)
		}
		for _, a := range body.Artifacts {
			names = append(names, a.Name)
		}
		next = ""
		for _, part := range strings.Split(resp.header.Get("Link"), ", ") {
			if u, ok := strings.CutSuffix(part, `; rel="next"`); ok {
				next = strings.Trim(u, "<>")
			}
		}
		pages++
	}
	if pages != 3 {
		t.Errorf("%d pages, want 3", pages)
	}
	if diff := cmp.Diff([]string{"a0", "a1", "a2", "a3", "a4", "a5", "a6"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	last := do(t, "GET", base+"?per_page=3&page=3", ghfake.Token, nil, nil)
	if link := last.header.Get("Link"); !strings.Contains(link, `rel="prev"`) || !strings.Contains(link, `rel="first"`) || strings.Contains(link, `rel="next"`) {
		t.Errorf("last page Link = %q", link)
	}
}

func TestAuthAndRateHeaders(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app")
	u := s.URL + "repos/octo/app/actions/runs"
	tests := []struct {
		name       string
		token      string
		wantStatus int
	}{
		{"no token", "", 401},
		{"unknown token", "ghs_nope", 401},
		{"token", ghfake.Token, 200},
		{"read-only token reads", ghfake.ReadOnlyToken, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, "GET", u, tc.token, nil, nil)
			if resp.status != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.status, tc.wantStatus)
			}
		})
	}
	resp := do(t, "GET", u, ghfake.Token, nil, nil)
	if resp.header.Get("X-Ratelimit-Limit") != "1000" || resp.header.Get("X-Ratelimit-Remaining") != fmt.Sprint(s.RateRemaining()) {
		t.Errorf("rate headers %v", resp.header)
	}
}

func TestDownloadRedirect(t *testing.T) {
	s := ghfake.New(t)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	a := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: map[string][]byte{"r.xml": []byte("<x/>")}})
	resp := do(t, "GET", fmt.Sprintf("%srepos/octo/app/actions/artifacts/%d/zip", s.URL, a.ID), ghfake.Token, nil, nil)
	if resp.status != 302 {
		t.Fatalf("status %d, want 302", resp.status)
	}
	loc := resp.header.Get("Location")
	if !strings.HasPrefix(loc, s.BlobURL+"/") {
		t.Fatalf("Location %q is not on the blob host %s", loc, s.BlobURL)
	}
	if got := do(t, "GET", loc, "", nil, nil); got.status != 200 || got.header.Get("Content-Type") != "application/zip" {
		t.Errorf("blob GET: %d %v", got.status, got.header)
	}
	tampered := strings.Replace(loc, "sig=", "sig=0", 1)
	if got := do(t, "GET", tampered, "", nil, nil); got.status != 403 {
		t.Errorf("tampered signature: %d, want 403", got.status)
	}
	now = now.Add(2 * time.Minute)
	if got := do(t, "GET", loc, "", nil, nil); got.status != 403 || !strings.Contains(string(got.body), "expiry") {
		t.Errorf("after expiry: %d %s, want 403", got.status, got.body)
	}
}

func TestTwirpAndBlobUpload(t *testing.T) {
	s := ghfake.New(t)
	token := s.RuntimeToken()
	run, job, _ := s.BackendIDs(token)
	twirp := func(method string, body map[string]any, tok string) response {
		b, _ := json.Marshal(body)
		return do(t, "POST", s.ResultsURL+"twirp/github.actions.results.api.v1.ArtifactService/"+method, tok, b, map[string]string{"Content-Type": "application/json"})
	}
	ids := map[string]any{"workflow_run_backend_id": run, "workflow_job_run_backend_id": job}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range ids {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}

	if got := twirp("CreateArtifact", with(map[string]any{"name": "a", "version": 4}), "bad.token.x"); got.status != 401 {
		t.Errorf("bad runtime token: %d, want 401", got.status)
	}
	if got := twirp("CreateArtifact", map[string]any{"workflow_run_backend_id": "other", "workflow_job_run_backend_id": job, "name": "a", "version": 4}, token); got.status != 403 {
		t.Errorf("foreign backend id: %d, want 403", got.status)
	}
	created := twirp("CreateArtifact", with(map[string]any{"name": "blocks", "version": 4}), token)
	var cr struct {
		OK        bool   `json:"ok"`
		SignedURL string `json:"signed_upload_url"`
	}
	if err := json.Unmarshal(created.body, &cr); err != nil || !cr.OK || !strings.HasPrefix(cr.SignedURL, s.BlobURL) {
		t.Fatalf("CreateArtifact: %d %s", created.status, created.body)
	}

	// Upload in two blocks and commit them.
	id1, id2 := base64.StdEncoding.EncodeToString([]byte("b1")), base64.StdEncoding.EncodeToString([]byte("b2"))
	for _, blk := range []struct{ id, data string }{{id1, "hello "}, {id2, "world"}} {
		u := cr.SignedURL + "&comp=block&blockid=" + url.QueryEscape(blk.id)
		if got := do(t, "PUT", u, "", []byte(blk.data), nil); got.status != 201 {
			t.Fatalf("put block: %d %s", got.status, got.body)
		}
	}
	list := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>%s</Latest><Latest>%s</Latest></BlockList>`, id1, id2)
	if got := do(t, "PUT", cr.SignedURL+"&comp=blocklist", "", []byte(list), nil); got.status != 201 {
		t.Fatalf("put block list: %d %s", got.status, got.body)
	}
	if got := twirp("FinalizeArtifact", with(map[string]any{"name": "blocks", "size": "11", "hash": "sha256:0000"}), token); got.status != 400 {
		t.Errorf("wrong hash: %d %s, want 400", got.status, got.body)
	}
	if got := twirp("FinalizeArtifact", with(map[string]any{"name": "blocks", "size": "12"}), token); got.status != 400 {
		t.Errorf("wrong size: %d %s, want 400", got.status, got.body)
	}
	fin := twirp("FinalizeArtifact", with(map[string]any{"name": "blocks", "size": "11"}), token)
	var fr struct {
		OK         bool   `json:"ok"`
		ArtifactID string `json:"artifact_id"`
	}
	if err := json.Unmarshal(fin.body, &fr); err != nil || !fr.OK || fr.ArtifactID == "" {
		t.Fatalf("FinalizeArtifact: %d %s", fin.status, fin.body)
	}
	if ups := s.Uploads(); len(ups) != 1 || string(ups[0].Zip) != "hello world" || !ups[0].Finalized || fmt.Sprint(ups[0].ID) != fr.ArtifactID {
		t.Errorf("uploads = %+v", ups)
	}
	if got := twirp("CreateArtifact", with(map[string]any{"name": "blocks", "version": 4}), token); got.status != 409 {
		t.Errorf("name reuse: %d, want 409", got.status)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Fatalf("violations so far: %v", v)
	}

	// Protocol mistakes a client could make are recorded as violations.
	mistakes := []struct {
		name string
		do   func()
		want string
	}{
		{"camelCase field", func() {
			twirp("CreateArtifact", map[string]any{"workflowRunBackendId": run, "workflowJobRunBackendId": job, "name": "c", "version": 4}, token)
		}, `unknown field "workflowJobRunBackendId"`},
		{"int64 as number", func() {
			twirp("FinalizeArtifact", with(map[string]any{"name": "blocks", "size": 11}), token)
		}, "int64 values must be JSON strings"},
		{"blob PUT without x-ms-blob-type", func() {
			c := twirp("CreateArtifact", with(map[string]any{"name": "nohdr", "version": 4}), token)
			_ = json.Unmarshal(c.body, &cr)
			do(t, "PUT", cr.SignedURL, "", []byte("x"), nil)
		}, "x-ms-blob-type"},
		{"token sent to the blob host", func() {
			c := twirp("CreateArtifact", with(map[string]any{"name": "tok", "version": 4}), token)
			_ = json.Unmarshal(c.body, &cr)
			do(t, "PUT", cr.SignedURL, ghfake.Token, []byte("x"), map[string]string{"x-ms-blob-type": "BlockBlob"})
		}, "credential was sent to the blob host"},
	}
	for _, m := range mistakes {
		t.Run(m.name, func(t *testing.T) {
			m.do()
			got := s.TakeViolations()
			found := false
			for _, v := range got {
				found = found || strings.Contains(v.Problem, m.want)
			}
			if !found {
				t.Errorf("violations %v, want one about %q", got, m.want)
			}
		})
	}
}

func TestPrimaryRateLimitBudget(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app")
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	s.SetRateLimit(2, reset)
	u := s.URL + "repos/octo/app/actions/runs"
	for i, want := range []int{200, 200, 403, 403} {
		resp := do(t, "GET", u, ghfake.Token, nil, nil)
		if resp.status != want {
			t.Errorf("request %d: %d, want %d", i, resp.status, want)
		}
		if want == 403 && (resp.header.Get("X-Ratelimit-Remaining") != "0" || resp.header.Get("X-Ratelimit-Reset") != fmt.Sprint(reset.Unix())) {
			t.Errorf("request %d headers %v", i, resp.header)
		}
	}
}

// TestSecondaryLimitRateHeaders: GitHub sends the primary window's
// x-ratelimit-* headers on a secondary-limit 403 and on a 429 too, with
// requests remaining and the window's reset, up to an hour away. The blob
// host (Azure) sends none.
func TestSecondaryLimitRateHeaders(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app")
	reset := time.Now().Add(50 * time.Minute).Truncate(time.Second)
	s.SetRateLimit(100, reset)
	u := s.URL + "repos/octo/app/actions/runs"
	do(t, "GET", u, ghfake.Token, nil, nil)
	tests := []struct {
		name       string
		fault      ghfake.Fault
		wantStatus int
		wantReset  time.Time
	}{
		{"secondary 403", ghfake.Fault{Kind: ghfake.SecondaryRateLimit}, 403, reset},
		{"429", ghfake.Fault{Kind: ghfake.TooManyRequests}, 429, reset},
		{"429 with the reset given", ghfake.Fault{Kind: ghfake.TooManyRequests, Reset: reset.Add(-10 * time.Minute)}, 429, reset.Add(-10 * time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.Inject(tc.fault)
			resp := do(t, "GET", u, ghfake.Token, nil, nil)
			want := map[string]string{"X-Ratelimit-Limit": "100", "X-Ratelimit-Remaining": "99", "X-Ratelimit-Used": "1",
				"X-Ratelimit-Reset": fmt.Sprint(tc.wantReset.Unix()), "X-Ratelimit-Resource": "core"}
			got := map[string]string{}
			for k := range want {
				got[k] = resp.header.Get(k)
			}
			if resp.status != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.status, tc.wantStatus)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// ExampleNew shows a fake with runs, artifacts and latency, as a collector
// benchmark would set it up.
func ExampleNew() {
	s := ghfake.New(nil) // in a test: ghfake.New(t), which also checks OpenAPI conformance
	defer s.Close()
	s.SetLatency(5 * time.Millisecond)
	repo := s.Repo("octo/app")
	for i := range 3 {
		run := repo.AddRun(ghfake.Run{HeadSHA: ghfake.SHA(fmt.Sprint("commit", i)), Attempts: 1 + i%2})
		repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit-1", Files: map[string][]byte{"report.xml": []byte("<testsuites/>")}})
	}
	resp, err := http.Get(s.URL + "repos/octo/app/actions/runs") // no token
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, len(s.Requests(ghfake.HostAPI)))
	// Output: 401 1
}

// TestStreamedBlob serves an artifact written on demand: the listing gives
// its size and digest, the download its bytes.
func TestStreamedBlob(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	run := r.AddRun(ghfake.Run{})
	content := bytes.Repeat([]byte("0123456789"), 1000)
	blob, err := ghfake.NewBlob(func(w io.Writer) error { _, err := w.Write(content); return err })
	if err != nil {
		t.Fatal(err)
	}
	if blob.Size() != int64(len(content)) {
		t.Fatalf("blob size %d, want %d", blob.Size(), len(content))
	}
	a := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "big", Blob: blob})
	list := do(t, "GET", fmt.Sprintf("%srepos/octo/app/actions/runs/%d/artifacts", s.URL, run.ID), ghfake.Token, nil, nil)
	var got struct {
		Artifacts []struct {
			Size   int64  `json:"size_in_bytes"`
			Digest string `json:"digest"`
		}
	}
	if err := json.Unmarshal(list.body, &got); err != nil || len(got.Artifacts) != 1 {
		t.Fatalf("listing %s: %v", list.body, err)
	}
	if got.Artifacts[0].Size != int64(len(content)) || !strings.HasPrefix(got.Artifacts[0].Digest, "sha256:") {
		t.Errorf("listed %+v, want size %d and a digest", got.Artifacts[0], len(content))
	}
	loc := do(t, "GET", fmt.Sprintf("%srepos/octo/app/actions/artifacts/%d/zip", s.URL, a.ID), ghfake.Token, nil, nil).header.Get("Location")
	if dl := do(t, "GET", loc, "", nil, nil); dl.status != 200 || !bytes.Equal(dl.body, content) {
		t.Errorf("download: %d, %d bytes, want 200 and %d bytes", dl.status, len(dl.body), len(content))
	}
}

// TestDisconnectMidBody cuts a download after half its body, for buffered
// and streamed artifacts alike.
func TestDisconnectMidBody(t *testing.T) {
	content := bytes.Repeat([]byte("x"), 10_000)
	blob, err := ghfake.NewBlob(func(w io.Writer) error { _, err := w.Write(content); return err })
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := ghfake.ZipFiles(map[string][]byte{"r.xml": content})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		art  ghfake.Artifact
		size int
	}{
		{"buffered", ghfake.Artifact{Name: "small", Zip: zipped}, len(zipped)},
		{"streamed", ghfake.Artifact{Name: "big", Blob: blob}, len(content)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			tc.art.RunID = r.AddRun(ghfake.Run{}).ID
			a := r.AddArtifact(tc.art)
			s.Inject(ghfake.Fault{Host: ghfake.HostBlob, Kind: ghfake.DisconnectMidBody})
			loc := do(t, "GET", fmt.Sprintf("%srepos/octo/app/actions/artifacts/%d/zip", s.URL, a.ID), ghfake.Token, nil, nil).header.Get("Location")
			resp, err := http.Get(loc)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(b) != (tc.size+1)/2 || resp.ContentLength != int64(tc.size) {
				t.Errorf("read %d of %d bytes (Content-Length %d), error %v; want half and io.ErrUnexpectedEOF", len(b), tc.size, resp.ContentLength, err)
			}
			if dl := do(t, "GET", loc, "", nil, nil); dl.status != 200 || len(dl.body) != tc.size {
				t.Errorf("second download: %d, %d bytes; want the whole body", dl.status, len(dl.body))
			}
			if reqs := s.Requests(ghfake.HostBlob); len(reqs) != 2 || !reqs[0].Injected {
				t.Errorf("blob requests %+v, want 2, the first injected", reqs)
			}
		})
	}
}

// TestRedirectFault answers a 307 with GitHub's body, then the request as
// usual.
func TestRedirectFault(t *testing.T) {
	s := ghfake.New(t)
	s.Repo("octo/app").AddRun(ghfake.Run{})
	s.Inject(ghfake.Fault{Path: "/repos/*/*/actions/runs", Kind: ghfake.Redirect, Location: "https://elsewhere.example/x"})
	u := s.URL + "repos/octo/app/actions/runs"
	resp := do(t, "GET", u, ghfake.Token, nil, nil)
	if resp.status != 307 || resp.header.Get("Location") != "https://elsewhere.example/x" || !bytes.Contains(resp.body, []byte(`"url":"https://elsewhere.example/x"`)) {
		t.Errorf("got %d %v %s, want a 307 to elsewhere", resp.status, resp.header, resp.body)
	}
	if resp := do(t, "GET", u, ghfake.Token, nil, nil); resp.status != 200 {
		t.Errorf("after the fault: %d, want 200", resp.status)
	}
}
