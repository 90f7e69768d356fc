package ghfake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v60/github"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake/internal/openapi"
)

func loadSubset(t *testing.T) *openapi.Spec {
	t.Helper()
	data, err := os.ReadFile("testdata/openapi-subset.json")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestRoutesMatchSubset keeps the fake's route table and the extracted
// OpenAPI subset in step.
func TestRoutesMatchSubset(t *testing.T) {
	spec := loadSubset(t)
	if diff := cmp.Diff(spec.Operations(), ghfake.Routes()); diff != "" {
		t.Errorf("routes differ from testdata/openapi-subset.json (-subset +fake):\n%s", diff)
	}
}

func newClient(t *testing.T, s *ghfake.Server, token string) *github.Client {
	t.Helper()
	c := github.NewClient(nil).WithAuthToken(token)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = u
	return c
}

// TestEveryRouteValidates drives every route with go-github itself and relies
// on the fake's cleanup to fail on any OpenAPI violation.
func TestEveryRouteValidates(t *testing.T) {
	s := ghfake.New(t)
	repo := s.Repo("octo/app")
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	run := repo.AddRun(ghfake.Run{Attempts: 2, CreatedAt: t0, PullRequests: []int{1}})
	art := repo.AddArtifact(ghfake.Artifact{RunID: run.ID, Name: "junit", Files: map[string][]byte{"a.xml": []byte("<testsuites/>")}})
	pr := repo.AddPullRequest(ghfake.PullRequest{Number: 1, Body: "hello", Labels: []string{"flaky"}, Files: []ghfake.File{{Filename: "a.go", Additions: 1, Patch: "@@ -1 +1 @@"}}})
	fork := repo.AddPullRequest(ghfake.PullRequest{HeadRepo: "forker/app"})
	repo.AddIssue(ghfake.Issue{Title: "tracking", Body: "<!-- marker -->"})
	repo.SetFile("main", ".github/flaky-ledger.yml", []byte("entries: []\n"))
	ctx := context.Background()
	gh := newClient(t, s, ghfake.Token)
	const o, r = "octo", "app"

	steps := []struct {
		name string
		call func() error
	}{
		{"runs", func() error {
			_, _, err := gh.Actions.ListRepositoryWorkflowRuns(ctx, o, r, &github.ListWorkflowRunsOptions{Status: "completed", Created: ">=2025-01-01", ListOptions: github.ListOptions{PerPage: 100}})
			return err
		}},
		{"runs by file", func() error {
			_, _, err := gh.Actions.ListWorkflowRunsByFileName(ctx, o, r, "ci.yml", &github.ListWorkflowRunsOptions{Branch: "main", HeadSHA: run.HeadSHA})
			return err
		}},
		{"run", func() error { _, _, err := gh.Actions.GetWorkflowRunByID(ctx, o, r, run.ID); return err }},
		{"attempt", func() error { _, _, err := gh.Actions.GetWorkflowRunAttempt(ctx, o, r, run.ID, 1, nil); return err }},
		{"artifacts", func() error { _, _, err := gh.Actions.ListWorkflowRunArtifacts(ctx, o, r, run.ID, nil); return err }},
		{"artifact", func() error { _, _, err := gh.Actions.GetArtifact(ctx, o, r, art.ID); return err }},
		{"download", func() error { _, _, err := gh.Actions.DownloadArtifact(ctx, o, r, art.ID, 0); return err }},
		{"pulls", func() error {
			_, _, err := gh.PullRequests.List(ctx, o, r, &github.PullRequestListOptions{State: "all"})
			return err
		}},
		{"pull", func() error { _, _, err := gh.PullRequests.Get(ctx, o, r, pr.Number); return err }},
		{"fork pull", func() error { _, _, err := gh.PullRequests.Get(ctx, o, r, fork.Number); return err }},
		{"files", func() error { _, _, err := gh.PullRequests.ListFiles(ctx, o, r, pr.Number, nil); return err }},
		{"commit pulls", func() error {
			_, _, err := gh.PullRequests.ListPullRequestsWithCommit(ctx, o, r, pr.HeadSHA, nil)
			return err
		}},
		{"create comment", func() error {
			_, _, err := gh.Issues.CreateComment(ctx, o, r, pr.Number, &github.IssueComment{Body: github.String("hi")})
			return err
		}},
		{"comments", func() error { _, _, err := gh.Issues.ListComments(ctx, o, r, pr.Number, nil); return err }},
		{"edit comment", func() error {
			cs := repo.Comments(pr.Number)
			_, _, err := gh.Issues.EditComment(ctx, o, r, cs[0].ID, &github.IssueComment{Body: github.String("edited")})
			return err
		}},
		{"delete comment", func() error {
			cs := repo.Comments(pr.Number)
			if _, err := gh.Issues.DeleteComment(ctx, o, r, cs[0].ID); err != nil {
				return err
			}
			if n := len(repo.Comments(pr.Number)); n != len(cs)-1 {
				return fmt.Errorf("%d comments left of %d", n, len(cs))
			}
			if resp, err := gh.Issues.DeleteComment(ctx, o, r, cs[0].ID); resp == nil || resp.StatusCode != http.StatusNotFound {
				return fmt.Errorf("deleting it again: %v, want 404", err)
			}
			return nil
		}},
		{"issues", func() error {
			_, _, err := gh.Issues.ListByRepo(ctx, o, r, &github.IssueListByRepoOptions{State: "all", Labels: []string{"flaky"}})
			return err
		}},
		{"create issue", func() error {
			_, _, err := gh.Issues.Create(ctx, o, r, &github.IssueRequest{Title: github.String("t"), Body: github.String("b"), Labels: &[]string{"x"}})
			return err
		}},
		{"edit issue", func() error {
			_, _, err := gh.Issues.Edit(ctx, o, r, repo.Issues()[0].Number, &github.IssueRequest{State: github.String("closed")})
			return err
		}},
		{"check run", func() error {
			c, _, err := gh.Checks.CreateCheckRun(ctx, o, r, github.CreateCheckRunOptions{Name: "flakegate", HeadSHA: pr.HeadSHA, Status: github.String("in_progress")})
			if err != nil {
				return err
			}
			_, _, err = gh.Checks.UpdateCheckRun(ctx, o, r, c.GetID(), github.UpdateCheckRunOptions{
				Name: "flakegate", Conclusion: github.String("success"),
				Output: &github.CheckRunOutput{Title: github.String("t"), Summary: github.String("s"), Annotations: []*github.CheckRunAnnotation{{
					Path: github.String("a.go"), StartLine: github.Int(1), EndLine: github.Int(1), AnnotationLevel: github.String("warning"), Message: github.String("m"),
				}}},
			})
			return err
		}},
		{"contents", func() error {
			_, _, _, err := gh.Repositories.GetContents(ctx, o, r, ".github/flaky-ledger.yml", &github.RepositoryContentGetOptions{Ref: "main"})
			return err
		}},
		{"status", func() error {
			_, _, err := gh.Repositories.CreateStatus(ctx, o, r, pr.HeadSHA, &github.RepoStatus{State: github.String("success"), Context: github.String("flakegate"), Description: github.String("ok")})
			return err
		}},
		{"user of a personal token", func() error {
			_, _, err := newClient(t, s, ghfake.UserToken).Users.Get(ctx, "")
			return err
		}},
		{"user of a GITHUB_TOKEN: 403", func() error {
			_, resp, err := gh.Users.Get(ctx, "")
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				return fmt.Errorf("got %v, want 403", err)
			}
			return nil
		}},
	}
	for _, st := range steps {
		if err := st.call(); err != nil {
			t.Errorf("%s: %v", st.name, err)
		}
	}
	if v := s.Violations(); len(v) > 0 {
		for _, x := range v {
			t.Errorf("violation: %v", x)
		}
		s.TakeViolations()
	}
}

