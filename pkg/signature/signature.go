// Package signature normalises failure messages and hashes them, so that
// failures of one bug group together across runs while two bugs stay apart.
//
// Normalisation is a merge operation, and wrong merges are silent: a rule
// that stripped line numbers once merged two distinct bugs into one freeze.
// So the rules here strip only what varies between runs of the same bug
// (addresses, ids, temp paths, timestamps, durations) and keep file:line
// positions, exception types and assertion values.
package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
)

// maxLines is how many lines of a failure's text enter the signature: the
// message and the top of the stack, where two bugs differ. Deeper frames
// vary with the caller (test runner internals, thread pools) and would split
// one bug into many.
const maxLines = 8

// rule replaces what re matches with repl. need is a cheap test that must
// pass for re to have anything to match: most failure texts hold no UUID or
// temp path, and a substring test is far cheaper than a regular expression.
type rule struct {
	expr string
	repl string
	need func(string) bool
	// fast, when set, does what expr does, without the regular expression.
	fast func(string) string
}

func has(sub ...string) func(string) bool {
	return func(s string) bool {
		for _, x := range sub {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
}

// digitRun reports whether s has n digits in a row.
func digitRun(n int) func(string) bool {
	return func(s string) bool {
		run := 0
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				if run++; run >= n {
					return true
				}
			} else {
				run = 0
			}
		}
		return false
	}
}

// hexRun reports whether s has n hexadecimal digits in a row.
func hexRun(n int) func(string) bool {
	return func(s string) bool {
		run := 0
		for i := 0; i < len(s); i++ {
			c := s[i] | 0x20
			if s[i] >= '0' && s[i] <= '9' || c >= 'a' && c <= 'f' {
				if run++; run >= n {
					return true
				}
			} else {
				run = 0
			}
		}
		return false
	}
}

// rules apply in order. Each names what it strips.
var rules = []rule{
	// ISO 8601 and common log timestamps: 2026-11-30T10:00:00.123Z, 2026-11-30 10:00:00
	{`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b`, "<time>", hasDate, nil},
	{`\b\d{2}:\d{2}:\d{2}(\.\d+)?\b`, "<time>", hasClock, nil},
	// UUIDs
	{`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`, "<uuid>", hexRun(12), nil},
	// Addresses: 0xc000123abc, and Java identity hashes: Foo@1b6d3586
	{`(?i)\b0x[0-9a-f]+\b`, "<addr>", has("0x", "0X"), nil},
	{`@[0-9a-f]{6,}\b`, "@<addr>", has("@"), nil},
	// Temporary paths: /tmp/pytest-of-x/pytest-3/test0, /var/folders/.., C:\Users\x\AppData\Local\Temp\..
	{`(/private)?/(tmp|var/folders|var/tmp)/[^\s:'"),\]]*`, "<tmp>", has("/tmp/", "/var/"), replaceTmp},
	{`(?i)[a-z]:\\(users\\[^\\\s]+\\appdata\\local\\temp|windows\\temp)\\[^\s:'"),\]]*`, "<tmp>", has(`\`), nil},
	// Durations: 1.234s, 250ms, 12.5 seconds, after 3000 milliseconds
	{`(?i)\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds?|milliseconds?|minutes?)\b`, "<dur>", digitRun(1), replaceDurations},
	// Long hexadecimal ids (request ids, hashes) and long numbers (pids,
	// ephemeral ports, epoch times). Line numbers and assertion values are
	// short, so they stay.
	{`\b[0-9a-fA-F]{12,}\b`, "<id>", hexRun(12), nil},
	{`\b\d{6,}\b`, "<n>", digitRun(6), nil},
	// Goroutine and thread numbers: "goroutine 42 [running]", "Thread-7"
	{`\bgoroutine \d+\b`, "goroutine <n>", has("goroutine "), nil},
	{`\b(Thread|pool-\d+-thread|worker)-\d+\b`, "$1-<n>", has("Thread-", "-thread-", "worker-"), nil},
}

// compiled holds the rules' expressions, compiled on first use so that a
// run with no failures pays nothing.
var compiled = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(rules))
	for i, r := range rules {
		out[i] = regexp.MustCompile(r.expr)
	}
	return out
})

// Normalize returns the text of a failure with run-specific details
// replaced by placeholders. typ is the exception type or failure type
// attribute, message the message attribute, text the element's text.
func Normalize(typ, message, text string) string {
	var b strings.Builder
	if typ != "" {
		b.WriteString(typ)
		b.WriteByte('\n')
	}
	lines := 0
	for _, part := range []string{message, text} {
		for _, line := range strings.Split(part, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || lines >= maxLines {
				continue
			}
			if part == text && line == strings.TrimSpace(message) {
				continue // the text often repeats the message
			}
			b.WriteString(line)
			b.WriteByte('\n')
			lines++
		}
	}
	s := b.String()
	res := compiled()
	for i, r := range rules {
		switch {
		case !r.need(s):
		case r.fast != nil:
			s = r.fast(s)
		default:
			s = res[i].ReplaceAllString(s, r.repl)
		}
	}
	return collapseSpaces(s)
}

// collapseSpaces turns runs of spaces and tabs into one space.
func collapseSpaces(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	prev := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		sp := c == ' ' || c == '\t'
		if sp {
			if !prev {
				b.WriteByte(' ')
			}
		} else {
			b.WriteByte(c)
		}
		prev = sp
	}
	return b.String()
}

// Hash returns the signature of a normalised failure: "sha256:" and the hex
// digest.
func Hash(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Of normalises and hashes a failure.
func Of(typ, message, text string) string {
	return Hash(Normalize(typ, message, text))
}

// Short returns the first 12 hex digits of a signature, for tables.
func Short(sig string) string {
	s := strings.TrimPrefix(sig, "sha256:")
	if len(s) > 12 {
		s = s[:12]
	}
	return s
}
