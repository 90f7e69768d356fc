package ghapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// maxIssuesScanned bounds FindIssue's scan: 10 requests at most.
const maxIssuesScanned = 1000

// ErrScanCapped: a search found nothing among as many items as it reads
// and read no further: what it looked for may be beyond them (FindIssue's
// maxIssuesScanned most recently updated open issues and pull requests,
// PullRequestsForCommit's maxOpenPullsScanned open pull requests).
var ErrScanCapped = errors.New("search stopped at the cap")

// IssueSpec is the content of an issue to create or update. Nil Labels
// leaves labels alone on update; State "" leaves the state alone.
type IssueSpec struct {
	Title  string
	Body   string
	Labels []string
	State  string // "open" or "closed"
}

func (s IssueSpec) request() *github.IssueRequest {
	r := &github.IssueRequest{}
	if s.Title != "" {
		r.Title = &s.Title
	}
	r.Body = &s.Body
	if s.Labels != nil {
		labels := append([]string{}, s.Labels...)
		r.Labels = &labels
	}
	if s.State != "" {
		r.State = &s.State
	}
	return r
}

// issues lists a repository's issues in state ("open", "closed" or "all";
// "" means open) that carry every one of labels, most recently updated
// first, up to maxIssuesScanned issues and pull requests; capped says the
// cap was reached. Pull requests, which the issues API also returns, are
// left out.
func (c *Client) issues(ctx context.Context, repo Repo, state string, labels []string) (_ []*github.Issue, capped bool, err error) {
	if state == "" {
		state = "open"
	}
	all, err := paginate(ctx, c, fmt.Sprintf("issues of %s", repo), maxIssuesScanned,
		func(ctx context.Context, lo github.ListOptions) ([]*github.Issue, *github.Response, error) {
			return c.gh.Issues.ListByRepo(ctx, repo.Owner, repo.Name, &github.IssueListByRepoOptions{
				State: state, Labels: labels, Sort: "updated", Direction: "desc", ListOptions: lo})
		})
	if err != nil {
		return nil, false, err
	}
	capped = len(all) >= maxIssuesScanned
	out := all[:0]
	for _, is := range all {
		if !is.IsPullRequest() {
			out = append(out, is)
		}
	}
	return out, capped, nil
}

// FindIssue returns the open issue whose body carries marker in its trailer
// (see Trailer) and that we opened, or nil. labels narrow the search on the
// server side. "We" is decided as for FindComment: a person's issue that
// quotes the marker is never picked, so it is never edited or closed, unless
// that person owns the token.
//
// It reads the most recently updated open issues and pull requests first
// (a tracking issue is edited by every report) and stops after
// maxIssuesScanned: when none of those is the issue, the error matches
// ErrScanCapped and says so.
func (c *Client) FindIssue(ctx context.Context, repo Repo, marker string, labels []string) (*Issue, error) {
	if marker == "" {
		return nil, fmt.Errorf("issue marker: must not be empty")
	}
	issues, capped, err := c.issues(ctx, repo, "open", labels)
	if err != nil {
		return nil, err
	}
	var marked []*github.Issue
	for _, is := range issues {
		if HasMarker(is.GetBody(), marker) {
			marked = append(marked, is)
		}
	}
	is, err := pickOurs(ctx, c, marked, (*github.Issue).GetUser)
	if err != nil {
		return nil, fmt.Errorf("issues of %s: %w", repo, err)
	}
	if is == nil && capped {
		return nil, fmt.Errorf("issues of %s: none of the %d most recently updated open issues and pull requests carries %s; %w", repo, maxIssuesScanned, marker, ErrScanCapped)
	}
	return issueOf(is), nil
}

// CreateIssue opens an issue.
func (c *Client) CreateIssue(ctx context.Context, repo Repo, spec IssueSpec) (*Issue, error) {
	what := fmt.Sprintf("new issue in %s", repo)
	if spec.Title == "" {
		return nil, fmt.Errorf("%s: title must not be empty", what)
	}
	if err := checkBody(what, spec.Body); err != nil {
		return nil, err
	}
	is, resp, err := c.gh.Issues.Create(ctx, repo.Owner, repo.Name, spec.request())
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	return issueOf(is), nil
}

// UpdateIssue edits an issue.
func (c *Client) UpdateIssue(ctx context.Context, repo Repo, number int, spec IssueSpec) (*Issue, error) {
	what := fmt.Sprintf("issue %s#%d", repo, number)
	if err := checkBody(what, spec.Body); err != nil {
		return nil, err
	}
	is, resp, err := c.gh.Issues.Edit(ctx, repo.Owner, repo.Name, number, spec.request())
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	return issueOf(is), nil
}

// UpsertIssue keeps one tracking issue per marker: it updates the open issue
// FindIssue finds, or opens one. The marker is appended to the body when
// missing. When FindIssue's search was capped (ErrScanCapped) it opens
// none and returns that error.
func (c *Client) UpsertIssue(ctx context.Context, repo Repo, marker string, spec IssueSpec) (is *Issue, created bool, err error) {
	spec.Body = WithMarker(spec.Body, marker)
	old, err := c.FindIssue(ctx, repo, marker, nil)
	if err != nil {
		return nil, false, err
	}
	if old == nil {
		is, err = c.CreateIssue(ctx, repo, spec)
		return is, err == nil, err
	}
	is, err = c.UpdateIssue(ctx, repo, old.Number, spec)
	return is, false, err
}