// TestValidatorCatchesMalformedTraffic proves the recording validator is not
// a rubber stamp: a bad request body and a response missing a required
// property are both reported.
func TestValidatorCatchesMalformedTraffic(t *testing.T) {
	s := ghfake.New(t)
	repo := s.Repo("octo/app")
	run := repo.AddRun(ghfake.Run{})
	ctx := context.Background()

	send := func(method, path string, body any) int {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(s.URL, "/")+path, rd)
		req.Header.Set("Authorization", "Bearer "+ghfake.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	annotations := make([]map[string]any, 51)
	for i := range annotations {
		annotations[i] = map[string]any{"path": "a.go", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": "m"}
	}
	tests := []struct {
		name    string
		do      func()
		problem string // a substring of one reported violation
	}{
		{"51 annotations", func() {
			send("POST", "/repos/octo/app/check-runs", map[string]any{"name": "x", "head_sha": "abc", "output": map[string]any{"title": "t", "summary": "s", "annotations": annotations}})
		}, "51 items, want at most 50"},
		{"missing required body field", func() {
			send("POST", "/repos/octo/app/issues", map[string]any{"body": "no title"})
		}, `required property "title" missing`},
		{"wrong enum", func() {
			send("POST", "/repos/octo/app/statuses/abc", map[string]any{"state": "great"})
		}, "is not one of"},
		{"undeclared query parameter", func() {
			send("GET", fmt.Sprintf("/repos/octo/app/actions/runs/%d/artifacts?bogus=1", run.ID), nil)
		}, `query parameter "bogus" is not declared`},
		{"bad integer query parameter", func() {
			send("GET", "/repos/octo/app/actions/runs?per_page=lots", nil)
		}, "is not an integer"},
		{"undeclared endpoint", func() {
			send("GET", "/repos/octo/app/actions/secrets", nil)
		}, "no path template matches"},
		{"response missing a required property", func() {
			s.SetResponseHook(func(method, path string, status int, body []byte) []byte {
				var m map[string]any
				if json.Unmarshal(body, &m) != nil {
					return body
				}
				delete(m, "head_sha")
				b, _ := json.Marshal(m)
				return b
			})
			defer s.SetResponseHook(nil)
			send("GET", fmt.Sprintf("/repos/octo/app/actions/runs/%d", run.ID), nil)
		}, `required property "head_sha" missing`},
		{"response with a wrong type", func() {
			s.SetResponseHook(func(method, path string, status int, body []byte) []byte {
				return bytes.Replace(body, []byte(`"run_number":1`), []byte(`"run_number":"one"`), 1)
			})
			defer s.SetResponseHook(nil)
			send("GET", fmt.Sprintf("/repos/octo/app/actions/runs/%d", run.ID), nil)
		}, "want integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.do()
			got := s.TakeViolations()
			var lines []string
			for _, v := range got {
				lines = append(lines, v.String())
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.problem) }) {
				t.Errorf("violations %q, want one containing %q", lines, tc.problem)
			}
		})
	}
}

