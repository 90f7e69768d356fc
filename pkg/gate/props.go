package gate

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/flakegate/flakegate/pkg/internal/gfm"
	"github.com/flakegate/flakegate/pkg/internal/glob"
	"github.com/flakegate/flakegate/pkg/ledger"
)

// Property checks run on the PR diff and the test lists before the SPRT
// (SEEDS.md, article C; DESIGN.md "Property checks"):
//
//   - protected-path: edits under protected paths need a declaration;
//   - skip-marker: no new skip/xfail markers in added lines of files that
//     existed (a declaration does not waive this one; one in a new file is
//     listed, not a violation);
//   - test-count: the collected test count must not drop, unless declared;
//   - red-test-removed: a test red on base must still run on head (never
//     waived);
//   - freeze-set: the ledger's set of frozen tests must not change, unless
//     declared.
//
// A declaration is a "Test-Changes: <what>" line in the PR body, or the
// declare label (Options.DeclareLabel).

// Property check names, as in Violation.Check.
const (
	CheckProtectedPath  = "protected-path"
	CheckSkipMarker     = "skip-marker"
	CheckTestCount      = "test-count"
	CheckRedTestRemoved = "red-test-removed"
	CheckFreezeSet      = "freeze-set"
)

// Violation is one failed property check. Every violation blocks the PR.
type Violation struct {
	Check   string `json:"check"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"` // line in the head version of Path
	Test    string `json:"test,omitempty"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	where := ""
	switch {
	case v.Path != "" && v.Line > 0:
		where = fmt.Sprintf("%s:%d: ", v.Path, v.Line)
	case v.Path != "":
		where = v.Path + ": "
	case v.Test != "":
		where = v.Test + ": "
	}
	return fmt.Sprintf("%s: %s%s", v.Check, where, v.Message)
}

var declarationRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?mi)^[ \t]*Test-Changes:[ \t]*(\S.*?)[ \t\r]*$`) })

// Declared reports whether the PR declares test changes, and by what: a
// non-empty "Test-Changes:" line in the body (any case, at the start of a
// line) that does not say there are none (a pull request template's
// "Test-Changes: none"), or the declare label.
func Declared(body string, labels []string, label string) (bool, string) {
	for _, m := range declarationRE().FindAllStringSubmatch(gfm.Prose(body), -1) {
		if !saysNone(m[1]) {
			return true, fmt.Sprintf("the PR body (Test-Changes: %s)", m[1])
		}
	}
	if label != "" && hasLabel(labels, label) {
		return true, fmt.Sprintf("the %q label", label)
	}
	return false, ""
}

// declarationText is the values of the body's Test-Changes lines that
// declare something, one per line.
func declarationText(body string) string {
	var out []string
	for _, m := range declarationRE().FindAllStringSubmatch(gfm.Prose(body), -1) {
		if !saysNone(m[1]) {
			out = append(out, m[1])
		}
	}
	return strings.Join(out, "\n")
}

// saysNone reports whether a Test-Changes value declares nothing: none,
// no, n/a, -, and the like.
func saysNone(v string) bool {
	v = strings.ToLower(strings.Trim(v, " \t.!`*_<>[]()"))
	switch v {
	case "", "none", "no", "n/a", "na", "-", "--", "nothing", "false", "nope", "no changes":
		return true
	}
	return false
}

