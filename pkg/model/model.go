// Package model holds the neutral types that flow between flakegate's stages:
// runs, test executions and their outcomes. It has no logic beyond small methods.
package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Outcome is the result of one attempt of one test.
type Outcome uint8

// Outcomes in increasing precedence, as JUnit readers rank them:
// error > failure > skipped > passed.
const (
	Passed Outcome = iota
	Skipped
	Failed
	Error
)

var outcomeNames = [...]string{"passed", "skipped", "failed", "error"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// IsFailure reports whether o counts as a failure: failed and error both do.
func (o Outcome) IsFailure() bool { return o == Failed || o == Error }

// TestID returns the test identity "classname::name". The suite name stands in
// when classname is empty, as in the seed.
func TestID(classname, name, suite string) string {
	return string(AppendTestID(make([]byte, 0, len(classname)+len(suite)+2+len(name)), classname, name, suite))
}

// AppendTestID appends TestID(classname, name, suite) to dst: the one
// definition of a test's identity, for callers that look tests up without
// allocating.
func AppendTestID(dst []byte, classname, name, suite string) []byte {
	dst = append(dst, TestClass(classname, suite)...)
	dst = append(dst, "::"...)
	return append(dst, name...)
}

// TestClass returns the part of a test's identity before "::": its
// classname, or the suite's name when it has none.
func TestClass(classname, suite string) string {
	if classname == "" {
		return suite
	}
	return classname
}

// ProjectTestID returns the identity of a test that one JUnit document
// holds under several projects (Playwright's browser projects, suites of
// the same tests, files of the same name): its TestID followed by
// " [project]". A test that appears under only one project keeps its plain
// TestID. An empty project is written "-".
func ProjectTestID(id, project string) string {
	if project == "" {
		project = "-"
	}
	return id + " [" + project + "]"
}

// Refines reports whether id names the test base under a project, as
// ProjectTestID does ("c::n [junit-windows]" refines "c::n"), maybe
// among further projects ("c::n [chromium] [junit-windows]").
func Refines(id, base string) bool {
	return len(id) > len(base)+3 && strings.HasPrefix(id, base) && strings.HasPrefix(id[len(base):], " [") && strings.HasSuffix(id, "]")
}

// Unrefined is the identity a test had before its last project was
// added: "c::n" for "c::n [junit-windows]"; false when id names no
// project.
func Unrefined(id string) (string, bool) {
	i := strings.LastIndex(id, " [")
	if i < 0 || !Refines(id, id[:i]) {
		return "", false
	}
	return id[:i], true
}

// Attempt is one execution of one test inside one run.
type Attempt struct {
	Outcome  Outcome
	Duration time.Duration
	// Message is the failure or error message (and the start of its body),
	// truncated to a bounded length. Empty for passes.
	Message string
}

// Run is one CI execution of the suite.
type Run struct {
	CommitSHA string // empty when unknown: the run cannot be compared across commits
	RunID     string
	Attempt   int
	Time      time.Time // zero when unknown
	Workflow  string
	Branch    string
	Event     string
	Source    string // file or artifact the run came from
}

// Key identifies a run: run id and attempt when known, otherwise the source.
func (r Run) Key() string {
	if r.RunID != "" {
		if r.Attempt > 0 {
			return r.RunID + "#" + strconv.Itoa(r.Attempt)
		}
		return r.RunID
	}
	return "src:" + r.Source
}

// ShortSHA is a commit's first 12 hex digits, as messages name it.
func ShortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Checkout is where the repository's files are, to make the paths tools
// write relative to its root.
type Checkout struct {
	// Root is the checkout flakegate runs in: the workspace, or the
	// current directory.
	Root string
	// Name is the repository's name. GitHub's runners check a repository
	// out at <work>/<name>/<name>: /home/runner/work/shop/shop,
	// D:\a\shop\shop, /Users/runner/work/shop/shop, /__w/shop/shop in a
	// job container. Tools there write absolute paths under it, which
	// the action, in its own container at /github/workspace, reads from
	// files and artifacts.
	Name string
}

// RepoPath makes a test's file attribute relative to the repository root:
// a path under Root, or an absolute one under a runner's checkout of
// the repository named Name, loses that prefix; a relative one its "./".
func (c Checkout) RepoPath(file string) string {
	file = strings.ReplaceAll(file, `\`, "/")
	root := strings.TrimSuffix(strings.ReplaceAll(c.Root, `\`, "/"), "/")
	if root != "" && strings.HasPrefix(file, root+"/") {
		return file[len(root)+1:]
	}
	if c.Name != "" && (strings.HasPrefix(file, "/") || len(file) > 2 && file[1] == ':' && file[2] == '/') {
		if i := strings.Index(file, "/"+c.Name+"/"+c.Name+"/"); i >= 0 {
			return file[i+2*len(c.Name)+3:]
		}
	}
	return strings.TrimPrefix(file, "./")
}

// OptionError is an option outside what is accepted. Name is the option
// as users write it (the action's input and the command line's flag share
// names), Want says what is accepted. The stage that owns an option
// validates it; the action and the command line both report its error.
type OptionError struct {
	Name  string
	Value any
	Want  string
}

func (e *OptionError) Error() string { return fmt.Sprintf("%s = %v: %s", e.Name, e.Value, e.Want) }

// Totals counts JUnit <testcase> elements by final outcome.
type Totals struct {
	Testcases int `json:"testcases"`
	Passed    int `json:"passed"`
	Failed    int `json:"failed"`
	Errors    int `json:"errors"`
	Skipped   int `json:"skipped"`
}

// Add counts one case.
func (t *Totals) Add(o Outcome) {
	t.Testcases++
	switch o {
	case Passed:
		t.Passed++
	case Failed:
		t.Failed++
	case Error:
		t.Errors++
	case Skipped:
		t.Skipped++
	}
}

// Merge adds u to t.
func (t *Totals) Merge(u Totals) {
	t.Testcases += u.Testcases
	t.Passed += u.Passed
	t.Failed += u.Failed
	t.Errors += u.Errors
	t.Skipped += u.Skipped
}

// SkippedSource is an input (a file, an artifact) that could not be read,
// and why: nothing is left out silently.
type SkippedSource struct {
	Path  string `json:"path"`
	Error string `json:"error"`
	// NotResults says what a file is when it is XML of a known kind holding
	// no JUnit results ("a JaCoCo coverage report", beside the test
	// reports): left out, but the results read are whole without it.
	NotResults string `json:"not_results,omitempty"`
}

// MatrixManifestFile is the file flakegate matrix writes beside the runs'
// files in its results directory: the commits the runs were of, which the
// files themselves do not name (test tools write no commit).
const MatrixManifestFile = "flakegate-matrix.json"

// MatrixManifest is MatrixManifestFile's content.
type MatrixManifest struct {
	Base MatrixRevision `json:"base"`
	Head MatrixRevision `json:"head"`
	// Looks is the most times matrix looked at the runs (after 5, 10 and
	// 20 pairs: 3), each at its share of alpha-pr. How many pairs ran
	// depended on what the earlier looks saw, so a gate that reads the
	// runs again takes the share of the look those pairs were read at, to
	// keep the bound.
	Looks int `json:"looks,omitempty"`
	// LookPairs are the pairs after which it looked, or would have (5, 10,
	// 20): a look's share of alpha-pr grows with them (gate.LookAlpha). A
	// manifest without them is of a matrix whose looks had equal shares.
	LookPairs []int `json:"look_pairs,omitempty"`
	// K is the most pairs matrix would run (its -k), the head-run budget
	// its looks had: a gate that reads the runs again has no more pairs
	// coming, and takes the same budget.
	K int `json:"k,omitempty"`
}

// MatrixRevision is one side of a MatrixManifest: the revision as given,
// the commit run, and, when the commit run is another, the commit the
// revision names (the base side runs at the merge base when head is behind
// the base).
type MatrixRevision struct {
	Rev string `json:"rev"`
	SHA string `json:"sha"`
	Tip string `json:"tip,omitempty"`
}

// IsCommitSHA accepts a full SHA-1 (40) or SHA-256 (64) commit id in
// lower-case hex.
func IsCommitSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
