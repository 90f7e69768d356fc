package gfm

import (
	"regexp"
	"strings"
	"sync"
)

// Prose returns the lines of md that GitHub shows as the author's own
// words, for a search line by line (a pull request body's "Test-Changes:"
// line, which a template's hint or example must not make, nor text the
// rendered page does not show). It leaves out fenced and indented code,
// HTML comments, the HTML blocks whose text does not show (<script>,
// <style>, <pre>, <textarea>, declarations, CDATA), link reference
// definitions (with a title that may run over lines: "[//]: # (…)" is a
// comment that renders as nothing) and the tags of raw HTML with their
// attributes (an image's alt text across lines); the text of other HTML
// blocks (<details>, <div>, <p>) shows and stays. Block quote and list
// markers go, so that a line reads from its content: "- Test-Changes: x"
// and "> Test-Changes: x" show as text too. An unclosed fence, comment or
// block runs to the end, as it renders.
func Prose(md string) string {
	var b strings.Builder
	var fence byte // the open fence's character, 0 outside one
	var fenceLen int
	fenceQuotes, fenceItem := 0, 0 // the block quotes and list item the fence opened in
	comment := false
	html := 0         // the open hidden HTML block's kind (htmlStart), 0 outside one
	var title byte    // the closing character of a link reference title still open
	para := false     // the line before continues a paragraph
	indented := false // inside an indented code block
	item := 0         // the content column of the open list item, 0 outside a list
	blankBefore := true
	off := 0 // of the line after l in md (c, a suffix of l, starts near off-len(c))
	for _, l := range strings.SplitAfter(md, "\n") {
		if l == "" {
			continue
		}
		off += len(l)
		line := strings.TrimRight(l, "\r\n")
		blank := isBlank(line)
		// The line's content, inside its block quotes and list item.
		c, marked, quotes := line, false, 0
		for {
			q, ok := quoteLine(c)
			if !ok {
				break
			}
			c, quotes = q, quotes+1
		}
		inItem := item > 0 && (blank || indent(c) >= item)
		if fence != 0 && (quotes < fenceQuotes || fenceItem > 0 && !inItem) {
			fence = 0 // its block quote or list item ended, and the fence with it
		}
		if m, ok := listMarker(c); ok && fence == 0 && html == 0 && !isBreak(c) {
			item, c, marked, para, indented = m.width, m.first, true, false, false
			if indent(m.first) >= 4 {
				marked = false // "-     x": code in the item
			}
		} else if item > 0 && !blank {
			switch {
			case inItem:
				c = stripCols(c, 0, item)
			case blankBefore:
				item = 0 // past the list
			}
		}
		prevBlank := blankBefore
		blankBefore = blank
		switch {
		case fence != 0:
			if fenceCloses(c, fence, fenceLen) {
				fence = 0
			}
			continue
		case comment:
			// Outside code, below: a comment may span lines.
		case html != 0:
			if htmlEnds(html, c) {
				html = 0
			}
			continue
		case title != 0:
			if blank || strings.IndexByte(c, title) >= 0 {
				title = 0
			}
			continue
		case indented && (blank || indent(c) >= 4):
			continue
		default:
			indented = false
			if f, n, _, ok := fenceOpen(c); ok {
				fence, fenceLen, para, fenceQuotes, fenceItem = f, n, false, quotes, item
				continue
			}
			if indent(c) >= 4 && !para && !blank && !marked && (prevBlank || !para) {
				indented = true
				continue
			}
			if k := htmlStart(c, para); k > 0 && k != 2 && k != 6 && k != 7 {
				para = false
				if !htmlEnds(k, c) {
					html = k
				}
				continue
			}
			if rest, ok := linkDefinition(c, para); ok {
				title = openTitle(rest)
				continue
			}
		}
		_, _, heading := atxHeading(c)
		para = !blank && !heading && !isBreak(c) && setext(c) == 0
		// Outside code: drop the comments, which may span lines.
		if strings.HasSuffix(l, "\n") {
			c += "\n"
		}
		for c != "" {
			if comment {
				end := strings.Index(c, "-->")
				if end < 0 {
					c = ""
					break
				}
				c, comment = c[end+3:], false
				continue
			}
			start := strings.Index(c, "<!--")
			// A comment opens a block at the line's start (run to the end
			// if unclosed, as it renders), but within a line only when
			// closed later and not inside a code span: "drop `<!--`
			// comments" is text.
			if start > 0 && strings.TrimLeft(c[:start], " \t") != "" &&
				(strings.Count(c[:start], "`")%2 == 1 || !strings.Contains(md[max(0, off-len(c)+start):], "-->")) {
				b.WriteString(c[:start+4])
				c = c[start+4:]
				continue
			}
			if start < 0 {
				b.WriteString(c)
				break
			}
			b.WriteString(c[:start])
			c, comment = c[start+4:], true
		}
	}
	return inlineTag().ReplaceAllString(b.String(), "")
}

// htmlEnds reports whether line ends an HTML block of kind k (1, 3, 4 or
// 5) at its end marker.
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
