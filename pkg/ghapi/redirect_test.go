package ghapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// elsewhere is a second host that records what it gets and answers every
// request with a JSON body the caller would accept.
type elsewhere struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, r.Header.Clone())
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"total_count":0,"workflow_runs":[],"artifacts":[],"id":1,"number":1,"body":"x"}`)
	}))
	t.Cleanup(e.Close)
	return e
}

// credentials returns the credential headers the host got.
func (e *elsewhere) credentials() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, h := range e.seen {
		for k, v := range h {
			if strings.EqualFold(k, "Authorization") || strings.Contains(strings.Join(v, " "), ghfake.Token) {
				out = append(out, k+": "+strings.Join(v, " "))
			}
		}
	}
	return out
}

// TestTokenStaysOnTheAPIHost: a redirect from the API to another host (a
// different port is another host) never takes the token along, for any
// call; the call fails instead of reading another host's answer.
func TestTokenStaysOnTheAPIHost(t *testing.T) {
	calls := []struct {
		name string
		path string // the API path that redirects
		call func(ctx context.Context, c *ghapi.Client, run, art int64, pr int) error
	}{
		{"runs list", "/repos/*/*/actions/runs", func(ctx context.Context, c *ghapi.Client, _, _ int64, _ int) error {
			_, err := c.ListWorkflowRuns(ctx, repo, ghapi.RunFilter{})
			return err
		}},
		{"artifacts list", "/repos/*/*/actions/runs/*/artifacts", func(ctx context.Context, c *ghapi.Client, run, _ int64, _ int) error {
			_, err := c.ListRunArtifacts(ctx, repo, run, "")
			return err
		}},
		{"pull request", "/repos/*/*/pulls/*", func(ctx context.Context, c *ghapi.Client, _, _ int64, pr int) error {
			_, err := c.PullRequest(ctx, repo, pr)
			return err
		}},
		{"comment (POST)", "/repos/*/*/issues/*/comments", func(ctx context.Context, c *ghapi.Client, _, _ int64, pr int) error {
			_, err := c.CreateComment(ctx, repo, pr, "hello")
			return err
		}},
		{"artifact download", "/repos/*/*/actions/artifacts/*/zip", func(ctx context.Context, c *ghapi.Client, _, art int64, _ int) error {
			_, err := c.DownloadArtifact(ctx, repo, art, 0)
			return err
		}},
	}
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect} {
		for _, tc := range calls {
			t.Run(fmt.Sprintf("%d %s", status, tc.name), func(t *testing.T) {
				s := ghfake.New(t)
				r := s.Repo("octo/app")
				run := r.AddRun(ghfake.Run{})
				art := r.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: map[string][]byte{"r.xml": []byte("<testsuite/>")}})
				pr := r.AddPullRequest(ghfake.PullRequest{})
				other := newElsewhere(t)
				s.Inject(ghfake.Fault{Path: tc.path, Kind: ghfake.Redirect, Status: status, Location: other.URL + "/moved?sig=secret"})
				c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
				err := tc.call(context.Background(), c, run.ID, art.ID, pr.Number)
				if creds := other.credentials(); len(creds) > 0 {
					t.Errorf("the other host got the token: %q", creds)
				}
				legit := status == http.StatusFound && tc.name == "artifact download" // the blob host, without the token
				switch {
				case err == nil && !legit:
					t.Errorf("no error: the other host's answer was taken for GitHub's")
				case err != nil && strings.Contains(err.Error(), "sig="):
					t.Errorf("error %q shows a signature", err)
				case err != nil && tc.name != "artifact download" && !strings.Contains(err.Error(), "redirect to another host refused: "+other.URL+" is not the API host"):
					t.Errorf("error %q does not say the redirect was refused", err)
				}
			})
		}
	}
}

// TestTokenOnlyForTheAPIHost: a request the caller sends through the
// go-github client to another host goes without the token.
func TestTokenOnlyForTheAPIHost(t *testing.T) {
	s := ghfake.New(t)
	other := newElsewhere(t)
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	gh := ghapi.GoGitHub(c)
	req, err := gh.NewRequest("GET", other.URL+"/repos/octo/app", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Do(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if creds := other.credentials(); len(creds) > 0 {
		t.Errorf("the other host got the token: %q", creds)
	}
	if len(other.seen) != 1 {
		t.Errorf("the other host got %d requests, want 1", len(other.seen))
	}
}

// TestSameHostRedirects: GitHub's own redirects (a renamed or transferred
// repository) are followed, with the token.
func TestSameHostRedirects(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			r.AddRun(ghfake.Run{})
			pr := r.AddPullRequest(ghfake.PullRequest{Title: "moved"})
			s.Inject(ghfake.Fault{Path: "/repos/*/*/actions/runs", Kind: ghfake.Redirect, Status: status,
				Location: s.URL + "repos/octo/app/actions/runs?per_page=100&status=completed"})
			s.Inject(ghfake.Fault{Path: "/repos/*/*/pulls/*", Kind: ghfake.Redirect, Status: status,
				Location: fmt.Sprintf("/repos/octo/app/pulls/%d", pr.Number)}) // a relative Location
			c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
			runs, err := c.ListWorkflowRuns(context.Background(), repo, ghapi.RunFilter{})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs: %d, %v; want 1 run", len(runs), err)
			}
			got, err := c.PullRequest(context.Background(), repo, pr.Number)
			if err != nil || got.Title != "moved" {
				t.Fatalf("pull request: %v, %v", got, err)
			}
			reqs := s.Requests(ghfake.HostAPI)
			if len(reqs) != 4 {
				t.Errorf("%d API requests, want 4 (two redirects followed)", len(reqs))
			}
			for _, req := range reqs {
				if req.Header.Get("Authorization") != "Bearer "+ghfake.Token {
					t.Errorf("%s %s lacks the token", req.Method, req.Path)
				}
			}
		})
	}
}
