package junit

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSuiteMetaAcrossSuitesAndFiles: the timestamps and run properties of
// suites and files read one after another by one Reader are each read
// right, whether they repeat the last one, change layout or change value:
// the Reader reuses the last timestamp and property values it read.
func TestSuiteMetaAcrossSuitesAndFiles(t *testing.T) {
	type meta struct {
		Suite string
		Props Props
		Time  time.Time
	}
	suite := func(name, ts, commit, run, attempt string) string {
		return fmt.Sprintf(`<testsuite name=%q timestamp=%q><properties>`+
			`<property name="java.version" value="21"/><property name="commit_sha" value=%q/>`+
			`<property name="run_id" value=%q/><property name="run_attempt" value=%q/></properties>`+
			`<testcase classname="k" name="t"/></testsuite>`, name, ts, commit, run, attempt)
	}
	files := [][]string{
		{suite("a", "2026-01-02T03:04:05", "c1", "1", "1"), suite("b", "2026-01-02T03:04:05", "c1", "1", "1"),
			suite("c", "2026-01-02 03:04:06", " c1 ", "1", "2"), suite("d", "2026-01-02T03:04:05Z", "c2", "2", "+3")},
		{suite("e", "2026-01-02T03:04:05", "c1", "1", "1"), suite("f", "not a time", "c1", "1", "x"),
			suite("g", "2026-01-02T05:04:05+02:00", "c1", "10", "-1"), suite("h", "2026-01-02T03:04:05.5", "c1", "1", "12345678901")},
	}
	at := func(s string) time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(mustDur(s)) }
	want := []meta{
		{"a", Props{"c1", "1", 1}, at("0s")}, {"b", Props{"c1", "1", 1}, at("0s")},
		{"c", Props{"c1", "1", 2}, at("1s")}, {"d", Props{"c2", "2", 3}, at("0s")},
		{"e", Props{"c1", "1", 1}, at("0s")}, {"f", Props{"c1", "1", 0}, time.Time{}},
		{"g", Props{"c1", "10", -1}, at("0s")}, {"h", Props{"c1", "1", 12345678901}, at("500ms")},
	}
	r := NewReader()
	var got []meta
	for i, f := range files {
		doc := "<testsuites>" + strings.Join(f, "") + "</testsuites>"
		_, err := r.Parse(fmt.Sprint(i), strings.NewReader(doc), func(c *Case) error {
			p, ts := c.Meta()
			got = append(got, meta{c.Suite.Name, p, ts})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("suite metadata (-want +got):\n%s", diff)
	}
}

func mustDur(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestFollowsTheFileOfTheSameClass: with a file per class, a file's
// testcase tags are known from the same class's file of the previous run,
// not only from the file read last, so they are not scanned again; so too
// when each testcase has a timestamp of its own before its time, as
// cargo-nextest writes it.
func TestFollowsTheFileOfTheSameClass(t *testing.T) {
	for _, stamped := range []bool{false, true} {
		file := func(class string, run int) string {
			var b strings.Builder
			fmt.Fprintf(&b, `<testsuite name=%q>`, class)
			for k := range 20 {
				stamp := ""
				if stamped {
					stamp = fmt.Sprintf(` timestamp="2026-11-0%dT10:00:%02d.%03d+00:00"`, run+1, k, run*7)
				}
				fmt.Fprintf(&b, `<testcase name="t%d" classname=%q%s time="0.%d"/>`, k, class, stamp, run)
			}
			return b.String() + `</testsuite>`
		}
		r := NewReader()
		var ids []string
		for run := range 3 {
			for _, class := range []string{"A", "B", "C"} {
				if _, err := r.Parse(class, strings.NewReader(file(class, run)), func(c *Case) error {
					ids = append(ids, c.ID())
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(ids) != 3*3*20 || ids[len(ids)-1] != "C::t19" {
			t.Fatalf("stamped %v: %d cases, last %q", stamped, len(ids), ids[len(ids)-1])
		}
		// Every testcase tag of runs 2 and 3 matched a remembered one: only
		// run 1's 60 tags were remembered.
		if len(r.pool) != 3*20 {
			t.Errorf("stamped %v: %d testcase tags remembered", stamped, len(r.pool))
		}
	}
}

// TestFollowMatchesFreshParse: a file that follows an earlier file, not
// the last one, by its first testcase tag reads as a fresh Reader reads
// it, whatever differs after that first tag.
func TestFollowMatchesFreshParse(t *testing.T) {
	base := `<testsuite name="A"><testcase classname="A" name="a" file="a.py" line="3" time="0.1"/><testcase classname="A" name="b" status="disabled" time="0.2"/><testcase classname="A" name="c"/></testsuite>`
	other := `<testsuite name="B"><testcase classname="B" name="x" time="0.1"/></testsuite>`
	variants := []string{
		base,
		strings.ReplaceAll(base, `time="0.`, `time="7.`),
		strings.Replace(base, `name="b" status`, `name="b2" status`, 1),
		strings.Replace(base, ` status="disabled"`, ``, 1),
		strings.Replace(base, `<testcase classname="A" name="c"/>`, `<testcase classname="A" name="c" time="1"><failure message="m"/></testcase>`, 1),
		strings.Replace(base, `line="3" time="0.1"/>`, `line="3" time="0.1" name="late"/>`, 1),
		strings.Replace(base, `name="b" status="disabled" time="0.2"`, `name="b" status="disabled" time="&#48;.2"`, 1),
		base[:strings.Index(base, `<testcase classname="A" name="c"`)],
	}
	for i, v := range variants {
		shared := NewReader()
		parseWith(shared, "base.xml", []byte(base))
		parseWith(shared, "other.xml", []byte(other))
		got, gotErr := parseWith(shared, "v.xml", []byte(v))
		want, wantErr := parseWith(NewReader(), "v.xml", []byte(v))
		if gotErr != wantErr {
			t.Fatalf("variant %d: error %q, fresh reader %q", i, gotErr, wantErr)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("variant %d (-fresh +followed):\n%s", i, diff)
		}
	}
}

// suiteChain is a case's suites, innermost first, as a fresh read gives
// them.
type suiteChain struct {
	Case   string
	Suites []Suite
}

func parseChains(r *Reader, name string, src io.Reader) ([]suiteChain, string) {
	var got []suiteChain
	_, err := r.Parse(name, src, func(c *Case) error {
		sc := suiteChain{Case: c.Name}
		for s := c.Suite; s != nil; s = s.Parent {
			x := *s
			x.Parent = nil
			sc.Suites = append(sc.Suites, x)
		}
		got = append(got, sc)
		return nil
	})
	if err != nil {
		return got, err.Error()
	}
	return got, ""
}

// TestSuiteReuseMatchesFreshParse: <testsuite> tags that repeat one of the
// previous file, or the last of this file, but for their time and
// timestamp values are not scanned again. Whatever came before, each
// case's suites (names, hostnames, timestamps, properties, nesting) and
// the errors are what a fresh Reader gives: values a fresh Reader refuses
// ('<') or decodes (references), two times or timestamps, single quotes,
// self-closing and nested suites, a suite inside a testcase, a suite tag
// cut by every read.
func TestSuiteReuseMatchesFreshParse(t *testing.T) {
	suites := func(run int, stamp, extra string) string {
		var b strings.Builder
		b.WriteString(`<testsuites name="all" time="9.5">`)
		for i := range 3 {
			fmt.Fprintf(&b, `<testsuite name="m&amp;%d" timestamp="%s" hostname="h%d" time="%d.25"%s>`, i/2, stamp, i%2, run+i, extra)
			if i == 1 {
				fmt.Fprintf(&b, `<properties><property name="commit_sha" value="c%d"/></properties>`, run)
			}
			fmt.Fprintf(&b, `<testcase classname="k" name="t%d" time="0.1"/>`, i)
			if i == 2 {
				fmt.Fprintf(&b, `<testsuite name="inner" time="%d"><testcase name="n" time="1"/></testsuite>`, run)
				// The same bytes inside a testcase are not a suite.
				fmt.Fprintf(&b, `<testcase name="x" time="1"><testsuite name="inner" time="%d"><properties><property name="run_id" value="7"/></properties></testsuite></testcase>`, run)
			}
			b.WriteString(`</testsuite>`)
		}
		fmt.Fprintf(&b, `<testsuite name="empty" time="%d"/>`, run)
		b.WriteString(`<testsuite name="last"><testcase name="l"/></testsuite></testsuites>`)
		return b.String()
	}
	var docs [][]byte
	for run, v := range []string{
		`2026-11-02T10:00:00`, `2026-11-03T11:30:00.123+00:00`, ``, `x<y`, `&bogus;`, `&#50;026-11-02T10:00:00`, `a'b`, `not a time`,
	} {
		docs = append(docs, []byte(suites(run, v, "")), []byte(suites(run+1, v, ` tests="1"`)))
	}
	docs = append(docs,
		[]byte(suites(1, "2026-11-02T10:00:00", ` timestamp="2026-11-04T10:00:00"`)),
		[]byte(suites(2, "2026-11-02T10:00:00", ` time="3"`)),
		[]byte(suites(3, "2026-11-02T10:00:00", ` hostname="h9"`)),
		[]byte(strings.ReplaceAll(suites(4, "2026-11-05T10:00:00", ""), `"`, `'`)),
		[]byte(suites(5, "2026-11-05T10:00:00", ` x="a<b"`)),
		// Suites nested one level deeper than a fresh read accepts, each
		// tag the same as the one before.
		[]byte(`<testsuites>`+strings.Repeat(`<testsuite name="d" time="1">`, MaxDepth)+strings.Repeat(`</testsuite>`, MaxDepth)+`</testsuites>`),
		[]byte(`<testsuite name="root" time="1"><testsuite name="m&amp;0" timestamp="2026-11-02T10:00:00" hostname="h0" time="3.25"><testcase name="r"/></testsuite></testsuite>`),
	)
	for i, first := range docs {
		for j, second := range docs {
			want, wantErr := parseChains(NewReader(), "second.xml", bytes.NewReader(second))
			for _, src := range []func() io.Reader{
				func() io.Reader { return bytes.NewReader(second) },
				func() io.Reader { return iotest.OneByteReader(bytes.NewReader(second)) },
			} {
				shared := NewReader()
				parseChains(shared, "first.xml", bytes.NewReader(first))
				got, gotErr := parseChains(shared, "second.xml", src())
				if gotErr != wantErr {
					t.Fatalf("after doc %d, doc %d: error %q, fresh reader %q", i, j, gotErr, wantErr)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("after doc %d, doc %d (-fresh +reused):\n%s\n%s", i, j, diff, second)
				}
			}
		}
	}
	// With other times and timestamps, every suite tag below the root
	// that a fresh read takes as a suite repeats, but for the self-closing
	// one: three, the one inside the third, and the last.
	r := NewReader()
	parseChains(r, "a.xml", bytes.NewReader(docs[0]))
	before, scans := r.suiteRepeats, r.scans
	parseChains(r, "b.xml", bytes.NewReader([]byte(suites(7, "2026-12-01T00:00:00", ""))))
	if got := r.suiteRepeats - before; got != 5 {
		t.Errorf("%d of 5 suite tags repeated with other times and timestamps (%d scans)", got, r.scans-scans)
	}
	// A file of more suites than are remembered remembers no more (a tag
	// cut by the window's end is read afresh).
	r = NewReader()
	parseChains(r, "many.xml", strings.NewReader(`<testsuites>`+strings.Repeat(`<testsuite name="s" time="1"></testsuite>`, maxSuiteMemos+5)+`</testsuites>`))
	if len(r.suiteCur) > maxSuiteMemos || r.suiteRepeats < maxSuiteMemos-8 {
		t.Errorf("%d suite tags remembered, %d repeated, for %d suites", len(r.suiteCur), r.suiteRepeats, maxSuiteMemos+5)
	}
	// A suite tag repeats the one before it in the file, as merged
	// reports write a class's suites one after another.
	r = NewReader()
	parseChains(r, "c.xml", strings.NewReader(`<testsuites><testsuite name="s" time="1"></testsuite><testsuite name="s" time="2"></testsuite><testsuite name="s" time="3"></testsuite></testsuites>`))
	if r.suiteRepeats != 2 {
		t.Errorf("%d of 2 suite tags repeated the one before", r.suiteRepeats)
	}
}
