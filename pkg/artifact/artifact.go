// Package artifact uploads a workflow artifact from inside a running action,
// with the artifact v4 protocol that actions/upload-artifact@v4 uses:
//
//  1. POST {results origin}/twirp/github.actions.results.api.v1.ArtifactService/CreateArtifact
//     with the runtime token; the answer holds a signed blob URL.
//  2. PUT the zip to that URL as an Azure block blob, with no GitHub
//     credential.
//  3. FinalizeArtifact with the zip's size and SHA-256; the answer holds the
//     artifact id.
//
// The backend ids come from the runtime token's scp claim. Without
// ACTIONS_RESULTS_URL there is nothing to upload to: FromEnv returns
// ErrNotAvailable and the caller skips the upload with a notice.
package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// ErrNotAvailable says the runner offers no results service
// (ACTIONS_RESULTS_URL is unset), so the artifact cannot be uploaded.
var ErrNotAvailable = errors.New("artifact upload is not available: ACTIONS_RESULTS_URL is not set")

// Environment variables the runner sets.
const (
	EnvRuntimeToken = "ACTIONS_RUNTIME_TOKEN"
	EnvResultsURL   = "ACTIONS_RESULTS_URL"
	EnvRetention    = "GITHUB_RETENTION_DAYS"
)

// Platform rules.
const (
	// MinRetentionDays and MaxRetentionDays bound retention.
	MinRetentionDays = 1  // actions/upload-artifact: retention-days "Minimum 1 day"
	MaxRetentionDays = 90 // actions/upload-artifact: retention-days "Maximum 90 days"
	// refusedNameChars may not appear in artifact names (CR and LF are
	// refused too, and named separately).
	refusedNameChars = "\":<>|*?\\/" // actions/toolkit: invalidArtifactNameCharacters
	// refusedPathChars may not appear in the paths of files in an artifact.
	refusedPathChars = "\":<>|*?" // actions/toolkit: invalidArtifactFilePathCharacters
	artifactVersion  = 4
	twirpService     = "/twirp/github.actions.results.api.v1.ArtifactService/"
	resultsScope     = "Actions.Results:"
)

// Defaults for the zero Options.
const (
	defaultMaxRetries  = 4
	defaultBackoffBase = 3 * time.Second // actions/toolkit twirp client: baseRetryIntervalMilliseconds 3000
	defaultMaxBackoff  = 30 * time.Second
	defaultMaxWait     = 2 * time.Minute
	defaultTimeout     = 5 * time.Minute
	maxErrorBody       = 16 << 10
)

// Options tune a Client. The zero value is the default.
type Options struct {
	// HTTPClient carries the twirp calls; default a client with a 5-minute
	// timeout. Its redirects are never followed: the calls carry the
	// runtime token, and the artifact service does not redirect them.
	HTTPClient *http.Client
	// BlobClient carries the upload to the signed URL. It must not add
	// credentials. Default: a fresh client, never HTTPClient.
	BlobClient *http.Client
	// Retry is the retry policy (pkg/internal/retry); its zero fields take
	// the defaults: 4 retries per call, backoff from 3s doubling to 30s,
	// and at most 2 minutes of waiting per call.
	Retry retry.Policy
	// Now can be replaced in tests.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: defaultTimeout}
	}
	twirp := *o.HTTPClient // the caller's client stays as it was
	twirp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.HTTPClient = &twirp
	if o.BlobClient == nil {
		o.BlobClient = &http.Client{Timeout: defaultTimeout}
	}
	o.Retry = o.Retry.WithDefaults(retry.Policy{MaxRetries: defaultMaxRetries, BackoffBase: defaultBackoffBase, MaxBackoff: defaultMaxBackoff, MaxWait: defaultMaxWait})
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Client uploads artifacts for one job.
type Client struct {
	token        string
	origin       string
	runBackendID string
	jobBackendID string
	opts         Options
}

// FromEnv builds a Client from ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL.
// Without ACTIONS_RESULTS_URL it returns ErrNotAvailable.
func FromEnv(getenv func(string) string, opts Options) (*Client, error) {
	results := strings.TrimSpace(getenv(EnvResultsURL))
	if results == "" {
		return nil, ErrNotAvailable
	}
	return New(strings.TrimSpace(getenv(EnvRuntimeToken)), results, opts)
}

// New builds a Client from a runtime token and the results service URL
// (only its origin is used).
func New(runtimeToken, resultsURL string, opts Options) (*Client, error) {
	if resultsURL == "" {
		return nil, ErrNotAvailable
	}
	u, err := url.Parse(resultsURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: want an http(s) URL", EnvResultsURL, resultsURL)
	}
	run, job, err := BackendIDs(runtimeToken)
	if err != nil {
		return nil, err
	}
	return &Client{
		token: runtimeToken, origin: u.Scheme + "://" + u.Host,
		runBackendID: run, jobBackendID: job, opts: opts.withDefaults(),
	}, nil
}