// TestTokenIdentity: a GITHUB_TOKEN-like token writes as github-actions[bot]
// and GET /user refuses it as GitHub refuses installation tokens; a
// personal access token writes as its owner, a User, whom GET /user names.
func TestTokenIdentity(t *testing.T) {
	s := ghfake.New(t)
	repo := s.Repo("octo/app")
	pr := repo.AddPullRequest(ghfake.PullRequest{})
	s.AddUserToken("github_pat_fakeFineGrained", "Hubot-Person")
	s.AddToken("ghs_fakeAppInstallation", false)
	ctx := context.Background()
	type who struct {
		Login, Type string
		Status      int
		Message     string
	}
	tests := []struct {
		name, token string
		user        who // GET /user: login, type; status and message when refused
		author      who // of the comment and the issue the token creates
	}{
		{"GITHUB_TOKEN", ghfake.Token,
			who{Status: 403, Message: "Resource not accessible by integration"}, who{Login: "github-actions[bot]", Type: "Bot"}},
		{"added installation token", "ghs_fakeAppInstallation",
			who{Status: 403, Message: "Resource not accessible by integration"}, who{Login: "github-actions[bot]", Type: "Bot"}},
		{"read-only token", ghfake.ReadOnlyToken,
			who{Status: 403, Message: "Resource not accessible by integration"}, who{}},
		{"personal access token", ghfake.UserToken,
			who{Login: ghfake.UserLogin, Type: "User", Status: 200}, who{Login: ghfake.UserLogin, Type: "User"}},
		{"added fine-grained token", "github_pat_fakeFineGrained",
			who{Login: "Hubot-Person", Type: "User", Status: 200}, who{Login: "Hubot-Person", Type: "User"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gh := newClient(t, s, tc.token)
			u, resp, err := gh.Users.Get(ctx, "")
			got := who{Login: u.GetLogin(), Type: u.GetType()}
			if resp != nil {
				got.Status = resp.StatusCode
			}
			var er *github.ErrorResponse
			if errors.As(err, &er) {
				got.Message = er.Message
				if want := "https://docs.github.com/rest/users/users#get-the-authenticated-user"; er.DocumentationURL != want {
					t.Errorf("documentation_url %q, want %q", er.DocumentationURL, want)
				}
			}
			if diff := cmp.Diff(tc.user, got); diff != "" {
				t.Errorf("GET /user (-want +got):\n%s", diff)
			}
			if err == nil && u.GetID() == 0 {
				t.Errorf("GET /user: no id")
			}
			if tc.author == (who{}) {
				return
			}
			cm, _, err := gh.Issues.CreateComment(ctx, "octo", "app", pr.Number, &github.IssueComment{Body: github.String("hi")})
			if err != nil {
				t.Fatal(err)
			}
			is, _, err := gh.Issues.Create(ctx, "octo", "app", &github.IssueRequest{Title: github.String("t")})
			if err != nil {
				t.Fatal(err)
			}
			for what, u := range map[string]*github.User{"comment": cm.GetUser(), "issue": is.GetUser()} {
				if got := (who{Login: u.GetLogin(), Type: u.GetType()}); got != tc.author {
					t.Errorf("%s author %+v, want %+v", what, got, tc.author)
				}
			}
			stored := repo.Comments(pr.Number)
			if last := stored[len(stored)-1]; last.User != tc.author.Login || last.Bot != (tc.author.Type == "Bot") {
				t.Errorf("stored comment by %q (bot %v), want %+v", last.User, last.Bot, tc.author)
			}
		})
	}
}
