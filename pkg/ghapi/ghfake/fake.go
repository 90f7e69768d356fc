// Package ghfake is a real HTTP fake of the parts of GitHub that flakegate
// talks to, for tests. It is not a mock: it runs three httptest servers and
// answers with the status codes, headers and JSON bodies GitHub sends.
//
//   - The REST API (URL): workflow runs with attempts, artifacts, pull
//     requests and their files, issues and comments, check runs, contents at
//     refs and commit statuses, with real pagination (page, per_page, Link).
//   - A blob host (BlobURL) that the artifact download redirects to (302 with
//     a short-lived signed URL) and that takes artifact uploads (Azure block
//     blob PUTs). Every request it gets is recorded, so a test can assert that
//     the GitHub token never reached it.
//   - The artifact v4 results service (ResultsURL): the twirp CreateArtifact
//     and FinalizeArtifact calls, authenticated by a runtime token
//     (RuntimeToken) whose scp claim names the backend ids.
//
// Tokens say who acts. Token and ReadOnlyToken (and AddToken's) act like a
// GITHUB_TOKEN: what they create is github-actions[bot]'s (type Bot), and
// GET /user answers them 403 "Resource not accessible by integration", as
// GitHub answers every installation token. UserToken (and AddUserToken's)
// act like a person's personal access token, classic or fine-grained: what
// they create is that person's (type User), and GET /user returns that
// person.
//
// Faults can be injected (Inject): N server errors, 429 with Retry-After,
// secondary rate limits, an exhausted primary rate limit, redirects,
// dropped connections (before the answer or mid-body), and latency
// (SetLatency). Artifacts too large to hold in memory are written on demand
// (Blob). Every request is recorded
// (Requests). Every REST request and response is checked against GitHub's
// OpenAPI description (testdata/openapi-subset.json): New registers a
// t.Cleanup that fails the test on any violation.
//
// The package does not import "testing", so a program may link it: Start
// runs the fake without a test (flakegate demo does), and the caller
// closes it and checks Violations.
package ghfake

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake/internal/openapi"
)

//go:embed testdata/openapi-subset.json
var subsetJSON []byte

// Tokens the fake accepts out of the box.
const (
	// Token may read and write, like a pull_request workflow's GITHUB_TOKEN on
	// a same-repository PR.
	Token = "ghs_fakeReadWriteToken0123456789abcdefghij"
	// ReadOnlyToken may only read, like the token of a PR from a fork: every
	// write answers 403 "Resource not accessible by integration".
	ReadOnlyToken = "ghs_fakeReadOnlyToken0123456789abcdefghijk"
	// UserToken may read and write, like a personal access token of
	// UserLogin's: comments and issues made with it are UserLogin's, a
	// User's, and GET /user returns UserLogin.
	UserToken = "ghp_fakePersonalAccessToken0123456789abcd"
	// UserLogin owns UserToken.
	UserLogin = "monalisa"
)

// Host names one of the fake's servers.
type Host string

// The fake's servers.
const (
	HostAPI     Host = "api"
	HostBlob    Host = "blob"
	HostResults Host = "results"
)

// DefaultRateLimit is the primary rate limit the fake starts with: what a
// GITHUB_TOKEN gets.
const DefaultRateLimit = 1000 // GitHub: "1,000 requests per hour per repository" for GITHUB_TOKEN

// globalStatuses may come from any REST operation without being declared in
// the OpenAPI description: bad credentials, missing permission or rate
// limits, not found (GitHub answers 404 for what a token may not see),
// and server errors.
// Redirects (301, 302, 307) may too: GitHub answers them for renamed and
// transferred repositories on any path.
var globalStatuses = []int{301, 302, 307, 401, 403, 404, 429, 500, 502, 503, 504}

// Request is one recorded request and the status it got.
type Request struct {
	Host     Host
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
	Status   int  // 0 when the connection was dropped
	Injected bool // answered by an injected fault
}

// Violation is a request or response that does not match GitHub's OpenAPI
// description or the artifact protocol.
type Violation struct {
	Host    Host
	Method  string
	Path    string
	Status  int
	Problem string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s %s (status %d): %s", v.Host, v.Method, v.Path, v.Status, v.Problem)
}

// Server is the fake. Its exported fields are set by New and must not be
// changed.
type Server struct {
	// URL is the REST API base URL with a trailing slash, for
	// github.Client.BaseURL.
	URL string
	// BlobURL is the blob host's origin.
	BlobURL string
	// ResultsURL is the value for ACTIONS_RESULTS_URL.
	ResultsURL string

	spec                *openapi.Spec
	api, blob, results  *httptest.Server
	apiBase, htmlBase   string
	mu                  sync.Mutex
	now                 func() time.Time
	latency             time.Duration
	tokens              map[string]bool   // token → read-only
	owners              map[string]string // a personal access token → its owner's login
	repos               map[string]*repoState
	nextID              int64
	faults              []*faultState
	requests            []Request
	violations          []Violation
	rateLimit           int
	rateUsed            int
	rateReset           time.Time
	inflight, maxFlight int
	signedURLTTL        time.Duration
	responseHook        func(method, path string, status int, body []byte) []byte
	uploads             []*uploadState
	runtimeTokens       map[string]runtimeIDs
	twirpCamelCase      bool
	secret              string
}

