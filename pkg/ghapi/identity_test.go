package ghapi_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// userLookups counts the GET /user requests the fake got, and how many of
// them it answered 403.
func userLookups(s *ghfake.Server) (all, refused int) {
	for _, r := range s.Requests(ghfake.HostAPI) {
		if r.Path == "/user" {
			all++
			if r.Status == 403 {
				refused++
			}
		}
	}
	return all, refused
}

type commentRow struct {
	User string
	Bot  bool
	Body string
}

func commentRows(r *ghfake.Repo, issue int) []commentRow {
	var out []commentRow
	for _, c := range r.Comments(issue) {
		out = append(out, commentRow{c.User, c.Bot, c.Body})
	}
	return out
}

// TestStickyCommentTokenIdentity: the sticky comment is the one written by
// whom the token writes as. A personal access token writes as its owner,
// a User, so its second post edits its first; a person's comment that
// quotes the marker is never edited unless that person owns the token; a
// GITHUB_TOKEN behaves as before, and asks GET /user only when a person's
// marked comment is all there is (GitHub refuses it 403, and the post goes
// on as before).
func TestStickyCommentTokenIdentity(t *testing.T) {
	const marker = "<!-- flakegate:gate -->"
	// A person's comment that ends with the marker on its own line, where
	// flakegate writes it.
	alice := commentRow{"alice", false, "I quoted\n" + marker}
	tests := []struct {
		name  string
		token string
		opts  ghapi.Options
		seed  []commentRow
		// wantCreated says what each of the two posts did.
		wantCreated [2]bool
		want        []commentRow
		// wantLookups and wantRefused count GET /user requests.
		wantLookups, wantRefused int
	}{
		{
			name: "personal token: the second post edits the first", token: ghfake.UserToken,
			seed:        []commentRow{alice},
			wantCreated: [2]bool{true, false},
			want:        []commentRow{alice, {ghfake.UserLogin, false, "second\n\n" + marker}},
			wantLookups: 1,
		},
		{
			name: "personal token: its owner's earlier comment, login in another case", token: ghfake.UserToken,
			seed:        []commentRow{alice, {"MonaLisa", false, "old\n" + marker}},
			wantCreated: [2]bool{false, false},
			want:        []commentRow{alice, {"MonaLisa", false, "second\n\n" + marker}},
			wantLookups: 1,
		},
		{
			name: "personal token: a bot's earlier comment stays the sticky one, no lookup", token: ghfake.UserToken,
			seed:        []commentRow{alice, {"github-actions[bot]", true, "old\n" + marker}},
			wantCreated: [2]bool{false, false},
			want:        []commentRow{alice, {"github-actions[bot]", true, "second\n\n" + marker}},
		},
		{
			name: "GITHUB_TOKEN: a bot comment matches, no lookup", token: ghfake.Token,
			seed:        []commentRow{alice, {"github-actions[bot]", true, "old\n" + marker}},
			wantCreated: [2]bool{false, false},
			want:        []commentRow{alice, {"github-actions[bot]", true, "second\n\n" + marker}},
		},
		{
			name: "GITHUB_TOKEN: only a person's comment, GET /user refused, post as before", token: ghfake.Token,
			seed:        []commentRow{alice},
			wantCreated: [2]bool{true, false},
			want:        []commentRow{alice, {"github-actions[bot]", true, "second\n\n" + marker}},
			wantLookups: 1, wantRefused: 1,
		},
		{
			name: "GITHUB_TOKEN: no marked comment, no lookup", token: ghfake.Token,
			seed:        []commentRow{{"alice", false, "no marker"}},
			wantCreated: [2]bool{true, false},
			want:        []commentRow{{"alice", false, "no marker"}, {"github-actions[bot]", true, "second\n\n" + marker}},
		},
		{
			name: "CommentAuthor wins over the token's identity", token: ghfake.UserToken,
			opts:        ghapi.Options{CommentAuthor: "Alice"},
			seed:        []commentRow{alice, {ghfake.UserLogin, false, "old\n" + marker}},
			wantCreated: [2]bool{false, false},
			want:        []commentRow{{"alice", false, "second\n\n" + marker}, {ghfake.UserLogin, false, "old\n" + marker}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			pr := r.AddPullRequest(ghfake.PullRequest{})
			for _, c := range tc.seed {
				r.AddComment(ghfake.Comment{Issue: pr.Number, User: c.User, Bot: c.Bot, Body: c.Body})
			}
			c, _ := newClient(t, s, tc.token, tc.opts)
			ctx := context.Background()
			var ids []int64
			for i, body := range []string{"first", "second"} {
				cm, created, err := c.UpsertComment(ctx, repo, pr.Number, marker, body)
				if err != nil {
					t.Fatalf("post %d: %v", i+1, err)
				}
				if created != tc.wantCreated[i] {
					t.Errorf("post %d: created = %v, want %v", i+1, created, tc.wantCreated[i])
				}
				ids = append(ids, cm.ID)
			}
			if ids[0] != ids[1] {
				t.Errorf("the posts wrote comments %d and %d, want one comment", ids[0], ids[1])
			}
			if diff := cmp.Diff(tc.want, commentRows(r, pr.Number)); diff != "" {
				t.Errorf("comments (-want +got):\n%s", diff)
			}
			all, refused := userLookups(s)
			if all != tc.wantLookups || refused != tc.wantRefused {
				t.Errorf("GET /user sent %d times (%d refused), want %d (%d refused)", all, refused, tc.wantLookups, tc.wantRefused)
			}
		})
	}
}

