package history

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/fixtures/bench/layouts"
	"github.com/flakegate/flakegate/pkg/synth"
)

// layoutSources generates spec's history in memory in layout l.
func layoutSources(t testing.TB, spec synth.Spec, l layouts.Layout) []Source {
	t.Helper()
	var srcs []Source
	var buf bytes.Buffer
	err := spec.Generate(func(r synth.Run) (io.Writer, func() error, error) {
		buf.Reset()
		return &buf, func() error {
			return layouts.Split(l, fmt.Sprintf("run-%03d-%d-%d", r.Commit, r.ID, r.Attempt), buf.Bytes(), func(name string, doc []byte) error {
				doc = bytes.Clone(doc) // Split reuses its buffers
				srcs = append(srcs, Source{Name: name, Open: func() (io.ReadCloser, error) {
					return io.NopCloser(bytes.NewReader(doc)), nil
				}})
				return nil
			})
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srcs
}

// TestLayoutsGiveOneHistory: the same results written one file per run,
// one file per class, one file per 7 tests or a suite per 7 tests in one
// file per run give the same tests, runs and cells; and cell lists are
// sized by runs, not by files.
func TestLayoutsGiveOneHistory(t *testing.T) {
	spec := synth.Bench()
	spec.Commits, spec.Tests = 8, 120
	want := load1(t, layoutSources(t, spec, layouts.Run))
	runs := len(want.Runs)
	for _, l := range []layouts.Layout{layouts.Class, layouts.Small, layouts.Suites} {
		t.Run(string(l), func(t *testing.T) {
			srcs := layoutSources(t, spec, l)
			for _, workers := range []int{1, 3} {
				h, err := Load(context.Background(), srcs, Options{Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Tests, h.Tests, cmpopts.IgnoreUnexported(Test{}, Sig{}), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("%d workers, %d files: tests differ (-run layout +%s):\n%s", workers, len(srcs), l, diff)
				}
				if len(h.Runs) != runs || h.Totals != want.Totals {
					t.Errorf("%d workers: %d runs, totals %+v; want %d, %+v", workers, len(h.Runs), h.Totals, runs, want.Totals)
				}
				for _, x := range h.Tests {
					// Within twice the runs, as append would have it.
					if cap(x.Cells) > 2*runs+firstCells {
						t.Fatalf("%d workers: %s has room for %d cells from %d files of %d runs", workers, x.ID, cap(x.Cells), len(srcs), runs)
					}
				}
			}
		})
	}
}

func load1(t *testing.T, srcs []Source) *History {
	t.Helper()
	h, err := Load(context.Background(), srcs, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestManyFilesPerRunStayBounded: 20,000 files of two tests each, 50 runs
// of 400 files, hold the cells of 800 tests × 50 runs, not tests × files.
func TestManyFilesPerRunStayBounded(t *testing.T) {
	const runs, perRun = 50, 400
	var srcs []Source
	for r := range runs {
		for k := range perRun {
			doc := fmt.Sprintf(`<testsuite name="C%d" timestamp="2026-01-02T03:04:05"><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties><testcase classname="C%d" name="t"/><testcase classname="C%d" name="u"/></testsuite>`, k, r, r, k, k)
			srcs = append(srcs, stringSource(fmt.Sprintf("r%d/TEST-C%d.xml", r, k), doc))
		}
	}
	h, err := Load(context.Background(), srcs, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Tests) != 2*perRun || len(h.Runs) != runs {
		t.Fatalf("%d tests, %d runs", len(h.Tests), len(h.Runs))
	}
	cells := 0
	for _, x := range h.Tests {
		cells += cap(x.Cells)
	}
	// Sized by files, as before, this was 800 tests × 20,000 cells.
	if cells > 2*len(h.Tests)*(runs+firstCells) {
		t.Errorf("room for %d cells for %d tests × %d runs", cells, len(h.Tests), runs)
	}
}
