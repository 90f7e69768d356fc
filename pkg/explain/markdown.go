package explain

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/flakegate/flakegate/pkg/render"
)

// maxMarkdownBytes caps the rendered section; a PR comment holds 65,536
// characters in all (GitHub: "Body is too long (maximum is 65536 characters)").
const maxMarkdownBytes = 16 << 10

// Markdown renders a Result for a PR comment or job summary. The text is the
// model's and therefore untrusted: it is put on one line per item, raw HTML is
// stripped, Markdown and HTML syntax escaped, @mentions, #123 references and
// URLs neutralised, test names shown as code, lengths capped, and the section
// labelled as AI-generated. The caller may wrap it in <details>.
func Markdown(r Result) string {
	if r.Analysis == nil {
		why := r.Note
		if why == "" {
			why = note("no analysis was produced")
		}
		return "**AI root causes (AI-generated):** " + escapeText(why, 600) + "\n"
	}
	a := r.Analysis
	var b strings.Builder
	model := ""
	if a.Model != "" {
		model = " by " + codeSpan(a.Model, 80)
	}
	fmt.Fprintf(&b, "**AI-generated root-cause analysis**%s. It is inferred from test names and failure messages, "+
		"may be wrong, and never changes the verdict; infrastructure failures can look like flakiness.\n\n", model)
	if line := sentLine(a); line != "" {
		b.WriteString(line)
	}
	fmt.Fprintf(&b, "**Summary:** %s\n", escapeText(a.Summary, maxSummaryRunes))

	budget := func(next string) bool { return b.Len()+len(next) <= maxMarkdownBytes }
	if len(a.RootCauses) > 0 {
		b.WriteString("\n**Likely root causes**\n\n")
		for i, c := range a.RootCauses {
			item := rootCauseItem(i+1, c)
			if !budget(item) {
				fmt.Fprintf(&b, "\n_%d more causes left out for length._\n", len(a.RootCauses)-i)
				break
			}
			b.WriteString(item)
		}
	}
	if len(a.Recommendations) > 0 {
		b.WriteString("\n**Recommendations**\n\n")
		for i, rec := range a.Recommendations {
			item := "- " + escapeText(rec, maxRecommendationRunes) + "\n"
			if !budget(item) {
				fmt.Fprintf(&b, "\n_%d more recommendations left out for length._\n", len(a.Recommendations)-i)
				break
			}
			b.WriteString(item)
		}
	}
	return b.String()
}

// sentLine says which tests the analysis is based on when the prompt's
// bounds left some out: the model never saw the others.
func sentLine(a *Analysis) string {
	left := a.TestsTotal - a.TestsSent
	if left <= 0 {
		return ""
	}
	if a.Blocking {
		return fmt.Sprintf("_Based on %d of the %d tests that block this pull request; the other %d were not sent to the model._\n\n",
			a.TestsSent, a.TestsTotal, left)
	}
	return fmt.Sprintf("_Based on the %d highest-scoring of %d flaky tests; the other %d were not sent to the model._\n\n",
		a.TestsSent, a.TestsTotal, left)
}

func rootCauseItem(n int, c RootCause) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. **%s** (confidence: %s)\n", n, escapeText(c.Cause, maxCauseRunes), escapeText(string(c.Confidence), 10))
	if len(c.Tests) > 0 {
		names := make([]string, 0, len(c.Tests))
		for _, t := range c.Tests {
			names = append(names, codeSpan(t, 150))
		}
		fmt.Fprintf(&b, "   - Tests: %s\n", strings.Join(names, ", "))
	}
	if c.Evidence != "" {
		fmt.Fprintf(&b, "   - Evidence: %s\n", escapeText(c.Evidence, maxEvidenceRunes))
	}
	return b.String()
}

var (
	// htmlRE matches HTML comments and tags, which are removed outright.
	htmlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<!--.*?-->|</?[A-Za-z!?][^<>]*>`) })
)

// escapeText makes untrusted text inert inline Markdown, at most limit
// runes before escaping: raw HTML is removed, then the text is escaped as
// every report escapes untrusted text (render.EscapeMarkdown: Markdown and
// HTML syntax, @mentions, #123 references and autolinks).
func escapeText(s string, limit int) string {
	s = htmlRE().ReplaceAllString(oneLine(s), "")
	s = strings.Join(strings.Fields(s), " ")
	return render.EscapeMarkdown(truncateRunes(s, limit))
}

// codeSpan shows s verbatim as inline code: no Markdown, HTML or mention is
// interpreted inside it. The fence is longer than any run of backticks in s.
func codeSpan(s string, limit int) string {
	s = truncateRunes(strings.Join(strings.Fields(oneLine(s)), " "), limit)
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// oneLine drops control and invisible formatting characters (zero-width
// characters, bidirectional overrides) and turns line breaks into spaces, so
// text cannot start a block of its own.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029':
			return ' '
		case unicode.IsControl(r) || isInvisible(r):
			return -1
		}
		return r
	}, s)
}
