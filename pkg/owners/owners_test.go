package owners

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"
)

const codeowners = `# Owners of the shop
*                 @acme/everyone
*.py              @acme/python
/tests/           @acme/qa
tests/upload/     @storage-team @alice
docs/*            @docs
**/fixtures/**    @acme/fixtures
apps/github       @octo
/build/logs/      # no owners: unowned
`

func TestOwners(t *testing.T) {
	f, err := Parse(codeowners)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{"README.md", []string{"@acme/everyone"}},
		{"src/app.py", []string{"@acme/python"}},
		{"tests/test_a.py", []string{"@acme/qa"}},
		{"tests/upload/test_retry.py", []string{"@storage-team", "@alice"}},
		{"deep/tests/test_b.py", []string{"@acme/python"}}, // /tests/ is anchored
		{"docs/guide.md", []string{"@docs"}},
		{"docs/deep/guide.md", []string{"@acme/everyone"}}, // docs/* is one level
		{"a/fixtures/b/c.xml", []string{"@acme/fixtures"}},
		{"apps/github/x.go", []string{"@octo"}},
		{"build/logs/x.txt", []string{}},
		{"./src/app.py", []string{"@acme/python"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, f.Owners(tc.path)); diff != "" {
			t.Errorf("Owners(%q) (-want +got):\n%s", tc.path, diff)
		}
	}
	if (*File)(nil).Owners("x") != nil {
		t.Error("nil file owns paths")
	}
}

// TestParseSkipsWhatGitHubSkips: GitHub skips a line it does not accept
// (negation, character ranges, a malformed glob) and keeps the others, so
// one such line does not cost a report its owners.
func TestParseSkipsWhatGitHubSkips(t *testing.T) {
	f, err := Parse("# c\n!negated @x\n*.py @py\nPython/ceval*.[ch] @x\nsrc/{a @x\n/docs/\t@docs\t# tab, then a comment\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`line 2: pattern "!negated": negation and character ranges are not supported by GitHub`,
		`line 4: pattern "Python/ceval*.[ch]": negation and character ranges are not supported by GitHub`,
		`line 5: pattern "src/{a": malformed glob "src/{a": want *, ?, [class], {a,b} or ** (any directories)`,
	}
	if diff := cmp.Diff(want, f.Skipped()); diff != "" {
		t.Errorf("Skipped() (-want +got):\n%s", diff)
	}
	for path, owner := range map[string][]string{"a/b.py": {"@py"}, "docs/x.md": {"@docs"}, "negated": nil} {
		if diff := cmp.Diff(owner, f.Owners(path)); diff != "" {
			t.Errorf("Owners(%q) (-want +got):\n%s", path, diff)
		}
	}
}

// TestGitHubPatterns holds the matcher to GitHub's CODEOWNERS rules, case
// by case. The expectations are those of hmarr/codeowners'
// testdata/patterns.json (MIT), which records what GitHub does; the
// matcher disagreed with 12 of them before it followed them: a pattern
// ending in "/" or "/**" owned a file of that name, and "/*" owned
// everything below the root.
func TestGitHubPatterns(t *testing.T) {
	cases := []struct {
		pattern string
		owned   []string
		unowned []string
	}{
		{"foo", []string{"foo", "foo/bar", "bar/foo", "bar/foo/baz"}, []string{"foo.txt", "bar/foo.txt", "bar/baz"}},
		{"/foo", []string{"foo", "foo/bar", "foo/bar/baz"}, []string{"fool.txt", "bar/foo", "bar/baz", "bar/foo/baz"}},
		{"foo/", []string{"foo/bar", "foo/bar/baz", "bar/foo/baz", "bar/foo/baz/qux"}, []string{"foo", "bar/foo", "bar/baz"}},
		{"/foo/", []string{"foo/bar", "foo/bar/baz"}, []string{"foo", "bar/foo", "bar/baz", "bar/foo/baz", "bar/foo/baz/qux"}},
		{"foo/bar", []string{"foo/bar", "foo/bar/baz"}, []string{"foo/bart", "baz/foo/bar", "baz/foo/bar/qux"}},
		{"/foo/bar", []string{"foo/bar", "foo/bar/baz"}, []string{"foo/bart", "baz/foo/bar", "baz/foo/bar/qux"}},
		{"foo/bar/", []string{"foo/bar/baz"}, []string{"foo/bar", "foo/bart", "baz/foo/bar", "baz/foo/bar/qux"}},
		{"/foo/bar/", []string{"foo/bar/baz", "foo/bar/baz/qux"}, []string{"foo/bar", "foo/bart", "baz/foo/bar", "baz/foo/bar/qux"}},
		{"*", []string{"foo", "foo/bar", "bar/foo", "bar/foo/baz", "bar/baz", "xfoo"}, nil},
		{"f*", []string{"foo", "foo/bar", "foo/bar/baz", "bar/foo", "bar/foo/baz"}, []string{"bar/baz", "xfoo"}},
		{"/*", []string{"foo", "bar"}, []string{"foo/bar", "foo/bar/baz"}},
		{"/f*", []string{"foo", "foo/bar", "foo/bar/baz"}, []string{"bar/foo", "bar/foo/baz", "bar/baz", "xfoo"}},
		{"f*/", []string{"foo/bar", "bar/foo/baz"}, []string{"foo", "bar/foo", "bar/baz", "xfoo"}},
		{"/*/", []string{"foo/bar", "bar/foo", "bar/foo/baz"}, []string{"foo"}},
		{"/f*/", []string{"foo/bar"}, []string{"foo", "bar/foo", "bar/foo/baz", "bar/baz", "xfoo"}},
		{`f\*o`, []string{"f*o"}, []string{"foo"}},
		{"foo/*", []string{"foo/bar"}, []string{"foo", "foo/bar/baz", "bar/foo", "bar/foo/baz", "bar/baz", "xfoo"}},
		{"foo/*.txt", []string{"foo/bar.txt"}, []string{"foo", "foo/bar/baz.txt", "qux/foo/bar.txt", "qux/foo/bar/baz.txt"}},
		{"foo/*/baz", []string{"foo/bar/baz", "foo/bar/baz/qux"}, []string{"foo", "foo/bar", "foo/baz"}},
		{"f?o", []string{"foo"}, []string{"fo", "fooo"}},
		{`f\?o`, []string{"f?o"}, []string{"foo"}},
		{"**/foo/bar", []string{"foo/bar", "qux/foo/bar", "qux/foo/bar/baz"}, []string{"foo/baz/bar", "qux/foo/baz/bar"}},
		{"**/*bar*", []string{"bar", "foo/bar", "foo/rebar", "foo/barrio", "foo/qux/bar"}, nil},
		{"foo/bar/**", []string{"foo/bar/baz", "foo/bar/baz/qux"}, []string{"foo/bar", "qux/foo/bar", "qux/foo/bar/baz"}},
		{"foo/**/bar", []string{"foo/bar", "foo/bar/baz", "foo/qux/bar/baz", "foo/qux/quux/bar/baz", "foo/bar/baz/qux"}, []string{"qux/foo/bar", "qux/foo/bar/baz"}},
		{"foo/**/", []string{"foo/bar", "foo/bar/baz"}, []string{"foo"}},
		{"foo/**/bar/b*", []string{"foo/bar/baz", "foo/qux/bar/baz"}, []string{"foo/bar", "foo/bar/qux", "foo/qux/bar", "foo/qux/bar/qux"}},
	}
	for _, tc := range cases {
		f, err := Parse(tc.pattern + " @o\n")
		if err != nil || len(f.Skipped()) > 0 {
			t.Fatalf("Parse(%q): %v %v", tc.pattern, err, f.Skipped())
		}
		for _, p := range tc.owned {
			if f.Owners(p) == nil {
				t.Errorf("%q does not own %q; GitHub's does", tc.pattern, p)
			}
		}
		for _, p := range tc.unowned {
			if f.Owners(p) != nil {
				t.Errorf("%q owns %q; GitHub's does not", tc.pattern, p)
			}
		}
	}
}

