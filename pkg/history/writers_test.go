package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriterIdentities: the tests of each writer's sample in
// fixtures/junit-writers, read with the run where its flaky test failed,
// are the same tests in both runs, with the ids expected.json lists. Same
// names under other describe blocks, steps or groups are other tests, and
// so are the same describe path and name in two files of one document
// (Node's top-level tests, all classname "test", and Bun's describe
// blocks, told apart by file). Karma's tests keep their ids when the
// browser is upgraded.
func TestWriterIdentities(t *testing.T) {
	const dir = "../../fixtures/junit-writers"
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exps []struct {
		Path       string   `json:"path"`
		HistoryIDs []string `json:"history_ids"`
	}
	if err := json.Unmarshal(b, &exps); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range exps {
		tool := strings.Split(e.Path, "/")[0]
		if seen[tool] {
			continue
		}
		seen[tool] = true
		t.Run(tool, func(t *testing.T) {
			other := strings.Replace(e.Path, ".xml", "-flaky.xml", 1)
			files := []string{e.Path, other}
			if tool == "karma" {
				files = append(files, "karma/junit-chrome125.xml")
			}
			var srcs []Source
			for _, f := range files {
				srcs = append(srcs, fileSource(filepath.Join(dir, f)))
			}
			h, err := Load(context.Background(), srcs, Options{Workers: 1})
			if err != nil || len(h.Skipped) > 0 {
				t.Fatal(err, h.Skipped)
			}
			runs := len(files)
			if tool == "robot" {
				runs = 1 // both files state run_id 12345678 (--metadata run_id:...): one run
			}
			if len(h.Runs) != runs {
				t.Errorf("%d runs, want %d", len(h.Runs), runs)
			}
			var ids []string
			for _, x := range h.Tests {
				ids = append(ids, x.ID)
				if len(x.Cells) != runs {
					t.Errorf("%s: in %d runs, want %d", x.ID, len(x.Cells), runs)
				}
			}
			if diff := cmp.Diff(e.HistoryIDs, ids); diff != "" {
				t.Errorf("test ids (-want +got):\n%s", diff)
			}
		})
	}
}
