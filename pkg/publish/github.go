package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/flakegate/flakegate/pkg/artifact"
	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/render"
)

// The interfaces below are what publishing needs from GitHub; *ghapi.Client
// satisfies the first three and *artifact.Client the last. Tests may pass
// anything that talks to a fake GitHub.

// Commenter finds, posts, edits and deletes pull request comments.
type Commenter interface {
	FindComments(ctx context.Context, repo ghapi.Repo, issue int, marker string) ([]*ghapi.Comment, error)
	CreateComment(ctx context.Context, repo ghapi.Repo, issue int, body string) (*ghapi.Comment, error)
	EditComment(ctx context.Context, repo ghapi.Repo, commentID int64, body string) (*ghapi.Comment, error)
	DeleteComment(ctx context.Context, repo ghapi.Repo, commentID int64) error
}

var _ Commenter = (*ghapi.Client)(nil)

// CheckRunner creates check runs.
type CheckRunner interface {
	CreateCheckRun(ctx context.Context, repo ghapi.Repo, spec ghapi.CheckRunSpec) (*ghapi.CheckRun, error)
}

// IssueTracker finds, opens and edits issues.
type IssueTracker interface {
	FindIssue(ctx context.Context, repo ghapi.Repo, marker string, labels []string) (*ghapi.Issue, error)
	CreateIssue(ctx context.Context, repo ghapi.Repo, spec ghapi.IssueSpec) (*ghapi.Issue, error)
	UpdateIssue(ctx context.Context, repo ghapi.Repo, number int, spec ghapi.IssueSpec) (*ghapi.Issue, error)
}

var _ IssueTracker = (*ghapi.Client)(nil)

// Uploader uploads a workflow artifact.
type Uploader interface {
	Upload(ctx context.Context, name string, files map[string][]byte, o artifact.UploadOptions) (*artifact.Result, error)
}

// CommentMode says when the sticky comment is posted, as the reporting
// actions' comment_mode does.
type CommentMode string

const (
	// CommentAlways posts the comment and edits it on every run whose
	// comment would read differently.
	CommentAlways CommentMode = "always"
	// CommentChanges posts or edits only when the verdict or the tests it
	// names changed since the comment there (no comment counts as a pass
	// with nothing to name).
	CommentChanges CommentMode = "changes"
	// CommentFailures posts and edits while the verdict is not a pass; a
	// comment already there is edited once to the pass, so that it never
	// goes stale, and a passing PR without one gets none.
	CommentFailures CommentMode = "failures"
	// CommentOff posts nothing.
	CommentOff CommentMode = "off"
)

// CommentModes lists the modes in the order the docs give them.
var CommentModes = []CommentMode{CommentAlways, CommentChanges, CommentFailures, CommentOff}

// tagPattern is what a comment tag may hold: it goes into an HTML comment.
var tagPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/ ()\[\]:+,-]{0,99}$`) })

// CheckTag reports whether tag is usable as a comment tag.
func CheckTag(tag string) error {
	if !tagPattern().MatchString(tag) || strings.Contains(tag, "--") {
		return fmt.Errorf("%q: want 1 to 100 letters, digits, spaces and . _ / ( ) [ ] : + , -, starting with a letter or digit, without \"--\"", tag)
	}
	return nil
}

// DefaultTag is the tag of a step that names none. Its marker is the one
// flakegate has always written, so existing comments are found again.
const DefaultTag = "flakegate"

// CommentMarker is the hidden marker that finds the sticky comment of the
// step with this tag. No tag's marker contains another's.
func CommentMarker(tag string) string {
	if tag == "" || tag == DefaultTag {
		return "<!-- flakegate:sticky-comment -->"
	}
	return "<!-- flakegate:sticky-comment:" + tag + " -->"
}

// IssueMarker finds the tracking issue of the step with this tag.
func IssueMarker(tag string) string {
	if tag == "" || tag == DefaultTag {
		return "<!-- flakegate:tracking-issue -->"
	}
	return "<!-- flakegate:tracking-issue:" + tag + " -->"
}

// Comment is the sticky comment to publish.
type Comment struct {
	Mode CommentMode
	Tag  string
	Body string // Markdown, without the markers
	// State is what the comment says in short: the verdict and the tests
	// it names. CommentChanges compares it with the comment's.
	State string
	// Failing is a verdict that is not a pass.
	Failing bool
}

// CommentResult says what happened to the comment.
type CommentResult struct {
	URL    string
	Action string // posted, edited, unchanged or skipped
	Why    string // for skipped and unchanged
	// Duplicates says what was done with other comments of ours with the
	// tag's marker, which runs at the same time post ("" when none).
	Duplicates string
}

var statePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<!-- flakegate:state ([0-9a-f]{16}) -->$`) })

