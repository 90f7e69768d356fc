// Package render writes a scored report as text, JSON, CSV, Markdown and a
// self-contained HTML page.
//
// It does no I/O beyond the io.Writer it is given, and its output is
// deterministic: the same report always renders to the same bytes. Test
// names, failure messages, paths and signatures come from test output and
// are treated as hostile: every format escapes them for its own syntax, and
// the Markdown renderer also neutralises @mentions, raw HTML and autolinks,
// and keeps within a byte budget when asked to.
package render

import (
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/score"
	"github.com/flakegate/flakegate/pkg/signature"
)

// zwsp (zero-width space) goes after an @ or between the characters of an
// autolink so that GitHub sees no mention, issue reference or URL, while the
// text reads the same.
const zwsp = "\u200b"

var errNilReport = errors.New("nil report")

// Truncate cuts s to at most n runes. When it cuts, the last rune kept is
// "…", so the result is still n runes long at most. It never splits a
// UTF-8 sequence. n <= 0 gives "".
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…"
		}
		count++
	}
	return s // unreachable: s has more than n runes
}

// EscapeMarkdown makes untrusted text inert inline Markdown, safe in a GFM
// table cell. It puts the text on one line (line breaks become spaces,
// control and invisible formatting characters such as bidirectional
// overrides are dropped), escapes Markdown punctuation including the cell
// separator |, writes < > & as HTML entities so no raw HTML survives, and
// breaks @mentions, #123 references and URL autolinks with a zero-width
// space. It does not cap the length: Truncate first.
func EscapeMarkdown(s string) string {
	s = oneLine(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	listMark := orderedListMark(s)
	prev := rune(0)
	for i, r := range s {
		rest := s[i+utf8.RuneLen(r):]
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case strings.ContainsRune("\\`*_[]|~#$", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && (r == '-' || r == '+' || r == '='), i == listMark:
			// A list item or setext heading when the text starts a line.
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		if neutralize(r, prev, rest) {
			b.WriteString(zwsp)
		}
		prev = r
	}
	return b.String()
}

// neutralize reports whether a zero-width space must follow r, preceded by
// prev and followed by rest, to break a mention (@user, @org/team), an
// issue reference (#123) or an autolink (scheme://, www.).
func neutralize(r, prev rune, rest string) bool {
	switch r {
	case '@':
		next, _ := utf8.DecodeRuneInString(rest)
		return isWordRune(next)
	case '#':
		return rest != "" && rest[0] >= '0' && rest[0] <= '9'
	case ':':
		return strings.HasPrefix(rest, "//")
	case '-':
		// GH-123 is an issue reference too.
		return (prev == 'H' || prev == 'h') && rest != "" && rest[0] >= '0' && rest[0] <= '9'
	case 'w', 'W':
		// GitHub's renderer (cmark-gfm) links a www. after a blank, the
		// line's start or one of * _ ~ (, in the source: "\_www." too.
		return (!isWordRune(prev) || prev == '_') && len(rest) >= 3 && strings.EqualFold(rest[:2], "ww") && rest[2] == '.'
	}
	return false
}

// escapeHTML escapes text for an HTML context inside Markdown (a <summary>
// or a <pre> block), where GitHub does not interpret Markdown: entities for
// < > & " ', and no @mention. For <pre> (keepLines) line breaks stay and
// nothing else changes, so messages read as they were. On one line (a
// <summary>) the Markdown punctuation [ ] ` | is written as entities too,
// and #123 references and URL autolinks are broken as in EscapeMarkdown,
// should anything ever read the line as Markdown. Control and invisible
// formatting characters are dropped in both.
func escapeHTML(s string, keepLines bool) string {
	if keepLines {
		s = cleanLines(s)
	} else {
		s = oneLine(s)
	}
	s = html.EscapeString(s)
	if keepLines && !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	prev := rune(0)
	for i, r := range s {
		rest := s[i+utf8.RuneLen(r):]
		switch {
		case keepLines:
			b.WriteRune(r)
		case r == '[':
			b.WriteString("&#91;")
		case r == ']':
			b.WriteString("&#93;")
		case r == '`':
			b.WriteString("&#96;")
		case r == '|':
			b.WriteString("&#124;")
		default:
			b.WriteRune(r)
		}
		switch {
		case keepLines && r != '@':
		case r == '#' && prev == '&': // inside an entity such as &#34;
		case neutralize(r, prev, rest):
			b.WriteString(zwsp)
		}
		prev = r
	}
	return b.String()
}

// oneLine makes s valid UTF-8 on a single line: line breaks and tabs become
// spaces, runs of spaces collapse, control and invisible formatting
// characters (zero-width characters, bidirectional overrides) go.
func oneLine(s string) string {
	if isTidyASCII(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return ' '
		case unicode.IsControl(r) || hidden(r):
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// isTidyASCII reports whether s is printable ASCII with single spaces
// only between words: what oneLine returns unchanged.
func isTidyASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			return false
		}
	}
	return true
}

// cleanLines is oneLine for multi-line text: it keeps line breaks (as \n)
// and tabs.
func cleanLines(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return '\n'
		case unicode.IsControl(r) || hidden(r):
			return -1
		}
		return r
	}, s)
}

