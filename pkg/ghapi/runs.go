package ghapi

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/flakegate/flakegate/pkg/internal/glob"
)

// MaxFilteredRuns is the most runs GitHub lists for a filtered query.
const MaxFilteredRuns = 1000 // GitHub: "up to 1,000 results for each search" with actor, branch, check_suite_id, created, event, head_sha or status

// StatusAny lists runs of every status (RunFilter.Status).
const StatusAny = "any"

// RunFilter selects workflow runs.
type RunFilter struct {
	// Workflow is a workflow file name ("ci.yml") or numeric id; "" lists
	// the runs of every workflow of the repository.
	Workflow string
	Branch   string
	Event    string
	// Status is "completed" when empty; StatusAny lists every status. GitHub
	// also takes a conclusion here ("failure", "success", …).
	Status string
	// CreatedSince keeps runs created on or after that UTC day (GitHub
	// filters whole days: created=>=YYYY-MM-DD). Zero: no bound.
	CreatedSince time.Time
	HeadSHA      string
	// MaxRuns stops listing after that many runs; 0 means MaxFilteredRuns.
	MaxRuns int
	// AllAttempts adds the earlier attempts of re-run runs, one request per
	// earlier attempt (GET …/runs/{id}/attempts/{n}). The runs list itself
	// shows only the latest attempt.
	AllAttempts bool
}

func (f RunFilter) options() *github.ListWorkflowRunsOptions {
	o := &github.ListWorkflowRunsOptions{Branch: f.Branch, Event: f.Event, HeadSHA: f.HeadSHA, Status: f.Status}
	switch f.Status {
	case "":
		o.Status = "completed"
	case StatusAny:
		o.Status = ""
	}
	if !f.CreatedSince.IsZero() {
		o.Created = ">=" + f.CreatedSince.UTC().Format(time.DateOnly)
	}
	return o
}

// ListWorkflowRuns lists runs newest first, per_page=100. With AllAttempts,
// each re-run run is followed by its earlier attempts, newest first; each
// entry's RunAttempt says which attempt it is.
func (c *Client) ListWorkflowRuns(ctx context.Context, repo Repo, f RunFilter) ([]Run, error) {
	runs, _, err := c.ListWorkflowRunsTotal(ctx, repo, f)
	return runs, err
}

// ListWorkflowRunsTotal is ListWorkflowRuns that also returns GitHub's
// total_count for the query: how many runs (latest attempts) match it, the
// listed ones and those MaxRuns left unlisted. For a filtered query GitHub
// lists at most MaxFilteredRuns of them. The count is the first page's:
// 0 when no page was read.
func (c *Client) ListWorkflowRunsTotal(ctx context.Context, repo Repo, f RunFilter) ([]Run, int, error) {
	total := -1
	what := fmt.Sprintf("workflow runs of %s", repo)
	if f.Workflow != "" {
		what = fmt.Sprintf("runs of workflow %s in %s", f.Workflow, repo)
	}
	max := f.MaxRuns
	if max <= 0 {
		max = MaxFilteredRuns
	}
	opts := f.options()
	runs, err := paginate(ctx, c, what, max, func(ctx context.Context, lo github.ListOptions) ([]*github.WorkflowRun, *github.Response, error) {
		opts.ListOptions = lo
		var (
			list *github.WorkflowRuns
			resp *github.Response
			err  error
		)
		if id, perr := strconv.ParseInt(f.Workflow, 10, 64); perr == nil {
			list, resp, err = c.gh.Actions.ListWorkflowRunsByID(ctx, repo.Owner, repo.Name, id, opts)
		} else if f.Workflow != "" {
			list, resp, err = c.gh.Actions.ListWorkflowRunsByFileName(ctx, repo.Owner, repo.Name, path.Base(f.Workflow), opts)
		} else {
			list, resp, err = c.gh.Actions.ListRepositoryWorkflowRuns(ctx, repo.Owner, repo.Name, opts)
		}
		if err != nil {
			return nil, resp, err
		}
		if total < 0 {
			total = list.GetTotalCount()
		}
		return list.WorkflowRuns, resp, nil
	})
	if total < 0 {
		total = 0
	}
	if err != nil || !f.AllAttempts {
		return mapAll(runs, runOf), total, err
	}
	var out []Run
	for _, run := range runs {
		out = append(out, runOf(run))
		for n := run.GetRunAttempt() - 1; n >= 1; n-- {
			a, err := c.RunAttempt(ctx, repo, run.GetID(), n)
			if err != nil {
				return out, total, err
			}
			out = append(out, a)
		}
	}
	return out, total, nil
}

