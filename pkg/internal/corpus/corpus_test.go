package corpus

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCopyMatchesShared: the copy in fixtures holds every file of the
// shared corpus, byte for byte, and nothing else. Without the shared
// folder (a clone alone) there is nothing to compare.
func TestCopyMatchesShared(t *testing.T) {
	if _, err := os.Stat(Shared); err != nil {
		t.Skipf("no shared corpus beside the project (%v): the tests read the copy in fixtures", err)
	}
	files := func(root string) map[string][]byte {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			m[rel] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	shared, copied := files(Shared), files(Copy)
	for name, b := range shared {
		if c, ok := copied[name]; !ok {
			t.Errorf("%s: in the shared corpus, not in the copy: cp -r ../shared/conformance/junit fixtures/conformance/", name)
		} else if !bytes.Equal(b, c) {
			t.Errorf("%s: the copy differs from the shared corpus", name)
		}
	}
	for name := range copied {
		if _, ok := shared[name]; !ok {
			t.Errorf("%s: in the copy, not in the shared corpus", name)
		}
	}
	if len(shared) < 100 {
		t.Errorf("the shared corpus has %d files; want the whole corpus", len(shared))
	}
}
