package ghapi

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// Check run limits.
const (
	// MaxAnnotationsPerRequest: more are sent in follow-up PATCHes, which
	// GitHub appends.
	MaxAnnotationsPerRequest = 50 // GitHub: "limits the number of annotations to a maximum of 50 per API request"
	// MaxCheckText bounds output.summary and output.text.
	MaxCheckText = 65535 // GitHub: output summary and text "maxLength": 65535
	// maxAnnotationTitle: longer titles are cut.
	maxAnnotationTitle = 255 // GitHub: annotation title "The maximum size is 255 characters"
	// maxAnnotationBytes: longer messages and raw details are cut.
	maxAnnotationBytes = 64 << 10 // GitHub: annotation message and raw_details "The maximum size is 64 KB"
)

// CheckRunSpec is the content of a check run.
type CheckRunSpec struct {
	Name    string // required on create
	HeadSHA string // required on create
	// Status is queued, in_progress or completed; a Conclusion implies
	// completed.
	Status     string
	Conclusion string // success, failure, neutral, …
	DetailsURL string
	ExternalID string
	// Title and Summary make up the output; both are required when there is
	// output (GitHub) and are resent with every batch of annotations.
	Title   string
	Summary string
	Text    string
	// Annotations may be any number: they go out 50 per request.
	Annotations []Annotation
}

func (s CheckRunSpec) check(what string) error {
	for field, v := range map[string]string{"summary": s.Summary, "text": s.Text} {
		if n := utf8.RuneCountInString(v); n > MaxCheckText {
			return &SizeError{What: fmt.Sprintf("%s: output %s (characters)", what, field), Limit: MaxCheckText, Size: int64(n)}
		}
	}
	if (s.Summary != "" || s.Text != "" || len(s.Annotations) > 0) && (s.Title == "" || s.Summary == "") {
		return fmt.Errorf("%s: output needs a title and a summary", what)
	}
	for i, a := range s.Annotations {
		if a.Path == "" || a.StartLine < 1 || a.EndLine < a.StartLine || a.Level == "" || a.Message == "" {
			return fmt.Errorf("%s: annotation %d: path, start_line (≥ 1), end_line (≥ start_line), annotation_level and message are required", what, i)
		}
	}
	return nil
}

func (s CheckRunSpec) output(batch []*github.CheckRunAnnotation) *github.CheckRunOutput {
	if s.Title == "" && s.Summary == "" {
		return nil
	}
	o := &github.CheckRunOutput{Title: &s.Title, Summary: &s.Summary, Annotations: batch}
	if s.Text != "" {
		o.Text = &s.Text
	}
	return o
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// batches cuts annotations into groups of MaxAnnotationsPerRequest, with
// titles, messages and raw details cut to GitHub's limits. There is always
// at least one (possibly empty) batch.
func batches(anns []Annotation) [][]*github.CheckRunAnnotation {
	out := [][]*github.CheckRunAnnotation{nil}
	for i, a := range anns {
		if i > 0 && i%MaxAnnotationsPerRequest == 0 {
			out = append(out, nil)
		}
		cp := *a.github()
		if t := cp.GetTitle(); utf8.RuneCountInString(t) > maxAnnotationTitle {
			t = truncateRunes(t, maxAnnotationTitle)
			cp.Title = &t
		}
		if m := cp.GetMessage(); len(m) > maxAnnotationBytes {
			m = truncateBytes(m, maxAnnotationBytes)
			cp.Message = &m
		}
		if d := cp.GetRawDetails(); len(d) > maxAnnotationBytes {
			d = truncateBytes(d, maxAnnotationBytes)
			cp.RawDetails = &d
		}
		out[len(out)-1] = append(out[len(out)-1], &cp)
	}
	return out
}

// truncateRunes cuts s to n characters, the last one an ellipsis.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// truncateBytes cuts s to at most n bytes on a character boundary, the last
// one an ellipsis.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// CreateCheckRun creates a check run. Annotations beyond the first 50 are
// appended with follow-up PATCHes, so 120 annotations take 3 requests.
func (c *Client) CreateCheckRun(ctx context.Context, repo Repo, spec CheckRunSpec) (*CheckRun, error) {
	what := fmt.Sprintf("check run %q in %s", spec.Name, repo)
	if spec.Name == "" || spec.HeadSHA == "" {
		return nil, fmt.Errorf("%s: name and head SHA are required", what)
	}
	if err := spec.check(what); err != nil {
		return nil, err
	}
	bs := batches(spec.Annotations)
	cr, resp, err := c.gh.Checks.CreateCheckRun(ctx, repo.Owner, repo.Name, github.CreateCheckRunOptions{
		Name: spec.Name, HeadSHA: spec.HeadSHA, DetailsURL: optional(spec.DetailsURL), ExternalID: optional(spec.ExternalID),
		Status: optional(spec.Status), Conclusion: optional(spec.Conclusion), Output: spec.output(bs[0]),
	})
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	return c.appendAnnotations(ctx, repo, cr, spec, bs[1:], what)
}

// UpdateCheckRun updates a check run; its annotations are appended to those
// already there, 50 per request.
func (c *Client) UpdateCheckRun(ctx context.Context, repo Repo, id int64, spec CheckRunSpec) (*CheckRun, error) {
	what := fmt.Sprintf("check run %d in %s", id, repo)
	if err := spec.check(what); err != nil {
		return nil, err
	}
	bs := batches(spec.Annotations)
	cr, resp, err := c.gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, github.UpdateCheckRunOptions{
		Name: spec.Name, DetailsURL: optional(spec.DetailsURL), ExternalID: optional(spec.ExternalID),
		Status: optional(spec.Status), Conclusion: optional(spec.Conclusion), Output: spec.output(bs[0]),
	})
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	return c.appendAnnotations(ctx, repo, cr, spec, bs[1:], what)
}

func (c *Client) appendAnnotations(ctx context.Context, repo Repo, cr *github.CheckRun, spec CheckRunSpec, rest [][]*github.CheckRunAnnotation, what string) (*CheckRun, error) {
	name := spec.Name
	if name == "" {
		name = cr.GetName() // go-github always sends name on PATCH
	}
	for i, b := range rest {
		next, resp, err := c.gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, cr.GetID(), github.UpdateCheckRunOptions{
			Name: name, Output: spec.output(b),
		})
		if err != nil {
			return checkRunOf(cr), c.classify(fmt.Sprintf("%s: annotations batch %d of %d", what, i+2, len(rest)+1), resp, err)
		}
		cr = next
	}
	return checkRunOf(cr), nil
}
