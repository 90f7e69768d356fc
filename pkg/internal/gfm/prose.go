package gfm

import (
	"regexp"
	"strings"
	"sync"
)

// Prose returns the lines of md that GitHub shows as the author's own
// words, for a search line by line (a pull request body's "Test-Changes:"
// line, which a template's hint or example must not make, nor text the
// rendered page does not show): it leaves out fenced and indented code,
// HTML comments, HTML blocks, link reference definitions (with a title
// that may run over lines: "[//]: # (…)" is a comment that renders as
// nothing) and the tags of raw inline HTML with their attributes (an
// image's alt text across lines). An unclosed fence, comment or block runs
// to the end, as it renders.
func Prose(md string) string {
	var b strings.Builder
	var fence byte // the open fence's character, 0 outside one
	var fenceLen int
	comment := false
	html := 0         // the open HTML block's kind (htmlStart), 0 outside one
	var title byte    // the closing character of a link reference title still open
	para := false     // the line before continues a paragraph
	indented := false // inside an indented code block
	for _, l := range strings.SplitAfter(md, "\n") {
		line := strings.TrimRight(l, "\r\n")
		blank := isBlank(line)
		switch {
		case fence != 0:
			if fenceCloses(line, fence, fenceLen) {
				fence = 0
			}
			continue
		case comment:
			// Outside code, below: a comment may span lines.
		case html != 0:
			if htmlEnds(html, line) {
				html = 0
			}
			continue
		case title != 0:
			if strings.IndexByte(line, title) >= 0 {
				title = 0
			}
			continue
		case indented && (blank || indent(line) >= 4):
			continue
		default:
			indented = false
			if c, n, _, ok := fenceOpen(line); ok {
				fence, fenceLen, para = c, n, false
				continue
			}
			if indent(line) >= 4 && !para && !blank {
				indented = true
				continue
			}
			if k := htmlStart(line, para); k > 0 && k != 2 {
				para = false
				if !htmlEnds(k, line) {
					html = k
				}
				continue
			}
			if rest, ok := linkDefinition(line, para); ok {
				title = openTitle(rest)
				continue
			}
		}
		para = !blank
		// Outside code: drop the comments, which may span lines.
		for l != "" {
			if comment {
				end := strings.Index(l, "-->")
				if end < 0 {
					l = ""
					break
				}
				l, comment = l[end+3:], false
				continue
			}
			start := strings.Index(l, "<!--")
			if start < 0 {
				b.WriteString(l)
				break
			}
			b.WriteString(l[:start])
			l, comment = l[start+4:], true
		}
	}
	return inlineTag().ReplaceAllString(b.String(), "")
}

// htmlEnds reports whether line ends an HTML block of kind k: kinds 1 to 5
// at their end marker, 6 and 7 at a blank line.
func htmlEnds(k int, line string) bool {
	low := strings.ToLower(line)
	switch k {
	case 1:
		return strings.Contains(low, "</pre>") || strings.Contains(low, "</script>") || strings.Contains(low, "</style>") || strings.Contains(low, "</textarea>")
	case 3:
		return strings.Contains(low, "?>")
	case 4:
		return strings.Contains(low, ">")
	case 5:
		return strings.Contains(low, "]]>")
	}
	return isBlank(line)
}

// linkDefinition reports whether line starts a link reference definition
// ("[label]: destination 'title'"), which cannot interrupt a paragraph,
// and returns what follows the label.
func linkDefinition(line string, para bool) (string, bool) {
	if para || indent(line) >= 4 {
		return "", false
	}
	s := body(line)
	if !strings.HasPrefix(s, "[") {
		return "", false
	}
	end := strings.Index(s, "]:")
	if end < 2 || strings.ContainsAny(s[1:end], "[]") {
		return "", false
	}
	return s[end+2:], true
}

// openTitle returns the character that closes a link reference title the
// rest of its line opens and does not close, or 0.
func openTitle(rest string) byte {
	f := strings.Fields(rest)
	if len(f) < 2 {
		return 0 // a destination alone, or nothing yet
	}
	t := strings.Join(f[1:], " ")
	switch t[0] {
	case '(':
		if !strings.Contains(t[1:], ")") {
			return ')'
		}
	case '"', '\'':
		if !strings.Contains(t[1:], t[:1]) {
			return t[0]
		}
	}
	return 0
}

// inlineTag matches raw inline HTML's opening and closing tags, attributes
// and all, across lines.
var inlineTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][-A-Za-z0-9_.:]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>` + "`" + `]+))?)*\s*/?>`)
})
