package ghapi

import (
	"time"

	"github.com/google/go-github/v60/github"
)

// The types below are what the client returns. go-github's types stay
// inside this package: callers see plain values with only the fields
// flakegate reads, and a change of go-github version stops here.

// Comment is an issue or pull request comment.
type Comment struct {
	ID   int64
	Body string
	URL  string // html_url
}

// Issue is an issue (never a pull request).
type Issue struct {
	Number int
	Body   string
	State  string
	URL    string // html_url
}

// CheckRun is a created or updated check run.
type CheckRun struct {
	ID  int64
	URL string // html_url
}

// Annotation is a check run annotation. Path, StartLine, EndLine, Level
// and Message are required by GitHub.
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string // notice, warning or failure
	Title              string
	Message            string
	RawDetails         string
}

// PullRequest is a pull request as the gate reads it.
type PullRequest struct {
	Number   int
	State    string
	Title    string
	Body     string
	Labels   []string
	HeadSHA  string
	HeadRepo string // owner/name of the head's repository
	BaseSHA  string
	BaseRef  string
	BaseRepo string
}

// Fork reports whether the head lives in another repository.
func (p PullRequest) Fork() bool { return p.HeadRepo != p.BaseRepo }

// File is one file a pull request changes.
type File struct {
	Path         string
	PreviousPath string // for renames
	Status       string // added, removed, modified, renamed, …
	Patch        string // unified diff hunks; empty for binary or huge files
	Changes      int    // lines added and deleted (GitHub's changes)
}

// Run is one attempt of a workflow run.
type Run struct {
	ID         int64
	Attempt    int // run_attempt, 1-based
	Name       string
	WorkflowID int64 // the workflow's id
	Event      string
	HeadSHA    string
	HeadBranch string
	HeadRepo   string // owner/name; a fork's run has another repository
	Conclusion string
	CreatedAt  time.Time
	StartedAt  time.Time // run_started_at: this attempt's start
}

// Artifact is a workflow run's artifact.
type Artifact struct {
	ID      int64
	Name    string
	Size    int64
	Expired bool
}

// RepoArtifact is an artifact as the repository's artifact list shows it,
// with the run that uploaded it.
type RepoArtifact struct {
	Artifact
	CreatedAt  time.Time
	RunID      int64 // 0 when GitHub names no run
	HeadBranch string
	HeadSHA    string
	// SameRepo: the run's head repository is this repository. A pull
	// request run from a fork has the fork's, and its head branch can have
	// any name, the base branch's included.
	SameRepo bool
}

func commentOf(c *github.IssueComment) *Comment {
	if c == nil {
		return nil
	}
	return &Comment{ID: c.GetID(), Body: c.GetBody(), URL: c.GetHTMLURL()}
}

func issueOf(is *github.Issue) *Issue {
	if is == nil {
		return nil
	}
	return &Issue{Number: is.GetNumber(), Body: is.GetBody(), State: is.GetState(), URL: is.GetHTMLURL()}
}

func checkRunOf(cr *github.CheckRun) *CheckRun {
	if cr == nil {
		return nil
	}
	return &CheckRun{ID: cr.GetID(), URL: cr.GetHTMLURL()}
}

func (a Annotation) github() *github.CheckRunAnnotation {
	out := &github.CheckRunAnnotation{Path: &a.Path, StartLine: &a.StartLine, EndLine: &a.EndLine,
		AnnotationLevel: &a.Level, Message: &a.Message, Title: optional(a.Title), RawDetails: optional(a.RawDetails)}
	return out
}

func pullRequestOf(p *github.PullRequest) PullRequest {
	out := PullRequest{Number: p.GetNumber(), State: p.GetState(), Title: p.GetTitle(), Body: p.GetBody(),
		HeadSHA: p.GetHead().GetSHA(), HeadRepo: p.GetHead().GetRepo().GetFullName(),
		BaseSHA: p.GetBase().GetSHA(), BaseRef: p.GetBase().GetRef(), BaseRepo: p.GetBase().GetRepo().GetFullName()}
	for _, l := range p.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

func fileOf(f *github.CommitFile) File {
	return File{Path: f.GetFilename(), PreviousPath: f.GetPreviousFilename(), Status: f.GetStatus(), Patch: f.GetPatch(), Changes: f.GetChanges()}
}

func runOf(r *github.WorkflowRun) Run {
	return Run{ID: r.GetID(), Attempt: r.GetRunAttempt(), Name: r.GetName(), WorkflowID: r.GetWorkflowID(), Event: r.GetEvent(),
		HeadSHA: r.GetHeadSHA(), HeadBranch: r.GetHeadBranch(), HeadRepo: r.GetHeadRepository().GetFullName(),
		Conclusion: r.GetConclusion(), CreatedAt: r.GetCreatedAt().Time, StartedAt: r.GetRunStartedAt().Time}
}

func artifactOf(a *github.Artifact) Artifact {
	return Artifact{ID: a.GetID(), Name: a.GetName(), Size: a.GetSizeInBytes(), Expired: a.GetExpired()}
}

func repoArtifactOf(a *github.Artifact) RepoArtifact {
	out := RepoArtifact{Artifact: artifactOf(a), CreatedAt: a.GetCreatedAt().Time}
	if r := a.GetWorkflowRun(); r != nil {
		out.RunID, out.HeadBranch, out.HeadSHA = r.GetID(), r.GetHeadBranch(), r.GetHeadSHA()
		out.SameRepo = r.RepositoryID != nil && r.GetHeadRepositoryID() == r.GetRepositoryID()
	}
	return out
}

func mapAll[T, U any](xs []T, f func(T) U) []U {
	if xs == nil {
		return nil
	}
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