func checkProperties(in Input, opt Options, declared bool, markers []Violation) []Violation {
	var out []Violation
	if in.ChangesKnown {
		if !declared {
			out = append(out, protectedEdits(in.Changes, opt.ProtectedPaths, opt.DeclareLabel, opt.AllowNewProtected)...)
		}
		out = append(out, markers...)
	}

	counts := in.Collected
	if counts == nil {
		// Without the runs (CollectedCounts), the distinct names with
		// results on each side, and on head those skipped there that
		// every base run collected (newly skipped is its own finding).
		counts = &Counts{}
		for _, t := range in.Tests {
			if (t.Base.Runs > 0 || t.leftOut("base") > 0) && !goneFromBase(t) {
				counts.Base++
			}
			if len(t.Head) > 0 || t.leftOut("head") > 0 || (t.HeadSkipped > 0 && t.Base.Runs > 0 && t.BaseMissing == 0) {
				counts.Head++
			}
		}
	} else {
		c := *counts
		for _, t := range in.Tests {
			if goneFromBase(t) {
				c.Base-- // the base branch dropped it, not the patch
			}
		}
		counts = &c
	}
	if counts.Head < counts.Base && !declared {
		out = append(out, Violation{Check: CheckTestCount, Message: fmt.Sprintf(
			"collected tests drop from %d on base to %d on head, and the PR does not declare test changes", counts.Base, counts.Head)})
	}

	for _, t := range in.Tests {
		// Not a test that left some base runs out (an unstable id), nor
		// one whose head runs were left out as outages.
		if classOf(t.Base, t.BaseRetried) == Broken && len(t.Head) == 0 && t.BaseMissing == 0 && t.leftOut("head") == 0 && !goneFromBase(t) {
			msg := fmt.Sprintf("red on base (%d of %d runs failed) and no longer runs on head: a test red on base must still exist and collect", t.Base.Failures, t.Base.Runs)
			if t.HeadSkipped > 0 {
				msg = fmt.Sprintf("red on base (%d of %d runs failed) and skipped in every head run it was collected in (%d): a test red on base must still run on head", t.Base.Failures, t.Base.Runs, t.HeadSkipped)
			}
			out = append(out, Violation{Check: CheckRedTestRemoved, Test: t.Name, Message: msg})
		}
	}

	if (in.BaseLedger != nil || in.HeadLedger != nil) && !in.BaseLedgerUnknown {
		before, after := ledger.FreezeSet(in.BaseLedger), ledger.FreezeSet(in.HeadLedger)
		var added, removed []string
		for _, t := range after {
			if !slices.Contains(before, t) {
				added = append(added, t)
			}
		}
		for _, t := range before {
			if !slices.Contains(after, t) {
				removed = append(removed, t)
			}
		}
		if (len(added) > 0 || len(removed) > 0) && !declared {
			var parts []string
			if len(added) > 0 {
				parts = append(parts, "freezes "+strings.Join(added, ", "))
			}
			if len(removed) > 0 {
				parts = append(parts, "unfreezes "+strings.Join(removed, ", "))
			}
			out = append(out, Violation{Check: CheckFreezeSet, Message: fmt.Sprintf(
				"the ledger's freeze set changes (%s), and the PR does not declare it", strings.Join(parts, "; "))})
		}
	}
	return out
}

func protectedEdits(changes []FileChange, patterns []string, label string, allowNew bool) []Violation {
	var out []Violation
	for _, c := range changes {
		added := c.Status == "added" || c.Status == "copied"
		use := patterns
		if allowNew && added {
			use = namedFiles(patterns)
		}
		for _, p := range []string{c.Path, c.PreviousPath} {
			if p == "" {
				continue
			}
			if pat, ok := matchAny(use, p); ok {
				hint := ""
				if _, named := matchAny(namedFiles(patterns), p); added && !allowNew && !named {
					hint = "; new files there pass without one under protected-new-files: allow"
				}
				out = append(out, Violation{Check: CheckProtectedPath, Path: c.Path, Message: fmt.Sprintf(
					"%s %s under protected path %q without a declaration (a \"Test-Changes:\" line in the PR body or the %q label)%s",
					statusOr(c.Status), p, pat, label, hint)})
				break
			}
		}
	}
	return out
}

// namedFiles are the patterns that name a file outright: no wildcard in
// their last element (conftest.py, **/conftest.py, pytest.ini).
func namedFiles(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		last := p[strings.LastIndex(strings.TrimSuffix(p, "/"), "/")+1:]
		if !strings.HasSuffix(p, "/") && !strings.ContainsAny(last, "*?[{") {
			out = append(out, p)
		}
	}
	return out
}

func statusOr(s string) string {
	if s == "" {
		return "modified"
	}
	return s
}

func matchAny(patterns []string, p string) (string, bool) {
	for _, pat := range patterns {
		if MatchPath(pat, p) {
			return pat, true
		}
	}
	return "", false
}

// MatchPath reports whether a slash-separated repository path matches a
// .gitignore-style pattern (see pkg/internal/glob): a pattern with no
// slash matches the last element at any depth, otherwise it is anchored at
// the root; a trailing "/" means everything under it; "**" matches any
// number of elements.
func MatchPath(pattern, p string) bool { return glob.Repo{}.MatchRepo(pattern, p) }

func validPattern(p string) error { return glob.Validate(p) }

