// Package junit is a streaming reader for JUnit XML as written by the many
// tools that claim the format: Surefire, Gradle, pytest, jest-junit, mocha,
// gotestsum, go-junit-report, Playwright, nextest, GoogleTest, xUnit and more.
//
// The reader is a JUnit-specific XML scanner, not a general XML parser. It
// reads through a bounded window, so memory does not grow with the size of a
// file, and it hands each <testcase> to a callback as soon as it closes. It
// checks well-formedness (matching tags, quoted attributes, declared
// entities), and refuses document type declarations outright, so no entity
// is ever expanded.
package junit

import (
	"fmt"
	"slices"
	"time"

	"github.com/flakegate/flakegate/pkg/model"
)

// Limits on hostile input. Each is far above what a real report uses.
const (
	// MaxDepth bounds element nesting. Real reports nest suites a handful of
	// levels deep; the conformance corpus refuses a 20,000-level file.
	MaxDepth = 256
	// maxTagBytes bounds one start tag, attributes included. Some tools put a
	// whole stack trace in a message attribute, so this is generous.
	maxTagBytes = 8 << 20
	// MaxNameBytes bounds a testcase's classname, name and file and a
	// suite's name, mark included. The longest names in the conformance
	// corpus, Kubernetes e2e tests, are about 330 bytes; unbounded, 40
	// names of 7 MiB took 895 MB, each kept several times over.
	// A longer value is cut on a UTF-8 boundary and ends in
	// "…[cut N bytes, sha256:<16 hex digits>]": the digest of the whole value
	// keeps two long names apart, and the same long name is cut the same way
	// in every file, so it stays one test.
	MaxNameBytes = 1 << 10
	// MaxMessageBytes bounds the failure text kept per outcome element: the
	// message attribute, and the element's text. The rest is read and
	// dropped, and the kept text ends in "…[cut N bytes]", at most 35 bytes
	// more. Uncut removes that mark.
	MaxMessageBytes = 4 << 10
	// maxTypeBytes bounds an outcome's type attribute, cut like a message.
	maxTypeBytes = 256
	// maxPropertyBytes bounds a run property's value, cut like a message.
	maxPropertyBytes = 1 << 10
	// maxNumberBytes bounds a line or time attribute and a suite timestamp:
	// a longer one is taken as absent.
	maxNumberBytes = 64
	// maxMemoPrefix bounds the bytes of a testcase tag remembered for reuse
	// by the next file; a longer tag is read afresh each time.
	maxMemoPrefix = 1 << 10
	// maxMemoBody bounds the content of a testcase remembered with its tag
	// (rememberBody).
	maxMemoBody = 512
	// maxIdleBuf bounds the buffers a Reader keeps between files: one that
	// grew past it for a long tag is let go.
	maxIdleBuf = 1 << 20
	// maxEntityLen bounds an entity reference, "&" to ";" inclusive.
	maxEntityLen = 12
	// readChunk is the size of one read into the window.
	readChunk = 64 << 10
)

