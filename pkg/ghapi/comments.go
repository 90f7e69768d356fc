package ghapi

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

func checkBody(what, body string) error {
	if n := utf8.RuneCountInString(body); n > MaxCommentChars {
		return &SizeError{What: what + " body (characters)", Limit: MaxCommentChars, Size: int64(n)}
	}
	return nil
}

// WithMarker returns body with the marker appended on its own line when the
// body does not contain it yet.
func WithMarker(body, marker string) string {
	if marker == "" || strings.Contains(body, marker) {
		return body
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + marker
}

// comments lists the comments of an issue or pull request, oldest first.
func (c *Client) comments(ctx context.Context, repo Repo, issue int) ([]*github.IssueComment, error) {
	return paginate(ctx, c, fmt.Sprintf("comments of %s#%d", repo, issue), 0,
		func(ctx context.Context, lo github.ListOptions) ([]*github.IssueComment, *github.Response, error) {
			return c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, issue, &github.IssueListCommentsOptions{ListOptions: lo})
		})
}

// FindComment returns the comment that carries marker (a hidden HTML
// comment such as "<!-- flakegate -->") and was written by us, or nil when
// there is none. "Us" is Options.CommentAuthor when set. Otherwise it is
// the identity of the token: a GITHUB_TOKEN writes as github-actions[bot]
// and an app's token as <app>[bot], so a bot's comment is ours; a personal
// access token (classic or fine-grained) writes as its owner, a User, so
// that user's comment is ours too (see pickOurs). A person's comment that
// quotes the marker is never picked, so it is never overwritten, unless
// that person owns the token.
func (c *Client) FindComment(ctx context.Context, repo Repo, issue int, marker string) (*Comment, error) {
	if marker == "" {
		return nil, fmt.Errorf("comment marker: must not be empty")
	}
	cs, err := c.comments(ctx, repo, issue)
	if err != nil {
		return nil, err
	}
	var marked []*github.IssueComment
	for _, cm := range cs {
		if strings.Contains(cm.GetBody(), marker) {
			marked = append(marked, cm)
		}
	}
	cm, err := pickOurs(ctx, c, marked, (*github.IssueComment).GetUser)
	if err != nil {
		return nil, fmt.Errorf("comments of %s#%d: %w", repo, issue, err)
	}
	return commentOf(cm), nil
}

// CreateComment posts a comment on an issue or pull request.
func (c *Client) CreateComment(ctx context.Context, repo Repo, issue int, body string) (*Comment, error) {
	what := fmt.Sprintf("new comment on %s#%d", repo, issue)
	if err := checkBody(what, body); err != nil {
		return nil, err
	}
	cm, resp, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, issue, &github.IssueComment{Body: &body})
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	return commentOf(cm), nil
}

// EditComment replaces a comment's body.
func (c *Client) EditComment(ctx context.Context, repo Repo, commentID int64, body string) (*Comment, error) {
	what := fmt.Sprintf("comment %d in %s", commentID, repo)
	if err := checkBody(what, body); err != nil {
		return nil, err
	}
	cm, resp, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, commentID, &github.IssueComment{Body: &body})
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	return commentOf(cm), nil
}

// UpsertComment keeps one sticky comment per marker: it edits the comment
// FindComment finds, or creates one. The marker is appended to body when
// body lacks it. created says which happened. A fork PR's read-only token
// gets an error matching ErrReadOnly; callers fall back to the job summary.
func (c *Client) UpsertComment(ctx context.Context, repo Repo, issue int, marker, body string) (cm *Comment, created bool, err error) {
	body = WithMarker(body, marker)
	if err := checkBody(fmt.Sprintf("comment on %s#%d", repo, issue), body); err != nil {
		return nil, false, err
	}
	old, err := c.FindComment(ctx, repo, issue, marker)
	if err != nil {
		return nil, false, err
	}
	if old == nil {
		cm, err = c.CreateComment(ctx, repo, issue, body)
		return cm, err == nil, err
	}
	if old.Body == body {
		return old, false, nil
	}
	cm, err = c.EditComment(ctx, repo, old.ID, body)
	return cm, false, err
}
