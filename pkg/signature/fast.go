package signature

import (
	"strings"
	"unicode/utf8"
)

// Hand-written forms of the two rules that match most failure texts
// (durations and temp paths) and cheap exact tests for the clock and date
// rules. Go's regular expressions cost about 10 µs each on a short stack
// trace; these cost well under 1 µs. TestFastRulesMatchRegexps checks that
// each gives exactly what its regular expression gives.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWord is \w in Go's regexp: ASCII letters, digits and underscore.
func isWord(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// hasClock reports whether s has dd:dd:dd.
func hasClock(s string) bool {
	for i := 0; i+8 <= len(s); i++ {
		if s[i+2] == ':' && s[i+5] == ':' && isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+3]) &&
			isDigit(s[i+4]) && isDigit(s[i+6]) && isDigit(s[i+7]) {
			return true
		}
	}
	return false
}

// hasDate reports whether s has dddd-dd-dd.
func hasDate(s string) bool {
	for i := 0; i+10 <= len(s); i++ {
		if s[i+4] == '-' && s[i+7] == '-' && isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) &&
			isDigit(s[i+3]) && isDigit(s[i+5]) && isDigit(s[i+6]) && isDigit(s[i+8]) && isDigit(s[i+9]) {
			return true
		}
	}
	return false
}

// durationUnits are the rule's alternatives, in its order.
var durationUnits = []string{"ns", "µs", "us", "ms", "s", "sec", "secs", "seconds", "second",
	"milliseconds", "millisecond", "minutes", "minute"}

// isSpace is \s in Go's regexp.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// unitAt returns the length of the first unit of durationUnits that s
// starts with, ignoring case as (?i) does, and that ends at a word
// boundary; 0 when none does.
func unitAt(s string) int {
	for _, u := range durationUnits {
		n, ok := foldPrefix(s, u)
		if !ok {
			continue
		}
		// \b: the unit's last character and the next differ in being
		// word characters (only ASCII ones are).
		lastWord := isWord(s[n-1])
		nextWord := n < len(s) && isWord(s[n])
		if lastWord != nextWord {
			return n
		}
	}
	return 0
}

// foldPrefix reports whether s starts with u under simple case folding and
// returns how many bytes of s that takes. µ folds with Greek mu (μ, Μ).
func foldPrefix(s, u string) (int, bool) {
	i := 0
	for _, ur := range u {
		if i >= len(s) {
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !foldEq(r, ur) {
			return 0, false
		}
		i += size
	}
	return i, true
}

func foldEq(r, u rune) bool {
	switch u {
	case 'µ':
		return r == 'µ' || r == 'μ' || r == 'Μ'
	case 's':
		return r == 's' || r == 'S' || r == 'ſ' // long s folds with s
	}
	if r == u {
		return true
	}
	if r >= 'A' && r <= 'Z' {
		return r+'a'-'A' == u
	}
	return false
}

// replaceDurations is the rule
// (?i)\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds?|milliseconds?|minutes?)\b → <dur>.
func replaceDurations(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && isWord(s[i-1])) {
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		intEnd := j
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		k := j
		if k < len(s) && isSpace(s[k]) {
			k++
		}
		n := unitAt(s[k:])
		if n == 0 {
			// No match starts inside the integer part (each digit follows
			// a digit); one may start at the fraction, which follows '.'.
			i = intEnd - 1
			continue
		}
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString("<dur>")
		last = k + n
		i = last - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// tmpRoots are the rule's alternatives after the optional /private.
var tmpRoots = []string{"/tmp/", "/var/folders/", "/var/tmp/"}

func isTmpStop(c byte) bool {
	return isSpace(c) || c == ':' || c == '\'' || c == '"' || c == ')' || c == ',' || c == ']'
}

// replaceTmp is the rule (/private)?/(tmp|var/folders|var/tmp)/[^\s:'"),\]]* → <tmp>.
func replaceTmp(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		start, p := i, i
		if strings.HasPrefix(s[p:], "/private/") {
			if n := tmpRootAt(s[p+len("/private"):]); n > 0 {
				p += len("/private")
			}
		}
		n := tmpRootAt(s[p:])
		if n == 0 {
			continue
		}
		j := p + n
		for j < len(s) && !isTmpStop(s[j]) {
			j++
		}
		b.WriteString(s[last:start])
		b.WriteString("<tmp>")
		last = j
		i = j - 1
	}
	if last == 0 && b.Len() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func tmpRootAt(s string) int {
	for _, r := range tmpRoots {
		if strings.HasPrefix(s, r) {
			return len(r)
		}
	}
	return 0
}
