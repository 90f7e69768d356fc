package collect

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

type logLines []string

func (l *logLines) Infof(f string, a ...any)    { *l = append(*l, fmt.Sprintf(f, a...)) }
func (l *logLines) Noticef(f string, a ...any)  { *l = append(*l, fmt.Sprintf(f, a...)) }
func (l *logLines) Warningf(f string, a ...any) { *l = append(*l, fmt.Sprintf(f, a...)) }

// TestMatrixManifestPlace: the manifest is read from the directory of the
// base runs' files, one directory for all; not from the parent of a run
// joined from a directory's files (its source is the directory), which
// may be the workspace, where a pull request can put such a file.
func TestMatrixManifestPlace(t *testing.T) {
	ws := t.TempDir()
	sha := func(s string) string { return fmt.Sprintf("%040x", len(s)) }
	manifest := fmt.Sprintf(`{"base":{"rev":"origin/main","sha":"%s"},"head":{"rev":"h","sha":"%s"}}`, sha("base"), sha("head!"))
	for _, d := range []string{ws, filepath.Join(ws, "results")} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, model.MatrixManifestFile), []byte(manifest), 0o644)
	}
	runs := func(sources ...string) *history.History {
		h := &history.History{}
		for _, s := range sources {
			h.Runs = append(h.Runs, history.Run{Run: model.Run{Source: s}})
		}
		return h
	}
	for _, c := range []struct {
		name string
		base *history.History
		want bool
	}{
		{"the runs' files", runs("results/base-1.xml", "results/base-2.xml"), true},
		{"files of two directories", runs("results/base-1.xml", "other/base-2.xml"), false},
		{"runs joined from directories", runs("shard-a", "shard-b"), false},
	} {
		var log logLines
		if got := matrixManifest(ws, c.base, &log); (got != nil) != c.want {
			t.Errorf("%s: manifest %+v, want read: %v (log %q)", c.name, got, c.want, log)
		}
	}
}
