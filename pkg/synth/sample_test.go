package synth

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite fixtures/history from the generator")

const sampleDir = "../../fixtures/history"

// TestSampleFixture keeps fixtures/history reproducible: the committed
// files are exactly what Sample generates. Refresh with -update.
func TestSampleFixture(t *testing.T) {
	tmp := t.TempDir()
	spec := Sample()
	paths, err := spec.WriteDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		old, _ := filepath.Glob(filepath.Join(sampleDir, "run-*.xml"))
		for _, p := range old {
			os.Remove(p)
		}
		os.MkdirAll(sampleDir, 0o755)
	}
	for _, p := range paths {
		want, _ := os.ReadFile(p)
		dst := filepath.Join(sampleDir, filepath.Base(p))
		if *update {
			if err := os.WriteFile(dst, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s differs from the generator (err %v); run go test ./pkg/synth -update", dst, err)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(sampleDir, "run-*.xml"))
	if len(committed) != len(paths) {
		t.Errorf("fixtures/history has %d run files, the generator makes %d", len(committed), len(paths))
	}
}
