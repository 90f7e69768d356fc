package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseUnifiedDiff: ParseUnifiedDiff never panics; a diff it accepts
// gives files with a path and a GitHub status, and hunk lines numbered from 1
// in the file version they belong to. Seeds: testdata/pr.diff and small
// hand-written diffs of each kind the parser reads.
func FuzzParseUnifiedDiff(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "pr.diff"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	for _, s := range []string{
		"diff --git a/src/app.go b/src/app.go\nindex 1..2 100644\n--- a/src/app.go\n+++ b/src/app.go\n@@ -10,2 +10,3 @@ func main() {\n a\n+b\n c\n",
		"diff --git a/t/new_test.go b/t/new_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/t/new_test.go\n@@ -0,0 +1 @@\n+package t\n",
		"diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n\\ No newline at end of file\n",
		"diff --git a/tests/a.py b/tests/b.py\nsimilarity index 100%\nrename from tests/a.py\nrename to tests/b.py\n",
		"diff --git a/x.py b/y.py\ncopy from x.py\ncopy to y.py\n",
		"diff --git \"a/with space.txt\" \"b/with space.txt\"\nBinary files differ\n",
		"--- conftest.py\t2026-01-01 00:00:00\n+++ conftest.py\t2026-01-02 00:00:00\n@@ -1 +1 @@\n-a\n+b\n",
		"--- a/x\r\n+++ b/x\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n",
		"@@ -1 +1 @@\n-a\n+b\n",
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n",
		"",
	} {
		f.Add(s)
	}
	statuses := map[string]bool{"added": true, "removed": true, "modified": true, "renamed": true, "copied": true, "changed": true, "unchanged": true}
	f.Fuzz(func(t *testing.T, text string) {
		changes, err := ParseUnifiedDiff(text)
		if err != nil {
			if changes != nil {
				t.Errorf("error %v with %d changes, want none", err, len(changes))
			}
			return
		}
		for i, c := range changes {
			if c.Path == "" {
				t.Errorf("change %d %+v: empty path", i, c)
			}
			if !statuses[c.Status] {
				t.Errorf("change %d %+v: status %q is not GitHub's", i, c, c.Status)
			}
			added, removed := hunkLines(c.Patch)
			for _, l := range added {
				if l.No < 1 {
					t.Errorf("change %d %+v: added line %q numbered %d", i, c, l.Text, l.No)
				}
			}
			for _, l := range removed {
				if l.No < 1 {
					t.Errorf("change %d %+v: removed line %q numbered %d", i, c, l.Text, l.No)
				}
			}
		}
	})
}