// BackendIDs reads the workflow run and job backend ids from a runtime
// token: a JWT whose payload's scp claim holds
// "Actions.Results:<runBackendId>:<jobBackendId>". The token is not
// verified; only the results service can do that.
func BackendIDs(token string) (run, job string, err error) {
	if token == "" {
		return "", "", fmt.Errorf("%s: not set", EnvRuntimeToken)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", "", fmt.Errorf("%s: not a JWT", EnvRuntimeToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", "", fmt.Errorf("%s: JWT payload: %w", EnvRuntimeToken, err)
	}
	var claims struct {
		Scp string `json:"scp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", "", fmt.Errorf("%s: JWT payload: %w", EnvRuntimeToken, err)
	}
	for _, scope := range strings.Fields(claims.Scp) {
		rest, ok := strings.CutPrefix(scope, resultsScope)
		if !ok {
			continue
		}
		run, job, ok := strings.Cut(rest, ":")
		if !ok || run == "" || job == "" || strings.Contains(job, ":") {
			return "", "", fmt.Errorf("%s: scope %q: want %s<run>:<job>", EnvRuntimeToken, scope, resultsScope)
		}
		return run, job, nil
	}
	return "", "", fmt.Errorf("%s: no %s scope in the scp claim", EnvRuntimeToken, strings.TrimSuffix(resultsScope, ":"))
}

// ValidateName refuses names GitHub refuses, naming what is wrong.
func ValidateName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("artifact name: must not be empty")
	}
	if i := strings.IndexAny(name, refusedNameChars+"\r\n"); i >= 0 {
		return fmt.Errorf("artifact name %q: contains %s; names may not contain %s, CR or LF",
			name, describe(rune(name[i])), strings.Join(strings.Split(refusedNameChars, ""), " "))
	}
	return nil
}

func describe(r rune) string {
	switch r {
	case '\r':
		return "CR"
	case '\n':
		return "LF"
	}
	return strconv.QuoteRune(r)
}

// Retention returns the retention to request: days (1–90; 0 means the
// repository's default), capped at maxDays (GITHUB_RETENTION_DAYS; 0 or
// less means no cap).
func Retention(days, maxDays int) (int, error) {
	if days == 0 {
		return 0, nil
	}
	if days < MinRetentionDays || days > MaxRetentionDays {
		return 0, fmt.Errorf("retention days %d: accepted %d to %d", days, MinRetentionDays, MaxRetentionDays)
	}
	if maxDays > 0 && days > maxDays {
		days = maxDays
	}
	return days, nil
}

// UploadOptions tune one upload.
type UploadOptions struct {
	// RetentionDays is 1–90; 0 keeps the repository's default.
	RetentionDays int
	// MaxRetentionDays caps RetentionDays: pass GITHUB_RETENTION_DAYS.
	MaxRetentionDays int
}

// Result describes an uploaded artifact.
type Result struct {
	ID     int64
	Name   string
	Size   int64
	Digest string // "sha256:<hex>" of the zip
}

// Upload zips files (name → content, in name order) in memory and uploads
// them as artifact name. A name can be used once per workflow run.
func (c *Client) Upload(ctx context.Context, name string, files map[string][]byte, o UploadOptions) (*Result, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	days, err := Retention(o.RetentionDays, o.MaxRetentionDays)
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", name, err)
	}
	zipped, err := Zip(files, c.opts.Now())
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", name, err)
	}
	sum := sha256.Sum256(zipped)
	digest := "sha256:" + hex.EncodeToString(sum[:])

	create := map[string]any{
		"workflow_run_backend_id": c.runBackendID, "workflow_job_run_backend_id": c.jobBackendID,
		"name": name, "version": artifactVersion,
	}
	if days > 0 {
		create["expires_at"] = c.opts.Now().UTC().AddDate(0, 0, days).Format(time.RFC3339)
	}
	resp, err := c.twirp(ctx, "CreateArtifact", create)
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", name, err)
	}
	if !boolField(resp, "ok") {
		return nil, fmt.Errorf("artifact %q: CreateArtifact: not ok", name)
	}
	signed := stringField(resp, "signed_upload_url", "signedUploadUrl")
	if signed == "" {
		return nil, fmt.Errorf("artifact %q: CreateArtifact: no signed upload URL", name)
	}
	if err := c.putBlob(ctx, signed, zipped); err != nil {
		return nil, fmt.Errorf("artifact %q: upload: %w", name, err)
	}
	resp, err = c.twirp(ctx, "FinalizeArtifact", map[string]any{
		"workflow_run_backend_id": c.runBackendID, "workflow_job_run_backend_id": c.jobBackendID,
		"name": name, "size": strconv.Itoa(len(zipped)), "hash": digest,
	})
	if err != nil {
		return nil, fmt.Errorf("artifact %q: %w", name, err)
	}
	if !boolField(resp, "ok") {
		return nil, fmt.Errorf("artifact %q: FinalizeArtifact: not ok", name)
	}
	id, err := int64Field(resp, "artifact_id", "artifactId")
	if err != nil {
		return nil, fmt.Errorf("artifact %q: FinalizeArtifact: %w", name, err)
	}
	return &Result{ID: id, Name: name, Size: int64(len(zipped)), Digest: digest}, nil
}

// TwirpError is an error answer from the results service.
type TwirpError struct {
	Method     string
	StatusCode int
	Code       string // twirp code: already_exists, invalid_argument, …
	Msg        string
}

func (e *TwirpError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s: %s", e.Method, e.StatusCode, e.Code, e.Msg)
}

// twirp calls a method of the artifact service, retrying 429, 5xx and
// network errors.
func (c *Client) twirp(ctx context.Context, method string, in map[string]any) (map[string]json.RawMessage, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var out map[string]json.RawMessage
	err = c.retry(ctx, func() (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.origin+twirpService+method, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.token)
		return c.opts.HTTPClient.Do(req)
	}, func(resp *http.Response) error {
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			te := &TwirpError{Method: method, StatusCode: resp.StatusCode}
			var e struct{ Code, Msg string }
			if json.Unmarshal(data, &e) == nil {
				te.Code, te.Msg = e.Code, e.Msg
			}
			if resp.StatusCode >= 300 && resp.StatusCode < 400 {
				te.Code = "redirect"
				te.Msg = fmt.Sprintf("the artifact service redirected to %q; flakegate does not follow redirects with the runtime token", clipped(resp.Header.Get("Location"), 200))
			}
			return te
		}
		if err := json.Unmarshal(data, &out); err != nil {
			return fmt.Errorf("answer: %w", err)
		}
		return nil
	})
	if err != nil {
		var te *TwirpError
		if !errors.As(err, &te) {
			err = fmt.Errorf("%s: %w", method, err)
		}
		return nil, err
	}
	return out, nil
}

// putBlob uploads the zip as one Azure block blob, without the runtime
// token.
func (c *Client) putBlob(ctx context.Context, signedURL string, zipped []byte) error {
	if u, err := url.Parse(signedURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("signed upload URL is not an http(s) URL")
	}
	return c.retry(ctx, func() (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, signedURL, bytes.NewReader(zipped))
		if err != nil {
			return nil, retry.Redact(err)
		}
		req.Header.Set("x-ms-blob-type", "BlockBlob")
		req.Header.Set("x-ms-blob-content-type", "application/zip")
		req.Header.Set("Content-Type", "application/zip")
		resp, err := c.opts.BlobClient.Do(req)
		return resp, retry.Redact(err)
	}, func(resp *http.Response) error {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			return fmt.Errorf("blob host answered HTTP %d (%s)", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
		return nil
	})
}

// retry runs do until it gets an answer that is not 429 or 5xx (then
// handle decides), or gives up.
func (c *Client) retry(ctx context.Context, do func() (*http.Response, error), handle func(*http.Response) error) error {
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		resp, err := do()
		var wait time.Duration
		retryable := false
		switch {
		case err != nil:
			retryable = ctx.Err() == nil && retry.Transient(err)
			wait = c.backoff(attempt)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			retryable = true
			wait = c.backoff(attempt)
			if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs >= 0 {
				wait = time.Duration(secs) * time.Second
			}
		default:
			defer resp.Body.Close()
			return handle(resp)
		}
		if !retryable || attempt >= c.opts.Retry.MaxRetries || waited+wait > c.opts.Retry.MaxWait {
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			return handle(resp)
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
		}
		if err := c.opts.Retry.Sleep(ctx, wait); err != nil {
			return err
		}
		waited += wait
	}
}

func (c *Client) backoff(attempt int) time.Duration { return c.opts.Retry.Backoff(attempt) }

// Fields of twirp answers, in snake_case or camelCase.

func field(m map[string]json.RawMessage, names ...string) (json.RawMessage, bool) {
	for _, n := range names {
		if v, ok := m[n]; ok {
			return v, true
		}
	}
	return nil, false
}

func boolField(m map[string]json.RawMessage, names ...string) bool {
	v, _ := field(m, names...)
	var b bool
	return json.Unmarshal(v, &b) == nil && b
}

func stringField(m map[string]json.RawMessage, names ...string) string {
	v, _ := field(m, names...)
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// int64Field reads an int64, which protobuf's JSON mapping sends as a
// string but may send as a number.
func int64Field(m map[string]json.RawMessage, names ...string) (int64, error) {
	v, ok := field(m, names...)
	if !ok {
		return 0, fmt.Errorf("no %s", names[0])
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %s: not an integer", names[0], v)
	}
	return n, nil
}

// clipped cuts s to n bytes, for error messages.
func clipped(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
