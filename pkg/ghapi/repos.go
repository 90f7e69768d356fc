package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// Limits of the contents and statuses APIs.
const (
	// MaxContentBytes is the largest file the contents API returns inline.
	MaxContentBytes = 1 << 20 // GitHub: contents API base64 content "up to 1 MB"
	// maxStatusDescription: longer descriptions are cut.
	maxStatusDescription = 140 // GitHub: "description is too long (maximum is 140 characters)"
)

// FileContents returns a file's bytes at ref (a branch, tag or SHA; "" is
// the default branch). A missing file matches ErrNotFound; a file over
// MaxContentBytes, or a directory, is an error.
func (c *Client) FileContents(ctx context.Context, repo Repo, filePath, ref string) ([]byte, error) {
	what := fmt.Sprintf("file %s at %q in %s", filePath, ref, repo)
	var opts *github.RepositoryContentGetOptions
	if ref != "" {
		opts = &github.RepositoryContentGetOptions{Ref: ref}
	}
	file, dir, resp, err := c.gh.Repositories.GetContents(ctx, repo.Owner, repo.Name, filePath, opts)
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	if file == nil || dir != nil {
		return nil, fmt.Errorf("%s: is a directory", what)
	}
	if file.GetEncoding() == "none" || file.GetSize() > MaxContentBytes {
		return nil, &SizeError{What: what, Limit: MaxContentBytes, Size: int64(file.GetSize())}
	}
	text, err := file.GetContent()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return []byte(text), nil
}

// StatusSpec is a commit status.
type StatusSpec struct {
	State       string // error, failure, pending or success
	Context     string
	Description string // cut to 140 characters
	TargetURL   string
}

// CreateStatus sets a commit status on sha.
func (c *Client) CreateStatus(ctx context.Context, repo Repo, sha string, spec StatusSpec) error {
	what := fmt.Sprintf("status %q on %s in %s", spec.Context, sha, repo)
	st := &github.RepoStatus{State: &spec.State, Context: optional(spec.Context), TargetURL: optional(spec.TargetURL)}
	if spec.Description != "" {
		d := truncateRunes(spec.Description, maxStatusDescription)
		st.Description = &d
	}
	_, resp, err := c.gh.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, st)
	if err != nil {
		return c.classify(what, resp, err)
	}
	return nil
}