// stateOf is the state mark in body's trailer, where StickyComment writes
// it, or "". One in the body above it is text, perhaps a test's name.
func stateOf(body string) string {
	t := ghapi.Trailer(body)
	for i := len(t) - 1; i >= 0; i-- {
		if statePattern().MatchString(t[i]) {
			return t[i]
		}
	}
	return ""
}

func stateMark(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "<!-- flakegate:state " + hex.EncodeToString(sum[:8]) + " -->"
}

// ErrCannotComment is a token that may not comment (a fork's read-only
// token); the job summary then carries the verdict.
var ErrCannotComment = errors.New("the token cannot comment on the pull request (a fork's read-only token); the verdict is in the job summary")

// StickyComment posts, edits or leaves the pull request's one comment for
// cm.Tag, as cm.Mode says. Only the comment flakegate wrote with that tag's
// marker in its trailer is ever edited. Runs at the same time can each find
// none and each post one: after posting, the comments are listed again and
// the oldest is kept, edited to this body; the newer ones of ours are
// deleted. Duplicates found at the start are deleted too.
func StickyComment(ctx context.Context, c Commenter, repo ghapi.Repo, pr int, cm Comment) (CommentResult, error) {
	if cm.Mode == CommentOff {
		return CommentResult{Action: "skipped", Why: "comment is off"}, nil
	}
	if c == nil {
		return CommentResult{}, errors.New("no GitHub client: give a github-token")
	}
	if pr <= 0 {
		return CommentResult{Action: "skipped", Why: "no pull request"}, nil
	}
	marker, mark := CommentMarker(cm.Tag), stateMark(cm.State)
	body := strings.TrimRight(cm.Body, "\n") + "\n\n" + marker + "\n" + mark + "\n"
	found, err := c.FindComments(ctx, repo, pr, marker)
	if err != nil {
		return CommentResult{}, cannotComment(err)
	}
	var old *ghapi.Comment
	if len(found) > 0 {
		old = found[0]
	}
	same := old != nil && stateOf(old.Body) == mark
	var res CommentResult
	switch {
	case old == nil && !cm.Failing && cm.Mode != CommentAlways:
		return CommentResult{Action: "skipped", Why: "the verdict passes and there is no comment to update (comment: " + string(cm.Mode) + ")"}, nil
	case same && (cm.Mode == CommentChanges || cm.Mode == CommentFailures && !cm.Failing):
		res = CommentResult{URL: old.URL, Action: "unchanged", Why: "the verdict and the tests it names are unchanged (comment: " + string(cm.Mode) + ")"}
	case old != nil && old.Body == body:
		res = CommentResult{URL: old.URL, Action: "unchanged", Why: "the comment already reads so"}
	case old == nil:
		got, err := c.CreateComment(ctx, repo, pr, body)
		if err != nil {
			return CommentResult{}, cannotComment(err)
		}
		res = CommentResult{URL: got.URL, Action: "posted"}
		// Another run may have posted too: the oldest is the one to keep.
		if found, err = c.FindComments(ctx, repo, pr, marker); err != nil {
			res.Duplicates = "not checked for comments posted at the same time: " + err.Error()
			return res, nil
		}
		if len(found) == 0 || found[0].ID == got.ID {
			break
		}
		if found[0].Body != body {
			if _, err := c.EditComment(ctx, repo, found[0].ID, body); err != nil {
				// Ours stays; the older one is left to the next run.
				res.Duplicates = fmt.Sprintf("an older comment (%s) was posted at the same time and could not be edited: %v", found[0].URL, err)
				return res, nil
			}
		}
		res = CommentResult{URL: found[0].URL, Action: "edited", Why: "another run posted the comment at the same time; the oldest is kept"}
	default:
		got, err := c.EditComment(ctx, repo, old.ID, body)
		if err != nil {
			return CommentResult{}, cannotComment(err)
		}
		res = CommentResult{URL: got.URL, Action: "edited"}
	}
	if len(found) > 1 {
		res.Duplicates = deleteDuplicates(ctx, c, repo, found[1:])
	}
	return res, nil
}