// ParseError is a file the reader refused, with the line where it stopped.
type ParseError struct {
	File string
	Line int
	Msg  string
	// Other says what the file is when its root element (or DOCTYPE) names
	// a known XML format that is not JUnit ("a JaCoCo coverage report");
	// "" for every other error. Results says the format holds test results
	// (another tool's own report), which were not read.
	Other   string
	Results bool
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Props are the run properties flakegate reads from <properties>.
type Props struct {
	CommitSHA  string
	RunID      string
	RunAttempt int
}

func (p *Props) fill(from Props) {
	if p.CommitSHA == "" {
		p.CommitSHA = from.CommitSHA
	}
	if p.RunID == "" {
		p.RunID = from.RunID
	}
	if p.RunAttempt == 0 {
		p.RunAttempt = from.RunAttempt
	}
}

// Suite is one <testsuite> or <testsuites> element. Its properties may be
// read after some of its testcases, so callers resolve Meta once the file is
// done.
type Suite struct {
	Name string
	// Hostname is the hostname attribute: the machine for most tools, the
	// project (browser) for Playwright.
	Hostname  string
	Timestamp time.Time // zero when absent or unparsable
	Props     Props
	Parent    *Suite
}

// Meta resolves the run properties and the time for a suite, walking up to
// the root: the nearest suite that states a value wins.
func (s *Suite) Meta() (Props, time.Time) {
	var p Props
	var ts time.Time
	for ; s != nil; s = s.Parent {
		p.fill(s.Props)
		if ts.IsZero() {
			ts = s.Timestamp
		}
	}
	return p, ts
}

// Outcome is one outcome element: <failure>, <error> or <skipped>, or a
// rerun child such as <flakyFailure>.
type Outcome struct {
	Kind    model.Outcome
	Type    string // the type attribute, e.g. an exception class
	Message string // the message attribute, cut to MaxMessageBytes
	Text    string // the element's text, cut to MaxMessageBytes
	// Flaky marks a <flakyFailure> or <flakyError>: an attempt that failed
	// before a final pass.
	Flaky bool
}

// Case is one <testcase> element.
type Case struct {
	Suite *Suite
	// Classname, Name and File are cut to MaxNameBytes, as is Suite.Name.
	Classname string
	Name      string
	File      string
	// Outcome is the final outcome by the counting rules of the conformance
	// corpus: error > failure > skipped > passed among direct children, and a
	// disabled or notrun status with no outcome child is skipped. So is
	// GoogleTest's result="skipped" or "suppressed" with no outcome child
	// (GoogleTest 1.10 writes a GTEST_SKIP so), which the corpus has none of.
	Outcome model.Outcome
	// Detail is the outcome element that decided Outcome; zero for a pass.
	Detail Outcome
	// Reruns are the attempts recorded as children by Surefire, Gradle and
	// nextest: flakyFailure and flakyError are failed attempts before a final
	// pass; rerunFailure and rerunError are failed reruns after a failure.
	Reruns []Outcome
	// Props are testcase-level properties, rarely present.
	Props Props

	line int // the line attribute, or 0
	// The time attribute as written, parsed on demand. An array, not a
	// slice: resetting it for the next testcase writes no pointer.
	time    [maxNumberBytes]byte
	timeLen uint8
	// memo is the remembered tag the case's tag repeats, -1 for none, and
	// memoGen the generation of the Reader's remembered tags.
	memo    int32
	memoGen uint32
}

// Memo identifies the testcase tag the Reader remembered and this case's
// tag repeats up to its time attribute, and the generation of what the
// Reader remembers: index is -1 when the tag was read afresh. Two cases
// read by one Reader with the same index and generation have the same
// classname, name, file, line, status and result attributes, so a caller may
// remember what it made of the first and use it for the second.
func (c *Case) Memo() (index int32, generation uint32) { return c.memo, c.memoGen }

// Line returns the line attribute, or 0.
func (c *Case) Line() int { return c.line }

// parseLine reads a line attribute: decimal digits, or 0.
func parseLine(v []byte) int {
	n := 0
	for _, d := range v {
		if d < '0' || d > '9' || n > 1e8 {
			return 0
		}
		n = n*10 + int(d-'0')
	}
	return n
}

// Duration returns the time attribute (seconds) as a duration, or 0 when it
// is absent, negative or unreadable.
func (c *Case) Duration() time.Duration { return parseDuration(c.time[:c.timeLen]) }

// Host returns the hostname of the nearest suite that states one.
func (s *Suite) Host() string {
	for ; s != nil; s = s.Parent {
		if s.Hostname != "" {
			return s.Hostname
		}
	}
	return ""
}

// ID returns the test identity "classname::name" (model.TestID). Within a
// history, a test that one file holds under several projects is told
// apart by the project as well; see history.
func (c *Case) ID() string {
	suite := ""
	if c.Suite != nil {
		suite = c.Suite.Name
	}
	return model.TestID(c.Classname, c.Name, suite)
}

// Meta resolves the run properties and time for the case.
func (c *Case) Meta() (Props, time.Time) {
	p, ts := c.Suite.Meta()
	q := c.Props
	q.fill(p)
	return q, ts
}

// Attempts counts the case's attempts by kind: the final outcome plus every
// rerun child. A <failure> beside flakyFailure or flakyError children is
// cargo-nextest's flaky-result = "fail" ("test passed on attempt 4/4 but
// is configured to fail when flaky"): its last attempt passed.
func (c *Case) Attempts() (passed, failed, skipped int) {
	switch {
	case c.PassedLast():
		passed++
	case c.Outcome.IsFailure():
		failed++
	case c.Outcome == model.Skipped:
		skipped++
	default:
		passed++
	}
	failed += len(c.Reruns)
	return passed, failed, skipped
}

// PassedLast reports a <failure> or <error> beside flakyFailure or
// flakyError children: cargo-nextest's flaky-result = "fail", whose last
// attempt passed (Attempts). Its outcome element is nextest's note, not a
// failure's signature.
func (c *Case) PassedLast() bool {
	return c.Outcome.IsFailure() && slices.ContainsFunc(c.Reruns, func(o Outcome) bool { return o.Flaky })
}

// Totals counts <testcase> elements by final outcome (model.Totals).
type Totals = model.Totals
