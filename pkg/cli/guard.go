package cli

import (
	"bytes"
	"encoding/binary"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/render"
)

// guard is the one sanitiser every line the command line prints passes
// through: the step log of a GitHub workflow obeys workflow commands in it,
// and a test name or message is untrusted text. The runner reads two forms
// (actions/runner, src/Runner.Worker/ActionCommandManager.cs and
// src/Runner.Common/ActionCommand.cs):
//
//   - "::name ...::data" at the start of a line after String.TrimStart,
//     which removes any Unicode white space (U+00A0 and U+2003 too, not
//     only blanks). A line that would start so gets a backslash in front.
//     Zero-width spaces before or between the colons are looked through,
//     as the runner's culture-aware StartsWith may skip them.
//   - "##[name ...]data" anywhere in a line. A zero-width space goes
//     between the "##" and the "[": the runner then finds no "##[", and a
//     search that skipped the space would read the name from the "[" on,
//     which names no command. A reader sees nothing.
//
// Terminal controls (ESC and the other C0 and C1 controls but tab and line
// feed, and invisible formatting characters such as bidirectional
// overrides) are dropped, so that a name cannot recolour a terminal or
// reorder what a reviewer reads. The zero-width space (U+200B) is the one
// formatting character kept: the Markdown renderer puts it after an @ and
// inside autolinks (render.EscapeMarkdown) so that GitHub pings no one and
// links nothing, and `--format md` on stdout must read as report.md does.
// It cannot reorder text or drive a terminal.
//
// The matrix driver passes the test command's own output around it: that is
// the user's program speaking, as it would without flakegate.
type guard struct {
	w      io.Writer
	start  bool   // at the start of a line
	lead   []byte // blanks, zero-width spaces and a colon held at the start of a line
	colons int    // leading colons held in lead
	hashes int    // '#' last written on the line, zero-width spaces looked through
	part   []byte // the start of a character cut by the end of a write
	joined []byte // part and the next write, joined
	buf    []byte
}

// zwsp is ZERO WIDTH SPACE, the one formatting character (Unicode Cf) the
// guard keeps: see guard.
const zwsp = '\u200b'

// legacyCommand starts a workflow command of the old form, anywhere in a
// line.
var legacyCommand = []byte("##[")

func newGuard(w io.Writer) *guard { return &guard{w: w, start: true} }

// Write filters p. It reports len(p) when the underlying writer took
// everything.
func (g *guard) Write(p []byte) (int, error) {
	total := len(p)
	if g.whole() {
		// Whole lines that pass unchanged, the bulk of a report, are
		// written as they are, with the end of a line begun in the last
		// write and the blanks held from it.
		if n := passLines(p, !g.start); n > 0 {
			if len(g.lead) > 0 {
				if _, err := g.w.Write(g.lead); err != nil {
					return 0, err
				}
				g.lead = g.lead[:0]
			}
			if _, err := g.w.Write(p[:n]); err != nil {
				return 0, err
			}
			g.start = true
			p = p[n:]
		}
	}
	if len(p) == 0 {
		return total, nil
	}
	// A line that must be filtered, or the unfinished end of the write: only
	// that line is filtered, and the lines after it are looked at whole
	// again, so that a line of other text does not slow the rest of a
	// report. What passes is gathered and written once.
	g.buf = g.buf[:0]
	for len(p) > 0 {
		if g.whole() {
			// Lines pass whole here only after a line filtered to its
			// end (the first turn finds what Write's start did not), so
			// a line begins and no blanks are held.
			if n := passLines(p, false); n > 0 {
				g.buf = append(g.buf, p[:n]...)
				p = p[n:]
				continue
			}
		}
		k := bytes.IndexByte(p, '\n')
		if k < 0 {
			k = len(p) - 1
		}
		g.filterInto(p[:k+1])
		p = p[k+1:]
	}
	if _, err := g.w.Write(g.buf); err != nil {
		return 0, err
	}
	return total, nil
}

// whole reports whether the guard may look at whole lines: it holds no
// colon of a line's start and no part of a character, and what it wrote of
// the line does not end in a '#' that the next write could make "##[".
func (g *guard) whole() bool {
	return (!g.start || g.colons == 0) && g.hashes == 0 && len(g.part) == 0
}

// passLines returns the length of the longest prefix of p made of lines
// that the guard passes unchanged: cleanLines, up to the line of the first
// "##[". midLine is as for cleanLines.
func passLines(p []byte, midLine bool) int {
	n := cleanLines(p, midLine)
	if k := bytes.Index(p[:n], legacyCommand); k >= 0 {
		n = bytes.LastIndexByte(p[:k], '\n') + 1
	}
	return n
}

// cleanLines returns the length of the longest prefix of p made of lines,
// each ended by a line feed, that the guard passes unchanged: printable
// ASCII and tabs, not beginning, after blanks, with a colon. midLine says
// p continues a line whose start has been written.
func cleanLines(p []byte, midLine bool) int {
	n := 0
	for i := 0; ; midLine = false {
		j := i
		if !midLine {
			for j+8 <= len(p) && binary.LittleEndian.Uint64(p[j:]) == blanks8 {
				j += 8
			}
			for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
				j++
			}
			if j < len(p) && p[j] == ':' {
				return n
			}
		}
		// Eight bytes at a time while all are printable ASCII, the bulk
		// of a report; a tab, the line feed or anything else ends the
		// fast run and is looked at a byte at a time.
		for j+8 <= len(p) && printable8(binary.LittleEndian.Uint64(p[j:])) {
			j += 8
		}
		for j < len(p) && (p[j] >= 0x20 && p[j] < 0x7f || p[j] == '\t') {
			j++
		}
		if j == len(p) || p[j] != '\n' {
			return n
		}
		i = j + 1
		n = i
	}
}