// deleteDuplicates deletes comments of ours that repeat the sticky comment
// and says what it did. One already gone was deleted by another run.
func deleteDuplicates(ctx context.Context, c Commenter, repo ghapi.Repo, dups []*ghapi.Comment) string {
	var deleted, failed []string
	for _, d := range dups {
		err := c.DeleteComment(ctx, repo, d.ID)
		switch {
		case err == nil || errors.Is(err, ghapi.ErrNotFound):
			deleted = append(deleted, strconv.FormatInt(d.ID, 10))
		default:
			failed = append(failed, fmt.Sprintf("%d (%v)", d.ID, err))
		}
	}
	msg := fmt.Sprintf("deleted %d duplicate comment(s) of ours with the same marker, which runs at the same time posted: %s", len(deleted), strings.Join(deleted, ", "))
	if len(deleted) == 0 {
		msg = ""
	}
	if len(failed) > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += "could not delete duplicate comment(s) " + strings.Join(failed, ", ")
	}
	return msg
}

func cannotComment(err error) error {
	if errors.Is(err, ghapi.ErrReadOnly) || errors.Is(err, ghapi.ErrForbidden) {
		return fmt.Errorf("%w: %v", ErrCannotComment, err)
	}
	return err
}

// CheckRun creates a completed check run and returns its URL.
func CheckRun(ctx context.Context, c CheckRunner, repo ghapi.Repo, spec ghapi.CheckRunSpec) (string, error) {
	if c == nil {
		return "", errors.New("no GitHub client: give a github-token")
	}
	cr, err := c.CreateCheckRun(ctx, repo, spec)
	if err != nil {
		if errors.Is(err, ghapi.ErrForbidden) {
			return "", fmt.Errorf("%w (a check run needs `permissions: checks: write`; a fork's token cannot create one)", err)
		}
		return "", err
	}
	return cr.URL, nil
}

// What TrackingIssue did.
const (
	IssueCreated = "created"
	IssueUpdated = "updated"
	IssueClosed  = "closed"
	IssueNone    = "" // no flaky tests and no open issue: none is opened
)

// TrackingIssue keeps the step's tracking issue, the one open issue with
// the tag's marker. While there are flaky tests it creates or updates
// it; once there are none it closes it with the report that says so, and
// opens none. The next flaky test opens a new one.
//
// In a repository with more open issues and pull requests than FindIssue
// reads, an issue not updated for a while may not be found: then a new one
// is opened (or, with no flaky tests, none is closed) and warning says so.
func TrackingIssue(ctx context.Context, c IssueTracker, repo ghapi.Repo, tag string, flaky int, body string) (url, did, warning string, err error) {
	if c == nil {
		return "", IssueNone, "", errors.New("no GitHub client: give a github-token")
	}
	marker := IssueMarker(tag)
	body = ghapi.WithMarker(body, marker)
	old, err := c.FindIssue(ctx, repo, marker, nil)
	if errors.Is(err, ghapi.ErrScanCapped) {
		warning, err = err.Error()+"; an older tracking issue, if any, is left as it is", nil
	}
	if err != nil {
		return "", IssueNone, "", err
	}
	if flaky == 0 {
		if old == nil {
			return "", IssueNone, warning, nil
		}
		is, err := c.UpdateIssue(ctx, repo, old.Number, ghapi.IssueSpec{Title: "flakegate: no flaky tests", Body: body, State: "closed"})
		if err != nil {
			return "", IssueNone, warning, err
		}
		return is.URL, IssueClosed, warning, nil
	}
	title := fmt.Sprintf("flakegate: %d flaky tests", flaky)
	if flaky == 1 {
		title = "flakegate: 1 flaky test"
	}
	spec := ghapi.IssueSpec{Title: title, Body: body, State: "open"}
	if old == nil {
		is, err := c.CreateIssue(ctx, repo, spec)
		if err != nil {
			return "", IssueNone, warning, err
		}
		return is.URL, IssueCreated, warning, nil
	}
	is, err := c.UpdateIssue(ctx, repo, old.Number, spec)
	if err != nil {
		return "", IssueNone, warning, err
	}
	return is.URL, IssueUpdated, warning, nil
}