// hidden reports the characters that show as nothing: the formatting
// characters (Cf: zero-width characters, bidirectional overrides) and the
// rest of Unicode's default-ignorable code points (variation selectors,
// the Hangul fillers, the combining grapheme joiner), with which two test
// names can look alike (an audit: "test_pay\ufe0fment").
func hidden(r rune) bool {
	return r >= 0x80 && (unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r))
}

// plain makes s safe for a terminal: one line, no escape sequences.
func plain(s string) string { return oneLine(s) }

// PlainLines is Plain for multi-line text: line breaks stay, control and
// invisible formatting characters go.
func PlainLines(s string) string { return cleanLines(s) }

// Plain puts untrusted text on one line for a log or a terminal: line
// breaks become spaces, control and invisible formatting characters
// (escape sequences, bidirectional overrides) go.
func Plain(s string) string { return oneLine(s) }

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// orderedListMark returns the index of the '.' or ')' in a leading "12."
// or "12)" that would start an ordered list, or -1.
func orderedListMark(s string) int {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return i
	}
	return -1
}

// alnum keeps the ASCII letters and digits of s, at most n of them: for
// commit SHAs and signature hashes, which are hex when honest.
func alnum(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= n {
			break
		}
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// shortSHA is a commit's 7-character abbreviation, sanitised.
func shortSHA(sha string) string { return alnum(sha, 7) }

// shortSig is a signature's 12 hex digits, sanitised.
func shortSig(hash string) string { return alnum(signature.Short(hash), 12) }

// topSignature returns the test's most frequent signature.
func topSignature(t *score.Test) (score.Signature, bool) {
	if len(t.Signatures) == 0 {
		return score.Signature{}, false
	}
	return t.Signatures[0], true
}

// unflaggedText names the tests with flaky evidence on too few commits
// to be flagged, the first few with their flaky commits, untrusted names
// through clean (escaping for the format).
func unflaggedText(r *score.Report, clean func(string) string) string {
	ts := r.Unflagged()
	if len(ts) == 0 {
		return ""
	}
	names := firstOf(len(ts), func(i int) string {
		return fmt.Sprintf("%s (flaky on %d of %d commits)", clean(Truncate(oneLine(ts[i].Name), 120)), ts[i].FlakyCommits+ts[i].IntermittentCommits, ts[i].Commits)
	})
	return fmt.Sprintf("%s flaky evidence on fewer than %d commits, too few to flag: %s. More commits (the action's lookback-days) or a lower min-commits would tell.",
		plural(len(ts), "test shows", "tests show"), r.MinCommits, names)
}

// recurringText names the suites whose co-failures, each left out as an
// infrastructure event, came again and again (Report.RecurringEvents):
// their tests are not flagged, so the report says so.
func recurringText(r *score.Report, clean func(string) string) string {
	if len(r.RecurringEvents) == 0 {
		return ""
	}
	gs := r.RecurringEvents
	parts := firstOf(len(gs), func(i int) string {
		return fmt.Sprintf("%s (in %d of %d runs)", clean(Truncate(oneLine(gs[i].Group), 120)), gs[i].Events, gs[i].Runs)
	})
	return fmt.Sprintf("%s failed as one again and again, each time left out as an infrastructure event, so %s not flagged: %s. A shared fixture (a setUpClass, a beforeAll) or service that fails this often is flaky: fix it or route it out.",
		plural(len(gs), "suite", "suites"), map[bool]string{true: "its tests are", false: "their tests are"}[len(gs) == 1], parts)
}

// directorySplitText names the flagged tests that failed only in files under
// some directory names and passed only under others (Report.SplitByDirectory).
func directorySplitText(r *score.Report, clean func(string) string) string {
	if len(r.SplitByDirectory) == 0 {
		return ""
	}
	ds := r.SplitByDirectory
	parts := firstOf(len(ds), func(i int) string {
		return fmt.Sprintf("%s (fails only under %s/, passes only under %s/)", clean(Truncate(oneLine(ds[i].Test), 120)),
			clean(Truncate(oneLine(strings.Join(ds[i].FailsUnder, "/, ")), 120)), clean(Truncate(oneLine(strings.Join(ds[i].PassesUnder, "/, ")), 120)))
	})
	return fmt.Sprintf("%s flagged, but %s by directory: %s. Files that state no run_id are each a run; if those directories are the legs of one run (a matrix), such a test is broken on one leg, not flaky: give each run's files a run_id property, or analyze each leg apart.",
		plural(len(ds), "test is", "tests are"), map[bool]string{true: "its results split", false: "their results split"}[len(ds) == 1], parts)
}

// firstOf joins item(i) for the first maxUnflaggedNames of n items, then
// says how many more there are.
func firstOf(n int, item func(i int) string) string {
	var parts []string
	for i := range n {
		if i == maxUnflaggedNames {
			parts = append(parts, fmt.Sprintf("and %d more", n-i))
			break
		}
		parts = append(parts, item(i))
	}
	return strings.Join(parts, ", ")
}

// infraRunsText says that n runs were left out as infrastructure failures,
// runs in which more than threshold (a percentage) of the tests failed.
func infraRunsText(n int, threshold string) string {
	if n == 1 {
		return "1 run was excluded as an infrastructure failure: more than " + threshold + " of its tests failed"
	}
	return group(n) + " runs were excluded as infrastructure failures: more than " + threshold + " of their tests failed"
}

// repeatedText says, when most tests ran more than once in some runs,
// that a run's results are attempts of one test, which makes a test that
// fails in one of several files of one directory (a tox environment per
// file) look flaky. Artifacts and directories of one run are told apart
// (history's legs); the files of one directory are not.
func repeatedText(r *score.Report) string {
	if r.RepeatedRuns == 0 {
		return ""
	}
	return fmt.Sprintf("In %s of %s most tests ran more than once: repeated by the test runner, written to several files of one directory (a tox environment per file, the suite run again into a second file), or one report uploaded twice. A run's results there count as attempts of one test, so a test that fails in one of those files only looks flaky, with retry evidence. Artifacts and directories of one run are told apart: put each environment's file in a directory of its own.",
		group(r.RepeatedRuns), plural(r.Runs, "run", "runs"))
}

// varyingText says which tests were scored under a name whose varying
// part is written "…" (score.Report.VaryingNames), or "".
func varyingText(r *score.Report) string {
	if len(r.VaryingNames) == 0 {
		return ""
	}
	var names []string
	for _, v := range r.VaryingNames[:min(len(r.VaryingNames), 3)] {
		names = append(names, fmt.Sprintf("%s (%d names)", v.Test, v.Names))
	}
	if n := len(r.VaryingNames) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("%d more", n))
	}
	return fmt.Sprintf("%s a name that changes from run to run (a seed, a hash code, an id or a timestamp in it), one such name in each run, and %s scored as one test each, under the name with the varying part written …: %s.",
		plural(len(r.VaryingNames), "test has", "tests have"), map[bool]string{true: "is", false: "are"}[len(r.VaryingNames) == 1], strings.Join(names, ", "))
}

