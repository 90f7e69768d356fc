package history

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSlotsKeepEveryCell puts cells of every kind in a builder's chains,
// the plain kinds a slot holds alone (one pass, one skip) and the rest
// (failures, several attempts, a signature, a run past slotIndex), then
// changes some in place as commit does (a plain cell made rich), and reads
// each chain back through appendCells, with runs renumbered and
// signatures mapped.
func TestSlotsKeepEveryCell(t *testing.T) {
	b := NewBuilders(1)[0]
	rng := rand.New(rand.NewPCG(3, 4))
	const tests = 40
	want := make([][]Cell, tests)
	type at struct{ k, i int32 }
	var where [tests][]at
	b.first, b.last, b.count = make([]int32, tests), make([]int32, tests), make([]int32, tests)
	for ti := range tests {
		b.first[ti], b.last[ti] = -1, -1
	}
	kinds := []Cell{{Pass: 1}, {Skip: 1}, {Pass: 2}, {Fail: 1}, {Pass: 1, Fail: 1}, {Pass: 1, Skip: 1}, {Skip: 2}, {Fail: 3, Skip: 1}, {}}
	for range 3000 {
		ti := rng.IntN(tests)
		c := kinds[rng.IntN(len(kinds))]
		c.Run = rng.Int32N(1000)
		n := b.count[ti]
		k, i := b.last[ti], n%chunkCells
		if i == 0 {
			k = b.linkChunk(int32(ti), n)
		}
		b.count[ti]++
		b.setCell(k, i, c.Run, c.Pass, c.Fail, c.Skip)
		if got := b.runAt(k, i); got != c.Run {
			t.Fatalf("runAt: %d, want %d", got, c.Run)
		}
		want[ti] = append(want[ti], c)
		where[ti] = append(where[ti], at{k, i})
	}
	// Changed in place, as commit folds a second document of a run and
	// sets a failure's signature.
	for ti := range tests {
		for j := range want[ti] {
			if rng.IntN(4) != 0 {
				continue
			}
			c := b.richCell(where[ti][j].k, where[ti][j].i)
			if *c != want[ti][j] {
				t.Fatalf("richCell of test %d cell %d: %+v, want %+v", ti, j, *c, want[ti][j])
			}
			c.Pass++
			c.Sig = uint16(rng.IntN(3))
			want[ti][j] = *c
		}
	}
	remap := make([]int32, 1000) // the identity, but for one run
	for i := range remap {
		remap[i] = int32(i)
	}
	remap[7] = 70
	sigMap := []uint16{0, 5, 6}
	for ti := range tests {
		for _, sm := range [][]uint16{nil, sigMap} {
			var w []Cell
			for _, c := range want[ti] {
				c.Run = remap[c.Run]
				if sm != nil {
					c.Sig = sm[c.Sig]
				}
				w = append(w, c)
			}
			prefix := []Cell{{Run: -1}}
			got := b.appendCells(prefix, int32(ti), remap, sm)
			if diff := cmp.Diff(append([]Cell{{Run: -1}}, w...), got); diff != "" {
				t.Fatalf("test %d, sigMap %v (-want +got):\n%s", ti, sm, diff)
			}
		}
	}
	// A run past what a plain slot holds is kept as a rich cell.
	k := b.newChunk()
	for i, run := range []int32{slotIndex - 1, slotIndex, slotIndex + 1, 1<<31 - 1} {
		b.setCell(k, int32(i), run, 1, 0, 0)
		rich := b.chunk(k).slots[i]&slotRich != 0
		if got := b.runAt(k, int32(i)); got != run || rich != (run > slotIndex) {
			t.Errorf("a pass in run %d: runAt %d, rich %v", run, got, rich)
		}
		if c := *b.richCell(k, int32(i)); c != (Cell{Run: run, Pass: 1}) {
			t.Errorf("a pass in run %d reads as %+v", run, c)
		}
	}
}

