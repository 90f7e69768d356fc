package gate

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/ledger"
)

func TestParseUnifiedDiff(t *testing.T) {
	text := strings.Join([]string{
		"diff --git a/src/app.go b/src/app.go",
		"index 1..2 100644",
		"--- a/src/app.go",
		"+++ b/src/app.go",
		"@@ -10,2 +10,3 @@ func main() {",
		" a",
		"+b",
		" c",
		"diff --git a/tests/new_test.go b/tests/new_test.go",
		"new file mode 100644",
		"--- /dev/null",
		"+++ b/tests/new_test.go",
		"@@ -0,0 +1 @@",
		"+package tests",
		"diff --git a/old.py b/old.py",
		"deleted file mode 100644",
		"--- a/old.py",
		"+++ /dev/null",
		"@@ -1 +0,0 @@",
		"-x = 1",
		"\\ No newline at end of file",
		"diff --git a/tests/a.py b/tests/b.py",
		"similarity index 100%",
		"rename from tests/a.py",
		"rename to tests/b.py",
		`diff --git "a/with space.txt" "b/with space.txt"`,
		"Binary files differ",
		"",
	}, "\n")
	// Found by FuzzParseUnifiedDiff: a one-character name with --no-prefix
	// made the header parser slice out of range.
	if got, err := ParseUnifiedDiff("diff --git x x\n--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n"); err != nil || len(got) != 1 || got[0].Path != "x" {
		t.Errorf("--no-prefix one-character name: %+v, %v", got, err)
	}
	got, err := ParseUnifiedDiff(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{Path: "src/app.go", Status: "modified", Patch: "@@ -10,2 +10,3 @@ func main() {\n a\n+b\n c"},
		{Path: "tests/new_test.go", Status: "added", Patch: "@@ -0,0 +1 @@\n+package tests"},
		{Path: "old.py", Status: "removed", Patch: "@@ -1 +0,0 @@\n-x = 1\n\\ No newline at end of file"},
		{Path: "tests/b.py", PreviousPath: "tests/a.py", Status: "renamed"},
		{Path: "with space.txt", Status: "modified"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseUnifiedDiff (-want +got):\n%s", diff)
	}
}

func TestParseUnifiedDiffPlain(t *testing.T) {
	text := "--- conftest.py\t2026-01-01 00:00:00\n+++ conftest.py\t2026-01-02 00:00:00\n@@ -1 +1 @@\n-a\n+b\n" +
		"--- pytest.ini\n+++ pytest.ini\n@@ -1,0 +2 @@\n+addopts = -p no:randomly\n"
	got, err := ParseUnifiedDiff(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{Path: "conftest.py", Status: "modified", Patch: "@@ -1 +1 @@\n-a\n+b"},
		{Path: "pytest.ini", Status: "modified", Patch: "@@ -1,0 +2 @@\n+addopts = -p no:randomly"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseUnifiedDiffErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"bad header", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ nonsense @@\n", "line 4: malformed hunk header"},
		// Found by FuzzParseUnifiedDiff: line 0 with lines in it, no path.
		{"hunk at line 0", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,3 +0,5 @@\n", "line numbers start at 1"},
		{"header without a path", "diff --git \n", "header with no path"},
		{"cut short", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", "cut short"},
		{"hunk outside a file", "@@ -1 +1 @@\n-a\n+b\n", "hunk outside a file"},
		{"garbage in hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?b\n", "ends early"},
		// Text that is no diff at all, given by mistake.
		{"not a diff", "# flakegate\n\nflakegate tells a team whether a red test is flaky.\n", "no file in it"},
		{"a JUnit file", `<testsuite name="s"><testcase name="t"/></testsuite>`, "no file in it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseUnifiedDiff(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestParseUnifiedDiffEmpty: no text, or white space alone, is a diff
// that changes nothing.
func TestParseUnifiedDiffEmpty(t *testing.T) {
	for _, text := range []string{"", "\n", "  \n\t\n"} {
		if got, err := ParseUnifiedDiff(text); err != nil || len(got) != 0 {
			t.Errorf("%q: %v, %v", text, got, err)
		}
	}
}

func patchOf(lines ...string) string {
	return "@@ -1,0 +1," + strconv.Itoa(len(lines)) + " @@\n+" + strings.Join(lines, "\n+")
}

func TestSkipMarkers(t *testing.T) {
	tests := []struct {
		path  string
		line  string
		found bool
	}{
		{"tests/test_x.py", "@pytest.mark.skip(reason='slow')", true},
		{"tests/test_x.py", "@pytest.mark.skipif(sys.platform == 'win32', reason='x')", true},
		{"tests/test_x.py", "@pytest.mark.xfail", true},
		{"tests/test_x.py", "    pytest.skip('later')", true},
		{"tests/test_x.py", "    pytest.xfail('known')", true},
		{"tests/test_x.py", "pytestmark = pytest.mark.skip", true},
		{"tests/test_x.py", "@unittest.skip('x')", true},
		{"tests/test_x.py", "@unittest.skipIf(True, 'x')", true},
		{"tests/test_x.py", "@unittest.skipUnless(HAVE_DB, 'x')", true},
		{"tests/test_x.py", "@unittest.expectedFailure", true},
		{"tests/test_x.py", "        self.skipTest('no network')", true},
		{"tests/test_x.py", "# @pytest.mark.skip was removed", false},
		{"tests/test_x.py", "x = 1  # pytest.skip() would hide this", false},
		{"tests/test_x.py", `msg = "use @pytest.mark.skip sparingly"`, false},
		{"tests/test_x.py", "@skip_if_no_db", false},
		{"tests/test_x.py", "@mark.skip(reason='slow')", true}, // from pytest import mark
		{"tests/test_x.py", "@mark.xfail", true},
		{"tests/test_x.py", "@benchmark.skipped_count", false},
		{"pkg/x_test.go", "\tt.Skip(\"flaky\")", true},
		{"pkg/x_test.go", "\tt.Skipf(\"needs %s\", db)", true},
		{"pkg/x_test.go", "\tt.SkipNow()", true},
		{"pkg/x_test.go", "\t// t.Skip(\"later\")", false},
		{"pkg/x.go", "\tr.Skip(4)", false},
		{"src/test/java/FooTest.java", "  @Disabled(\"flaky\")", true},
		{"src/test/java/FooTest.java", "  @Ignore", true},
		{"src/test/java/FooTest.java", "  @org.junit.Ignore", true},
		{"src/test/java/FooTest.java", "   * @Disabled in javadoc", false},
		{"src/foo.test.ts", "it.skip('works', () => {})", true},
		{"src/foo.test.ts", "test.skip('works', () => {})", true},
		{"src/foo.test.ts", "describe.skip('suite', () => {})", true},
		{"src/foo.test.js", "xit('works', () => {})", true},
		{"src/foo.test.js", "xdescribe('suite', () => {})", true},
		{"src/foo.test.js", "xtest('works', () => {})", true},
		{"src/foo.test.js", "it.todo('later')", false},
		{"src/foo.test.ts", "test.concurrent.skip('works', async () => {})", true},
		{"src/foo.test.ts", "it.each([1, 2]).skip", false}, // not a form Jest has
		{"src/foo.test.ts", "describe.each.skip([1])('suite', () => {})", true},
		{"src/foo.test.js", "    if (!process.env.DB) this.skip();", true},
		{"src/foo.test.js", "    const s = this.skipped", false},
		{"src/foo.test.js", "const skip = items.skip(2)", false},
		{"spec/foo_spec.rb", "    skip 'flaky on CI'", true},
		{"spec/foo_spec.rb", "    pending", true},
		{"spec/foo_spec.rb", "  xit 'works' do", true},
		{"spec/foo_spec.rb", "  it 'works', skip: true do", true},
		{"spec/foo_spec.rb", "  skip = true", false},
		{"spec/foo_spec.rb", "  # skip 'later'", false},
		{"README.md", "it.skip('x')", false},
	}
	for _, tc := range tests {
		v := SkipMarkers([]FileChange{{Path: tc.path, Status: "modified", Patch: patchOf("x", tc.line)}})
		if (len(v) > 0) != tc.found {
			t.Errorf("%s %q: found %v, want %v", tc.path, tc.line, v, tc.found)
			continue
		}
		if tc.found && (v[0].Line != 2 || v[0].Path != tc.path || v[0].Check != CheckSkipMarker) {
			t.Errorf("%s %q: violation %+v, want line 2", tc.path, tc.line, v[0])
		}
	}
}

func TestSkipMarkerMoveIsNotNew(t *testing.T) {
	patch := "@@ -1,3 +1,3 @@\n-\tt.Skip(\"windows\")\n func x() {\n+\tt.Skip(\"windows\")\n }"
	if v := SkipMarkers([]FileChange{{Path: "a_test.go", Patch: patch}}); len(v) != 0 {
		t.Errorf("moved marker reported: %v", v)
	}
	patch = "@@ -1,1 +1,2 @@\n func x() {\n+\tt.Skip(\"windows\")"
	if v := SkipMarkers([]FileChange{{Path: "a_test.go", Patch: patch}}); len(v) != 1 {
		t.Errorf("new marker not reported: %v", v)
	}
	// A marker "moved" to another file is new there: the deleted file's
	// marker skipped its own tests, the added one may skip another
	// (a review: a skipif moved from a deleted file onto an existing test).
	split := []FileChange{
		{Path: "a_test.go", Status: "modified", Patch: "@@ -1,3 +1,0 @@\n-func TestX(t *testing.T) {\n-\tt.Skip(\"windows\")\n-}"},
		{Path: "b_test.go", Status: "modified", Patch: "@@ -1,0 +1,3 @@\n+func TestX(t *testing.T) {\n+\tt.Skip(\"windows\")\n+}"},
	}
	if v := SkipMarkers(split); len(v) != 1 || v[0].Path != "b_test.go" {
		t.Errorf("marker moved to another file: %v", v)
	}
}

// TestSkipMarkerNamedFile: a new Go integration test's conditional skip
// failed every PR that added one, declared or not, with no way to pass.
// A Test-Changes line that names the file waives its markers; the label,
// or a declaration that names another file, does not. A new file is no
// exception: it can skip existing tests (a helper they call, a test moved
// there under a new id), so the PR must name it too.
func TestSkipMarkerNamedFile(t *testing.T) {
	newFile := FileChange{Path: "store/store_integration_test.go", Status: "added",
		Patch: "@@ -0,0 +1,9 @@\n+package store\n+\n+import \"testing\"\n+\n+func TestStoreIntegration(t *testing.T) {\n+\tif testing.Short() {\n+\t\tt.Skip(\"integration\")\n+\t}\n+}"}
	existing := FileChange{Path: "store/store_test.go", Status: "modified", Patch: "@@ -5,2 +5,3 @@\n func TestStore(t *testing.T) {\n+\tt.Skip(\"later\")\n }"}
	other := FileChange{Path: "cart/store_test.go", Status: "modified", Patch: "@@ -5,2 +5,3 @@\n func TestCart(t *testing.T) {\n+\tt.Skip(\"later\")\n }"}
	in := Input{
		Tests:        []TestInput{{Name: "store::TestStore", Base: Tally{5, 0}, Head: runs("PPPPP")}, {Name: "store::TestStoreIntegration", Head: runs("PPPPP")}},
		ChangesKnown: true,
	}
	for _, tc := range []struct {
		name    string
		changes []FileChange
		body    string
		labels  []string
		blocked []string // the files whose markers block
	}{
		{"new file, declared in general", []FileChange{newFile}, "Test-Changes: adds an integration test", nil, []string{"store/store_integration_test.go"}},
		{"new file, named", []FileChange{newFile}, "Test-Changes: adds store_integration_test.go, skipped under -short", nil, nil},
		{"new file, named by path", []FileChange{newFile}, "Test-Changes: store/store_integration_test.go (integration, -short skips it)", nil, nil},
		{"label", []FileChange{newFile, existing}, "", []string{"test-changes-declared"}, []string{"store/store_integration_test.go", "store/store_test.go"}},
		{"one named, one not", []FileChange{newFile, existing}, "Test-Changes: store_test.go skips TestStore under -short", nil, []string{"store/store_integration_test.go"}},
		// Two changed files share the base name: only a path names one.
		{"base name of two files", []FileChange{existing, other}, "Test-Changes: store_test.go skips a test", nil, []string{"cart/store_test.go", "store/store_test.go"}},
		{"path of one of two", []FileChange{existing, other}, "Test-Changes: store/store_test.go skips a test", nil, []string{"cart/store_test.go"}},
		// A word of its own: "integration_store_test.go" is not "store_test.go".
		{"a longer word", []FileChange{existing}, "Test-Changes: integration_store_test.go", nil, []string{"store/store_test.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := in
			in.Changes, in.PRBody, in.Labels = tc.changes, tc.body, tc.labels
			res, err := Evaluate(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range res.Properties {
				if v.Check == CheckSkipMarker {
					got = append(got, v.Path)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.blocked) {
				t.Errorf("markers blocking in %v, want %v: %v", got, tc.blocked, res.Properties)
			}
			if (res.Verdict == VerdictBlock) != (len(tc.blocked) > 0) {
				t.Errorf("verdict %s", res.Verdict)
			}
			if len(tc.blocked) < len(tc.changes) && !slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.Contains(r, "declared: the Test-Changes line names its file") }) {
				t.Errorf("a waived marker is not said: %q", res.Reasons)
			}
		})
	}
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"tests/**", "tests/test_a.py", true},
		{"tests/**", "tests/unit/deep/test_a.py", true},
		{"tests/**", "src/tests/test_a.py", false},
		{"tests/**", "tests", true},
		{"conftest.py", "conftest.py", true},
		{"conftest.py", "tests/unit/conftest.py", true},
		{"conftest.py", "conftest.pyc", false},
		{"pytest.ini", "sub/pytest.ini", true},
		{"/pytest.ini", "sub/pytest.ini", false},
		{"**/*_test.go", "pkg/a/b_test.go", true},
		{"**/*_test.go", "b_test.go", true},
		{"src/*/fixtures/", "src/a/fixtures/x/y.json", true},
		{"tests/", "pkg/tests/x.py", true},
		{"*.snap", "ui/__snapshots__/a.snap", true},
	}
	for _, tc := range tests {
		if got := MatchPath(tc.pattern, tc.path); got != tc.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestDeclared(t *testing.T) {
	tests := []struct {
		body   string
		labels []string
		want   bool
	}{
		{"Test-Changes: remove obsolete upload test", nil, true},
		{"Summary\n\n  test-changes:  rename fixtures\r\n", nil, true},
		{"Test-Changes:", nil, false},
		{"Mentions Test-Changes: inline, not at the start", nil, false},
		{"", []string{"bug", "Test-Changes-Declared"}, true},
		{"", []string{"bug"}, false},
		// A pull request template's line that says there are none.
		{"Test-Changes: none", nil, false},
		{"Test-Changes: N/A.", nil, false},
		{"Test-Changes: `none`", nil, false},
		{"Test-Changes: -", nil, false},
		{"Test-Changes: none\nTest-Changes: adds test_cache", nil, true},
		{"Test-Changes: none of the old tests change; adds test_cache", nil, true},
		// A template's hint in an HTML comment is not the author's
		// declaration (it declared every PR that left the template as it
		// was); nor is an example in a code block.
		{"Test-Changes: <!-- which tests this PR adds, edits or removes; or \"none\" -->", nil, false},
		{"Test-Changes: <!-- which tests\nthis PR adds -->\n", nil, false},
		{"<!--\nTest-Changes: adds test_x\n-->\nFixes the cache.", nil, false},
		{"Test-Changes: removes test_old <!-- hint -->", nil, true},
		{"Example:\n```\nTest-Changes: adds test_x\n```\n", nil, false},
		{"Example:\n  ~~~md\nTest-Changes: adds test_x\n  ~~~\nTest-Changes: renames test_y", nil, true},
		{"```\nunclosed fence\nTest-Changes: adds test_x", nil, false},
		{"<!-- unclosed\nTest-Changes: adds test_x", nil, false},
		// A longer fence is closed by one as long; a line with an info
		// string opens, never closes.
		{"````\n```\nTest-Changes: adds test_x\n```\n````\n", nil, false},
		{"```\n```go\nTest-Changes: adds test_x\n```\n", nil, false},
	}
	for _, tc := range tests {
		if got, by := Declared(tc.body, tc.labels, DefaultDeclareLabel); got != tc.want {
			t.Errorf("Declared(%q, %v) = %v (%s), want %v", tc.body, tc.labels, got, by, tc.want)
		}
	}
}

// TestUnscannedFilesLeaveItPartial: a changed test file whose diff GitHub
// left out (changes but no patch) is not checked for skip markers: the
// verdict says so and is not a pass. A pure rename (no changes) and a
// removed file are not; a CLI diff always has its hunks.
func TestUnscannedFilesLeaveItPartial(t *testing.T) {
	ok := TestInput{Name: "t::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	for _, tc := range []struct {
		change FileChange
		want   Verdict
	}{
		{FileChange{Path: "tests/test_app.py", Status: "modified", Changes: 5000}, VerdictInconclusive},
		{FileChange{Path: "tests/test_app.py", Status: "renamed", PreviousPath: "tests/test_old.py"}, VerdictPass},
		{FileChange{Path: "tests/test_app.py", Status: "removed", Changes: 40}, VerdictPass},
		{FileChange{Path: "docs/big.md", Status: "modified", Changes: 5000}, VerdictPass},
	} {
		in := Input{Tests: []TestInput{ok}, Collected: &Counts{Base: 1, Head: 1}, ChangesKnown: true, Changes: []FileChange{tc.change},
			PRBody: "Test-Changes: rewrites the app tests"}
		res, err := Evaluate(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want || tc.want == VerdictInconclusive && !strings.Contains(strings.Join(res.Reasons, "\n"), "not checked for new skip markers: tests/test_app.py") {
			t.Errorf("%+v: verdict %s, want %s; reasons:\n%s", tc.change, res.Verdict, tc.want, strings.Join(res.Reasons, "\n"))
		}
	}
}

func TestPropertyChecks(t *testing.T) {
	red := TestInput{Name: "t::red", Base: Tally{5, 5}}
	ok := TestInput{Name: "t::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	entry := func(test string) ledger.Entry { return ledger.Entry{Test: test, Signature: "sha256:aaaaaaaa"} }
	baseL := &ledger.Ledger{Version: 1, Entries: []ledger.Entry{entry("t::a")}}
	headL := &ledger.Ledger{Version: 1, Entries: []ledger.Entry{entry("t::b")}}
	tests := []struct {
		name     string
		in       Input
		want     []string // "check path-or-test"
		wantText string
	}{
		{
			name: "protected edit undeclared",
			in:   Input{Tests: []TestInput{ok}, ChangesKnown: true, Changes: []FileChange{{Path: "tests/conftest.py", Status: "modified"}, {Path: "src/a.py"}}},
			want: []string{"protected-path tests/conftest.py"},
		},
		{
			name: "protected edit via rename source",
			in:   Input{Tests: []TestInput{ok}, ChangesKnown: true, Changes: []FileChange{{Path: "attic/test_a.py", PreviousPath: "tests/test_a.py", Status: "renamed"}}},
			want: []string{"protected-path attic/test_a.py"},
		},
		{
			name: "protected edit declared",
			in:   Input{Tests: []TestInput{ok}, ChangesKnown: true, PRBody: "Test-Changes: new fixture", Changes: []FileChange{{Path: "pytest.ini"}}},
		},
		{
			name: "skip marker is not waived by a declaration",
			in: Input{Tests: []TestInput{ok}, ChangesKnown: true, Labels: []string{"test-changes-declared"},
				Changes: []FileChange{{Path: "tests/test_a.py", Patch: patchOf("@pytest.mark.skip")}}},
			want: []string{"skip-marker tests/test_a.py"},
		},
		{
			name: "no diff: diff checks do not run",
			in:   Input{Tests: []TestInput{ok}, Changes: []FileChange{{Path: "tests/test_a.py", Patch: patchOf("@pytest.mark.skip")}}},
		},
		{
			name: "test count drop",
			in:   Input{Tests: []TestInput{ok}, Collected: &Counts{Base: 120, Head: 118}},
			want: []string{"test-count "}, wantText: "from 120 on base to 118 on head",
		},
		{
			name: "red test removed, even declared",
			in:   Input{Tests: []TestInput{ok, red}, PRBody: "Test-Changes: drop it", Collected: &Counts{Base: 2, Head: 2}},
			want: []string{"red-test-removed t::red"},
		},
		{
			name: "freeze set changed undeclared",
			in:   Input{Tests: []TestInput{ok}, BaseLedger: baseL, HeadLedger: headL},
			want: []string{"freeze-set "}, wantText: "freezes t::b; unfreezes t::a",
		},
		{
			name: "freeze set changed, declared",
			in:   Input{Tests: []TestInput{ok}, BaseLedger: baseL, HeadLedger: headL, PRBody: "Test-Changes: swap freeze"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			declared, _ := Declared(tc.in.PRBody, tc.in.Labels, DefaultDeclareLabel)
			v := checkProperties(tc.in, Options{}.withDefaults(), declared, skipMarkers(tc.in.Changes, strings.ToLower(declarationText(tc.in.PRBody))).found)
			var got []string
			for _, x := range v {
				got = append(got, x.Check+" "+x.Path+x.Test)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s\n%v", diff, v)
			}
			if tc.wantText != "" && (len(v) == 0 || !strings.Contains(v[0].Message, tc.wantText)) {
				t.Errorf("message %v does not contain %q", v, tc.wantText)
			}
		})
	}
}

// TestFileChangeFromPRFilesAPI checks that the action can decode GitHub's
// "list pull request files" response straight into []FileChange.
func TestFileChangeFromPRFilesAPI(t *testing.T) {
	body := `[{"sha":"abc","filename":"tests/test_b.py","status":"renamed","previous_filename":"tests/test_a.py",
	  "additions":1,"deletions":0,"changes":1,"patch":"@@ -1,1 +1,2 @@\n import pytest\n+@pytest.mark.xfail"}]`
	var got []FileChange
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{Path: "tests/test_b.py", PreviousPath: "tests/test_a.py", Status: "renamed", Patch: "@@ -1,1 +1,2 @@\n import pytest\n+@pytest.mark.xfail", Changes: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if v := SkipMarkers(got); len(v) != 1 || v[0].Line != 2 {
		t.Errorf("SkipMarkers = %v, want one at line 2", v)
	}
}

// TestProtectedNewFiles: with protected-new-files: allow, a PR that adds
// tests under tests/ needs no declaration, but one that adds a conftest.py
// (which can change how the existing tests run) or edits, removes or moves
// an existing test still does. With the default, declare, every one does.
func TestProtectedNewFiles(t *testing.T) {
	changes := []FileChange{
		{Path: "tests/test_new.py", Status: "added"},
		{Path: "tests/unit/test_copy.py", Status: "copied"},
		{Path: "tests/unit/conftest.py", Status: "added"},
		{Path: "pytest.ini", Status: "added"},
		{Path: "tests/test_old.py", Status: "modified"},
		{Path: "tests/test_gone.py", Status: "removed"},
		{Path: "attic/test_moved.py", PreviousPath: "tests/test_moved.py", Status: "renamed"},
		{Path: "src/app.py", Status: "added"},
	}
	paths := func(v []Violation) []string {
		var out []string
		for _, x := range v {
			out = append(out, x.Path)
		}
		return out
	}
	patterns := []string{"tests/**", "**/conftest.py", "pytest.ini"}
	all := []string{"tests/test_new.py", "tests/unit/test_copy.py", "tests/unit/conftest.py", "pytest.ini", "tests/test_old.py", "tests/test_gone.py", "attic/test_moved.py"}
	if diff := cmp.Diff(all, paths(protectedEdits(changes, patterns, "l", false))); diff != "" {
		t.Errorf("declare (-want +got):\n%s", diff)
	}
	allowed := []string{"tests/unit/conftest.py", "pytest.ini", "tests/test_old.py", "tests/test_gone.py", "attic/test_moved.py"}
	if diff := cmp.Diff(allowed, paths(protectedEdits(changes, patterns, "l", true))); diff != "" {
		t.Errorf("allow (-want +got):\n%s", diff)
	}
	// Through the options, as the action and the command line set them.
	in := Input{Tests: []TestInput{{Name: "t::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}}, ChangesKnown: true, Changes: changes[:2]}
	o := Options{AllowNewProtected: true}.withDefaults()
	if v := checkProperties(in, o, false, skipMarkers(in.Changes, "").found); len(v) != 0 {
		t.Errorf("new tests under allow: %v", v)
	}
	if v := checkProperties(in, Options{}.withDefaults(), false, skipMarkers(in.Changes, "").found); len(v) != 2 || !strings.Contains(v[0].Message, "new files there pass without one under protected-new-files: allow") {
		t.Errorf("new tests under declare, and the way out: %v", v)
	}
	// A new conftest.py needs the declaration either way: no hint.
	if v := protectedEdits(changes[2:3], patterns, "l", false); len(v) != 1 || strings.Contains(v[0].Message, "protected-new-files") {
		t.Errorf("new conftest.py: %v", v)
	}
}