// TB is the part of testing.TB that New uses. *testing.T and *testing.B
// satisfy it; the package does not import "testing" so that programs can
// link it.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
}

// New starts the fake and registers a cleanup that closes it and fails t if
// any request or response violated GitHub's OpenAPI description. t may be
// nil, for use outside tests; then call Close and check Violations yourself
// (or use Start).
func New(t TB) *Server {
	s := Start()
	if t != nil {
		t.Helper()
		t.Cleanup(func() {
			s.Close()
			for _, v := range s.Violations() {
				t.Errorf("ghfake: %v", v)
			}
		})
	}
	return s
}

// Start starts the fake on loopback outside a test. The caller calls Close
// and checks Violations: nothing fails on its own.
func Start() *Server {
	spec, err := openapi.Load(subsetJSON)
	if err != nil {
		panic(fmt.Sprintf("ghfake: embedded OpenAPI subset: %v", err)) // a broken embed is a build defect
	}
	s := &Server{
		spec:          spec,
		now:           time.Now,
		tokens:        map[string]bool{Token: false, ReadOnlyToken: true, UserToken: false},
		owners:        map[string]string{UserToken: UserLogin},
		repos:         map[string]*repoState{},
		nextID:        1000,
		rateLimit:     DefaultRateLimit,
		signedURLTTL:  time.Minute, // GitHub: the download URL "expires after 1 minute"
		runtimeTokens: map[string]runtimeIDs{},
		secret:        "ghfake-signing-secret",
		htmlBase:      "https://github.com",
	}
	s.rateReset = s.now().Add(time.Hour).Truncate(time.Second)
	s.api = httptest.NewServer(http.HandlerFunc(s.serveAPI))
	s.blob = httptest.NewServer(http.HandlerFunc(s.serveBlob))
	s.results = httptest.NewServer(http.HandlerFunc(s.serveResults))
	s.apiBase = s.api.URL
	s.URL = s.api.URL + "/"
	s.BlobURL = s.blob.URL
	s.ResultsURL = s.results.URL + "/"
	return s
}

// Close shuts the servers down. It is safe to call more than once.
func (s *Server) Close() {
	s.api.CloseClientConnections()
	s.blob.CloseClientConnections()
	s.results.CloseClientConnections()
	s.api.Close()
	s.blob.Close()
	s.results.Close()
}

// SetClock replaces the clock used for timestamps, rate-limit resets and
// signed-URL expiry.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
	s.rateReset = now().Add(time.Hour).Truncate(time.Second)
}

// SetLatency delays every request to every host by d (for concurrency
// benchmarks). A request whose client gives up stops waiting.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// SetRateLimit sets the primary rate limit: after limit REST requests every
// request answers 403 with x-ratelimit-remaining 0 until reset.
func (s *Server) SetRateLimit(limit int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit, s.rateUsed, s.rateReset = limit, 0, reset
}

// SetSignedURLTTL sets how long the blob URLs the fake signs stay valid.
func (s *Server) SetSignedURLTTL(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signedURLTTL = d
}

// AddToken makes the fake accept token, read-only or not, as a
// GITHUB_TOKEN: it writes as github-actions[bot] and may not ask GET /user.
func (s *Server) AddToken(token string, readOnly bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = readOnly
	delete(s.owners, token)
}

// AddUserToken makes the fake accept token as a personal access token of
// the user login: it may read and write, what it creates is login's (type
// User), and GET /user returns login.
func (s *Server) AddUserToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = false
	s.owners[token] = login
}

// author is whom a request's token writes as: the owner of a personal
// access token, else github-actions[bot]. s.mu must be held.
func (s *Server) author(r *http.Request) (login string, bot bool) {
	if login, ok := s.owners[bearer(r.Header.Get("Authorization"))]; ok {
		return login, false
	}
	return actionsBotLogin, true
}

// SetResponseHook lets a test rewrite REST response bodies before they are
// validated and sent, for example to prove that the validator catches a
// malformed response. nil removes the hook.
func (s *Server) SetResponseHook(hook func(method, path string, status int, body []byte) []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responseHook = hook
}

// Requests returns every recorded request, in arrival order. With hosts, only
// those hosts' requests.
func (s *Server) Requests(hosts ...Host) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if len(hosts) == 0 || slices.Contains(hosts, r.Host) {
			r.Header = r.Header.Clone()
			out = append(out, r)
		}
	}
	return out
}

// RequestCount is the number of requests a host got.
func (s *Server) RequestCount(host Host) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.Host == host {
			n++
		}
	}
	return n
}

