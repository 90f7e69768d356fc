package glob

import (
	"slices"
	"testing"
)

func TestMatchRepo(t *testing.T) {
	tests := []struct {
		under   bool
		pattern string
		path    string
		want    bool
	}{
		// The gate's protected paths.
		{false, "tests/**", "tests/unit/test_a.py", true},
		{false, "tests/**", "src/tests/a.py", false},
		{false, "**/conftest.py", "a/b/conftest.py", true},
		{false, "**/conftest.py", "conftest.py", true},
		{false, "pytest.ini", "sub/pytest.ini", true},
		{false, "pytest.ini", "pytest.ini.bak", false},
		{false, "tests", "tests/a.py", false}, // no slash: the element itself only
		{false, "tests/", "a/tests/b/c.py", true},
		{false, "/src/*.go", "src/a.go", true},
		{false, "/src/*.go", "src/x/a.go", false},
		{false, "src/[ab].go", "src/b.go", true},
		{false, "src/{a,b}.go", "src/b.go", true},
		{false, "./x", "./x", true},
		// CODEOWNERS.
		{true, "docs", "docs/a/b.md", true},
		{true, "/docs/", "docs/a.md", true},
		{true, "docs/*", "docs/a.md", true},
		{true, "docs/*", "docs/a/b.md", false}, // one level only
		{true, "*.js", "web/app/x.js", true},
		{true, "/build/logs/", "build/logs/x/y.log", true},
		{true, "apps/**/test", "apps/a/b/test/x.py", true},
		{true, "/*", "a.md", true},
		{true, "/*", "docs/a.md", false}, // the root's files only
		{true, "docs/", "docs", false},   // a directory, not a file of that name
		{true, "docs/**", "docs", false},
		{true, "docs/**/", "docs/a.md", true},
		// The gate keeps a change to a path of that name (a submodule).
		{false, "tests/", "tests", true},
		{false, "tests/**", "tests", true},
	}
	for _, tc := range tests {
		if got := (Repo{Under: tc.under}).MatchRepo(tc.pattern, tc.path); got != tc.want {
			t.Errorf("MatchRepo(under=%v, %q, %q) = %v, want %v", tc.under, tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, ok := range []string{"tests/**", "*.xml", "/a/[bc]/d", "{a,b}"} {
		if err := Validate(ok); err != nil {
			t.Errorf("Validate(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "  ", "a/[b", "{a"} {
		if err := Validate(bad); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", bad)
		}
	}
}

func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"a.xml,b.xml", []string{"a.xml", "b.xml"}},
		{"base-{1,2,3}.xml", []string{"base-{1,2,3}.xml"}},
		{"h/run-0{0,1}-*.xml, x/{a,{b,c}}/*.xml\nlast", []string{"h/run-0{0,1}-*.xml", "x/{a,{b,c}}/*.xml", "last"}},
		{"[,]x,y", []string{"[,]x", "y"}},
		{`a\,b,c`, []string{`a\,b`, "c"}},
		{" , \n ,", nil},
		// An unclosed brace does not swallow the next line: Validate
		// reports the pattern.
		{"a{b,c\nd", []string{"a{b,c", "d"}},
	} {
		if got := SplitList(c.in); !slices.Equal(got, c.want) {
			t.Errorf("SplitList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
