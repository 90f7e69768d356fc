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
)

// maxLines is how many lines of a failure's text enter the signature: the
// message and the top of the stack, where two bugs differ. Deeper frames
// vary with the caller (test runner internals, thread pools) and would split
// one bug into many.
const maxLines = 8

type rule struct {
	re   *regexp.Regexp
	repl string
}

// rules apply in order. Each names what it strips.
var rules = []rule{
	// ISO 8601 and common log timestamps: 2026-11-30T10:00:00.123Z, 2026-11-30 10:00:00
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b`), "<time>"},
	{regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}(\.\d+)?\b`), "<time>"},
	// UUIDs
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	// Addresses: 0xc000123abc, and Java identity hashes: Foo@1b6d3586
	{regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), "<addr>"},
	{regexp.MustCompile(`@[0-9a-f]{6,}\b`), "@<addr>"},
	// Temporary paths: /tmp/pytest-of-x/pytest-3/test0, /var/folders/.., C:\Users\x\AppData\Local\Temp\..
	{regexp.MustCompile(`(/private)?/(tmp|var/folders|var/tmp)/[^\s:'"),\]]*`), "<tmp>"},
	{regexp.MustCompile(`(?i)[a-z]:\\(users\\[^\\\s]+\\appdata\\local\\temp|windows\\temp)\\[^\s:'"),\]]*`), "<tmp>"},
	// Durations: 1.234s, 250ms, 12.5 seconds, after 3000 milliseconds
	{regexp.MustCompile(`(?i)\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds?|milliseconds?|minutes?)\b`), "<dur>"},
	// Long hexadecimal ids (request ids, hashes) and long numbers (pids,
	// ephemeral ports, epoch times). Line numbers and assertion values are
	// short, so they stay.
	{regexp.MustCompile(`\b[0-9a-fA-F]{12,}\b`), "<id>"},
	{regexp.MustCompile(`\b\d{6,}\b`), "<n>"},
	// Goroutine and thread numbers: "goroutine 42 [running]", "Thread-7"
	{regexp.MustCompile(`\bgoroutine \d+\b`), "goroutine <n>"},
	{regexp.MustCompile(`\b(Thread|pool-\d+-thread|worker)-\d+\b`), "$1-<n>"},
}

var spaces = regexp.MustCompile(`[ \t]+`)

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
	for _, r := range rules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return spaces.ReplaceAllString(s, " ")
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