// maxNameTries bounds the names Upload tries when a name is taken.
const maxNameTries = 5

// ErrNoArtifactService: the runner gave no artifact service
// (ACTIONS_RESULTS_URL), as outside GitHub Actions.
var ErrNoArtifactService = errors.New("ACTIONS_RESULTS_URL is not set")

// ArtifactService is the run's artifact service, from the runner's
// environment.
func ArtifactService(getenv func(string) string) (Uploader, error) {
	c, err := artifact.FromEnv(getenv, artifact.Options{})
	if errors.Is(err, artifact.ErrNotAvailable) {
		return nil, ErrNoArtifactService
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// retentionDays is how long report artifacts are kept, capped by the
// repository's setting.
const retentionDays = 90

// Upload uploads files as an artifact under the first of names not taken.
// A name can be used once per workflow run, and a re-run keeps its run: a
// name already taken (say, by the run's first attempt or by another job of
// a matrix) is passed over for the next, and after the last is retried as
// last-2, last-3, … The name used is returned.
func Upload(ctx context.Context, u Uploader, names []string, files map[string][]byte, maxDays int) (*artifact.Result, error) {
	o := artifact.UploadOptions{RetentionDays: retentionDays, MaxRetentionDays: maxDays}
	if u == nil {
		return nil, ErrNoArtifactService
	}
	if len(names) == 0 {
		return nil, errors.New("upload: no artifact name")
	}
	last := names[len(names)-1]
	for i := 0; ; i++ {
		try := last + "-" + strconv.Itoa(i-len(names)+2)
		if i < len(names) {
			try = names[i]
		}
		res, err := u.Upload(ctx, try, files, o)
		var te *artifact.TwirpError
		if err == nil || !errors.As(err, &te) || te.Code != "already_exists" || i-len(names)+2 >= maxNameTries {
			return res, err
		}
	}
}

// ArtifactNames are the names the report artifact of a run attempt tries,
// in turn (see Upload): the plain name, then, for attempts after the first,
// base-attempt-N. The plain name first: a gate in another workflow finds
// the report by that name alone (GitHub's name filter is exact), and a
// re-run most often follows an attempt that failed before its upload, so
// the re-run's report keeps it. When the first attempt did upload, the
// name is taken, and the re-run's report is base-attempt-N.
func ArtifactNames(base string, attempt int) []string {
	if attempt > 1 {
		return []string{base, base + "-attempt-" + strconv.Itoa(attempt)}
	}
	return []string{base}
}

// Annotations are the check run's: one per blocking test whose file is known, at its line
// (1 when unknown), at most limit (all with limit < 0). Paths are made relative to the
// checkout's root, as GitHub places annotations by repository path.
func Annotations(res gate.Result, tests []gate.TestInput, co model.Checkout, limit int) []ghapi.Annotation {
	byName := make(map[string]gate.TestInput, len(tests))
	for _, t := range tests {
		byName[t.Name] = t
	}
	var out []ghapi.Annotation
	for _, t := range res.Tests {
		in := byName[t.Name]
		if t.Decision != gate.Block || in.File == "" {
			continue // annotations need a file; the summary lists every test
		}
		if limit >= 0 && len(out) >= limit {
			break
		}
		line := max(1, in.Line)
		// Names, paths and reasons are untrusted: no controls, no bidi.
		out = append(out, ghapi.Annotation{Path: render.Plain(co.RepoPath(in.File)), StartLine: line, EndLine: line,
			Level: "failure", Title: render.Plain("flakegate: " + string(t.Bucket) + ": " + t.Name), Message: render.PlainLines(t.Reason)})
	}
	return out
}
