// Package ledger reads, writes, checks and replays flakegate's quarantine
// ledger: a committed YAML file (by default .github/flaky-ledger.yml) that
// records every exempted flaky test with an owner, a tracking issue, the SPRT
// evidence that froze it and the triggers that release it (DESIGN.md,
// "Quarantine ledger"; SEEDS.md, articles B and C).
//
//	version: 1
//	entries:
//	  - test: "tests/test_upload.py::test_retry_after_429"
//	    signature: "sha256:9f2c…"
//	    owner: "@storage-team"
//	    issue: "https://github.com/acme/shop/issues/12"
//	    expires: 2027-01-31            # optional
//	    replacement: "tests/test_upload.py::test_retry_header_parsed"
//	    evidence:
//	      p_flake_baseline: 0.3
//	      p_regression: 0.9
//	      alpha: 0.05
//	      beta: 0.05
//	      llr_trace: [[false, 1.099, 1.099], [true, -1.946, -0.847], …]
//	      decision: FLAKE
//	    release_triggers: [scope_file_changed, signature_changed]
//
// Each llr_trace element is [passed, step, cumulative]: false is a failing run.
//
// The package is pure: it takes bytes and parsed ledgers, the clock as a
// parameter, and does no I/O.
package ledger

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/pkg/sprt"
)

// DefaultPath is where the ledger lives in a repository unless configured.
const DefaultPath = ".github/flaky-ledger.yml"

// Version is the only ledger format version this package reads and writes.
const Version = 1

// Trigger names an event that releases a freeze.
type Trigger string

// The release triggers.
const (
	// ScopeFileChanged releases the entry when a file of its test changes.
	ScopeFileChanged Trigger = "scope_file_changed"
	// SignatureChanged releases the entry when the test fails with another
	// failure signature than the recorded one.
	SignatureChanged Trigger = "signature_changed"
)

// Triggers lists the accepted release triggers.
var Triggers = []Trigger{ScopeFileChanged, SignatureChanged}

// Ledger is a parsed ledger file.
type Ledger struct {
	Version int
	Entries []Entry
}

// Entry freezes one failure signature of one test.
type Entry struct {
	Test            string // test identity, "classname::name" (the scope)
	Signature       string // normalised failure signature, "sha256:<hex>"
	Owner           string
	Issue           string
	Expires         Date // optional: the zero Date means no calendar expiry
	Replacement     string
	Evidence        Evidence
	ReleaseTriggers []Trigger
}

// Evidence is the SPRT run that justified the freeze.
type Evidence struct {
	PFlakeBaseline float64 // p0
	PRegression    float64 // p1
	Alpha, Beta    float64 // 0.05 each when the file leaves them out
	Trace          []sprt.Step
	Decision       sprt.Decision
}

// Test returns the SPRT the evidence was computed with.
func (ev Evidence) Test() sprt.Test {
	return sprt.Test{P0: ev.PFlakeBaseline, P1: ev.PRegression, Alpha: ev.Alpha, Beta: ev.Beta}
}

// Date is a calendar date (YYYY-MM-DD) with no time zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("date %q: want YYYY-MM-DD", s)
	}
	return Date{t.Year(), t.Month(), t.Day()}, nil
}

// IsZero reports whether d is unset.
func (d Date) IsZero() bool { return d == Date{} }

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// ExpiredAt reports whether the date has passed at now. An entry is valid
// through its whole expiry day, in UTC; a zero Date never expires.
func (d Date) ExpiredAt(now time.Time) bool {
	if d.IsZero() {
		return false
	}
	n := now.UTC()
	return Date{n.Year(), n.Month(), n.Day()}.after(d)
}

func (d Date) after(e Date) bool {
	if d.Year != e.Year {
		return d.Year > e.Year
	}
	if d.Month != e.Month {
		return d.Month > e.Month
	}
	return d.Day > e.Day
}