func changedPaths(changes []FileChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path)
		if c.PreviousPath != "" && c.PreviousPath != c.Path {
			out = append(out, c.PreviousPath)
		}
	}
	return out
}

// Skip markers, language-aware by file name.

type markerLang struct {
	name    string
	applies func(p string) bool
	comment string // line-comment prefix
	quotes  string // string delimiters whose contents are blanked
	rules   []*regexp.Regexp
}

func hasExt(exts ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(exts, path.Ext(p)) }
}

// markerLangs are compiled on first use: most runs check no diff.
var markerLangs = sync.OnceValue(func() []markerLang {
	return []markerLang{
		{
			name: "pytest/unittest", applies: hasExt(".py"), comment: "#", quotes: `"'`,
			rules: []*regexp.Regexp{
				regexp.MustCompile(`\bpytest\.mark\.(skip|skipif|xfail)\b`),
				regexp.MustCompile(`@mark\.(skip|skipif|xfail)\b`), // from pytest import mark
				regexp.MustCompile(`\bpytest\.(skip|xfail|importorskip)\s*\(`),
				regexp.MustCompile(`@(unittest\.)?(skip|skipIf|skipUnless|expectedFailure)\b`),
				regexp.MustCompile(`\bself\.skipTest\s*\(`),
				regexp.MustCompile(`\braise\s+(unittest\.)?SkipTest\b`),
			},
		},
		{
			name: "Go", applies: func(p string) bool { return strings.HasSuffix(p, "_test.go") }, comment: "//", quotes: "\"`'",
			rules: []*regexp.Regexp{regexp.MustCompile(`\b\w+\.Skip(f|Now)?\s*\(`)},
		},
		{
			name: "JUnit", applies: hasExt(".java", ".kt", ".kts", ".scala", ".groovy"), comment: "//", quotes: `"'`,
			rules: []*regexp.Regexp{regexp.MustCompile(`@([\w.]+\.)?(Disabled\w*|Ignore)\b`)},
		},
		{
			name: "Jest/Mocha", applies: hasExt(".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"), comment: "//", quotes: "\"'`",
			rules: []*regexp.Regexp{
				regexp.MustCompile(`\b(it|test|describe|context|suite|specify)\.(skip|fixme)\b`),
				regexp.MustCompile(`\b(it|test|describe)\.(concurrent|each|only)\.skip\b`), // Jest's modifiers
				regexp.MustCompile(`\bx(it|test|describe|context|specify)\s*\(`),
				regexp.MustCompile(`\bthis\.skip\s*\(`), // Mocha, inside a test
			},
		},
		{
			name: "RSpec", applies: hasExt(".rb"), comment: "#", quotes: `"'`,
			rules: []*regexp.Regexp{
				regexp.MustCompile(`^\s*(skip|pending)(\s*$|\s*\(|\s+[^=\s])`),
				regexp.MustCompile(`\bx(it|describe|context|specify|example|scenario|feature)\b`),
				regexp.MustCompile(`,\s*:?(skip|pending)\s*(:|=>)`),
			},
		},
	}
})

// SkipMarkers finds skip/xfail markers in the added lines of the changes,
// by language: pytest and unittest (.py), Go (_test.go), JUnit (@Disabled,
// @Ignore), Jest/Mocha (.skip, xit, xdescribe, …) and RSpec (skip, pending,
// xit, …). It ignores comment lines, trailing comments and string contents,
// and a marker line that the same change removes elsewhere in the file (a
// move, not a new marker).
func SkipMarkers(changes []FileChange) []Violation {
	return skipMarkers(changes, "").found
}

// markerScan is what skipMarkers found: violations, markers in files the
// declaration names, and the files whose diff it could not read.
type markerScan struct {
	found, named []Violation
	unscanned    []string
}

