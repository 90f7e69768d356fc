package ghapi

import (
	"context"
	"fmt"
	"slices"
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

// Markers are hidden HTML comments ("<!-- flakegate:... -->") written in a
// body's trailer: its last lines, each one HTML comment, after a blank line.
// A marker counts there (see HasMarker for a body a person wrote under).
// The body above is rendered from data that others control (test names,
// paths), which can carry a marker too; a marker elsewhere (in a code span,
// in a quote) is text, not ours.

// Trailer returns the lines that end body and are each one HTML comment, in
// order; none when the last line is not one.
func Trailer(body string) []string {
	lines := strings.Split(strings.TrimRight(body, " \t\r\n"), "\n")
	i := len(lines)
	for i > 0 && hiddenLine(lines[i-1]) {
		i--
	}
	out := lines[i:]
	for j, l := range out {
		out[j] = strings.TrimSpace(l)
	}
	return out
}

// hiddenLine reports whether line is one HTML comment and nothing else.
func hiddenLine(line string) bool {
	line = strings.TrimSpace(line)
	inner, ok := strings.CutPrefix(line, "<!--")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, "-->")
	return ok && !strings.Contains(inner, "-->")
}

// HasMarker reports whether marker is a line of body's trailer; or, when
// body ends in no hidden line at all (a person edited the issue and wrote
// under the trailer), whether it is a whole line anywhere. Rendered content
// cannot make a whole line of it: names and messages are escaped (< as
// &lt;) or kept in code spans on one line with other text.
func HasMarker(body, marker string) bool {
	if marker == "" {
		return false
	}
	if t := Trailer(body); len(t) > 0 {
		return slices.Contains(t, marker)
	}
	for line := range strings.Lines(body) {
		if strings.TrimSpace(line) == marker {
			return true
		}
	}
	return false
}

// endsWithMarker reports whether marker ends body's trailer, or is followed
// there only by flakegate's own hidden lines (the sticky comment's state
// mark): where a comment of ours has it. A comment with a person's note
// written under the trailer is not found (the next run posts anew): read as
// ours, a marker in a code block of another tool's comment was too. A comment that only holds it in
// its trailer is another tool's that echoed a test's output (a marker a
// fork planted, then "<!-- test-reporter -->"): picked as ours, it was
// edited to the verdict (by a token that may) or, by one that may not,
// hid ours and failed the edit.
func endsWithMarker(body, marker string) bool {
	t := Trailer(body)
	i := slices.Index(t, marker)
	if marker == "" || i < 0 {
		return false
	}
	for _, l := range t[i+1:] {
		if !strings.HasPrefix(l, ownPrefix) {
			return false
		}
	}
	return true
}

// ownPrefix begins every hidden line flakegate writes.
const ownPrefix = "<!-- flakegate:"

// WithMarker returns body with marker in its trailer: unchanged when the
// trailer has it, else with the marker appended after a blank line. A
// marker elsewhere in body does not count.
func WithMarker(body, marker string) string {
	if marker == "" || HasMarker(body, marker) {
		return body
	}
	body = strings.TrimRight(body, "\n")
	if body == "" {
		return marker
	}
	return body + "\n\n" + marker
}

// comments lists the comments of an issue or pull request, oldest first.
func (c *Client) comments(ctx context.Context, repo Repo, issue int) ([]*github.IssueComment, error) {
	return paginate(ctx, c, fmt.Sprintf("comments of %s#%d", repo, issue), 0,
		func(ctx context.Context, lo github.ListOptions) ([]*github.IssueComment, *github.Response, error) {
			return c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, issue, &github.IssueListCommentsOptions{ListOptions: lo})
		})
}

// FindComment returns the comment that carries marker (a hidden HTML
// comment such as "<!-- flakegate -->") in its trailer and was written by
// us, or nil when there is none; the first, when there are several (see
// FindComments). "Us" is Options.CommentAuthor when set. Otherwise it is
// the identity of the token: a GITHUB_TOKEN writes as github-actions[bot]
// and an app's token as <app>[bot], so a bot's comment is ours; a personal
// access token (classic or fine-grained) writes as its owner, a User, so
// that user's comment is ours too (see pickOurs). A person's comment that
// quotes the marker is never picked, so it is never overwritten, unless
// that person owns the token.
func (c *Client) FindComment(ctx context.Context, repo Repo, issue int, marker string) (*Comment, error) {
	cs, err := c.FindComments(ctx, repo, issue, marker)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return cs[0], nil
}

// FindComments returns the comments FindComment would pick from, oldest
// first: the one FindComment returns, then the later ones by the same author
// with the marker in their trailer. There is more than one when runs posted
// at the same time, each finding none; the later ones are duplicates.
func (c *Client) FindComments(ctx context.Context, repo Repo, issue int, marker string) ([]*Comment, error) {
	if marker == "" {
		return nil, fmt.Errorf("comment marker: must not be empty")
	}
	cs, err := c.comments(ctx, repo, issue)
	if err != nil {
		return nil, err
	}
	var marked []*github.IssueComment
	for _, cm := range cs {
		if endsWithMarker(cm.GetBody(), marker) {
			marked = append(marked, cm)
		}
	}
	first, err := pickOurs(ctx, c, marked, (*github.IssueComment).GetUser)
	if err != nil {
		return nil, fmt.Errorf("comments of %s#%d: %w", repo, issue, err)
	}
	if first == nil {
		return nil, nil
	}
	var out []*Comment
	for _, cm := range marked {
		if strings.EqualFold(cm.GetUser().GetLogin(), first.GetUser().GetLogin()) {
			out = append(out, commentOf(cm))
		}
	}
	return out, nil
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

// DeleteComment deletes a comment. A comment already gone is ErrNotFound.
func (c *Client) DeleteComment(ctx context.Context, repo Repo, commentID int64) error {
	resp, err := c.gh.Issues.DeleteComment(ctx, repo.Owner, repo.Name, commentID)
	return c.classify(fmt.Sprintf("comment %d in %s", commentID, repo), resp, err)
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
