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
// One difference is known, in Markdown flakegate does not write: a tab
// in a code block inside a list item or block quote, where the item's
// indentation ends inside the tab's columns, is written as the spaces it
// spans, where goldmark keeps the tab.
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
	blocks(&b, lines, false, false)
	return b.String()
}

// indent is the width of l's leading blanks, a tab reaching the next
// multiple of four columns.
func indent(l string) int { return blankCols(l, 0) }

// blankCols is the column after the leading blanks of s, which starts at
// column col.
func blankCols(s string, col int) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

// body is l without its leading blanks.
func body(l string) string { return strings.TrimLeft(l, " \t") }

// stripCols removes n columns of leading blanks from s, which starts at
// column col. A tab that reaches past them leaves the columns it has left
// as spaces; lines keep their tabs otherwise, as code and HTML show them.
func stripCols(s string, col, n int) string {
	end := col + n
	i := 0
	for ; i < len(s) && col < end; i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			next := col + 4 - col%4
			if next > end {
				return strings.Repeat(" ", next-end) + s[i+1:]
			}
			col = next
		default:
			return s[i:]
		}
	}
	return s[i:]
}

// inner removes n columns of leading blanks from s, which starts at
// column col, and writes the blanks left before its text as spaces: the
// line of a block quote or list item, whose own blocks then read its
// indentation from column 0.
func inner(s string, col, n int) string {
	s = stripCols(s, col, n)
	b := body(s)
	if len(b) == len(s) || !strings.Contains(s[:len(s)-len(b)], "\t") {
		return s
	}
	return strings.Repeat(" ", blankCols(s, col+n)-(col+n)) + b
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }
