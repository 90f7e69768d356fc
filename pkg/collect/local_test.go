package collect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	globs "github.com/flakegate/flakegate/pkg/internal/glob"
)

func TestLocal(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x.xml", "a/b/y.xml", "a/b/c/z.XML", "a/notes.txt", "d/w.xml", "e{1}/v.xml"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("<testsuite/>"), 0o644)
	}
	rel := func(paths []string) []string {
		for i, p := range paths {
			paths[i] = filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		}
		return paths
	}
	tests := []struct {
		in      []string
		want    []string
		missing int
	}{
		{[]string{"a"}, []string{"a/b/c/z.XML", "a/b/y.xml", "a/x.xml"}, 0},
		{[]string{""}, []string{"a/b/c/z.XML", "a/b/y.xml", "a/x.xml", "d/w.xml", "e{1}/v.xml"}, 0}, // subdirectories walked at once
		{[]string{"a/*.xml"}, []string{"a/x.xml"}, 0},
		{[]string{"a/**/*.xml"}, []string{"a/b/y.xml", "a/x.xml"}, 0},
		{[]string{"**/y.xml", "d/w.xml"}, []string{"a/b/y.xml", "d/w.xml"}, 0},
		{[]string{"a/b", "a/b/y.xml"}, []string{"a/b/c/z.XML", "a/b/y.xml"}, 0},
		{[]string{"nope/*.xml", "gone.xml", "d"}, []string{"d/w.xml"}, 2},
		{[]string{"[ad]/w.xml"}, []string{"d/w.xml"}, 0},
		// Alternations in a directory's place, before any wildcard.
		{[]string{"{a,d}/*.xml"}, []string{"a/x.xml", "d/w.xml"}, 0},
		{[]string{"{a/b,d}/*.xml"}, []string{"a/b/y.xml", "d/w.xml"}, 0},
		{[]string{"{d,a/b}/{w,y}.xml"}, []string{"a/b/y.xml", "d/w.xml"}, 0},
		// A name with braces that is there is that file or directory.
		{[]string{"e{1}"}, []string{"e{1}/v.xml"}, 0},
		{[]string{"e{1}/v.xml"}, []string{"e{1}/v.xml"}, 0},
	}
	for _, tc := range tests {
		var in []string
		for _, p := range tc.in {
			in = append(in, filepath.Join(dir, p))
		}
		srcs, missing, err := Local(in)
		if err != nil {
			t.Fatalf("%v: %v", tc.in, err)
		}
		var got []string
		for _, s := range srcs {
			got = append(got, s.Name)
		}
		if diff := cmp.Diff(tc.want, rel(got)); diff != "" || len(missing) != tc.missing {
			t.Errorf("%v (-want +got):\n%s missing=%v", tc.in, diff, missing)
		}
	}
	if _, _, err := Local([]string{filepath.Join(dir, "a/[x.xml")}); err == nil || !strings.Contains(err.Error(), "malformed glob") {
		t.Errorf("malformed glob: err = %v", err)
	}
}

// TestLocalSameFileTwoWays: a file that two paths name two ways, relative
// and absolute or with "./", is read once, under the name first in order.
func TestLocalSameFileTwoWays(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x.xml", "a/b/y.xml"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("<testsuite/>"), 0o644)
	}
	t.Chdir(dir)
	srcs, missing, err := Local([]string{"a", filepath.Join(dir, "a"), "./a/x.xml", "a/b/../x.xml"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		p, _ := filepath.Abs(s.Name)
		got = append(got, filepath.ToSlash(p))
	}
	slices.Sort(got)
	want := []string{filepath.ToSlash(filepath.Join(dir, "a/b/y.xml")), filepath.ToSlash(filepath.Join(dir, "a/x.xml"))}
	if diff := cmp.Diff(want, got); diff != "" || len(missing) != 0 {
		t.Errorf("(-want +got):\n%s missing=%v", diff, missing)
	}
}

// TestLocalLinkLoop: a path given that is a loop of symbolic links is
// skipped with the reason, as a missing file is, not the end of the read.
func TestLocalLinkLoop(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.xml")
	os.WriteFile(good, []byte("<testsuite/>"), 0o644)
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	srcs, missing, err := Local([]string{good, loop})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || len(missing) != 1 || missing[0].Path != loop || !strings.Contains(missing[0].Error, "symbolic links") {
		t.Errorf("sources %d, skipped %+v; want good.xml read and the loop skipped as a loop of links", len(srcs), missing)
	}
}

