//go:build unix

package collect

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	globs "github.com/flakegate/flakegate/pkg/internal/glob"
)

// TestWalkAgreesWithWalkDir lists awkward trees with walkXML and with
// filepath.WalkDir, and wants the same files in the same order with the
// same regular flags, whatever the root is spelled as.
func TestWalkAgreesWithWalkDir(t *testing.T) {
	dir := t.TempDir()
	// Names that sort differently as paths than as directory entries
	// ('-' and '.' sort before the separator), files beside
	// subdirectories, upper-case and bare extensions, names that are
	// nearly .xml, and a deep chain.
	for _, f := range []string{
		"top.xml", "a/x.xml", "a-b/y.xml", "a.b/z.xml", "a/b/c/d/e/deep.xml", "a/B.XML", "a/.xml",
		"a/notxml", "a/x.xml.bak", "a/xml", "a/ax.xm", "z/w.Xml", "a/b/c/only.txt", "many/" + strings.Repeat("n", 200) + ".xml",
	} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 600 { // more entries than one getdents buffer holds
		os.WriteFile(filepath.Join(dir, "many", fmt.Sprintf("TEST-%04d-%s.xml", i, strings.Repeat("q", 40))), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	os.Mkdir(filepath.Join(dir, "dir.xml"), 0o755) // a directory named .xml is walked, not read
	os.WriteFile(filepath.Join(dir, "dir.xml", "in.xml"), nil, 0o644)
	os.Symlink(filepath.Join(dir, "a", "x.xml"), filepath.Join(dir, "link.xml"))
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "linkdir")) // not followed
	if err := syscall.Mkfifo(filepath.Join(dir, "a", "fifo.xml"), 0o644); err != nil {
		t.Fatal(err)
	}

	want := func(root string) []found {
		var out []found
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".xml") {
				out = append(out, found{p, d.Type().IsRegular()})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sortPaths(out)
		return out
	}
	t.Chdir(dir)
	for _, root := range []string{dir, dir + "/", dir + "/./a/..", ".", "./", "a", "many", "empty"} {
		got, err := walkXML(root, nil)
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
		sortPaths(got)
		w := want(root)
		if diff := cmp.Diff(w, got, cmp.AllowUnexported(found{})); diff != "" {
			t.Errorf("%s (-WalkDir +walkXML):\n%s", root, diff)
		}
		if root == dir && len(got) < 600 {
			t.Errorf("%d files found", len(got))
		}
	}
	if _, err := walkXML(filepath.Join(dir, "gone"), nil); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("missing root: err = %v", err)
	}
	// An unreadable subdirectory is an error that names it (root reads
	// every directory, so only when not root).
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Join(dir, "z"), 0)
		defer os.Chmod(filepath.Join(dir, "z"), 0o755)
		if _, err := walkXML(dir, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "z")) {
			t.Errorf("unreadable subdirectory: err = %v", err)
		}
	}
}