// TestRepoPath: tools write paths under the checkout they ran in. The
// action runs in its own container, where the workspace is
// /github/workspace, and reads files that tools wrote on runners.
func TestRepoPath(t *testing.T) {
	action := model.Checkout{Root: "/github/workspace", Name: "shop"}
	for _, tc := range []struct {
		co       model.Checkout
		in, want string
	}{
		{model.Checkout{Root: "/home/runner/work/shop/shop"}, "/home/runner/work/shop/shop/tests/a.py", "tests/a.py"},
		{model.Checkout{Root: `C:\w\shop`}, `C:\w\shop\tests\a.py`, "tests/a.py"},
		{action, "/github/workspace/tests/a.py", "tests/a.py"},
		{action, "tests/a.py", "tests/a.py"},
		{action, "./tests/a.py", "tests/a.py"},
		// Written on runners: Linux, Windows, macOS, a job container, self-hosted.
		{action, "/home/runner/work/shop/shop/tests/a.py", "tests/a.py"},
		{action, `D:\a\shop\shop\tests\a.py`, "tests/a.py"},
		{action, "/Users/runner/work/shop/shop/tests/a.py", "tests/a.py"},
		{action, "/__w/shop/shop/tests/a.py", "tests/a.py"},
		{action, "/opt/actions-runner/_work/shop/shop/src/shop/shop/a.py", "src/shop/shop/a.py"},
		// Not a checkout of this repository: left as written.
		{action, "/home/runner/work/other/other/tests/a.py", "/home/runner/work/other/other/tests/a.py"},
		{action, "src/shop/shop/a.py", "src/shop/shop/a.py"},
		{model.Checkout{Root: "/github/workspace"}, "/home/runner/work/shop/shop/tests/a.py", "/home/runner/work/shop/shop/tests/a.py"},
	} {
		if got := tc.co.RepoPath(tc.in); got != tc.want {
			t.Errorf("%+v.RepoPath(%q) = %q, want %q", tc.co, tc.in, got, tc.want)
		}
	}
}

// TestAnnotateRunnerPaths: in the action's container, a test file written
// on the runner still finds the owners of an anchored pattern.
func TestAnnotateRunnerPaths(t *testing.T) {
	f, err := Parse("/tests/ @acme/qa\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []score.Test{{File: "/home/runner/work/shop/shop/tests/test_a.py"}, {File: `D:\a\shop\shop\tests\test_b.py`}, {File: "/elsewhere/tests/test_c.py"}}
	f.Annotate(tests, model.Checkout{Root: "/github/workspace", Name: "shop"})
	got := [][]string{tests[0].Owners, tests[1].Owners, tests[2].Owners}
	if diff := cmp.Diff([][]string{{"@acme/qa"}, {"@acme/qa"}, nil}, got); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
}
