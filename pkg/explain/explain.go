// Package explain is flakegate's optional AI root-cause analysis: it asks
// Gemini (google.golang.org/genai) to group flaky tests by likely cause.
//
// It is built to be harmless:
//   - It never sees the GitHub token: Options holds only the Gemini key.
//   - Its input is bounded (tests, messages and bytes are capped) and the call
//     has a hard timeout.
//   - Test names and messages are untrusted. They travel as JSON in a
//     delimited data block, the system instruction says they are data and not
//     instructions, the reply is constrained by a response schema and
//     validated, and Markdown renders it escaped, with mentions, links and raw
//     HTML neutralised, labelled as AI-generated.
//   - Every failure (an API error such as 429 RESOURCE_EXHAUSTED, a timeout, a
//     reply that is not valid JSON or breaks the schema) becomes an *Error,
//     and Run turns it into a note the caller prints. Nothing here can change
//     a verdict.
package explain

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/score"
)

// Defaults for Options.
const (
	DefaultModel   = "gemini-3.8-flash"
	DefaultBaseURL = "https://generativelanguage.googleapis.com/" // the client library's
	DefaultTimeout = 60 * time.Second
)

// Input is what the analysis reads: flaky tests and totals, or (Blocking)
// the tests that block a pull request. It is neutral: the caller copies what
// it has into it.
type Input struct {
	Source        string // "owner/repo", or "local"
	TestsAnalyzed int
	FlakyCount    int // report mode
	RunsAnalyzed  int // report mode
	// Blocking says the tests are the ones a gate blocks a pull request on
	// (regressions, new failing tests, patch-induced flakes), not a branch's
	// flaky tests: the prompt and the section say so, and each test's Bucket,
	// Failures and Runs are its classification and head counts.
	Blocking bool
	Tests    []Test // the highest scores (then most failures) are kept when capped
}

// FromScore is a scored test as the analysis reads it.
func FromScore(t score.Test) Test {
	et := Test{Name: t.Name, Score: t.FlakeScore, Evidence: strings.Join(t.Evidence, ","), Failures: t.Failures, Runs: t.Runs, Messages: t.ErrorMessages}
	for _, s := range t.Signatures {
		et.Signatures = append(et.Signatures, s.Hash)
	}
	return et
}

// Test is one flaky or blocking test.
type Test struct {
	Name       string   // "classname::name"
	Score      float64  // flakiness score in [0,1]; report mode
	Evidence   string   // kind of evidence: "same-commit", "retry", "intermittent"; report mode
	Bucket     string   // the gate's classification: "regression", "patch-induced flake", …; gate mode
	Failures   int      // failed executions seen (in gate mode, on the PR's head)
	Runs       int      // executions seen (in gate mode, on the PR's head)
	Messages   []string // sample failure messages
	Signatures []string // normalised failure signatures
}

// Confidence is how sure the model says it is. A scale of words, not a
// number: the model's numbers would not be calibrated probabilities.
type Confidence string

const (
	Low    Confidence = "low"
	Medium Confidence = "medium"
	High   Confidence = "high"
)

// RootCause is one likely cause and the tests it explains.
type RootCause struct {
	Cause      string
	Tests      []string // only names that were in the Input
	Confidence Confidence
	Evidence   string
}

// Analysis is a validated, length-capped reply. Its text is still untrusted:
// render it with Markdown.
type Analysis struct {
	Model           string
	Summary         string
	RootCauses      []RootCause
	Recommendations []string
	// TestsSent of TestsTotal tests reached the model (the others were left
	// out by the prompt's bounds); Markdown says so when they differ.
	TestsSent  int
	TestsTotal int
	Blocking   bool // the tests were a pull request's blocking tests (Input.Blocking)
}

// Explainer produces an Analysis. Implementations return an *Error on failure.
type Explainer interface {
	Explain(ctx context.Context, in Input) (*Analysis, error)
}

// Kind classifies an Error.
type Kind string

const (
	KindTimeout      Kind = "timeout"       // no reply within the timeout
	KindCanceled     Kind = "canceled"      // the caller's context ended
	KindRateLimited  Kind = "rate-limited"  // HTTP 429, e.g. RESOURCE_EXHAUSTED
	KindAPI          Kind = "api"           // any other API or transport error
	KindBlocked      Kind = "blocked"       // the prompt or reply was blocked (safety, recitation, …)
	KindTruncated    Kind = "truncated"     // the reply hit the output token limit
	KindInvalidReply Kind = "invalid-reply" // not JSON, or not the schema
	KindConfig       Kind = "config"        // bad Options
)

// Error is a failed analysis. Its message never contains the API key.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // the cause, when there is one
}

func (e *Error) Error() string { return "AI root causes: " + e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Result is what a caller renders: an Analysis, or a Note saying why there
// is none.
type Result struct {
	Analysis *Analysis
	Note     string
}

// Run calls e and never fails: an error, a nil Analysis, or even a panic
// inside e becomes a Note.
func Run(ctx context.Context, e Explainer, in Input) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Note: note("the AI analysis failed unexpectedly")}
		}
	}()
	if e == nil {
		return Result{Note: note("no AI explainer is configured")}
	}
	a, err := e.Explain(ctx, in)
	switch {
	case err != nil:
		return Result{Note: Note(err)}
	case a == nil:
		return Result{Note: note("the AI analysis returned nothing")}
	}
	return Result{Analysis: a}
}

// Note turns an error from Explain into one line for a comment or summary.
func Note(err error) string {
	if err == nil {
		return ""
	}
	return note(strings.TrimPrefix(err.Error(), "AI root causes: "))
}

// maxReasonRunes caps the reason in a note, whatever produced it, so that
// Markdown's cap (600 runes) keeps the note's ending.
const maxReasonRunes = 400

func note(why string) string {
	why = strings.TrimRight(truncateRunes(why, maxReasonRunes), ". ")
	return "AI root causes are not available: " + why + ". The verdict does not depend on them."
}

// Options configures Gemini. The zero value of each field means its default.
type Options struct {
	APIKey string // required: the Gemini API key
	Model  string // default DefaultModel
	// BaseURL is the API's address; empty leaves it to the client library,
	// which reads GOOGLE_GEMINI_BASE_URL (a proxy's, or a fake's) before
	// its default, DefaultBaseURL.
	BaseURL string
	Timeout time.Duration // default DefaultTimeout; bounds the whole call
	// HTTPClient is used for the call; its transport is wrapped to cap the
	// reply size. Default: a new client over http.DefaultTransport.
	HTTPClient *http.Client
}

// Gemini explains with the Gemini API.
type Gemini struct {
	opts Options
	hc   *http.Client
}

var _ Explainer = (*Gemini)(nil)

// NewGemini checks the options and fills in defaults. It does no I/O.
func NewGemini(opts Options) (*Gemini, error) {
	if opts.APIKey == "" {
		return nil, &Error{Kind: KindConfig, Msg: "no Gemini API key"}
	}
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	opts.Model = strings.TrimPrefix(opts.Model, "models/")
	if strings.ContainsAny(opts.Model, "/?#% \t\r\n") {
		return nil, &Error{Kind: KindConfig, Msg: fmt.Sprintf("model %q is not a model id", opts.Model)}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = limitTransport{base: base, max: maxReplyBytes}
	return &Gemini{opts: opts, hc: hc}, nil
}
