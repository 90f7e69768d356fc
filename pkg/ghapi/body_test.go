package ghapi_test

import (
	"context"
	"errors"
	"github.com/flakegate/flakegate/pkg/internal/retry"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestAPIBodyCutIsRetried: a connection reset in the middle of an API
// answer's body (a page of runs) is a network error like any other, and
// the request is sent again. Before, go-github's decoder met it after the
// transport was done, and the listing failed at once ("unexpected EOF"),
// which stopped a gate's collection.
func TestAPIBodyCutIsRetried(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	for i := range 30 {
		r.AddRun(ghfake.Run{Workflow: "ci.yml", CreatedAt: t0.Add(-time.Duration(i) * time.Hour)})
	}
	s.Inject(ghfake.Fault{Kind: ghfake.DisconnectMidBody, Path: "/repos/*/*/actions/workflows/*/runs"})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	runs, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{Workflow: "ci.yml"})
	if err != nil || len(runs) != 30 {
		t.Fatalf("%d runs, error %v: a body cut once was not retried", len(runs), err)
	}
	if n := len(requestsTo(s, "/runs")); n != 2 {
		t.Errorf("%d requests for the runs, want 2", n)
	}
}

// TestAPIBodyNeverEnds: an API answer whose body never ends is refused at
// a bound. Before, go-github's decoder read it into memory until the
// attempt's timeout (60 s by default): gigabytes.
func TestAPIBodyNeverEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"total_count":1,"workflow_runs":[{"id":1,"name":"`)
		chunk := []byte(strings.Repeat("a", 1<<16))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, err := ghapi.New("tok", srv.URL, &http.Client{Timeout: 20 * time.Second}, ghapi.Options{Retry: retry.Policy{Sleep: func(context.Context, time.Duration) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{Workflow: "ci.yml"})
	if !errors.Is(err, ghapi.ErrTooLarge) {
		t.Errorf("error = %v, want ErrTooLarge", err)
	}
}