// skipMarkers reads the added lines of the changed files for new skip
// markers; text is the declaration's (declarationText, lower-case). A marker that a removed line of the same file held (a test
// moved within it) is not new. Neither the label nor a Test-Changes line
// in general waives one; a Test-Changes line that names the file (its
// path, or its base name where no other changed file has it, as a word of
// its own) does (named): the PR says in so many words that it adds a skip
// there, for its reviewers to see. With no way to say it, a new
// conditionally skipped Go test (`if testing.Short() { t.Skip(…) }`) could
// not pass the required check, in a new file or an old one. A marker in a
// new file is a violation too: a new file can skip existing tests (a
// helper an existing test calls, a conftest.py hook, a test moved there
// under a new id). Whatever the PR says, a test that ran on base and is
// skipped in every head run blocks ("newly skipped").
func skipMarkers(changes []FileChange, text string) markerScan {
	var scan markerScan
	paths := changedPaths(changes)
	langs := markerLangs()
	for _, c := range changes {
		var lang *markerLang
		for i := range langs {
			if langs[i].applies(c.Path) {
				lang = &langs[i]
				break
			}
		}
		if lang != nil && c.Patch == "" && c.Changes > 0 && c.Status != "removed" {
			scan.unscanned = append(scan.unscanned, c.Path)
		}
		if lang == nil || c.Patch == "" {
			continue
		}
		added, removed := hunkLines(c.Patch)
		moved := map[string]int{}
		for _, l := range removed {
			if lang.marker(l.Text) != "" {
				moved[strings.TrimSpace(l.Text)]++
			}
		}
		for _, l := range added {
			m := lang.marker(l.Text)
			if m == "" {
				continue
			}
			if k := strings.TrimSpace(l.Text); moved[k] > 0 {
				moved[k]--
				continue
			}
			v := Violation{Check: CheckSkipMarker, Path: c.Path, Line: l.No,
				Message: fmt.Sprintf("new %s skip marker %q in an added line", lang.name, m)}
			if namesFile(text, c.Path, paths) {
				scan.named = append(scan.named, v)
				continue
			}
			v.Message += fmt.Sprintf("; neither the label nor a declaration in general waives it: a Test-Changes line that names the file (%s) does, and a test that ran on base and is skipped in every head run blocks whatever it says", path.Base(c.Path))
			scan.found = append(scan.found, v)
		}
	}
	return scan
}

// marker returns the marker found in one line of code, or "".
func (lang *markerLang) marker(line string) string {
	code := strings.TrimSpace(blankStrings(line, lang.quotes))
	if strings.HasPrefix(code, lang.comment) || (lang.comment == "//" && (strings.HasPrefix(code, "/*") || strings.HasPrefix(code, "*"))) {
		return ""
	}
	if i := strings.Index(code, lang.comment); i >= 0 {
		code = code[:i]
	}
	for _, re := range lang.rules {
		if m := re.FindString(code); m != "" {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// blankStrings empties the contents of string literals on one line, so that
// markers and comment characters inside them are not seen. Escapes are
// honoured; an unterminated string runs to the end of the line.
func blankStrings(line, quotes string) string {
	var b strings.Builder
	var in rune
	escaped := false
	for _, r := range line {
		switch {
		case in == 0:
			b.WriteRune(r)
			if strings.ContainsRune(quotes, r) {
				in = r
			}
		case escaped:
			escaped = false
		case r == '\\' && in != '`':
			escaped = true
		case r == in:
			b.WriteRune(r)
			in = 0
		}
	}
	return b.String()
}

// goneFromBase reports whether a test in no head run left the base branch
// after the base commit (TestInput.LeftBaseBranch): it is not the patch's
// to keep.
func goneFromBase(t TestInput) bool {
	return len(t.Head) == 0 && t.LeftBaseBranch > 0 && t.HeadSkipped == 0
}

// namesFile reports whether a declaration's text (lower-case) names the
// file p: its path as a word of the text (or a path ending in it, as a
// monorepo's root may differ), or its base name as a word where none of
// the other files (others, the PR's changed files when known) has it: a
// word is a run of letters, digits and . _ - / (so "conftest.py" does not
// name "test.py", nor "unit/test_views.py" "integration/test_views.py").
func namesFile(text, p string, others []string) bool {
	p = strings.ToLower(strings.ReplaceAll(p, "\\", "/"))
	base := path.Base(p)
	if len(base) < 4 {
		return false
	}
	unique := true
	for _, o := range others {
		o = strings.ToLower(strings.ReplaceAll(o, "\\", "/"))
		if o != p && path.Base(o) == base {
			unique = false
		}
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-/", r))
	}) {
		w = strings.Trim(w, ".")
		switch {
		case w == p, strings.HasSuffix(w, "/"+p), strings.HasSuffix(p, "/"+w) && strings.Contains(w, "/"):
			return true
		case w == base && unique:
			return true
		}
	}
	return false
}