// TestFindCommentNeverTakesAnotherPersons: with a personal access token, a
// comment by anyone but the token's owner is not ours, marker or not.
func TestFindCommentNeverTakesAnotherPersons(t *testing.T) {
	const marker = "<!-- m -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	r.AddComment(ghfake.Comment{Issue: pr.Number, User: "alice", Body: marker})
	r.AddComment(ghfake.Comment{Issue: pr.Number, User: "monalisa-fan", Body: "> " + marker})
	c, _ := newClient(t, s, ghfake.UserToken, ghapi.Options{})
	got, err := c.FindComment(context.Background(), repo, pr.Number, marker)
	if err != nil || got != nil {
		t.Errorf("FindComment = %+v, %v; want nil, nil", got, err)
	}
}

// TestTokenLoginAskedOnce: GET /user goes out at most once per client,
// whatever GitHub answered, however many comments are looked for, on
// however many pull requests, at once or in turn.
func TestTokenLoginAskedOnce(t *testing.T) {
	const marker = "<!-- m -->"
	for _, tc := range []struct {
		name, token string
		wantFound   bool
	}{
		{"personal token", ghfake.UserToken, true},
		{"GITHUB_TOKEN, refused", ghfake.Token, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			var prs []int
			for range 3 {
				pr := r.AddPullRequest(ghfake.PullRequest{})
				r.AddComment(ghfake.Comment{Issue: pr.Number, User: "alice", Body: marker})
				r.AddComment(ghfake.Comment{Issue: pr.Number, User: ghfake.UserLogin, Body: "report\n" + marker})
				prs = append(prs, pr.Number)
			}
			c, _ := newClient(t, s, tc.token, ghapi.Options{})
			var wg sync.WaitGroup
			errs := make(chan error, 4*len(prs))
			for range 4 {
				for _, pr := range prs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						got, err := c.FindComment(context.Background(), repo, pr, marker)
						if err == nil && (got != nil) != tc.wantFound {
							err = fmt.Errorf("PR %d: found %+v, want found %v", pr, got, tc.wantFound)
						}
						errs <- err
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if all, _ := userLookups(s); all != 1 {
				t.Errorf("GET /user sent %d times, want 1", all)
			}
		})
	}
}