// MaxConcurrent is the largest number of requests the fake served at once.
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxFlight
}

// Violations returns what did not match GitHub's OpenAPI description or the
// artifact protocol so far.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// TakeViolations returns the violations so far and forgets them, for tests
// that provoke violations on purpose.
func (s *Server) TakeViolations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.violations
	s.violations = nil
	return v
}

func (s *Server) violate(host Host, r *http.Request, status int, problem string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, Violation{Host: host, Method: r.Method, Path: r.URL.Path, Status: status, Problem: problem})
}

func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// recorder buffers a response so it can be validated, recorded and then sent.
// A streamed body (a Blob) is not buffered: stream writes it when the
// response is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	stream *Blob
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// flush sends the response. With cut, the connection is closed after half
// the body.
func (r *recorder) flush(w http.ResponseWriter, body []byte, cut bool) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	size := int64(len(body))
	if r.stream != nil {
		size = r.stream.size
	}
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	var out io.Writer = w
	if cut {
		out = &cutWriter{w: w, left: (size + 1) / 2}
	}
	if r.stream != nil {
		_ = r.stream.write(out)
	} else {
		_, _ = out.Write(body)
	}
	if cut {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler) // net/http closes the connection
	}
}

// cutWriter passes on the first left bytes and drops the rest.
type cutWriter struct {
	w    io.Writer
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	n := len(p)
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	if len(p) > 0 {
		if _, err := c.w.Write(p); err != nil {
			return 0, err
		}
		c.left -= int64(len(p))
	}
	if c.left == 0 {
		return n, errCut
	}
	return n, nil
}

var errCut = errors.New("ghfake: connection cut mid-body")

// serve is the middleware every host shares: latency, concurrency tracking,
// fault injection, recording.
func (s *Server) serve(host Host, w http.ResponseWriter, r *http.Request, handle func(w http.ResponseWriter, r *http.Request, body []byte)) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.inflight++
	s.maxFlight = max(s.maxFlight, s.inflight)
	latency := s.latency
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
		}
	}
	rec := Request{Host: host, Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	f := s.takeFault(host, r)
	if f != nil && f.Kind == Disconnect {
		rec.Injected = true
		s.record(rec)
		if host == HostAPI {
			s.validateRequest(r, body, 0)
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	out := newRecorder()
	cut := f != nil && f.Kind == DisconnectMidBody
	if cut {
		rec.Injected = true
	}
	if f != nil && !cut {
		rec.Injected = true
		s.writeFault(host, out, f)
	} else {
		r.Body = io.NopCloser(bytes.NewReader(body))
		handle(out, r, body)
	}
	respBody := out.body.Bytes()
	if host == HostAPI {
		s.mu.Lock()
		hook := s.responseHook
		s.mu.Unlock()
		if hook != nil {
			respBody = hook(r.Method, r.URL.Path, out.status, respBody)
		}
		s.validateRequest(r, body, out.status)
		s.validateResponse(r, out, respBody)
	}
	rec.Status = out.status
	if rec.Status == 0 {
		rec.Status = http.StatusOK
	}
	s.record(rec)
	out.flush(w, respBody, cut)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

func (s *Server) validateRequest(r *http.Request, body []byte, status int) {
	for _, p := range s.spec.ValidateRequest(r.Method, r.URL, r.Header.Get("Content-Type"), body) {
		s.violate(HostAPI, r, status, "request: "+p)
	}
}

func (s *Server) validateResponse(r *http.Request, out *recorder, body []byte) {
	status := out.status
	if status == 0 {
		status = http.StatusOK
	}
	for _, p := range s.spec.ValidateResponse(r.Method, r.URL.Path, status, out.header, body, globalStatuses) {
		s.violate(HostAPI, r, status, "response: "+p)
	}
}

type ctxServer struct{}

func contextWith(ctx context.Context, s *Server, body []byte) context.Context {
	return context.WithValue(context.WithValue(ctx, ctxServer{}, s), ctxBody{}, body)
}

// writeJSON sends v as a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Documentation links GitHub puts in error bodies.
const (
	docsBase          = "https://docs.github.com/rest"
	docsSecondaryRate = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	docsPrimaryRate   = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"
	docsRedirects     = "https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects"
)

func writeError(w http.ResponseWriter, status int, message, doc string) {
	if doc == "" {
		doc = docsBase
	}
	writeJSON(w, status, map[string]any{"message": message, "documentation_url": doc, "status": strconv.Itoa(status)})
}

// pathMatch reports whether pattern (path.Match syntax, "" = any) matches p.
func pathMatch(pattern, p string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, p)
	return err == nil && ok
}

// bearer returns the token from an Authorization header ("Bearer X" or
// "token X").
func bearer(h string) string {
	for _, prefix := range []string{"Bearer ", "bearer ", "token "} {
		if t, ok := strings.CutPrefix(h, prefix); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}