// FreezeSet returns the sorted, de-duplicated test names the ledger freezes.
// A nil ledger freezes nothing.
func FreezeSet(l *Ledger) []string {
	if l == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range l.Entries {
		if !seen[e.Test] {
			seen[e.Test] = true
			out = append(out, e.Test)
		}
	}
	slices.Sort(out)
	return out
}

// ScopeFile guesses the source file of a test from its identity, for tests
// named "path/to/file.ext::name" (pytest's node ids). It returns "" when the
// part before "::" does not look like a path.
func ScopeFile(test string) string {
	head, _, ok := strings.Cut(test, "::")
	if !ok || head == "" {
		return ""
	}
	if strings.Contains(head, "/") || pathExt().MatchString(head) {
		return head
	}
	return ""
}

// SourceFile is ScopeFile when the part before "::" ends in a source
// file's extension ("tests/test_up.py::test_b"), and "" otherwise: a Go
// package path ("gopkg.in/yaml.v3::TestX") names no file.
func SourceFile(test string) string {
	if f := ScopeFile(test); pathExt().MatchString(f) {
		return f
	}
	return ""
}

// moduleFile finds, among the changed files, the source file of a test
// named by a dotted module or class ("tests.test_up::test_b", pytest
// without a file attribute; "com.acme.FooTest::testBar", JUnit), whose
// name gives no path: a changed file whose path, without its extension,
// is the name with dots as slashes, or ends in it; the name's last parts
// are dropped one by one (a class inside the module: "tests.test_up.
// TestUp"). It returns "" when none is.
func moduleFile(test string, changed []string) string {
	head, _, ok := strings.Cut(test, "::")
	if !ok || head == "" || strings.ContainsAny(head, "/\\") {
		return ""
	}
	head, _, _ = strings.Cut(head, "$") // a nested JVM class
	parts := strings.Split(head, ".")
	for n := len(parts); n >= 1; n-- {
		mod := strings.Join(parts[:n], "/")
		if mod == "" {
			continue
		}
		for _, f := range changed {
			stem := strings.TrimSuffix(f, path.Ext(f))
			if stem == mod || strings.HasSuffix(stem, "/"+mod) {
				return f
			}
		}
	}
	return ""
}

var pathExt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\.(py|go|js|jsx|ts|tsx|mjs|cjs|rb|java|kt|scala|cs|php|rs|swift)$`)
})

// Problem is one thing wrong with a ledger: a malformed field or evidence that
// does not replay.
type Problem struct {
	File    string `json:"file,omitempty"`  // the file's name, when known
	Entry   int    `json:"entry"`           // index in entries; -1 for the file as a whole
	Test    string `json:"test,omitempty"`  // the entry's test, when known
	Field   string `json:"field,omitempty"` // e.g. "expires" or "evidence.llr_trace[2][1]"
	Line    int    `json:"line,omitempty"`  // 1-based line in the file, when known
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.File != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", p.File, p.Line)
	case p.File != "":
		fmt.Fprintf(&b, "%s: ", p.File)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Entry >= 0 {
		fmt.Fprintf(&b, "entries[%d]", p.Entry)
		if p.Test != "" {
			fmt.Fprintf(&b, " (test %q)", p.Test)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		fmt.Fprintf(&b, "%s: ", p.Field)
	}
	b.WriteString(p.Message)
	return b.String()
}

// ParseError lists the problems found while parsing a ledger: the first 100
// in file order, then one more problem that counts the rest.
type ParseError struct {
	Problems []Problem
}

func (e *ParseError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "ledger: " + strings.Join(lines, "; ")
}

var signatureRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{8,64}$`) })

