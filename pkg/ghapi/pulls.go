package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// MaxPullRequestFiles is the most files GitHub lists for a pull request. A
// PR with exactly this many may have more.
const MaxPullRequestFiles = 3000 // GitHub: "Responses include a maximum of 3000 files"

// maxOpenPullsScanned bounds the fallback scan of open pull requests in
// PullRequestsForCommit: 10 requests at most.
const maxOpenPullsScanned = 1000

// PullRequest returns one pull request.
func (c *Client) PullRequest(ctx context.Context, repo Repo, number int) (PullRequest, error) {
	pr, resp, err := c.gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return PullRequest{}, c.classify(fmt.Sprintf("pull request %s#%d", repo, number), resp, err)
	}
	return pullRequestOf(pr), nil
}

// PullRequestFiles lists the files a pull request changes (with patch,
// status and previous_filename), up to MaxPullRequestFiles.
func (c *Client) PullRequestFiles(ctx context.Context, repo Repo, number int) ([]File, error) {
	files, err := paginate(ctx, c, fmt.Sprintf("files of pull request %s#%d", repo, number), MaxPullRequestFiles,
		func(ctx context.Context, lo github.ListOptions) ([]*github.CommitFile, *github.Response, error) {
			return c.gh.PullRequests.ListFiles(ctx, repo.Owner, repo.Name, number, &lo)
		})
	return mapAll(files, fileOf), err
}

// PullRequestsForCommit finds the pull requests whose head commit is sha,
// for a workflow_run of a fork PR, whose pull_requests list is empty.
//
// It asks GET /repos/{o}/{r}/commits/{sha}/pulls
// (PullRequests.ListPullRequestsWithCommit) and keeps those with
// head.sha == sha. If none match, it scans the open pull requests (at most
// 1,000) for head.sha == sha, since the commit endpoint may not know a
// fork's commit; a scan stopped at that cap with no match is ErrScanCapped,
// not an empty list. The caller should still treat the result as untrusted
// input and compare it with the run's head_sha.
func (c *Client) PullRequestsForCommit(ctx context.Context, repo Repo, sha string) ([]PullRequest, error) {
	what := fmt.Sprintf("pull requests for commit %s in %s", sha, repo)
	prs, err := paginate(ctx, c, what, 0, func(ctx context.Context, lo github.ListOptions) ([]*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.ListPullRequestsWithCommit(ctx, repo.Owner, repo.Name, sha, &lo)
	})
	if err != nil {
		return nil, err
	}
	if out := headSHAIs(prs, sha); len(out) > 0 {
		return out, nil
	}
	open, err := paginate(ctx, c, what, maxOpenPullsScanned, func(ctx context.Context, lo github.ListOptions) ([]*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.List(ctx, repo.Owner, repo.Name, &github.PullRequestListOptions{State: "open", ListOptions: lo})
	})
	if err != nil {
		return nil, err
	}
	out := headSHAIs(open, sha)
	if len(out) == 0 && len(open) >= maxOpenPullsScanned {
		// Not found is not "no such pull request": it may be further on.
		return nil, fmt.Errorf("%s: %w: none of the %d open pull requests listed has that head, and there are more", what, ErrScanCapped, maxOpenPullsScanned)
	}
	return out, nil
}

func headSHAIs(prs []*github.PullRequest, sha string) []PullRequest {
	var out []PullRequest
	for _, pr := range prs {
		if pr.GetHead().GetSHA() == sha {
			out = append(out, pullRequestOf(pr))
		}
	}
	return out
}