// TestLocalSortedAcrossSubtrees checks the order of what Local returns
// when subdirectories' names sort differently with a separator after
// them, and files sit beside subdirectories.
func TestLocalSortedAcrossSubtrees(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/1.xml", "a-b/2.xml", "a.c/3.xml", "a0/4.xml", "b.xml", "a/b/5.xml", "a.xml"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("<testsuite/>"), 0o644)
	}
	srcs, _, err := Local([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, strings.TrimPrefix(s.Name, dir+"/"))
	}
	want := []string{"a-b/2.xml", "a.c/3.xml", "a.xml", "a/1.xml", "a/b/5.xml", "a0/4.xml", "b.xml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestCompareDirs(t *testing.T) {
	names := []string{"a", "a-b", "a.c", "a0", "a/b", "ab", "", "b", "a//", "a-", "A", "a\x00"}
	for _, a := range names {
		for _, b := range names {
			if got, want := compareDirs(a, b), strings.Compare(a+"/", b+"/"); got != want {
				t.Errorf("compareDirs(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestAnyDepthGlobWalk: a glob of the form root/**/NAME.xml is listed by
// the directory walk of root and a match of each name, and lists what
// matching every path of root's tree lists: files whose name matches,
// the .xml files under a directory whose name matches, links and FIFOs
// by name, and nothing by a name in another case or of another extension.
func TestAnyDepthGlobWalk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "a/TEST-1.xml", "a/b/TEST-2.xml", "a/other.xml", "a/TEST-3.XML", "a/TEST-6.xml.txt",
		"TEST-dir.xml/inner.xml", "TEST-dir.xml/deeper/x.xml", "TEST-dir.xml/notes.txt", "c/TEST-4.txt", "c/.hidden/TEST-5.xml", "TEST-0.xml", "a/TEST-d.xml/in.xml")
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.MkdirAll(filepath.Join(dir, "f"), 0o755)
	links := map[string]string{"d/TEST-link.xml": "../a/TEST-1.xml", "f/linkdir": "../a", "f/TEST-linkdir.xml": "../a"}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Skipf("symbolic links: %v", err)
		}
	}
	fifo := filepath.Join(dir, "e", "TEST-fifo.xml")
	os.MkdirAll(filepath.Dir(fifo), 0o755)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	slash := filepath.ToSlash(dir)
	for _, g := range []string{slash + "/**/TEST-*.xml", slash + "/**/*.xml", slash + "/a/**/TEST-*.xml", slash + "/**/{TEST,other}-*.xml",
		slash + "/nope/**/TEST-*.xml", slash + "/TEST-0.xml/**/x.xml", slash + "/**/TEST-?.xml"} {
		t.Run(strings.TrimPrefix(g, slash), func(t *testing.T) {
			g, root, got, want := bothWays(t, g)
			if _, ok := anyDepthXML(g, root); !ok && !strings.Contains(g, "TEST-0.xml/") {
				t.Fatalf("%s is not taken as root/**/NAME.xml", g)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(found{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-every path matched +walk and name matched):\n%s", diff)
			}
			if g == slash+"/**/TEST-*.xml" {
				var names []string
				for _, f := range got {
					names = append(names, strings.TrimPrefix(f.path, dir+"/"))
				}
				wantNames := []string{"TEST-0.xml", "TEST-dir.xml/deeper/x.xml", "TEST-dir.xml/inner.xml", "a/TEST-1.xml", "a/TEST-d.xml/in.xml", "a/b/TEST-2.xml",
					"c/.hidden/TEST-5.xml", "d/TEST-link.xml", "e/TEST-fifo.xml", "f/TEST-linkdir.xml"}
				if diff := cmp.Diff(wantNames, names); diff != "" {
					t.Errorf("files (-want +got):\n%s", diff)
				}
			}
		})
	}
	// Other globs with "**" that name only .xml files: the .xml files
	// listed by the walk, matched whole.
	for _, g := range []string{"/**/b/TEST-*.xml", "/**/TEST-dir.xml/*.xml", "/*/**/TEST-*.xml", "/**/.hid*/**/*.xml", "/a/**/b/*.xml", "/**/{a,c}/**/*.xml"} {
		g, root, got, want := bothWays(t, slash+g)
		if _, ok := anyDepthXML(g, root); ok {
			t.Fatalf("%s taken as root/**/NAME.xml", g)
		}
		sameFiles(t, strings.TrimPrefix(g, slash), got, want)
	}
	for _, c := range []struct{ g, root string }{{"**/a.xml", "."}, {"/**/a.xml", "/"}, {"x/**/a.xml", "x"}} {
		if elem, ok := anyDepthXML(c.g, c.root); !ok || elem != "a.xml" {
			t.Errorf("anyDepthXML(%q, %q) = %q, %v", c.g, c.root, elem, ok)
		}
	}
	for _, g := range []string{"x/**/a.XML", "x/**/*.{xml,XML}", "x/**/b/a.xml", "x/**/**.xml", "x/*/a.xml", "x/**/a.xml.gz"} {
		if _, ok := anyDepthXML(g, "x"); ok {
			t.Errorf("anyDepthXML(%q) took it as root/**/NAME.xml", g)
		}
	}
}

// TestGlobWalkStopsAtItsDepth: a glob without "**" is not walked into
// directories deeper than its matches can be, and lists what matching
// every path of the tree lists.
func TestGlobWalkStopsAtItsDepth(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "a/x.xml", "a/sub/y.xml", "a/sub/deep/z.xml", "a/sub/x.xml/inner.xml", "b/x.xml", "b/sub/x.xml", "c.xml")
	// Every path of the tree, matched: what the walk lists, unpruned.
	every := func(g, root string) []found {
		var out []found
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && globs.Match(g, filepath.ToSlash(path)) {
				if d.IsDir() {
					more, _ := walkXML(path, nil)
					out = append(out, more...)
					return filepath.SkipDir
				}
				out = append(out, found{path, d.Type().IsRegular()})
			}
			return nil
		})
		return out
	}
	slash := filepath.ToSlash(dir)
	for _, g := range []string{"/a/*.xml", "/*/x.xml", "/a/s*/*.xml", "/{a/sub,b}/*.xml", "/a/*/x.xml", "/*.xml", "/?/sub/x.xml"} {
		g, root, err := splitGlob(slash + g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := expand(g)
		if err != nil {
			t.Fatal(err)
		}
		sameFiles(t, strings.TrimPrefix(g, slash), got, every(g, root))
	}
	// Unreadable below the depth: not walked into, so not an error.
	locked := filepath.Join(dir, "a", "sub", "deep")
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o755)
	if _, err := expand(slash + "/a/*.xml"); err != nil {
		t.Errorf("a directory below the glob's depth was walked into: %v", err)
	}
}

// sameFiles wants got to list what want lists, in any order, and want to
// list something: a glob that matches nothing tests nothing.
func sameFiles(t *testing.T, glob string, got, want []found) {
	t.Helper()
	sortPaths(got)
	sortPaths(want)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(found{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s (-every path matched +listed):\n%s", glob, diff)
	}
	if len(want) == 0 {
		t.Errorf("%s matches nothing: the case tests nothing", glob)
	}
}

// bothWays lists glob with expand and with the general walk of every
// path, walkGlob, each sorted.
func bothWays(t *testing.T, glob string) (g, root string, got, want []found) {
	t.Helper()
	g, root, err := splitGlob(glob)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = expand(g); err != nil {
		t.Fatal(err)
	}
	if want, err = walkGlob(g, root); err != nil {
		t.Fatal(err)
	}
	sortPaths(got)
	sortPaths(want)
	return g, root, got, want
}
