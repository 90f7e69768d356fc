package history

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
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

// TestLayoutsGiveOneHistory: the same results written one file per run (its
// passes self-closing or across two lines, attributes after the time, a
// timestamp on each testcase), one file per class, one file per 7 tests or
// a suite per 7 tests in one file per run give the same tests, runs and
// cells; and cell lists are sized by runs, not by files.
func TestLayoutsGiveOneHistory(t *testing.T) {
	spec := synth.Bench()
	spec.Commits, spec.Tests = 8, 120
	want := load1(t, layoutSources(t, spec, layouts.Run))
	runs := len(want.Runs)
	for _, l := range []layouts.Layout{layouts.Jest, layouts.Mocha, layouts.Nextest, layouts.Class, layouts.Small, layouts.Suites, layouts.Workers} {
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
					// A list of the exact length.
					if cap(x.Cells) > runs {
						t.Fatalf("%d workers: %s has room for %d cells from %d files of %d runs", workers, x.ID, cap(x.Cells), len(srcs), runs)
					}
				}
			}
		})
	}
}

// TestMergeGathersInOrder: with one leg per run, Merge puts each test's
// cells in order and counts them as it gathers them; the history is the
// one that gathering first and putting in order after gives, whichever
// builders read which files, in any order.
func TestMergeGathersInOrder(t *testing.T) {
	spec := synth.Bench()
	spec.Commits, spec.Tests = 12, 60
	for _, l := range []layouts.Layout{layouts.Run, layouts.Class, layouts.Suites} {
		srcs := layoutSources(t, spec, l)
		read := func() []*Builder {
			bs := NewBuilders(3)
			for i := range srcs {
				bs[i%3].Add(srcs[len(srcs)-1-i]) // latest first, each run's files spread over the builders
			}
			return bs
		}
		want, got := merge(read(), false), merge(read(), true)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Test{}, Sig{}, order{})); diff != "" {
			t.Fatalf("%s (-in order after gathering +as gathered):\n%s", l, diff)
		}
		failed := 0
		for _, r := range got.Runs {
			failed += r.Failed
		}
		if len(got.Runs) != spec.Commits*3 || failed == 0 {
			t.Fatalf("%s: %d runs with %d failures: the history does not exercise ordering", l, len(got.Runs), failed)
		}
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
	// Sized by files, as once, this was 800 tests × 20,000 cells.
	if cells > len(h.Tests)*runs {
		t.Errorf("room for %d cells for %d tests × %d runs", cells, len(h.Tests), runs)
	}
}

// TestPlan: files that share a base name are read one after another by
// one worker, in the order given; a series longer than its share is cut so
// that every worker has at least four units.
func TestPlan(t *testing.T) {
	names := func(srcs []Source, units [][]int32) [][]string {
		var out [][]string
		for _, u := range units {
			var us []string
			for _, i := range u {
				us = append(us, srcs[i].Name)
			}
			out = append(out, us)
		}
		return out
	}
	src := func(names ...string) []Source {
		var out []Source
		for _, n := range names {
			out = append(out, Source{Name: n})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		srcs    []Source
		workers int
		units   [][]string
	}{
		{"a file per class per run", src("r1/A.xml", "r1/B.xml", "r2/A.xml", "r2/B.xml", "r3/A.xml", "r3/B.xml"), 1,
			[][]string{{"r1/A.xml", "r2/A.xml"}, {"r3/A.xml"}, {"r1/B.xml", "r2/B.xml"}, {"r3/B.xml"}}},
		{"a file per run", src("r1.xml", "r2.xml", "r3.xml"), 2,
			[][]string{{"r1.xml"}, {"r2.xml"}, {"r3.xml"}}},
		{"one name in every run, cut for two workers", src("a/junit.xml", "b/junit.xml", "c/junit.xml", "d/junit.xml", "e/junit.xml", "f/junit.xml", "g/junit.xml", "h/junit.xml", "i/junit.xml"), 2,
			[][]string{{"a/junit.xml", "b/junit.xml"}, {"c/junit.xml", "d/junit.xml"}, {"e/junit.xml", "f/junit.xml"}, {"g/junit.xml", "h/junit.xml"}, {"i/junit.xml"}}},
		{"artifact labels and Windows paths", src(`run 1 / junit / x\TEST-A.xml`, "run 2 / junit / x/TEST-A.xml"), 1,
			[][]string{{`run 1 / junit / x\TEST-A.xml`}, {"run 2 / junit / x/TEST-A.xml"}}},
		{"one name repeated among unique ones", src("a.xml", "b.xml", "c.xml", "d.xml", "e/d.xml"), 1,
			[][]string{{"a.xml"}, {"b.xml"}, {"c.xml"}, {"d.xml", "e/d.xml"}}},
	} {
		if diff := cmp.Diff(c.units, names(c.srcs, plan(c.srcs, c.workers))); diff != "" {
			t.Errorf("%s: units (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestDenseAndSparseGather: Merge puts a test's cells in order by their
// runs' places when the test has cells in an eighth of the runs or more,
// and sorts them otherwise. A history with both kinds of tests, each run
// in two documents (one a test's second attempt, read by another
// builder), merges as it does when the cells are put in order after
// gathering, on two and on three builders.
func TestDenseAndSparseGather(t *testing.T) {
	const runs = 40
	var docs []string
	for r := range runs {
		for half := range 2 {
			var b strings.Builder
			fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="c%02d"/><property name="run_id" value="%d"/></properties>`, r/2, r)
			if half == 0 {
				fmt.Fprintf(&b, `<testcase classname="m" name="dense"/>`) // every run
				if r%3 == 0 {
					fmt.Fprintf(&b, `<testcase classname="m" name="third"><failure message="x%d"/></testcase>`, r%2) // a third of them
				}
				if r == 7 || r == 31 {
					b.WriteString(`<testcase classname="m" name="sparse"><skipped/></testcase>`) // two of them
				}
			} else {
				b.WriteString(`<testcase classname="m" name="dense"><failure message="again"/></testcase>`) // a second attempt, folded
				if r == 31 {
					b.WriteString(`<testcase classname="m" name="sparse"/>`)
				}
			}
			b.WriteString(`</testsuite>`)
			docs = append(docs, b.String())
		}
	}
	srcs := docSources(docs, nil)
	for _, n := range []int{2, 3} {
		read := func() []*Builder {
			bs := NewBuilders(n)
			for i := range srcs {
				bs[(i/2+i%2)%n].Add(srcs[len(srcs)-1-i]) // a run's two documents in two builders, latest first
			}
			return bs
		}
		want, got := merge(read(), false), merge(read(), true)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Test{}, Sig{}, order{})); diff != "" {
			t.Fatalf("%d builders (-in order after gathering +as gathered):\n%s", n, diff)
		}
		if len(got.Runs) != runs || len(got.Tests) != 3 {
			t.Fatalf("%d builders: %d runs, %d tests", n, len(got.Runs), len(got.Tests))
		}
		for _, ts := range got.Tests {
			if ts.ID == "m::dense" && (len(ts.Cells) != runs || ts.Cells[0].Pass != 1 || ts.Cells[0].Fail != 1) {
				t.Fatalf("%d builders: dense test's cells %v, want one a run, each a pass and a failure", n, ts.Cells[:2])
			}
		}
	}
}