// RunAttempt returns a run as of attempt n (1-based).
func (c *Client) RunAttempt(ctx context.Context, repo Repo, runID int64, n int) (Run, error) {
	run, resp, err := c.gh.Actions.GetWorkflowRunAttempt(ctx, repo.Owner, repo.Name, runID, n, nil)
	if err != nil {
		return Run{}, c.classify(fmt.Sprintf("attempt %d of run %d in %s", n, runID, repo), resp, err)
	}
	return runOf(run), nil
}

// WorkflowRun returns one run, as of its latest attempt.
func (c *Client) WorkflowRun(ctx context.Context, repo Repo, runID int64) (Run, error) {
	run, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, repo.Owner, repo.Name, runID)
	if err != nil {
		return Run{}, c.classify(fmt.Sprintf("run %d in %s", runID, repo), resp, err)
	}
	return runOf(run), nil
}

// ListRunArtifacts lists a run's artifacts whose names match pattern
// (path.Match syntax, e.g. "junit-*"; "" matches all). go-github v60 has no
// name filter, so the match is done here. Expired artifacts are included
// (Expired is set) so that callers can report them.
func (c *Client) ListRunArtifacts(ctx context.Context, repo Repo, runID int64, pattern string) ([]Artifact, error) {
	if pattern != "" {
		if err := glob.Validate(pattern); err != nil {
			return nil, fmt.Errorf("artifact pattern: %w", err)
		}
	}
	arts, err := paginate(ctx, c, fmt.Sprintf("artifacts of run %d in %s", runID, repo), 0, func(ctx context.Context, lo github.ListOptions) ([]*github.Artifact, *github.Response, error) {
		list, resp, err := c.gh.Actions.ListWorkflowRunArtifacts(ctx, repo.Owner, repo.Name, runID, &lo)
		if err != nil {
			return nil, resp, err
		}
		return list.Artifacts, resp, nil
	})
	if err != nil {
		return nil, err
	}
	var out []Artifact
	for _, a := range arts {
		if MatchName(pattern, a.GetName()) {
			out = append(out, artifactOf(a))
		}
	}
	return out, nil
}

// ArtifactsNamed calls yield with the repository's artifacts named name
// (GET /repos/{o}/{r}/actions/artifacts?name=, exact names only; "" lists
// every artifact), newest first, expired ones included, each with the run
// that uploaded it, until yield returns false, the list ends, or max
// artifacts were passed to yield (max <= 0: 100).
//
// Cost: one request for each 100 artifacts passed to yield, so at most
// ceil(max/100); a yield that stops in the first page costs one.
//
// go-github v60's ListArtifacts has no name filter (ListArtifactsOptions came
// later), so the request is built here.
func (c *Client) ArtifactsNamed(ctx context.Context, repo Repo, name string, max int, yield func(RepoArtifact) bool) error {
	if max <= 0 {
		max = perPage
	}
	what := fmt.Sprintf("artifacts of %s", repo)
	if name != "" {
		what = fmt.Sprintf("artifacts named %q in %s", name, repo)
	}
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	q.Set("per_page", strconv.Itoa(min(max, perPage)))
	passed := 0
	for page := 1; ; {
		q.Set("page", strconv.Itoa(page))
		u := fmt.Sprintf("repos/%s/%s/actions/artifacts?%s", url.PathEscape(repo.Owner), url.PathEscape(repo.Name), q.Encode())
		req, err := c.gh.NewRequest("GET", u, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		var list github.ArtifactList
		resp, err := c.gh.Do(ctx, req, &list)
		if err != nil {
			return c.classify(what, resp, err)
		}
		for _, a := range list.Artifacts {
			if !yield(repoArtifactOf(a)) {
				return nil
			}
			if passed++; passed >= max {
				return nil
			}
		}
		if resp.NextPage == 0 || len(list.Artifacts) == 0 {
			return nil
		}
		page = resp.NextPage
	}
}

// MatchName reports whether an artifact name matches pattern (see
// pkg/internal/glob; "" matches everything; a malformed pattern matches
// nothing).
func MatchName(pattern, name string) bool {
	return pattern == "" || glob.Match(pattern, name)
}