// TestCellsOfEveryKind reads a history whose runs each hold a test in
// several documents, so that commit folds a plain cell into a rich one,
// with skips, failures with signatures and reruns, on one builder and on
// several, and checks every cell against counts taken from the documents.
func TestCellsOfEveryKind(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type key struct{ test, run int }
	want := map[key]Cell{}
	var srcs []Source
	for run := range 12 {
		for part := range 3 {
			var b strings.Builder
			fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>`, run, run)
			for test := range 30 {
				if rng.IntN(3) == 0 {
					continue
				}
				c := want[key{test, run}]
				for range 1 + rng.IntN(2) {
					switch rng.IntN(6) {
					case 0:
						fmt.Fprintf(&b, `<testcase classname="k" name="t%d"><skipped/></testcase>`, test)
						c.Skip++
					case 1:
						fmt.Fprintf(&b, `<testcase classname="k" name="t%d"><failure message="boom %d"/></testcase>`, test, rng.IntN(2))
						c.Fail++
					default:
						fmt.Fprintf(&b, `<testcase classname="k" name="t%d"/>`, test)
						c.Pass++
					}
				}
				want[key{test, run}] = c
			}
			b.WriteString(`</testsuite>`)
			srcs = append(srcs, stringSource(fmt.Sprintf("r%d-%d.xml", run, part), b.String()))
		}
	}
	for _, workers := range []int{1, 2, 3} {
		h, err := Load(context.Background(), srcs, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range h.Tests {
			var test int
			fmt.Sscanf(x.ID, "k::t%d", &test)
			for _, c := range x.Cells {
				var run int
				fmt.Sscanf(h.Runs[c.Run].RunID, "%d", &run)
				w := want[key{test, run}]
				if c.Pass != w.Pass || c.Fail != w.Fail || c.Skip != w.Skip {
					t.Errorf("%d workers: %s run %d: pass %d fail %d skip %d, want %d %d %d", workers, x.ID, run, c.Pass, c.Fail, c.Skip, w.Pass, w.Fail, w.Skip)
				}
				if (c.Sig != 0) != (c.Fail > 0) {
					t.Errorf("%d workers: %s run %d: signature %d with %d failures", workers, x.ID, run, c.Sig, c.Fail)
				}
				n++
			}
		}
		if n != len(want) {
			t.Errorf("%d workers: %d cells, want %d", workers, n, len(want))
		}
	}
}

// TestMergeMatchesTestsAcrossBuilders merges builders that each hold some
// of the tests, a test only in later builders among them, and checks the
// result against one builder reading every document; Merge of no builders
// is an empty history.
func TestMergeMatchesTestsAcrossBuilders(t *testing.T) {
	doc := func(run int, tests ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>`, run, run)
		for i, name := range tests {
			if i%2 == 0 {
				fmt.Fprintf(&b, `<testcase classname="k" name="%s"/>`, name)
			} else {
				fmt.Fprintf(&b, `<testcase classname="k" name="%s"><failure message="m"/></testcase>`, name)
			}
		}
		return b.String() + `</testsuite>`
	}
	docs := [][]Source{
		{stringSource("a1.xml", doc(1, "a", "b")), stringSource("a2.xml", doc(2, "b", "a"))},
		{stringSource("b1.xml", doc(3, "c", "b")), stringSource("b2.xml", doc(4, "d"))},
		{stringSource("c1.xml", doc(5, "d", "e", "c")), stringSource("c2.xml", doc(6, "e"))},
	}
	one := NewBuilders(1)
	many := NewBuilders(len(docs))
	for i, ds := range docs {
		for _, d := range ds {
			one[0].Add(d)
			many[i].Add(d)
		}
	}
	want, got := Merge(one...), Merge(many...)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Test{}, Sig{}, order{})); diff != "" {
		t.Fatalf("(-one builder +three):\n%s", diff)
	}
	if len(got.Tests) != 5 {
		t.Fatalf("%d tests, want 5", len(got.Tests))
	}
	if h := Merge(); len(h.Tests) != 0 || len(h.Runs) != 0 {
		t.Fatalf("Merge of no builders: %d tests, %d runs", len(h.Tests), len(h.Runs))
	}
}

// sized is a document whose reader tells its size, as a local file's and
// a zip entry's do.
type sized struct {
	io.Reader
	size int64
}

func (s sized) Size() int64  { return s.size }
func (s sized) Close() error { return nil }

// TestFirstDocumentSizesTables: a builder whose first document tells its
// size sizes its tables for it at once, by the size (no growth while it is
// read), bounded for a size far past the document's (a zip entry may
// declare any), and not at all for a small one; the history is the same
// as a builder's that grows them.
func TestFirstDocumentSizesTables(t *testing.T) {
	doc := func(tests int) string {
		var b strings.Builder
		b.WriteString(`<testsuite name="s"><properties><property name="commit_sha" value="c1"/><property name="run_id" value="1"/></properties>`)
		for i := range tests {
			fmt.Fprintf(&b, `<testcase classname="tests.test_module_%02d" name="test_case_%04d" file="tests/test_module_%02d.py" line="%d" time="0.1"/>`, i/100, i, i/100, i)
		}
		return b.String() + `</testsuite>`
	}
	read := func(doc string, size int64) (*History, *Builder) {
		src := Source{Name: "a.xml", Open: func() (io.ReadCloser, error) {
			if size < 0 {
				return io.NopCloser(strings.NewReader(doc)), nil
			}
			return sized{strings.NewReader(doc), size}, nil
		}}
		bs := NewBuilders(1)
		bs[0].Add(src)
		return Merge(bs...), bs[0]
	}
	reserved := func(n int) int { return cap(slices.Grow([]*Test(nil), n)) }
	big := doc(3000)
	grown, _ := read(big, -1)
	for _, c := range []struct {
		size    int64
		wantCap int
	}{{int64(len(big)), reserved(len(big) / bytesPerCase)}, {1 << 40, reserved(maxReserve)}} {
		h, b := read(big, c.size)
		if diff := cmp.Diff(grown, h, cmp.AllowUnexported(Test{}, Sig{}, order{})); diff != "" {
			t.Fatalf("size %d (-grown +sized):\n%s", c.size, diff)
		}
		if got := cap(b.tests); got != c.wantCap || got > 1<<14 {
			t.Errorf("size %d: room for %d tests after reading, want %d as reserved (it grew, or was not sized), and no more than 16,384", c.size, got, c.wantCap)
		}
	}
	if len(grown.Tests) != 3000 || len(big)/bytesPerCase < 3000 {
		t.Fatalf("%d tests in %d bytes: the document does not exercise sizing", len(grown.Tests), len(big))
	}
	small := doc(10)
	if _, b := read(small, int64(len(small))); cap(b.tests) >= minReserve {
		t.Errorf("a document of %d bytes: room for %d tests", len(small), cap(b.tests))
	}
}
