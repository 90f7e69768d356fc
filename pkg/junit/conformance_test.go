package junit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/internal/corpus"
	"github.com/flakegate/flakegate/pkg/model"
)

// corpusDir is the conformance corpus: ../shared's, or the copy in
// fixtures when the project is cloned alone.
var corpusDir = corpus.Dir()

type expectation struct {
	Path      string `json:"path"`
	Expect    string `json:"expect"`
	Testcases int    `json:"testcases"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	Errors    int    `json:"errors"`
	Skipped   int    `json:"skipped"`
	Flaky     int    `json:"flaky_evidence_tests"`
}

func loadExpectations(t testing.TB, dir string) []expectation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("conformance corpus: %v", err)
	}
	var exps []expectation
	if err := json.Unmarshal(b, &exps); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	if len(exps) == 0 {
		t.Fatal("expected.json lists no files")
	}
	return exps
}

// TestConformance checks every file of the shared corpus and of the
// real-tool fixtures: totals of <testcase> elements by final outcome, the
// number of tests with flaky evidence (rerun children, or a repeated
// testcase that both passed and failed), and refusal of the files marked
// "error".
func TestConformance(t *testing.T) {
	for _, dir := range []string{corpusDir, "../../fixtures/tools"} {
		if _, err := os.Stat(filepath.Join(dir, "expected.json")); errors.Is(err, os.ErrNotExist) && dir != corpusDir {
			continue
		}
		exps := loadExpectations(t, dir)
		r := NewReader()
		for _, e := range exps {
			t.Run(e.Path, func(t *testing.T) {
				f, err := os.Open(filepath.Join(dir, e.Path))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				type seen struct{ rerun, pass, fail bool }
				keys := map[[2]string]*seen{}
				got, err := r.Parse(e.Path, f, func(c *Case) error {
					k := [2]string{c.Classname, c.Name}
					s := keys[k]
					if s == nil {
						s = &seen{}
						keys[k] = s
					}
					s.rerun = s.rerun || len(c.Reruns) > 0
					s.pass = s.pass || c.Outcome == model.Passed
					s.fail = s.fail || c.Outcome.IsFailure()
					return nil
				})
				flaky := 0
				for _, s := range keys {
					if s.rerun || s.pass && s.fail {
						flaky++
					}
				}
				if e.Expect == "error" {
					var pe *ParseError
					if !errors.As(err, &pe) {
						t.Fatalf("Parse() error = %v, want a *ParseError (file must be refused)", err)
					}
					if pe.File != e.Path {
						t.Errorf("ParseError.File = %q, want %q", pe.File, e.Path)
					}
					t.Logf("refused: %v", err)
					return
				}
				if err != nil {
					t.Fatalf("Parse() error = %v", err)
				}
				want := Totals{Testcases: e.Testcases, Passed: e.Passed, Failed: e.Failed, Errors: e.Errors, Skipped: e.Skipped}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("totals (-want +got):\n%s", diff)
				}
				if flaky != e.Flaky {
					t.Errorf("tests with flaky evidence = %d, want %d", flaky, e.Flaky)
				}
			})
		}
	}
}