// LegBoundsNote says where a bound kept the legs of a matrix (artifacts
// and their directories) from being told apart, and what that does to the
// tests they hold, or "" when nothing was bounded: nothing was left out,
// but it is not the split the report makes below the bounds.
func LegBoundsNote(r *score.Report) string {
	var parts []string
	if r.FoldedLegRuns > 0 {
		parts = append(parts, fmt.Sprintf("%s had more than 256 legs (artifacts and their directories); the legs past the 256th were counted as one leg, \"(more legs)\", whose tests are attempts of one test", plural(r.FoldedLegRuns, "run", "runs")))
	}
	if r.LegSearchStopped {
		parts = append(parts, "the search for legs that rerun or repeat another stopped at its bound, so every leg counted as a project of its own: a rerun's passes are another project's results, not retries")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Some legs were not told apart as usual: " + strings.Join(parts, "; and ") + ". Fewer artifacts or directories per run would avoid it."
}

// maxUnflaggedNames bounds the tests unflaggedText names.
const maxUnflaggedNames = 5

// flakeInterval is the Wilson interval of the flake score, whose lower bound
// ranks the tests.
func flakeInterval(t *score.Test) score.Interval {
	return score.Wilson(t.FlakyCommits+t.IntermittentCommits, t.Commits)
}

// group writes n with thousands separators: 19,644.
func group(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural returns "1 test" or "2 tests".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return group(n) + " " + many
}

func flagged(r *score.Report) []*score.Test {
	var out []*score.Test
	for i := range r.Tests {
		if r.Tests[i].IsFlaky {
			out = append(out, &r.Tests[i])
		}
	}
	return out
}

// failingPerCommit counts, per commit of the axis, the flagged and the other
// tests that failed at least once on it (F or M in their timelines).
func failingPerCommit(r *score.Report) (flaky, other []int) {
	flaky = make([]int, len(r.Commits))
	other = make([]int, len(r.Commits))
	for i := range r.Tests {
		t := &r.Tests[i]
		for c := 0; c < len(t.Timeline) && c < len(r.Commits); c++ {
			if t.Timeline[c] == 'F' || t.Timeline[c] == 'M' {
				if t.IsFlaky {
					flaky[c]++
				} else {
					other[c]++
				}
			}
		}
	}
	return flaky, other
}

// Counts writes counts as a list to read: "5", "5 and 10", "5, 10 and 20".
func Counts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
