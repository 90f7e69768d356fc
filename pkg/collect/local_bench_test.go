package collect

import (
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/fixtures/bench/layouts"
)

// BenchmarkLocal lists the benchmark history in Surefire's layout (7,200
// files in 180 directories) as the command line does, and as the action
// does from its workspace, where each file must be confined to it: the
// confinement is checked once per directory, not once per file.
//
//	go test -run '^$' -bench Local -benchtime 20x -count 6 ./pkg/collect
func BenchmarkLocal(b *testing.B) {
	dir, err := layouts.Dir(layouts.Class, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, root, path string
	}{{"cli", "", dir}, {"workspace", filepath.Dir(dir), filepath.Base(dir)}, {"glob", "", filepath.Join(dir, "**", "TEST-*.xml")}, {"glob-depth", "", filepath.Join(dir, "*", "TEST-*.xml")}, {"glob-tail", "", filepath.Join(dir, "**", "run-*", "TEST-*.xml")}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				srcs, missing, err := LocalIn(c.root, []string{c.path})
				if err != nil || len(srcs) != 7200 || len(missing) != 0 {
					b.Fatalf("%d sources, %v, %v", len(srcs), missing, err)
				}
			}
		})
	}
}
