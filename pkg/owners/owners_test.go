package owners

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/model"
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

func TestParseRefuses(t *testing.T) {
	for _, bad := range []string{"!negated @x", "file[ab].go @x"} {
		if _, err := Parse("# c\n" + bad + "\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("Parse(%q) = %v, want an error naming line 2", bad, err)
		}
	}
}

func TestRelative(t *testing.T) {
	for in, want := range map[string]string{
		"/home/runner/work/shop/shop/tests/a.py": "tests/a.py",
		"tests/a.py":                             "tests/a.py",
		"./tests/a.py":                           "tests/a.py",
		`C:\w\shop\tests\a.py`:                   "tests/a.py",
	} {
		root := "/home/runner/work/shop/shop"
		if strings.HasPrefix(in, "C:") {
			root = `C:\w\shop`
		}
		if got := model.RepoPath(in, root); got != want {
			t.Errorf("RepoPath(%q) = %q, want %q", in, got, want)
		}
	}
}
