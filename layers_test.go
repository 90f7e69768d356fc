package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layers is ARCHITECTURE.md's order of the packages: a package may import
// only packages of lower layers (and its own layer's internal helpers are
// at layer 0). Data flows one way, from JUnit bytes up to GitHub.
var layers = map[string]int{
	"model": 0, "signature": 0, "sprt": 0, "internal/defaults": 0, "internal/heapgoal": 0, "internal/hugepage": 0, "internal/par": 0, "internal/wilson": 0, "internal/glob": 0, "internal/gfm": 0, "internal/retry": 1, "internal/pieces": 0, "internal/corpus": 0, "release": 0, "release/pin": 1,
	"junit":   1,
	"history": 2, "ledger": 2,
	"score": 3, "gate": 3,
	"render": 4, "owners": 4, "synth": 4, "explain": 5,
	"ghapi": 5, "artifact": 5, "collect": 6, "publish": 6, "matrix": 6, "ghapi/ghfake": 6, "ghapi/ghfake/internal/openapi": 5,
	"config": 7,
	"action": 8,
	"demo":   9,
	"cli":    10,
}

// TestLayers: no import runs back up the layers, and the action imports
// at most 8 of flakegate's packages.
func TestLayers(t *testing.T) {
	const prefix = "github.com/flakegate/flakegate/pkg/"
	imports := map[string]map[string]bool{}
	err := filepath.WalkDir("pkg", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "testdata") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(strings.TrimPrefix(filepath.Dir(p), "pkg"+string(filepath.Separator)))
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(path, prefix) {
				imports[pkg][strings.TrimPrefix(path, prefix)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, ims := range imports {
		lp, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers and to ARCHITECTURE.md", pkg)
			continue
		}
		for im := range ims {
			if li, ok := layers[im]; ok && li >= lp && !strings.HasPrefix(im, pkg+"/") {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports run down the layers only", pkg, lp, im, li)
			}
		}
	}
	var action []string
	for im := range imports["action"] {
		action = append(action, im)
	}
	sort.Strings(action)
	if len(action) > 8 {
		t.Errorf("pkg/action imports %d of flakegate's packages, at most 8: %v", len(action), action)
	}
}
