package history

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzReadInTurn builds a few documents from the fuzzer's bytes out of a
// small vocabulary of tags, so that tags repeat between documents with
// one attribute, the outcome, the suite, the project or the properties
// changed, and checks what one Builder makes of them read in turn (cases
// matched by the reader's remembered tag, Builder.memoTest) against what
// a Builder per document makes of each, and by two builders. Tests,
// files, lines, cells, signature counts and sample messages must agree.
//
//	go test -run '^$' -fuzz FuzzReadInTurn -fuzztime 10m ./pkg/history
func FuzzReadInTurn(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("\x03\x01\x10\x11\x12\x01\x10\x11\x12\x01\x10\x11\x12\x01\x10\x91\x12"))
	f.Add([]byte("\x05\x02\x20\x21\x40\x41\x02\x20\x21\x40\x41\x02\x20\x21\x40\x41\x82\x20\x21\x40\x41\x02\x20\x21\x40\x41"))
	f.Add([]byte("\x04\x03\x07\x17\x27\x37\x47\x57\x67\x03\x07\x17\x27\x37\x47\x57\x67\x03\x07\x17\x27\x37\x47\x57\x67\x03\x0f\x1f\x2f\x3f\x4f\x5f\x6f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, part, names := fuzzDocs(data)
		if len(docs) == 0 {
			return
		}
		srcs := docSources(docs, names)
		want := fuzzView(afresh(srcs))
		for _, w := range []int{1, 2} {
			got, err := Load(context.Background(), srcs, Options{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, fuzzView(got)); diff != "" {
				t.Fatalf("documents:\n%s\n(-afresh +read in turn by %d workers):\n%s", strings.Join(docs, "\n"), w, diff)
			}
		}
		// Two builders, each reading the documents the fuzzer gave it, in
		// turn: what Load's workers may do, chosen instead of left to
		// the scheduler.
		for _, gather := range []bool{true, false} {
			two := NewBuilders(2)
			for i, s := range srcs {
				two[part[i]].Add(s)
			}
			if diff := cmp.Diff(want, fuzzView(merge(two, gather))); diff != "" {
				t.Fatalf("documents:\n%s\nby builder %v, cells put in order as gathered: %v\n(-afresh +read by two builders):\n%s",
					strings.Join(docs, "\n"), part, gather, diff)
			}
		}
	})
}

// docSources makes sources of documents, named by names or, without
// them, d0.xml, d1.xml, ... in order. A document's leg is its directory,
// as for files on disk: r1/junit.xml and r2/junit.xml of one run are its
// legs, and tests that both hold are told apart (splitLegs).
func docSources(docs, names []string) []Source {
	var srcs []Source
	for i, d := range docs {
		name := fmt.Sprintf("d%d.xml", i)
		if names != nil {
			name = names[i]
		}
		src := stringSource(name, d)
		src.Leg = path.Dir(name)
		srcs = append(srcs, src)
	}
	return srcs
}

// afresh is the history of srcs read each by a Builder of its own, so that
// no tag is ever remembered from an earlier document, merged in order.
func afresh(srcs []Source) *History {
	var fresh []*Builder
	for _, s := range srcs {
		b := NewBuilders(1)[0]
		b.Add(s)
		fresh = append(fresh, b)
	}
	return Merge(fresh...)
}

type fuzzTest struct {
	File  string
	Line  int
	Cells []Cell
	// CellSigs is each cell's signature, by hash.
	CellSigs []string
	Sigs     map[string]string // by hash: the count and the sample message
	Other    int
}

func fuzzView(h *History) map[string]fuzzTest {
	m := map[string]fuzzTest{}
	for _, x := range h.Tests {
		v := fuzzTest{File: x.File, Line: x.Line, Cells: x.Cells, Sigs: map[string]string{}, Other: x.OtherFailures}
		// Signatures by hash, and each cell's by hash: the order of a
		// test's signatures is that of its first failures in either.
		cells := make([]Cell, len(x.Cells))
		copy(cells, x.Cells)
		for i := range cells {
			h := ""
			if s := cells[i].Sig; s > 0 {
				h = x.Sigs[s-1].Hash
			}
			v.CellSigs = append(v.CellSigs, h)
			cells[i].Sig = 0
		}
		v.Cells = cells
		for _, s := range x.Sigs {
			v.Sigs[s.Hash] = fmt.Sprintf("%d, %q", s.Count, s.Message)
		}
		m[x.ID] = v
	}
	m["totals"] = fuzzTest{Line: h.Totals.Testcases, Other: len(h.Runs)}
	// Runs, in the history's order, as the report shows them.
	for i, r := range h.Runs {
		m[fmt.Sprintf("run %d", i)] = fuzzTest{File: fmt.Sprintf("%+v", r)}
	}
	return m
}

