package explain

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// maxMarkdownBytes caps the rendered section; a PR comment holds 65,536
// characters in all (GitHub: "Body is too long (maximum is 65536 characters)").
const maxMarkdownBytes = 16 << 10

// zwj is inserted to break GitHub's autolinking of @mentions, #references and
// URLs without changing how the text reads.
const zwj = "\u200d"

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
	htmlRE = regexp.MustCompile(`(?s)<!--.*?-->|</?[A-Za-z!?][^<>]*>`)
	// orderedRE matches text that would start an ordered list.
	orderedRE = regexp.MustCompile(`^(\d{1,9})([.)])`)
)

// escapeText makes untrusted text inert inline Markdown, at most max runes
// before escaping.
func escapeText(s string, limit int) string {
	s = oneLine(s)
	s = htmlRE.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
	s = truncateRunes(s, limit)
	listMark := -1 // index of the '.' or ')' in a leading "12." that would start a list
	if m := orderedRE.FindStringSubmatchIndex(s); m != nil {
		listMark = m[4] // digits are ASCII: byte and rune indexes agree
	}

	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case i == listMark, i == 0 && (r == '-' || r == '+' || r == '='):
			b.WriteString(`\` + string(r))
		case strings.ContainsRune("\\`*_[]|~#!(){}$", r):
			b.WriteString(`\` + string(r))
		default:
			b.WriteRune(r)
		}
		switch {
		case r == '@' && isWordRune(next):
			b.WriteString(zwj) // @user, @org/team
		case r == '#' && unicode.IsDigit(next):
			b.WriteString(zwj) // #123 issue and PR references
		case r == ':' && next == '/' && i+2 < len(rs) && rs[i+2] == '/':
			b.WriteString(zwj) // https:// autolinks
		case startsWWW(rs, i):
			b.WriteString(zwj) // www. autolinks
		}
	}
	return b.String()
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

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// startsWWW reports whether rs[i:] starts a "www." word.
func startsWWW(rs []rune, i int) bool {
	if i+3 >= len(rs) || (i > 0 && isWordRune(rs[i-1])) {
		return false
	}
	for j := range 3 {
		if unicode.ToLower(rs[i+j]) != 'w' {
			return false
		}
	}
	return rs[i+3] == '.'
}