// TestNameMatcher: the prefix-and-suffix test of a one-star element says
// what the general matcher says.
func TestNameMatcher(t *testing.T) {
	elems := []string{"TEST-*.xml", "*.xml", "TEST-*", "*", "a*a", "*.{xml,XML}", "TEST-?.xml", "[ab]*.xml", `\*.xml`, "junit.xml"}
	names := []string{"TEST-a.xml", "TEST-.xml", "TEST-a.xmlx", ".xml", "a", "aa", "aaa", "TEST.xml", "TEST-a.XML", "", "b.xml", "*.xml", "junit.xml"}
	for _, e := range elems {
		m := nameMatcher(e)
		for _, n := range names {
			if got, want := m(n), globs.Match(e, n); got != want {
				t.Errorf("%q against %q: %v, the general matcher %v", e, n, got, want)
			}
		}
	}
}

// writeFiles writes a small JUnit document at each of paths under dir,
// making the directories they need.
func writeFiles(t *testing.T, dir string, paths ...string) {
	t.Helper()
	for _, f := range paths {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("<testsuite/>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNothingInSaysWhy: a path that names no JUnit file is reported with
// the reason: no such path, a directory without .xml files, or a glob that
// matched nothing.
func TestNothingInSaysWhy(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "readme.txt"), []byte("not JUnit"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "nope"), "no such file or directory"},
		{empty, "no .xml file in this directory or below it (JUnit files are read from *.xml)"},
		{filepath.Join(dir, "*.xml"), "matched no files"},
		{filepath.Join(dir, "{a,b}.xml"), "matched no files"},
	} {
		_, missing, err := Local([]string{tc.path})
		if err != nil || len(missing) != 1 || missing[0].Error != tc.want {
			t.Errorf("%s: %v, %+v; want %q", tc.path, err, missing, tc.want)
		}
	}
}

// TestBazelAttemptLegs: Bazel's test_attempts/attempt_N.xml files are in
// the leg of the test.xml beside them (see legPath), on disk and in an
// artifact; other files there, and other directories, keep their own.
func TestBazelAttemptLegs(t *testing.T) {
	for in, want := range map[string]string{
		"pkg/t/test_attempts/attempt_1.xml":               "pkg/t/attempt_1.xml",
		"pkg/t/shard_2_of_4/test_attempts/attempt_12.xml": "pkg/t/shard_2_of_4/attempt_12.xml",
		"test_attempts/attempt_1.xml":                     "attempt_1.xml",
		"pkg/t/test_attempts/notes.xml":                   "pkg/t/test_attempts/notes.xml",
		"pkg/t/test_attempts/attempt_x.xml":               "pkg/t/test_attempts/attempt_x.xml",
		"pkg/t/test_attempts/attempt_.xml":                "pkg/t/test_attempts/attempt_.xml",
		"pkg/t/my_test_attempts/attempt_1.xml":            "pkg/t/my_test_attempts/attempt_1.xml",
		"pkg/t/attempt_1.xml":                             "pkg/t/attempt_1.xml",
	} {
		if got := legPath(in); got != want {
			t.Errorf("legPath(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"t/test.xml", "t/test_attempts/attempt_1.xml", "t/test_attempts/other.xml"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("<testsuite/>"), 0o644)
	}
	srcs, _, err := Local([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	legs := map[string]string{}
	for _, s := range srcs {
		legs[filepath.ToSlash(strings.TrimPrefix(s.Name, dir+string(filepath.Separator)))] = strings.TrimPrefix(s.Leg, filepath.ToSlash(dir))
	}
	want := map[string]string{"t/test.xml": "/t", "t/test_attempts/attempt_1.xml": "/t", "t/test_attempts/other.xml": "/t/test_attempts"}
	if diff := cmp.Diff(want, legs); diff != "" {
		t.Errorf("legs (-want +got):\n%s", diff)
	}
	if got := entryDir("t/test_attempts/attempt_1.xml"); got != "/t" {
		t.Errorf("entryDir = %q, want /t", got)
	}
}
