package history

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/internal/pieces"

	"github.com/flakegate/flakegate/pkg/junit"
)

func piecesSource(name string, p *pieces.Reader) Source {
	return Source{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(p), nil }}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTooManyTestsInOneFile: a document of 200,000 testcases (a 1 MB zip
// that took 470 MB and 76 s) is refused once it passes MaxTestsPerFile
// distinct tests: the rest is not read, memory stays bounded, and the
// Skipped entry says why.
func TestTooManyTestsInOneFile(t *testing.T) {
	const n = 200_000
	doc := &pieces.Reader{Next: func(i int) (string, bool) {
		switch {
		case i == 0:
			return `<testsuite name="s">`, true
		case i <= n:
			return fmt.Sprintf("<testcase classname=\"pkg.Class%d\" name=\"test_%d\" time=\"0.1\"/>\n", i/100, i), true
		case i == n+1:
			return `</testsuite>`, true
		}
		return "", false
	}}
	var h *History
	grew := allocated(func() {
		var err error
		h, err = Load(context.Background(), []Source{
			stringSource("ok.xml", `<testsuite name="s"><testcase classname="pkg.Class0" name="test_1"/></testsuite>`),
			piecesSource("many.xml", doc),
		}, Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("read %d testcases, allocated %d MiB", doc.N, grew>>20)
	want := []Skipped{{Path: "many.xml", Error: fmt.Sprintf("line %d: more than 50000 distinct tests in one file: "+
		"flakegate reads at most 50000 tests per file, so it left this file out", MaxTestsPerFile+1)}}
	if diff := cmp.Diff(want, h.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(h.Tests) != 1 || len(h.Tests[0].Cells) != 1 || h.Totals.Testcases != 1 {
		t.Errorf("tests %d, totals %+v: want only ok.xml's test", len(h.Tests), h.Totals)
	}
	// Reading stops at the cap, give or take one read of the window.
	if doc.N > MaxTestsPerFile+2000 {
		t.Errorf("read %d testcases of a file refused at %d", doc.N, MaxTestsPerFile)
	}
	// Reading 50,000 tests allocates about 85 MB; all 200,000 took 400 MB.
	if !raceEnabled && grew > 160<<20 {
		t.Errorf("allocated %d MiB", grew>>20)
	}
}

// TestLongNamesAreCut: 40 test names of 7 MiB each (which took 895 MB)
// become 40 cut names, with memory bounded by the window that holds one
// tag.
func TestLongNamesAreCut(t *testing.T) {
	const n, size = 40, 7 << 20
	doc := pieces.LongNames(n, size) // the names differ only past the cap
	var h *History
	grew := allocated(func() {
		var err error
		h, err = Load(context.Background(), []Source{piecesSource("names.xml", doc)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocated %d MiB", grew>>20)
	if len(h.Tests) != n || len(h.Skipped) != 0 {
		t.Fatalf("%d tests, skipped %v", len(h.Tests), h.Skipped)
	}
	for _, x := range h.Tests {
		if len(x.ID) > len("c::")+junit.MaxNameBytes || !strings.HasPrefix(x.ID, "c::xxx") || !strings.Contains(x.ID, fmt.Sprintf("…[cut %d bytes, sha256:", size-junit.MaxNameBytes+60)) {
			t.Errorf("ID of %d bytes ending %q", len(x.ID), x.ID[max(0, len(x.ID)-60):])
		}
	}
	// About 32 MiB for the window; keeping the names took 860 MiB.
	if !raceEnabled && grew > 64<<20 {
		t.Errorf("allocated %d MiB", grew>>20)
	}
}

// TestCutNameIsOneTest: a long name cut in two files of two runs is one
// test, however the files are shared among builders.
func TestCutNameIsOneTest(t *testing.T) {
	class, name := strings.Repeat("com.example.", 200), "test["+strings.Repeat("é", 1500)+"]"
	doc := func(run int) string {
		return fmt.Sprintf(`<testsuite name="s"><properties><property name="run_id" value="%d"/></properties>`+
			`<testcase classname="%s" name="%s" file="%s"><failure message="boom"/></testcase></testsuite>`, run, class, name, class)
	}
	for _, workers := range []int{1, 2} {
		h, err := Load(context.Background(), []Source{stringSource("a.xml", doc(1)), stringSource("b.xml", doc(2))}, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Tests) != 1 || len(h.Tests[0].Cells) != 2 || len(h.Tests[0].Sigs) != 1 {
			t.Fatalf("workers=%d: %d tests, want 1 with 2 cells", workers, len(h.Tests))
		}
		if id := h.Tests[0].ID; len(id) > 2*junit.MaxNameBytes+2 {
			t.Errorf("ID of %d bytes", len(id))
		}
	}
}

// TestCutMessageSignature: failures whose messages differ only past the
// cap, in length, share a signature.
func TestCutMessageSignature(t *testing.T) {
	doc := func(run, extra int) string {
		return fmt.Sprintf(`<testsuite name="s"><properties><property name="run_id" value="%d"/></properties>`+
			`<testcase name="t"><failure message="expected %s"/></testcase></testsuite>`, run, strings.Repeat("{}", junit.MaxMessageBytes/2+extra))
	}
	h, err := Load(context.Background(), []Source{stringSource("a.xml", doc(1, 10)), stringSource("b.xml", doc(2, 2000))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := h.Tests[0].Sigs; len(s) != 1 || s[0].Count != 2 {
		t.Errorf("signatures %+v, want one of 2 failures", s)
	}
}

// TestTestCaps checks the per-file and total caps on small limits: a file
// over a cap is left out whole, with a message naming the cap, and leaves
// no test behind; files that add no new test are still read; builders
// that share the cap count each test once.
// TestCapOnRepeatedTags: the per-file cap holds when the tests past it
// come as tags that repeat the previous file's, which the builder takes
// without a Case (onRepeat).
func TestCapOnRepeatedTags(t *testing.T) {
	doc := func(names ...string) string {
		var b strings.Builder
		b.WriteString(`<testsuite name="s">`)
		for _, n := range names {
			fmt.Fprintf(&b, `<testcase classname="k" name="%s" time="0.1"/>`, n)
		}
		return b.String() + `</testsuite>`
	}
	srcs := []Source{
		stringSource("1/junit.xml", doc("a", "b", "c", "d")),
		stringSource("2/junit.xml", doc("z", "a", "b", "c", "d")),
		stringSource("3/junit.xml", doc("a", "b", "c", "d")),
	}
	h, err := load(context.Background(), srcs, Options{Workers: 1}, limits{perFile: 4, total: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []Skipped{{Path: "2/junit.xml", Error: "line 1: more than 4 distinct tests in one file: flakegate reads at most 4 tests per file, so it left this file out"}}
	if diff := cmp.Diff(want, h.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(h.Tests) != 4 || len(h.Runs) != 2 || h.Totals.Testcases != 8 {
		t.Errorf("%d tests, %d runs, totals %+v: want 1/ and 3/ only", len(h.Tests), len(h.Runs), h.Totals)
	}
}

func TestTestCaps(t *testing.T) {
	doc := func(names ...string) string {
		var b strings.Builder
		b.WriteString(`<testsuite name="s">`)
		for _, n := range names {
			fmt.Fprintf(&b, `<testcase classname="k" name="%s"/>`, n)
		}
		return b.String() + `</testsuite>`
	}
	lim := limits{perFile: 4, total: 6}
	srcs := []Source{
		stringSource("1-abc.xml", doc("a", "b", "c")),
		stringSource("2-wide.xml", doc("p", "q", "r", "s", "t")),
		stringSource("3-def-retried.xml", doc("d", "d", "e", "e", "f", "f", "a", "a")),
		stringSource("4-g.xml", doc("a", "g")),
		stringSource("5-old.xml", doc("a", "b", "c", "d")),
	}
	h, err := load(context.Background(), srcs, Options{Workers: 1}, lim)
	if err != nil {
		t.Fatal(err)
	}
	want := []Skipped{
		{Path: "2-wide.xml", Error: "line 1: more than 4 distinct tests in one file: flakegate reads at most 4 tests per file, so it left this file out"},
		{Path: "4-g.xml", Error: "new tests in this file (1) would take the history past 6 distinct tests: " +
			"flakegate reads at most 6 tests in all, so it left this file out and kept the files read before it"},
	}
	if diff := cmp.Diff(want, h.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	var ids []string
	for _, x := range h.Tests {
		ids = append(ids, x.ID)
	}
	if diff := cmp.Diff([]string{"k::a", "k::b", "k::c", "k::d", "k::e", "k::f"}, ids); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	if len(h.Runs) != 3 || h.Totals.Testcases != 3+8+4 {
		t.Errorf("%d runs, totals %+v", len(h.Runs), h.Totals)
	}

	// Builders that share the cap count a test they both read once, and
	// a refused file leaves nothing in its builder.
	bs := newBuilders(2, lim)
	bs[0].Add(srcs[0])                                        // a b c
	bs[1].Add(stringSource("x.xml", doc("a", "x", "y", "z"))) // x y z: 6 in all
	bs[1].Add(stringSource("y.xml", doc("b")))                // new to bs[1] only
	bs[0].Add(stringSource("z.xml", doc("w")))                // a seventh
	if len(bs[0].tests) != 3 || len(bs[0].testIdx) != 3 || len(bs[1].tests) != 5 {
		t.Errorf("builders hold %d and %d tests, want 3 and 5", len(bs[0].tests), len(bs[1].tests))
	}
	m := Merge(bs...)
	if len(m.Tests) != 6 || len(m.Skipped) != 1 || m.Skipped[0].Path != "z.xml" {
		t.Errorf("merged %d tests, skipped %v", len(m.Tests), m.Skipped)
	}
}