// validateEntry checks an entry's values (not its evidence replay). Parse and
// Verify both use it. broken reports the fields the parser could not read
// (with their parents and parts); the checks of their values are skipped, as
// the parser reported them.
func validateEntry(i int, e Entry, broken func(field string) bool) []Problem {
	var ps []Problem
	bad := func(field, msg string, args ...any) {
		ps = append(ps, Problem{Entry: i, Test: e.Test, Field: field, Message: fmt.Sprintf(msg, args...)})
	}
	for _, f := range []struct{ name, v string }{
		{"test", e.Test}, {"owner", e.Owner}, {"issue", e.Issue}, {"replacement", e.Replacement},
	} {
		switch {
		case broken(f.name):
		case strings.TrimSpace(f.v) == "":
			bad(f.name, "required: want a non-empty string")
		case strings.TrimSpace(f.v) != f.v:
			bad(f.name, "%q has leading or trailing space", f.v)
		}
	}
	if e.Replacement != "" && e.Replacement == e.Test && !broken("replacement") && !broken("test") {
		bad("replacement", "names the frozen test itself: want an assertion that still runs in the default suite")
	}
	if !broken("signature") && !signatureRE().MatchString(e.Signature) {
		bad("signature", "%q: want \"sha256:\" followed by 8 to 64 lowercase hex digits", e.Signature)
	}
	if len(e.ReleaseTriggers) == 0 && !broken("release_triggers") {
		bad("release_triggers", "required: want a non-empty list of %s", triggerList())
	}
	seen := map[Trigger]bool{}
	for j, tr := range e.ReleaseTriggers {
		field := fmt.Sprintf("release_triggers[%d]", j)
		switch {
		case broken(field):
			continue
		case !knownTrigger(tr):
			bad(field, "unknown trigger %q: want one of %s", tr, triggerList())
		case seen[tr]:
			bad(field, "duplicate trigger %q", tr)
		}
		seen[tr] = true
	}
	ev := e.Evidence
	if !broken("evidence.decision") && !ev.Decision.Valid() {
		bad("evidence.decision", "%q: want FLAKE, REGRESSION or CONTINUE", ev.Decision)
	}
	if !sprtBroken(broken) {
		if err := ev.Test().Validate(); err != nil {
			bad("evidence", "%v (p_flake_baseline = p0, p_regression = p1)", err)
		}
	}
	if len(ev.Trace) == 0 && !broken("evidence.llr_trace") {
		bad("evidence.llr_trace", "empty: want the [passed, step, cumulative] runs that decided the freeze")
	}
	return ps
}

// sprtBroken reports whether a parameter of the entry's SPRT could not be
// read: the test it defines is then unknown.
func sprtBroken(broken func(field string) bool) bool {
	for _, f := range []string{"evidence.p_flake_baseline", "evidence.p_regression", "evidence.alpha", "evidence.beta"} {
		if broken(f) {
			return true
		}
	}
	return false
}

func knownTrigger(t Trigger) bool {
	for _, k := range Triggers {
		if t == k {
			return true
		}
	}
	return false
}

func triggerList() string {
	s := make([]string, len(Triggers))
	for i, t := range Triggers {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// validateLedger checks the file-level values and every entry. broken
// reports the fields the parser could not read, by entry (-1 for the file's
// own); nil means every field was read.
func validateLedger(l *Ledger, broken func(entry int, field string) bool) []Problem {
	if broken == nil {
		broken = func(int, string) bool { return false }
	}
	var ps []Problem
	if l.Version != Version && !broken(-1, "version") {
		ps = append(ps, Problem{Entry: -1, Field: "version", Message: fmt.Sprintf("%d: want %d", l.Version, Version)})
	}
	type key struct{ test, sig string }
	first := map[key]int{}
	for i, e := range l.Entries {
		ps = append(ps, validateEntry(i, e, func(field string) bool { return broken(i, field) })...)
		if broken(i, "test") || broken(i, "signature") {
			continue // not known: it duplicates nothing
		}
		k := key{e.Test, e.Signature}
		if j, dup := first[k]; dup {
			ps = append(ps, Problem{Entry: i, Test: e.Test, Field: "signature",
				Message: fmt.Sprintf("duplicates entries[%d]: one entry per test and signature", j)})
		} else {
			first[k] = i
		}
	}
	return ps
}
