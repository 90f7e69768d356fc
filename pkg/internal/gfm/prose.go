package gfm

import "strings"

// Prose returns md without its fenced code blocks and HTML comments: the
// author's own words, for a search line by line (a pull request body's
// "Test-Changes:" line, which a template's hint in a comment, or an example
// in a code block, must not make). An unclosed fence or comment runs to the
// end, as it renders.
func Prose(md string) string {
	var b strings.Builder
	var fence byte // the open fence's character, 0 outside one
	var fenceLen int
	comment := false
	for _, l := range strings.SplitAfter(md, "\n") {
		switch {
		case fence != 0:
			if fenceCloses(strings.TrimRight(l, "\r\n"), fence, fenceLen) {
				fence = 0
			}
			continue
		case !comment:
			if c, n, _, ok := fenceOpen(strings.TrimRight(l, "\r\n")); ok {
				fence, fenceLen = c, n
				continue
			}
		}
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
	return b.String()
}