const (
	ones8   = 0x0101010101010101
	highs8  = 0x8080808080808080
	blanks8 = 0x20 * ones8
)

// printable8 reports whether every byte of w is printable ASCII (0x20 to
// 0x7e): none is below 0x20, and none is above 0x7e. Both tests are the
// word-at-a-time "has a byte less than" and "has a byte more than" of
// Hacker's Delight, exact for n up to 128 and 127.
func printable8(w uint64) bool {
	below := (w - 0x20*ones8) &^ w & highs8
	above := ((w + (127-0x7e)*ones8) | w) & highs8
	return below|above == 0
}

// filter is Write byte by byte, holding what starts a line until it shows
// whether the line would start a workflow command.
func (g *guard) filter(p []byte) (int, error) {
	g.buf = g.buf[:0]
	g.filterInto(p)
	if _, err := g.w.Write(g.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// filterInto is filter, adding what passes to buf.
func (g *guard) filterInto(p []byte) {
	if len(g.part) > 0 {
		g.joined = append(append(g.joined[:0], g.part...), p...)
		p, g.part = g.joined, g.part[:0]
	}
	// A character cut by the end of the write waits for its rest.
	for k := 1; k <= min(utf8.UTFMax-1, len(p)); k++ {
		c := p[len(p)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[len(p)-k:]) {
				g.part = append(g.part, p[len(p)-k:]...)
				p = p[:len(p)-k]
			}
			break
		}
	}
	for i := 0; i < len(p); {
		if !g.start {
			// Printable ASCII inside a line, the bulk of any output, is
			// copied as it is, but for "##[".
			j := i
			for j < len(p) && p[j] >= 0x20 && p[j] < 0x7f {
				j++
			}
			if j > i {
				g.appendText(p[i:j])
				i = j
				continue
			}
		}
		if g.start && g.colons == 0 {
			// Indentation is held, in one go, until the line shows
			// whether it would start a workflow command.
			j := i
			for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
				j++
			}
			if j > i {
				g.lead = append(g.lead, p[i:j]...)
				i = j
				continue
			}
		}
		r, size := rune(p[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(p[i:])
		}
		i += size
		if r == utf8.RuneError && size == 1 {
			continue
		}
		if r == '\n' {
			g.flushLead(false)
			g.buf = append(g.buf, '\n')
			g.start, g.hashes = true, 0
			continue
		}
		if r != '\t' && (r < 0x20 || render.Invisible(r)) {
			continue
		}
		if g.start {
			switch {
			case r == zwsp || g.colons == 0 && unicode.IsSpace(r):
				g.lead = utf8.AppendRune(g.lead, r)
				continue
			case r == ':' && g.colons == 0:
				g.lead = append(g.lead, ':')
				g.colons = 1
				continue
			case r == ':':
				g.flushLead(true)
				g.buf = append(g.buf, ':')
				g.start = false
				continue
			}
			g.flushLead(false)
			g.start = false
		}
		switch {
		case r == '#':
			g.hashes = min(g.hashes+1, 2)
		case r == '[' && g.hashes == 2:
			g.buf = utf8.AppendRune(g.buf, zwsp)
			g.hashes = 0
		case r != zwsp:
			g.hashes = 0
		}
		g.buf = utf8.AppendRune(g.buf, r)
	}
}

// appendText adds s, printable ASCII inside a line, to buf, with a
// zero-width space before each '[' that follows "##".
func (g *guard) appendText(s []byte) {
	for {
		k := bytes.IndexByte(s, '[')
		if k < 0 {
			g.buf = append(g.buf, s...)
			g.hashes = trailingHashes(s, g.hashes)
			return
		}
		g.buf = append(g.buf, s[:k]...)
		if trailingHashes(s[:k], g.hashes) == 2 {
			g.buf = utf8.AppendRune(g.buf, zwsp)
		}
		g.buf = append(g.buf, '[')
		g.hashes = 0
		s = s[k+1:]
	}
}

// trailingHashes returns how many '#' end s, and n more when s is all '#',
// counting to 2 at most.
func trailingHashes(s []byte, n int) int {
	i := len(s)
	for i > 0 && len(s)-i < 2 && s[i-1] == '#' {
		i--
	}
	if i == 0 {
		return min(n+len(s), 2)
	}
	return len(s) - i
}

// flushLead writes what is held at the start of a line, with a backslash
// in front when the line would start a workflow command.
func (g *guard) flushLead(command bool) {
	if command {
		g.buf = append(g.buf, '\\')
	}
	g.buf = append(g.buf, g.lead...)
	g.lead, g.colons = g.lead[:0], 0
}

// flush writes what is held at the start of an unfinished line.
func (g *guard) flush() {
	g.buf = g.buf[:0]
	g.flushLead(false)
	if len(g.buf) > 0 {
		g.w.Write(g.buf) //nolint:errcheck // best effort at exit
	}
}