// TestTokenLoginFailureFallsBack: when GET /user fails for a reason that
// may pass (here 502 through every retry), the post goes on as for an
// unknown identity, and the next look asks again.
func TestTokenLoginFailureFallsBack(t *testing.T) {
	const marker = "<!-- m -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	mine := r.AddComment(ghfake.Comment{Issue: pr.Number, User: ghfake.UserLogin, Body: marker})
	s.Inject(ghfake.Fault{Method: "GET", Path: "/user", Times: 2})
	c, _ := newClient(t, s, ghfake.UserToken, ghapi.Options{Retry: retry.Policy{MaxRetries: 1}})
	ctx := context.Background()
	got, err := c.FindComment(ctx, repo, pr.Number, marker)
	if err != nil || got != nil {
		t.Fatalf("FindComment while GET /user fails = %+v, %v; want nil, nil", got, err)
	}
	got, err = c.FindComment(ctx, repo, pr.Number, marker)
	if err != nil || got == nil || got.ID != mine.ID {
		t.Fatalf("FindComment once GET /user works = %+v, %v; want comment %d", got, err, mine.ID)
	}
	if all, _ := userLookups(s); all != 3 {
		t.Errorf("GET /user sent %d times, want 3 (2 failed, 1 answered)", all)
	}
}

// TestTokenLoginCanceled: a context cancelled while GET /user is retried is
// an error, not an unknown identity, and leaves the question open.
func TestTokenLoginCanceled(t *testing.T) {
	const marker = "<!-- m -->"
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	mine := r.AddComment(ghfake.Comment{Issue: pr.Number, User: ghfake.UserLogin, Body: marker})
	s.Inject(ghfake.Fault{Method: "GET", Path: "/user"})
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := newClient(t, s, ghfake.UserToken, ghapi.Options{Retry: retry.Policy{
		Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() },
	}})
	if got, err := c.FindComment(ctx, repo, pr.Number, marker); !errors.Is(err, context.Canceled) {
		t.Errorf("FindComment = %+v, %v; want context.Canceled", got, err)
	}
	got, err := c.FindComment(context.Background(), repo, pr.Number, marker)
	if err != nil || got == nil || got.ID != mine.ID {
		t.Errorf("FindComment after the cancel = %+v, %v; want comment %d", got, err, mine.ID)
	}
	if all, _ := userLookups(s); all != 2 {
		t.Errorf("GET /user sent %d times, want 2", all)
	}
}

// TestTrackingIssueTokenIdentity: the tracking issue follows the same rule
// as the sticky comment.
func TestTrackingIssueTokenIdentity(t *testing.T) {
	const marker = "<!-- flakegate:weekly -->"
	type row struct{ User, Body string }
	for _, tc := range []struct {
		name, token string
		want        []row
	}{
		{"personal token", ghfake.UserToken, []row{{"alice", "quoting\n" + marker}, {ghfake.UserLogin, "week 2\n\n" + marker}}},
		{"GITHUB_TOKEN", ghfake.Token, []row{{"alice", "quoting\n" + marker}, {"github-actions[bot]", "week 2\n\n" + marker}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ghfake.New(t)
			r := s.Repo("octo/app")
			r.AddIssue(ghfake.Issue{Title: "about flakegate", Body: "quoting\n" + marker, User: "alice"})
			c, _ := newClient(t, s, tc.token, ghapi.Options{})
			ctx := context.Background()
			for i, body := range []string{"week 1", "week 2"} {
				if _, created, err := c.UpsertIssue(ctx, repo, marker, ghapi.IssueSpec{Title: "Flaky tests", Body: body}); err != nil || created != (i == 0) {
					t.Fatalf("upsert %d: created=%v err=%v", i+1, created, err)
				}
			}
			var got []row
			for _, is := range r.Issues() {
				got = append(got, row{is.User, is.Body})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
		})
	}
}
