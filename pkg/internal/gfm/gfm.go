// Package gfm renders the GitHub-flavoured Markdown that flakegate writes
// (its PR comment, job summaries and Markdown report) as HTML, for the
// demo's pages. It gives the HTML that goldmark gives with its GFM
// extensions and raw HTML kept, for the Markdown flakegate writes: ATX
// and setext headings, paragraphs, tables, lists, block quotes, fenced
// code, thematic breaks and HTML blocks; code spans, emphasis,
// strikethrough, inline links, autolinks, raw inline HTML, backslash
// escapes and character references. The tests hold it to goldmark's
// output on every document flakegate renders, hostile test names and
// messages included.
//
// goldmark itself is not linked into the binary: its packages' start-up
// work (an HTML entity table and the autolink expressions, built when
// the program starts) cost every flakegate command about a millisecond,
// for the demo's pages alone.
package gfm

import (
	"strings"
)

// HTML renders md as HTML.
func HTML(md string) string {
	var b strings.Builder
	b.Grow(len(md) + len(md)/2)
	md = strings.ReplaceAll(md, "\r\n", "\n")
	lines := strings.Split(md, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = expandTabs(l)
	}
	blocks(&b, lines, false, false)
	return b.String()
}

// expandTabs replaces a line's leading tabs with spaces to the next
// multiple of four, which is all the block structure reads of them.
func expandTabs(l string) string {
	if !strings.HasPrefix(l, "\t") && !strings.Contains(leading(l), "\t") {
		return l
	}
	var b strings.Builder
	col := 0
	i := 0
	for ; i < len(l) && (l[i] == ' ' || l[i] == '\t'); i++ {
		if l[i] == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
		} else {
			b.WriteByte(' ')
			col++
		}
	}
	b.WriteString(l[i:])
	return b.String()
}

// leading is l's leading blanks.
func leading(l string) string {
	return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
}

// indent is the number of leading spaces of l.
func indent(l string) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }
