package history

import (
	"bytes"
	stdcmp "cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/internal/hugepage"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/synth"
)

// memSources generates a synthetic history in memory.
func memSources(t testing.TB, spec synth.Spec) []Source {
	t.Helper()
	var srcs []Source
	err := spec.Generate(func(r synth.Run) (io.Writer, func() error, error) {
		var buf bytes.Buffer
		name := fmt.Sprintf("run-%s-%d-%d.xml", r.SHA[:7], r.ID, r.Attempt)
		srcs = append(srcs, Source{Name: name, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
		}})
		return &buf, func() error { return nil }, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srcs
}

func stringSource(name, doc string) Source {
	return Source{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil }}
}

func TestLoadFoldsAttemptsAndRuns(t *testing.T) {
	docs := []Source{
		stringSource("a.xml", `<testsuite name="s" timestamp="2026-11-02T00:00:00">
<properties><property name="commit_sha" value="c2"/><property name="run_id" value="20"/></properties>
<testcase classname="k" name="t" file="k.py" line="3"><failure message="boom at 0xc000010000"/></testcase>
<testcase classname="k" name="t"/>
<testcase classname="k" name="u"><skipped/></testcase>
</testsuite>`),
		stringSource("b.xml", `<testsuite name="s" timestamp="2026-11-01T00:00:00">
<properties><property name="commit_sha" value="c1"/><property name="run_id" value="10"/></properties>
<testcase classname="k" name="t"><failure message="boom at 0xc000020000"/></testcase>
</testsuite>`),
		stringSource("bad.xml", `<html/>`),
		// A second file of run 20 (Surefire writes one file per class).
		stringSource("c.xml", `<testsuite name="s2" timestamp="2026-11-02T00:00:00">
<properties><property name="commit_sha" value="c2"/><property name="run_id" value="20"/></properties>
<testcase classname="k" name="t"><flakyFailure message="boom at 0xc000030000"/></testcase>
</testsuite>`),
	}
	for _, workers := range []int{1, 2, 4} {
		h, err := Load(context.Background(), docs, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Runs) != 2 || h.Runs[0].CommitSHA != "c1" || h.Runs[1].CommitSHA != "c2" {
			t.Fatalf("runs = %+v", h.Runs)
		}
		if h.Runs[1].Tests != 1 || h.Runs[1].Failed != 0 || h.Runs[0].Failed != 1 {
			t.Errorf("run totals = %+v", h.Runs)
		}
		tt := h.Tests[0]
		want := []Cell{{Run: 0, Fail: 1, Sig: 1}, {Run: 1, Pass: 2, Fail: 2, Sig: 1}}
		if diff := cmp.Diff(want, tt.Cells); diff != "" {
			t.Errorf("workers=%d cells (-want +got):\n%s", workers, diff)
		}
		if len(tt.Sigs) != 1 || tt.Sigs[0].Count != 3 || tt.Sigs[0].Message != "boom at 0xc000020000" {
			t.Errorf("sigs = %+v", tt.Sigs)
		}
		if tt.File != "k.py" || tt.Line != 3 {
			t.Errorf("file = %s:%d", tt.File, tt.Line)
		}
		if diff := cmp.Diff([]Skipped{{Path: "bad.xml", Error: "line 1: root element <html> is not JUnit: expected <testsuites> or <testsuite>"}}, h.Skipped); diff != "" {
			t.Errorf("skipped (-want +got):\n%s", diff)
		}
		if h.Totals.Testcases != 5 || h.Totals.Skipped != 1 {
			t.Errorf("totals = %+v", h.Totals)
		}
	}
}

func TestRunOverride(t *testing.T) {
	src := stringSource("x.xml", `<testsuite name="s"><testcase name="t"/></testsuite>`)
	src.Run = &model.Run{CommitSHA: "api-sha", RunID: "5", Attempt: 2, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Branch: "main"}
	h, err := Load(context.Background(), []Source{src}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := h.Runs[0]; r.CommitSHA != "api-sha" || r.RunID != "5" || r.Attempt != 2 || r.Branch != "main" {
		t.Errorf("run = %+v", r)
	}
}

func TestLoadSynthetic(t *testing.T) {
	spec := synth.Spec{Commits: 10, RunsPerCommit: 3, Tests: 100, Seed: 1, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]synth.Behavior{3: {Kind: synth.Flaky, P: 0.5}, 4: {Kind: synth.Retried, P: 1}}}
	h, err := Load(context.Background(), memSources(t, spec), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 30 || len(h.Tests) != 100 || h.Totals.Testcases != 30*100+30 {
		t.Fatalf("runs=%d tests=%d totals=%+v", len(h.Runs), len(h.Tests), h.Totals)
	}
	for _, c := range h.Tests[4].Cells {
		if !c.Mixed() {
			t.Errorf("retried test cell %+v is not mixed", c)
		}
	}
}

func TestSortCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		var cells []Cell
		for run := 0; run < 1+rng.IntN(12); run++ {
			start := int32(rng.IntN(50))
			for i := 0; i < rng.IntN(20); i++ {
				start += int32(1 + rng.IntN(3))
				cells = append(cells, Cell{Run: start, Pass: uint16(i)})
			}
		}
		got := slices.Clone(cells)
		sortCells(got, nil)
		if len(got) != len(cells) || !slices.IsSortedFunc(got, func(a, b Cell) int { return stdcmp.Compare(a.Run, b.Run) }) {
			t.Fatalf("sortCells(%v) = %v", cells, got)
		}
	}
}