// fuzzDocs turns bytes into documents. The first byte is the number of
// documents (1 to 6); each document takes a byte for its run, its
// number of cases (1 to 8), which of two builders reads it and its name,
// then a byte per case; the run's timestamp,
// when it has one, puts runs in the opposite order of their ids. The low bits of a
// case's byte pick its tag among eight, the high bits what changes about
// it: its outcome, its suite, its project (hostname) or a property of
// its own.
func fuzzDocs(data []byte) (docs []string, part []int, names []string) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	n := int(data[0])%6 + 1
	data = data[1:]
	for range n {
		if len(data) == 0 {
			break
		}
		head := data[0]
		data = data[1:]
		run := int(head>>4) % 4 // documents of one run fold into its cells
		cases := int(head)%8 + 1
		stamp := ""
		if head&0x40 != 0 { // runs in time order, or against it
			stamp = fmt.Sprintf(` timestamp="2026-11-%02dT00:00:00"`, 10-run)
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuites><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>`, run, run)
		for k := 0; k < cases && len(data) > 0; k++ {
			c := data[0]
			data = data[1:]
			suite, host := "s", ""
			switch c >> 6 {
			case 1:
				suite = "s2"
			case 2:
				host = "chromium"
			case 3:
				host = "firefox"
			}
			// A suite's time differs from document to document.
			fmt.Fprintf(&b, `<testsuite name="%s" hostname="%s"%s time="%d.5">`, suite, host, stamp, len(docs))
			tag := fuzzTags[c&7]
			// Every other testcase of cases 1 and 2 has a timestamp of its
			// own, which differs from document to document (cargo-nextest,
			// unittest-xml-reporting).
			ts := ""
			if k%2 == 1 {
				ts = fmt.Sprintf(` timestamp="2026-11-%02dT00:00:%02d"`, 1+len(docs), k)
			}
			switch (c >> 3) & 7 {
			case 0: // the tag as it was: a plain pass, every third with empty output as Cucumber writes it
				if k%3 == 2 {
					fmt.Fprintf(&b, "<testcase %s time=\"%d\">\n<system-out><![CDATA[]]></system-out></testcase>", tag, k+1)
					break
				}
				fmt.Fprintf(&b, `<testcase %s time="%d"/>`, tag, k+1)
			case 1: // a plain pass with its attributes after the time
				fmt.Fprintf(&b, `<testcase time="%d" %s%s/>`, k+1, tag, ts)
			case 2: // a plain pass as Jest, Vitest and Playwright write it
				fmt.Fprintf(&b, "<testcase %s%s time=\"%d\">\n    </testcase>", tag, ts, k+1)
			case 3:
				fmt.Fprintf(&b, `<testcase %s time="1"><failure message="boom at 0x%d"/></testcase>`, tag, c&1) // one signature, two messages
			case 4:
				fmt.Fprintf(&b, `<testcase %s time="1"><skipped/></testcase>`, tag)
			case 5:
				fmt.Fprintf(&b, `<testcase %s time="1"><flakyFailure message="once"/></testcase>`, tag)
			case 6:
				fmt.Fprintf(&b, `<testcase %s time="1"><error message="err"/></testcase>`, tag)
			case 7:
				fmt.Fprintf(&b, `<testcase %s time="1"><properties><property name="run_id" value="9"/><property name="commit_sha" value="c9"/></properties></testcase>`, tag)
			}
			b.WriteString(`</testsuite>`)
		}
		b.WriteString(`</testsuites>`)
		docs = append(docs, b.String())
		part = append(part, int(head>>3)&1)
		// A junit.xml in a directory per document, as many runners write
		// it, makes a series that Load reads in turn (plan).
		name := fmt.Sprintf("d%d.xml", len(docs))
		if head&0x80 != 0 {
			name = fmt.Sprintf("r%d/junit.xml", len(docs))
		}
		names = append(names, name)
	}
	return docs, part, names
}

// fuzzTags are eight testcase attribute sets that differ from one
// another in one attribute or two, some with character references: the
// last two are one test, spelled two ways.
var fuzzTags = [8]string{
	`classname="k" name="t" file="k.py" line="3"`,
	`classname="k" name="t" file="k.py" line="4"`,
	`classname="k" name="t" file="j.py" line="3"`,
	`classname="j" name="t" file="k.py" line="3"`,
	`classname="k" name="u&lt;" file="k.py" line="3"`,
	`name="t" file="k.py" line="3"`,
	`classname="&#107;" name="t"`,
	`classname="k" name="t"`,
}

// TestLocationOfEarliestRun: a test's file and line are those of the
// earliest run that states them, whichever order the documents are read
// in, however many builders read them, and when the line alone moves. A
// test that a document splits by file takes the line its own case gives.
func TestLocationOfEarliestRun(t *testing.T) {
	doc := func(day int, loc string) string {
		return fmt.Sprintf(`<testsuite name="s" timestamp="2026-11-%02dT00:00:00"><properties><property name="commit_sha" value="c%d"/></properties>`+
			`<testcase classname="k" name="t" %s/><testcase classname="k" name="u" file="u.py" line="1"/></testsuite>`, day, day, loc)
	}
	for _, tc := range []struct {
		name string
		docs []string
		want map[string]string // test to file:line
	}{
		{"the line moves later", []string{doc(1, `file="k.py" line="3"`), doc(2, `file="k.py" line="4"`), doc(3, `file="k.py" line="4"`)},
			map[string]string{"k::t": "k.py:3", "k::u": "u.py:1"}},
		{"the earliest run is read second", []string{doc(5, `file="k.py" line="4"`), doc(3, `file="k.py" line="4"`), doc(4, `file="j.py" line="9"`)},
			map[string]string{"k::t": "k.py:4", "k::u": "u.py:1"}},
		{"the earliest run is read last", []string{doc(5, `file="j.py" line="4"`), doc(4, `file="k.py" line="9"`), doc(3, `file="j.py" line="4"`)},
			map[string]string{"k::t": "j.py:4", "k::u": "u.py:1"}},
		{"a run without a file", []string{doc(5, `file="k.py" line="4"`), doc(3, ``), doc(4, `file="k.py" line="9"`)},
			map[string]string{"k::t": "k.py:9", "k::u": "u.py:1"}},
		{"split by file", []string{
			doc(1, `file="k.py" line="3"`),
			`<testsuite name="s" timestamp="2026-11-02T00:00:00"><properties><property name="commit_sha" value="c2"/></properties>` +
				`<testcase classname="k" name="t" file="j.py" line="3"/><testcase classname="k" name="t" file="k.py" line="4"/></testsuite>`},
			map[string]string{"k::t": "k.py:3", "k::t [j.py]": "j.py:3", "k::t [k.py]": "k.py:4", "k::u": "u.py:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srcs := docSources(tc.docs, nil)
			hs := map[string]*History{"afresh": afresh(srcs)}
			for _, w := range []int{1, 2} {
				h, err := Load(context.Background(), srcs, Options{Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				hs[fmt.Sprintf("%d workers", w)] = h
			}
			for name, h := range hs {
				got := map[string]string{}
				for _, x := range h.Tests {
					got[x.ID] = fmt.Sprintf("%s:%d", x.File, x.Line)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// FuzzCarry: a history of FuzzReadInTurn's documents comes back whole from
// Encode and Decode, and a history carried from the documents of some runs
// combined with one read from the others is the history of all of them.
func FuzzCarry(f *testing.F) {
	f.Add([]byte("\x03\x01\x10\x11\x12\x21\x10\x11\x12\x31\x10\x91\x12"))
	f.Add([]byte("\x05\x02\x20\x21\x40\x41\x12\x20\x21\x40\x41\x22\x20\x21\x40\x41\x32\x20\x21\x40\x41\x02\x20\x21\x40\x41"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _, names := fuzzDocs(data)
		if len(docs) == 0 {
			return
		}
		var all, older, newer []Source
		for i, d := range docs {
			if strings.Contains(d, `"run_id" value="9"`) {
				// A case's own run may share a run with both sides; a
				// run is carried or read whole, never split.
				return
			}
			s := stringSource(names[i], d)
			all = append(all, s)
			// Runs 0 and 1 are the carried ones.
			if strings.Contains(d, `"run_id" value="0"`) || strings.Contains(d, `"run_id" value="1"`) {
				older = append(older, s)
			} else {
				newer = append(newer, s)
			}
		}
		load := func(srcs []Source) *History {
			h, err := Load(context.Background(), srcs, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		whole := load(all)
		if diff := cmp.Diff(whole, roundTrip(t, whole), historyCmp); diff != "" {
			t.Fatalf("documents:\n%s\nround trip (-want +got):\n%s", strings.Join(docs, "\n"), diff)
		}
		combined, err := Combine(roundTrip(t, load(older)), load(newer), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		// The totals are the newer history's (Combine).
		want, got := fuzzView(whole), fuzzView(combined)
		delete(want, "totals")
		delete(got, "totals")
		if diff := cmp.Diff(want, got); diff != "" || len(whole.Runs) != len(combined.Runs) {
			t.Fatalf("documents:\n%s\ncarried runs 0 and 1 (-read at once +combined):\n%s", strings.Join(docs, "\n"), diff)
		}
	})
}
