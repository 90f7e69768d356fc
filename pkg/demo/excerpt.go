package demo

import (
	"errors"
	"strings"
)

// The README shows an excerpt of the demo's output between these markers;
// go test ./pkg/demo -update rewrites it, and the test fails when it drifts.
const (
	excerptBegin = "<!-- demo excerpt: written by go test ./pkg/demo -update; do not edit -->"
	excerptEnd   = "<!-- end of demo excerpt -->"
)

// Excerpt is the head of the PR comment (verdict and blocking tests) and of
// the weekly report's summary (the flaky tests), quoted, as the README
// shows them.
func Excerpt(res *Result) string {
	var b strings.Builder
	b.WriteString("The PR comment (head; the whole comment is [docs/demo/comment.md](docs/demo/comment.md)):\n\n")
	quote(&b, head(res.Comment, "<details>"))
	b.WriteString("\nThe weekly report's job summary (head; the whole summary is [docs/demo/summary-report.md](docs/demo/summary-report.md)):\n\n")
	quote(&b, head(res.Report.Summary, "### Failing tests per commit"))
	return b.String()
}

// head is s up to the first line that starts with stop, without trailing
// blank lines.
func head(s, stop string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, stop) {
			break
		}
		out = append(out, line)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

func quote(b *strings.Builder, s string) {
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			b.WriteString(">\n")
			continue
		}
		b.WriteString("> " + line + "\n")
	}
}

// spliceExcerpt replaces what lies between the markers in readme.
func spliceExcerpt(readme, excerpt string) (string, error) {
	i := strings.Index(readme, excerptBegin+"\n")
	j := strings.Index(readme, excerptEnd)
	if i < 0 || j < i {
		return "", errors.New("README.md has no demo excerpt markers (" + excerptBegin + " ... " + excerptEnd + ")")
	}
	i += len(excerptBegin) + 1
	return readme[:i] + excerpt + readme[j:], nil
}