// TestFailedDocumentLeavesNoTests: a document refused part way through
// adds nothing, not even the names of the tests it had read.
func TestFailedDocumentLeavesNoTests(t *testing.T) {
	h, err := Load(context.Background(), []Source{
		stringSource("ok.xml", `<testsuite name="s"><testcase name="kept"/></testsuite>`),
		stringSource("cut.xml", `<testsuite name="s"><testcase name="phantom"/><testcase name="x">`),
	}, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Tests) != 1 || h.Tests[0].ID != "s::kept" || len(h.Skipped) != 1 {
		t.Errorf("tests = %v, skipped = %v", h.Tests, h.Skipped)
	}
}

// TestMemoryFollowsTestsByRuns: twenty attempts of every test in every run
// take the same cells as one: what is kept grows with tests × runs, not
// with the number of results.
func TestMemoryFollowsTestsByRuns(t *testing.T) {
	doc := func(run, attempts int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>`, run, run)
		for test := 0; test < 50; test++ {
			for a := 0; a < attempts; a++ {
				fmt.Fprintf(&b, `<testcase classname="k" name="t%d"/>`, test)
			}
		}
		return b.String() + `</testsuite>`
	}
	cells := func(attempts int) (n, results int) {
		var srcs []Source
		for run := 0; run < 30; run++ {
			srcs = append(srcs, stringSource(fmt.Sprintf("r%d.xml", run), doc(run, attempts)))
		}
		h, err := Load(context.Background(), srcs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range h.Tests {
			n += len(x.Cells)
		}
		return n, h.Totals.Testcases
	}
	one, r1 := cells(1)
	twenty, r20 := cells(20)
	if one != 50*30 || twenty != one || r20 != 20*r1 {
		t.Errorf("cells: %d for %d results, %d for %d results; want 1,500 both", one, r1, twenty, r20)
	}
}

// TestDefaultFillsWhatDocumentsLeaveOut: Source.Default (analyze
// --commit-sha, --run-id) gives a run what its document does not state;
// the document's own values and the CI system's (Source.Run) win.
func TestDefaultFillsWhatDocumentsLeaveOut(t *testing.T) {
	doc := func(props string) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(`<testsuite name="s">` + props + `<testcase classname="c" name="t"/></testsuite>`)), nil
		}
	}
	def := &model.Run{CommitSHA: "given", RunID: "9"}
	srcs := []Source{
		{Name: "bare.xml", Open: doc(""), Default: def},
		{Name: "own.xml", Open: doc(`<properties><property name="commit_sha" value="own"/></properties>`), Default: def},
		{Name: "ci.xml", Open: doc(""), Default: def, Run: &model.Run{CommitSHA: "ci", RunID: "5"}},
	}
	h, err := Load(context.Background(), srcs, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range h.Runs {
		got[r.Source] = r.CommitSHA + "/" + r.RunID
	}
	want := map[string]string{"bare.xml": "given/9", "own.xml": "own/9", "ci.xml": "ci/5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// TestNewCells: a merged history's cells, below and above the size taken
// on huge pages, are zeroed, of the length asked, and hold what is written
// to them through a collection.
func TestNewCells(t *testing.T) {
	for _, n := range []int{0, 1, hugepage.Min/12 - 1, hugepage.Min / 12, hugepage.Min/12*3 + 7} {
		cells := newCells(n)
		if len(cells) != n || cap(cells) != n {
			t.Fatalf("newCells(%d): len %d, cap %d", n, len(cells), cap(cells))
		}
		for i := range cells {
			if cells[i] != (Cell{}) {
				t.Fatalf("newCells(%d)[%d] = %+v, want zero", n, i, cells[i])
			}
			cells[i] = Cell{Run: int32(i), Pass: uint16(i), Fail: 1, Skip: 2, Sig: uint16(i >> 16)}
		}
		runtime.GC()
		for i := range cells {
			if want := (Cell{Run: int32(i), Pass: uint16(i), Fail: 1, Skip: 2, Sig: uint16(i >> 16)}); cells[i] != want {
				t.Fatalf("newCells(%d)[%d] = %+v after a collection, want %+v", n, i, cells[i], want)
			}
		}
	}
}
