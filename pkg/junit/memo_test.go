package junit

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/model"
)

// parseWith parses doc with r and returns the cases (flattened) and the
// error text.
func parseWith(r *Reader, name string, doc []byte) ([]flat, string) {
	return parseFrom(r, name, bytes.NewReader(doc))
}

func parseFrom(r *Reader, name string, src io.Reader) ([]flat, string) {
	var got []flat
	_, err := r.Parse(name, src, func(c *Case) error {
		p, ts := c.Meta()
		got = append(got, flat{ID: c.ID(), File: c.File, Line: c.Line(), Outcome: c.Outcome, Duration: c.Duration(),
			Detail: c.Detail, Reruns: append([]Outcome(nil), c.Reruns...), Props: p, Time: ts})
		return nil
	})
	if err != nil {
		return got, err.Error()
	}
	return got, ""
}

// TestReuseMatchesFreshParse: a Reader reuses the testcase tags of the
// previous file when their bytes match. Whatever the previous file was, the
// result must be what a fresh Reader gives.
func TestReuseMatchesFreshParse(t *testing.T) {
	checkReuse(t, reuseDocs())
}

// TestPropertiesInTurn: property tags are compared first with the tag at
// their place in the last <properties> read, then looked up. Suites whose
// properties change order, value, length or number from one to the next,
// read in any order after any other document, give what a fresh Reader
// gives.
func TestPropertiesInTurn(t *testing.T) {
	props := func(p ...string) string {
		var b strings.Builder
		b.WriteString("<properties>")
		for _, x := range p {
			b.WriteString(x)
		}
		return b.String() + "</properties>"
	}
	const (
		sha   = `<property name="commit_sha" value="abc"/>`
		sha2  = `<property name="commit_sha" value="abcd"/>`
		run   = `<property name="run_id" value="7"/>`
		run2  = `<property name="run_id" value="8"/>`
		other = `<property name="java.version" value="17"/>`
	)
	suite := func(name, p string) string {
		return `<testsuite name="` + name + `">` + p + `<testcase classname="c" name="` + name + `" time="1"/></testsuite>`
	}
	doc := func(suites ...string) []byte {
		return []byte("<testsuites>" + strings.Join(suites, "") + "</testsuites>")
	}
	docs := [][]byte{
		doc(suite("a", props(sha, run)), suite("b", props(sha, run)), suite("c", props(sha, run))),
		doc(suite("a", props(sha, run)), suite("b", props(run, sha)), suite("c", props(sha, run2))),
		doc(suite("a", props(sha2, run)), suite("b", props(sha, other, run)), suite("c", props(other))),
		doc(suite("a", props(sha, run)), suite("b", props()), suite("c", props(sha))),
		doc(suite("a", props(other, sha, run)), suite("b", props(other, sha2, run2)), suite("c", props(sha, run))),
	}
	checkReuse(t, docs)
}

// reuseDocs is a document and variants of it that a Reader that read one
// may or may not read by the tags it remembers.
func reuseDocs() [][]byte {
	base := `<testsuite name="s"><testcase classname="c" name="a" file="a.py" line="3" time="0.1"/><testcase classname="c" name="b" status="disabled" time="0.2"/><testcase classname="c" name="d"/></testsuite>`
	variants := map[string]string{
		"same":                base,
		"new times":           strings.ReplaceAll(base, `time="0.`, `time="9.`),
		"renamed":             strings.Replace(base, `name="a" file`, `name="a2" file`, 1),
		"longer value":        strings.Replace(base, `name="a"`, `name="ab"`, 1),
		"attr after time":     strings.Replace(base, `time="0.1"/>`, `time="0.1" name="late"/>`, 1),
		"no time":             strings.Replace(base, ` time="0.1"`, ``, 1),
		"time gained":         strings.Replace(base, `name="d"/>`, `name="d" time="3"/>`, 1),
		"entity after prefix": strings.Replace(base, `time="0.1"`, `time="&#48;.1"`, 1),
		"entity in prefix":    strings.Replace(base, `name="a"`, `name="&lt;a&gt;"`, 1),
		"unquoted time":       strings.Replace(base, `time="0.1"`, `time=0.1`, 1),
		"glued attribute":     strings.Replace(base, `line="3" time`, `line="3"time`, 1),
		"lt after prefix":     strings.Replace(base, `time="0.1"`, `time="<"`, 1),
		"failure child":       strings.Replace(base, `time="0.1"/>`, `time="0.1"><failure message="m"/></testcase>`, 1),
		"inserted retry":      strings.Replace(base, `<testcase classname="c" name="b"`, `<testcase classname="c" name="a" file="a.py" line="3" time="0.5"><failure/></testcase><testcase classname="c" name="b"`, 1),
		"dropped test":        strings.Replace(base, `<testcase classname="c" name="a" file="a.py" line="3" time="0.1"/>`, ``, 1),
		"status dropped":      strings.Replace(base, ` status="disabled"`, ``, 1),
		"result skipped":      strings.Replace(base, `name="d"/>`, `name="d" status="run" result="skipped"/>`, 1),
		"result after time":   strings.Replace(base, `time="0.1"/>`, `time="0.1" result="skipped"/>`, 1),
		"result for status":   strings.Replace(base, ` status="disabled"`, ` result="suppressed"`, 1),
		"result completed":    strings.Replace(base, `status="disabled" time="0.2"/>`, `status="disabled" time="0.2" result="completed"/>`, 1),
		"result in prefix":    strings.Replace(base, `name="a" file="a.py"`, `name="a" result="skipped" file="a.py"`, 1),
		"single quotes":       strings.ReplaceAll(base, `"`, `'`),
		"truncated in tag":    base[:strings.Index(base, `time="0.2"`)+3],
		// The third tag, which a Reader that read base reads by
		// repeatCase when its bytes allow.
		"late time entity":      strings.Replace(base, `name="d"/>`, `name="d" time="&#49;"/>`, 1),
		"late time lt":          strings.Replace(base, `name="d"/>`, `name="d" time="<"/>`, 1),
		"late spaces at end":    strings.Replace(base, `name="d"/>`, `name="d" time="1"  />`, 1),
		"late newlines":         strings.Replace(base, `name="d"/>`, "name=\"d\"\n\ttime=\"1\"\n/>", 1),
		"late long time":        strings.Replace(base, `name="d"/>`, `name="d" time="`+strings.Repeat("1", 70)+`"/>`, 1),
		"late open tag":         strings.Replace(base, `name="d"/>`, `name="d" time="1"></testcase>`, 1),
		"late single quote":     strings.Replace(base, `name="d"/>`, `name="d" time='1'/>`, 1),
		"late mixed quotes":     strings.Replace(base, `name="d"/>`, `name="d" time="1'2"/>`, 1),
		"late slash space":      strings.Replace(base, `name="d"/>`, `name="d" time="1"/ >`, 1),
		"late glued time":       strings.Replace(base, `name="d"/>`, `name="d"time="1"/>`, 1),
		"late unclosed time":    strings.Replace(base, `name="d"/>`, `name="d" time="1/>`, 1),
		"late empty time":       strings.Replace(base, `name="d"/>`, `name="d" time=""/>`, 1),
		"late time no value":    strings.Replace(base, `name="d"/>`, `name="d" time/>`, 1),
		"late second attribute": strings.Replace(base, `name="d"/>`, `name="d" time="1" x="2"/>`, 1),
		"late disabled":         strings.Replace(base, `name="b" status="disabled" time="0.2"/>`, `name="b" status="disabled" time="7"/>`, 1),
		"late in a testcase":    strings.Replace(base, `name="b" status="disabled" time="0.2"/>`, `name="b" status="disabled" time="0.2"><testcase classname="c" name="d"/></testcase>`, 1),
	}
	docs := [][]byte{[]byte(base)}
	for _, v := range variants {
		docs = append(docs, []byte(v))
	}
	return docs
}

// checkReuse reads every ordered pair of docs with one Reader, the second
// after the first, and compares the second's result with a fresh Reader's,
// reading it whole and a byte per read.
func checkReuse(t *testing.T, docs [][]byte) {
	t.Helper()
	for i, first := range docs {
		for j, second := range docs {
			shared := NewReader()
			parseWith(shared, "first.xml", first)
			got, gotErr := parseWith(shared, "second.xml", second)
			want, wantErr := parseWith(NewReader(), "second.xml", second)
			if gotErr != wantErr {
				t.Fatalf("after doc %d, doc %d: error %q, fresh reader %q", i, j, gotErr, wantErr)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("after doc %d, doc %d (-fresh +reused):\n%s\n%s", i, j, diff, second)
			}
			// The same, with the tags cut at every byte by the reads.
			shared = NewReader()
			parseWith(shared, "first.xml", first)
			got, gotErr = parseFrom(shared, "second.xml", iotest.OneByteReader(bytes.NewReader(second)))
			if gotErr != wantErr {
				t.Fatalf("after doc %d, doc %d, a byte per read: error %q, fresh reader %q", i, j, gotErr, wantErr)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("after doc %d, doc %d, a byte per read (-fresh +reused):\n%s\n%s", i, j, diff, second)
			}
		}
	}
}

// TestRepeatTakesPlainPasses: a Reader with Repeat set offers it the
// plain passes whose tags repeat remembered ones, and hands fn the rest.
// What Repeat takes (every other case offered, here) and what fn gets are,
// together and in order, what a fresh Reader gives, times aside, and the
// totals are the same.
func TestRepeatTakesPlainPasses(t *testing.T) {
	docs := reuseDocs()
	var pairs [][2]int // every variant after every other
	for i := range docs {
		for j := range docs {
			pairs = append(pairs, [2]int{i, j})
		}
	}
	for _, p := range corpusAndSample(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
		// The corpus: each file after itself, and after the one before it.
		pairs = append(pairs, [2]int{len(docs) - 1, len(docs) - 1}, [2]int{len(docs) - 2, len(docs) - 1})
	}
	offered := 0
	for _, pair := range pairs {
		i, j := pair[0], pair[1]
		first, second := docs[i], docs[j]
		r := NewReader()
		type tag struct {
			classname, name, file string
			line                  int
		}
		tags := map[int32]tag{}
		remember := func(c *Case) error {
			if k, _ := c.Memo(); k >= 0 {
				tags[k] = tag{c.Classname, c.Name, c.File, c.Line()}
			}
			return nil
		}
		r.Parse("first.xml", bytes.NewReader(first), remember)
		var got []flat
		take := false
		r.Repeat = func(k int32, gen uint32, s *Suite, file string) bool {
			offered++
			tg, ok := tags[k]
			if !ok || gen != r.gen || tg.file != file {
				t.Fatalf("after doc %d, doc %d: offered memo %d (generation %d, file %q), not a tag of the first document", i, j, k, gen, file)
			}
			if take = !take; take {
				p, ts := s.Meta()
				got = append(got, flat{ID: model.TestID(tg.classname, tg.name, s.Name), File: file, Line: tg.line, Outcome: model.Passed, Props: p, Time: ts})
			}
			return take
		}
		tot, err := r.Parse("second.xml", bytes.NewReader(second), func(c *Case) error {
			p, ts := c.Meta()
			got = append(got, flat{ID: c.ID(), File: c.File, Line: c.Line(), Outcome: c.Outcome,
				Detail: c.Detail, Reruns: append([]Outcome(nil), c.Reruns...), Props: p, Time: ts})
			return remember(c)
		})
		want, wantErr := parseWith(NewReader(), "second.xml", second)
		wantTot, _ := NewReader().Parse("second.xml", bytes.NewReader(second), nil)
		if gotErr := errText(err); gotErr != wantErr {
			t.Fatalf("after doc %d, doc %d: error %q, fresh reader %q", i, j, gotErr, wantErr)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(flat{}, "Duration")); diff != "" {
			t.Fatalf("after doc %d, doc %d (-fresh +with Repeat):\n%s", i, j, diff)
		}
		if tot != wantTot {
			t.Fatalf("after doc %d, doc %d: totals %+v, fresh reader %+v", i, j, tot, wantTot)
		}
	}
	if offered < 1000 {
		t.Errorf("Repeat was offered %d cases", offered)
	}
}

func errText(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestReuseOverCorpus reads the whole corpus, and the benchmark-like
// sample history, with one Reader and compares every file with a fresh
// Reader's result.
func TestReuseOverCorpus(t *testing.T) {
	paths := corpusAndSample(t)
	shared := NewReader()
	for pass := 0; pass < 2; pass++ {
		for _, p := range paths {
			readsAsFresh(t, shared, p, fmt.Sprintf("pass %d: a reused reader", pass))
		}
	}
}

// readsAsFresh reads file p with r and with a fresh Reader and fails the
// test, naming r by what, when the two differ.
func readsAsFresh(t *testing.T, r *Reader, p, what string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got, gotErr := parseWith(r, p, b)
	want, wantErr := parseWith(NewReader(), p, b)
	if gotErr != wantErr || !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
		t.Fatalf("%s: %s differs from a fresh one: %v / %v\n%s", p, what, gotErr, wantErr,
			cmp.Diff(want, got, cmpopts.EquateEmpty()))
	}
}

// TestPropertyReuseMatchesFreshParse: a Reader reuses the self-closing
// <property> tags it read before when their bytes match; whatever it read
// before, the run properties each case gets are a fresh Reader's.
// TestTimestampReuseMatchesFreshParse: testcase tags that differ from
// remembered ones only in a timestamp's value repeat them; a value a fresh
// Reader refuses ('<') or leaves undecoded (references), a quote that
// ends it early, two timestamps, or one that moves, read as a fresh
// Reader reads them.
func TestTimestampReuseMatchesFreshParse(t *testing.T) {
	doc := func(before, after string) string {
		var b strings.Builder
		b.WriteString(`<testsuite name="s">`)
		for i := range 3 {
			fmt.Fprintf(&b, `<testcase classname="c" name="t%d"%s time="0.%d"%s/>`, i, before, i, after)
			fmt.Fprintf(&b, "<testcase classname=\"c\" name=\"u%d\" time=\"1\"%s>\n</testcase>", i, after)
		}
		b.WriteString(`</testsuite>`)
		return b.String()
	}
	var docs [][]byte
	for _, v := range []string{
		`2026-11-02T10:00:00`, `2026-11-03T11:30:00.123+00:00`, ``, `x<y`, `&bogus;`, `&#49;`, `a'b`,
	} {
		stamp := ` timestamp="` + v + `"`
		docs = append(docs, []byte(doc(stamp, "")), []byte(doc("", stamp)), []byte(doc("", ` file="f"`+stamp+` line="3"`)))
	}
	docs = append(docs,
		[]byte(doc(` timestamp="1"`, ` timestamp="2"`)),
		[]byte(doc(` timestamp='2026-11-02T10:00:00'`, "")),
		[]byte(doc("", ` timestamp="2026-11-02T10:00:00" timestamp="2026-11-02T10:00:01"`)),
		[]byte(doc(` timestamp="2026-11-02T10:00:00`, "")),
	)
	checkReuse(t, docs)
	// With another timestamp, every tag of a document repeats.
	r := NewReader()
	parseWith(r, "a.xml", docs[0])
	before := r.repeats
	parseWith(r, "b.xml", docs[3])
	if got := r.repeats - before; got != 6 {
		t.Errorf("%d of 6 tags repeated with another timestamp", got)
	}
}

// TestTimestampHoleCarried: a tag that starts as a remembered one with a
// timestamp and goes on otherwise (an attribute added before the time) is
// remembered with its own timestamp left out, so the next run's tags,
// with other timestamps, repeat it.
func TestTimestampHoleCarried(t *testing.T) {
	doc := func(run int, extra string) []byte {
		var b strings.Builder
		b.WriteString(`<testsuite name="s">`)
		for i := range 4 {
			fmt.Fprintf(&b, `<testcase classname="c" name="t%d" timestamp="2026-11-0%dT10:00:0%d"%s time="0.%d"/>`, i, run+1, i, extra, run)
		}
		b.WriteString(`</testsuite>`)
		return []byte(b.String())
	}
	r := NewReader()
	parseWith(r, "a.xml", doc(0, ""))
	parseWith(r, "a.xml", doc(1, ` file="c.py"`)) // each tag a hit, then read on
	before := r.repeats
	got, err := parseWith(r, "a.xml", doc(2, ` file="c.py"`))
	if want, wantErr := parseWith(NewReader(), "a.xml", doc(2, ` file="c.py"`)); err != wantErr || !cmp.Equal(got, want) {
		t.Fatalf("reused: %v, %q; fresh: %v, %q", got, err, want, wantErr)
	}
	if n := r.repeats - before; n != 4 {
		t.Errorf("%d of 4 tags repeated in the third run", n)
	}
}

// TestBodyReuseMatchesFreshParse: a testcase whose content repeats a
// remembered one is a repeat; content that differs, says something (an
// outcome, a rerun, properties that name another run), is malformed, or
// would nest too deep where it now is reads as a fresh Reader reads it.
func TestBodyReuseMatchesFreshParse(t *testing.T) {
	const out = "<system-out><![CDATA[]]></system-out><system-err/>"
	doc := func(depth int, bodies ...string) string {
		var b strings.Builder
		b.WriteString(strings.Repeat(`<testsuite name="s">`, depth))
		for i, body := range bodies {
			fmt.Fprintf(&b, "<testcase classname=\"c\" name=\"t%d\" time=\"0.%d\">%s</testcase>\n", i, i, body)
		}
		b.WriteString(strings.Repeat(`</testsuite>`, depth))
		return b.String()
	}
	base := []string{out, out, "<webLink></webLink>", out}
	var docs [][]byte
	for _, v := range [][]string{
		base,
		{out, out + "<failure message=\"m\"/>", "<webLink></webLink>", out},
		{out, "<flakyFailure message=\"once\"/>" + out, "<webLink></webLink>", out},
		{out, `<properties><property name="run_id" value="9"/></properties>`, "<webLink></webLink>", out},
		{out, "<system-out>&bogus;</system-out>", "<webLink></webLink>", out},
		{out, "<system-out>&amp;</system-out>", "<webLink></webLink>", out},
		{out, "<system-out><![CDATA[x]]></system-out><system-err/>", "<webLink>", out},
		{"<skipped/>", out, "<webLink></webLink>", out},
		{"<a><b><c/></b></a>", "<a><b><c/></b></a>", "<a><b><c/></b></a>", "<a><b><c/></b></a>"},
	} {
		docs = append(docs, []byte(doc(1, v...)), []byte(doc(MaxDepth-3, v...)))
	}
	checkReuse(t, docs)
	// The same contents, again: every tag repeats.
	r := NewReader()
	parseWith(r, "a.xml", docs[0])
	before := r.repeats
	if _, err := parseWith(r, "b.xml", docs[0]); err != "" {
		t.Fatal(err)
	}
	if n := r.repeats - before; n != 4 {
		t.Errorf("%d of 4 testcases with remembered contents repeated", n)
	}
}

func TestPropertyReuseMatchesFreshParse(t *testing.T) {
	suite := func(n int) string {
		return fmt.Sprintf(`<testsuite name="s%d" timestamp="2026-10-01T00:0%d:00"><properties>`+
			`<property name="commit_sha" value="c0ffee"/><property name="run_id" value="7"/><property name="run_attempt" value="2"/>`+
			`<property name="java.version" value="17"/></properties><testcase classname="c" name="t%d"/></testsuite>`, n, n, n)
	}
	base := "<testsuites>" + suite(1) + suite(2) + suite(3) + "</testsuites>"
	last := strings.LastIndex(base, `<property name="commit_sha" value="c0ffee"/>`)
	variants := []string{
		base,
		strings.ReplaceAll(base, `value="c0ffee"`, `value="beef"`),
		base[:last] + `<property name="commit_sha" value="beef"/>` + base[last+len(`<property name="commit_sha" value="c0ffee"/>`):],
		strings.Replace(base, `value="7"/>`, `value="&#56;"/>`, 2),
		strings.Replace(base, `value="7"/>`, `value="7>8"/>`, 2),
		strings.Replace(base, `<property name="run_id" value="7"/>`, `<property name="run_id">9</property>`, 2),
		strings.Replace(base, `<property name="run_id" value="7"/>`, `<property name="run_id"/>`, 2),
		strings.Replace(base, `<property name="run_id" value="7"/>`, `<property value="7" name="run_id"/>`, 2),
		strings.Replace(base, `<property name="run_id" value="7"/>`, `<property name="run_id" value="7" />`, 2),
		strings.Replace(base, `<property name="run_attempt" value="2"/>`, `<property name="run_attempt" value="x"/>`, 1),
		strings.Replace(base, `<property name="commit_sha" value="c0ffee"/>`, `<property name="commit_sha" value="`+strings.Repeat("a", 2000)+`"/>`, 2),
		strings.Replace(base, `<properties>`, `<property name="commit_sha" value="c0ffee"/><properties>`, 1),
		strings.Replace(base, `<testcase classname="c" name="t2"/>`, `<testcase classname="c" name="t2"><properties><property name="commit_sha" value="c0ffee"/></properties></testcase>`, 1),
		strings.Replace(base, `<testcase classname="c" name="t2"/>`, `<testcase classname="c" name="t2"><properties><property name="commit_sha" value="case"/></properties></testcase>`, 1),
		strings.Replace(base, `<property name="run_id" value="7"/>`, `<property name="run_id" value="7"/`, 1),
		strings.Replace(base, `<property name="java.version" value="17"/>`, `<property name="java.version" value="&bogus;"/>`, 3),
	}
	var docs [][]byte
	for _, v := range variants {
		docs = append(docs, []byte(v))
	}
	checkReuse(t, docs)
}

// TestRepeatsTakeNearlyEveryTag: reading the sample history with one
// Reader, nearly every testcase and property tag after the first file is
// done again from the bytes of the file before (repeatCase,
// repeatProperty), not scanned; so too when every testcase that passed is
// written as Jest, Vitest and Playwright write it, an empty
// <testcase ...></testcase> across two lines, when attributes follow the
// time, as TestNG, mocha-junit-reporter and minitest write them, and when
// names hold character references (Jest's &quot;), and when each testcase
// has a timestamp of its own (cargo-nextest, unittest-xml-reporting), and
// when each pass holds empty output elements (Cucumber); each form reads as
// the same cases. A change that turned the fast paths off would still parse
// correctly; this test notices it.
func TestRepeatsTakeNearlyEveryTag(t *testing.T) {
	paths, _ := filepath.Glob("../../fixtures/history/*.xml")
	if len(paths) < 10 {
		t.Fatalf("%d sample files", len(paths))
	}
	selfClosing := regexp.MustCompile(`(<testcase [^>]*[^/])/>`)
	timeFirst := regexp.MustCompile(`(<testcase classname="[^"]*" name="[^"]*")( file="[^"]*" line="[^"]*")( time="[^"]*")`)
	// Form 3 spells characters of the names as character references,
	// which decode to the sample's names.
	refs := strings.NewReplacer(`name="test_case_`, `name="test&#95;case&#x5f;`, `classname="tests.`, `classname="tests&#46;`)
	// Forms 4 and 5 give each testcase a timestamp of its own, before the
	// time as cargo-nextest writes it and after it as unittest-xml-reporting
	// does.
	attrTime := regexp.MustCompile(` time="[^"]*"`)
	stamped := func(b []byte, file, before int) []byte {
		k := 0
		return attrTime.ReplaceAllFunc(b, func(t []byte) []byte {
			k++
			stamp := fmt.Sprintf(` timestamp="2026-11-%02dT10:%02d:%02d.%03d+00:00"`, 1+file%28, file%60, k%60, k%1000)
			if before == 1 {
				return append([]byte(stamp), t...)
			}
			return append(append([]byte(nil), t...), stamp...)
		})
	}
	// Form 6 gives each testcase that passed an empty <system-out> and
	// <system-err>, as Cucumber writes them.
	cucumber := []byte("$1>\n      <system-out><![CDATA[]]></system-out>\n      <system-err><![CDATA[]]></system-err>\n    </testcase>")
	var forms [7][][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		forms[0] = append(forms[0], b)
		forms[1] = append(forms[1], selfClosing.ReplaceAll(b, []byte("$1>\n    </testcase>")))
		forms[2] = append(forms[2], timeFirst.ReplaceAll(b, []byte("$1$3$2")))
		forms[3] = append(forms[3], []byte(refs.Replace(string(b))))
		forms[4] = append(forms[4], stamped(b, len(forms[4]), 1))
		forms[5] = append(forms[5], stamped(b, len(forms[5]), 0))
		forms[6] = append(forms[6], selfClosing.ReplaceAll(b, cucumber))
	}
	for k := 1; k < len(forms); k++ {
		if bytes.Equal(bytes.Join(forms[0], nil), bytes.Join(forms[k], nil)) {
			t.Fatalf("form %d: the sample has no testcase to rewrite", k)
		}
	}
	var read [7][]string
	for k, docs := range forms {
		r := NewReader()
		cases, repeats := 0, 0
		for i, b := range docs {
			before := r.repeats
			n := 0
			if _, err := r.Parse(paths[i], bytes.NewReader(b), func(c *Case) error {
				n++
				read[k] = append(read[k], fmt.Sprintf("%s %s %s %d %v %+v %+v %v", c.Classname, c.Name, c.File, c.Line(), c.Outcome, c.Detail, c.Reruns, c.Duration()))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if r.repeats != before {
					t.Errorf("form %d, first file: %d tags repeated with nothing read before", k, r.repeats-before)
				}
				continue
			}
			cases += n
			repeats += r.repeats - before
		}
		// A testcase with a failure child is not a repeat, nor are the run
		// properties of a run not seen before: the sample has an outage run in
		// which most tests failed.
		t.Logf("form %d: %d tags repeated for %d testcases after the first file", k, repeats, cases)
		if cases == 0 || repeats < cases*9/10 {
			t.Errorf("form %d: %d tags repeated for %d testcases after the first file", k, repeats, cases)
		}
	}
	for k := 1; k < len(forms); k++ {
		if diff := cmp.Diff(read[0], read[k]); diff != "" {
			t.Errorf("form %d reads unlike the sample (-sample +form %d):\n%s", k, k, diff)
		}
	}
}

// TestCaseEnd: the ends of an empty testcase that the repeat path takes,
// and the offset of each one's last '>'; anything else is not taken.
func TestCaseEnd(t *testing.T) {
	const body = "\n  <system-out><![CDATA[]]></system-out>\n</testcase>"
	for _, tc := range []struct {
		in, body string
		gt       int
		ok       bool
	}{
		{">" + body, body, len(body), true},
		{" >" + body + "<", body, len(body) + 1, true},
		{">" + body[:len(body)-1], body, 0, false},
		{">" + strings.Replace(body, "[]", "[x]", 1), body, 0, false},
		{"></testcase>", body, 11, true},
		{`/>`, body, 1, true},
		{">" + body, "", 0, false},
		{`/>`, "", 1, true},
		{` />`, "", 2, true},
		{"\n\t/>x", "", 3, true},
		{`></testcase>`, "", 11, true},
		{" >\n    </testcase>", "", 17, true},
		{`/`, "", 0, false},
		{` /`, "", 0, false},
		{`/ >`, "", 0, false},
		{`>`, "", 0, false},
		{`><failure/></testcase>`, "", 0, false},
		{`></testcas>`, "", 0, false},
		{`x/>`, "", 0, false},
		{``, "", 0, false},
		{`   `, "", 0, false},
	} {
		if gt, ok := caseEnd([]byte(tc.in), 0, tc.body); ok != tc.ok || ok && gt != tc.gt {
			t.Errorf("caseEnd(%q, %q) = %d, %v; want %d, %v", tc.in, tc.body, gt, ok, tc.gt, tc.ok)
		}
	}
}

// TestTimeThenEndFastPath compares timeThenEnd, which reads the common
// ` time="V"/>` (or ` time="V">` and an end tag, and remembered attributes
// after the time, a timestamp's value among them) a word at a time, with
// the byte-at-a-time reading, on random tails made mostly of the bytes
// that matter to either.
func TestTimeThenEndFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte(` "'</>&=time0123456789.e-x` + "\t\n")
	fast, twoLines, suffixed, holes, bodies := 0, 0, 0, 0, 0
	suffixes := []struct {
		s    string
		hole int32
	}{{"", 0}, {"", 0}, {` classname="c"`, 0}, {` classname="c" file="f"`, 0},
		{` timestamp="" file="f"`, 12}, {` file="f" timestamp=''`, 21}}
	for range 200000 {
		var b []byte
		sf := suffixes[rng.IntN(len(suffixes))]
		suffix := sf.s
		if sf.hole > 0 {
			// The value in the hole: a timestamp, or bytes that may end it
			// early or need decoding.
			v := []byte("2026-11-02T10:00:00")
			for n := rng.IntN(3); n > 0; n-- {
				v[rng.IntN(len(v))] = alphabet[rng.IntN(len(alphabet))]
			}
			suffix = sf.s[:sf.hole] + string(v[:rng.IntN(len(v)+1)]) + sf.s[sf.hole:]
		}
		if rng.IntN(2) == 0 {
			b = append(b, ` time="`...)
		}
		for n := rng.IntN(14); n > 0; n-- {
			switch rng.IntN(4) {
			case 0:
				b = append(b, alphabet[rng.IntN(len(alphabet))])
			default:
				b = append(b, byte('0'+rng.IntN(10)))
			}
		}
		if rng.IntN(4) != 0 {
			b = append(b, '"')
			b = append(b, suffix[:len(suffix)-rng.IntN(min(2, len(suffix)+1))]...)
			b = append(b, []string{"", " ", "\n\t"}[rng.IntN(3)]...)
		}
		body := ""
		if rng.IntN(3) == 0 {
			body = "\n<system-out/>\n</testcase>"
		}
		switch rng.IntN(5) {
		case 0, 1:
			b = append(b, `/>`...)
		case 2:
			// The end of an empty testcase across two lines, cut anywhere.
			end := ">\n" + strings.Repeat(" \t", rng.IntN(3)) + "</testcase>"
			b = append(b, end[:len(end)-rng.IntN(3)]...)
		case 3:
			// A remembered content, cut anywhere.
			end := ">\n<system-out/>\n</testcase>"
			b = append(b, end[:len(end)-rng.IntN(3)]...)
		}
		b = append(b, `   <testcase name="x"/>`[:rng.IntN(24)]...)
		gt, val, ok := timeThenEnd(b, sf.s, sf.hole, body)
		sgt, sval, sok := timeThenEndSlow(b, sf.s, sf.hole, body)
		if gt != sgt || string(val) != string(sval) || ok != sok {
			t.Fatalf("%q, suffix %q (hole at %d), body %q: fast (%d, %q, %v), slow (%d, %q, %v)", b, sf.s, sf.hole, body, gt, val, ok, sgt, sval, sok)
		}
		if ok && len(b) >= 15 && string(b[:7]) == ` time="` {
			fast++
			if b[gt-1] != '/' {
				twoLines++
			}
			if suffix != "" {
				suffixed++
			}
			if sf.hole > 0 {
				holes++
			}
			if body != "" && b[gt-1] == 'e' {
				bodies++
			}
		}
	}
	if fast < 10000 || twoLines < 1000 || suffixed < 1000 || holes < 1000 || bodies < 1000 {
		t.Errorf("only %d inputs took the common form, %d of them ending in </testcase>, %d with attributes after the time, %d with a timestamp, %d with a remembered content", fast, twoLines, suffixed, holes, bodies)
	}
}

// TestMemoNamesOneTag reads the corpus and the sample history twice with
// one Reader and checks Case.Memo's promise: two cases with the same index
// and generation have the same classname, name, file, line and status
// outcome, and most cases of the second pass have an index.
func TestMemoNamesOneTag(t *testing.T) {
	paths := corpusAndSample(t)
	// Two files of 40,000 distinct tags each fill what a Reader remembers
	// (maxPool): the file after them starts it over, and the indexes it
	// gives out again must not be taken for the first file's tags.
	dir := t.TempDir()
	for _, f := range []struct {
		name, class string
	}{{"a.xml", "ca"}, {"b.xml", "cb"}, {"c.xml", "cb"}} {
		var doc strings.Builder
		doc.WriteString("<testsuite>")
		for i := range 40000 {
			fmt.Fprintf(&doc, `<testcase classname="%s" name="t%d" time="1"/>`, f.class, i)
		}
		doc.WriteString("</testsuite>")
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	type key struct {
		index int32
		gen   uint32
	}
	type tag struct {
		classname, name, file string
		line                  int
		disabled              bool
	}
	seen := map[key]tag{}
	r := NewReader()
	for pass := 0; pass < 2; pass++ {
		cases, memos := 0, 0
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r.Parse(p, bytes.NewReader(b), func(c *Case) error {
				cases++
				k, gen := c.Memo()
				if k < 0 {
					return nil
				}
				memos++
				got := tag{c.Classname, c.Name, c.File, c.Line(), c.Detail.Message == "disabled"}
				if was, ok := seen[key{k, gen}]; ok && was != got {
					t.Fatalf("%s: memo %d (generation %d) was %+v, now %+v", p, k, gen, was, got)
				}
				seen[key{k, gen}] = got
				return nil
			})
		}
		if pass == 1 && memos < cases*3/4 {
			t.Errorf("second pass: %d of %d cases have a memo", memos, cases)
		}
	}
}

// corpusAndSample lists the conformance corpus's files and the sample
// history's.
func corpusAndSample(t *testing.T) []string {
	var paths []string
	for _, e := range loadExpectations(t, corpusDir) {
		paths = append(paths, filepath.Join(corpusDir, e.Path))
	}
	hist, _ := filepath.Glob("../../fixtures/history/*.xml")
	return append(paths, hist...)
}

// TestReserveKeepsWhatIsRead: a Reader sized beforehand for many testcases
// reads every corpus file as a fresh one does, in turn, and Reserve on a
// Reader that has read a file keeps the tags and strings it remembers.
func TestReserveKeepsWhatIsRead(t *testing.T) {
	paths := corpusAndSample(t)
	reserved := NewReader()
	reserved.Reserve(5000)
	for i, p := range paths {
		readsAsFresh(t, reserved, p, "a reserved reader")
		if i == 0 {
			pool, interned := len(reserved.pool), len(reserved.intern)
			if pool == 0 || interned == 0 {
				t.Fatalf("%s: remembers %d tags and %d strings", p, pool, interned)
			}
			reserved.Reserve(100000)
			if len(reserved.pool) != pool || len(reserved.intern) != interned {
				t.Fatalf("Reserve after a file: %d tags and %d strings, had %d and %d", len(reserved.pool), len(reserved.intern), pool, interned)
			}
		}
	}
}

// TestConformanceFilesRepeat: each corpus file, read once and then again
// as a next run would write it (every time and timestamp changed), has
// nearly every test that passed taken by the repeat path the second time,
// whichever tool wrote it, and reads as a fresh Reader reads it. The files
// listed are the exceptions, with why.
func TestConformanceFilesRepeat(t *testing.T) {
	exceptions := map[string]string{
		"phpunit/dorny-phpcheckstyle-phpunit.xml": "passes carry output longer than a remembered content",
	}
	times := regexp.MustCompile(`( time=")[^"]*"`)
	stamps := regexp.MustCompile(`( timestamp=")[^"]*"`)
	checked := 0
	for _, e := range loadExpectations(t, corpusDir) {
		b, err := os.ReadFile(filepath.Join(corpusDir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		next := stamps.ReplaceAll(times.ReplaceAll(b, []byte(`${1}9.99"`)), []byte(`${1}2030-01-02T03:04:05"`))
		r := NewReader()
		if _, err := parseWith(r, "first.xml", b); err != "" || e.Passed < 3 {
			continue // an error case of the corpus, or too few to count
		}
		before := r.repeats
		got, gotErr := parseWith(r, "next.xml", next)
		want, wantErr := parseWith(NewReader(), "next.xml", next)
		if gotErr != wantErr || !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
			t.Errorf("%s: the next run reads unlike a fresh read: %q, %q", e.Path, gotErr, wantErr)
		}
		repeated := r.repeats - before
		why, excepted := exceptions[e.Path]
		switch {
		case repeated < e.Passed*9/10 && !excepted:
			t.Errorf("%s: %d of %d passes repeated", e.Path, repeated, e.Passed)
		case repeated >= e.Passed*9/10 && excepted:
			t.Errorf("%s: %d of %d passes repeated, though listed as an exception (%s)", e.Path, repeated, e.Passed, why)
		}
		checked++
	}
	t.Logf("%d corpus files checked", checked)
	if checked < 40 {
		t.Errorf("only %d corpus files checked", checked)
	}
}

// TestResyncReorderedTags: when a run's suites, or its tests, come in
// another order than the run before's (Jest with several workers,
// pytest-xdist), each tag is still found among the previous file's and
// repeated; the cases read as a fresh Reader reads them, in this file's
// order, however the files before were ordered.
func TestResyncReorderedTags(t *testing.T) {
	suite := func(name string, tests []int, run int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "<testsuite name=%q>\n", name)
		for _, k := range tests {
			fmt.Fprintf(&b, "  <testcase classname=%q name=\"t%d\" time=\"0.%d\"/>\n", name, k, run)
		}
		return b.String() + "</testsuite>\n"
	}
	doc := func(run int, suites []string, order [][]int) []byte {
		var b strings.Builder
		b.WriteString("<testsuites>\n")
		for i, s := range suites {
			b.WriteString(suite(s, order[i], run))
		}
		return []byte(b.String() + "</testsuites>\n")
	}
	inOrder := [][]int{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}
	shuffled := [][]int{{3, 1, 0, 2}, {2, 0, 3, 1}, {1, 3, 2, 0}, {0, 2, 1, 3}}
	docs := [][]byte{
		doc(1, []string{"a", "b", "c", "d"}, inOrder),
		doc(2, []string{"c", "a", "d", "b"}, inOrder),  // suites finished in another order
		doc(3, []string{"d", "c", "b", "a"}, shuffled), // and tests too
		doc(4, []string{"b", "d", "a", "c"}, inOrder),
		doc(5, []string{"x", "y"}, inOrder), // other tests
		doc(6, []string{"a", "b", "c", "d"}, shuffled),
	}
	r := NewReader()
	for i, d := range docs {
		before := r.repeats
		got, gotErr := parseWith(r, fmt.Sprintf("r%d.xml", i), d)
		want, wantErr := parseWith(NewReader(), fmt.Sprintf("r%d.xml", i), d)
		if gotErr != wantErr || !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
			t.Fatalf("doc %d reads unlike a fresh read: %q, %q\n%s", i, gotErr, wantErr, cmp.Diff(want, got, cmpopts.EquateEmpty()))
		}
		if repeated := r.repeats - before; i >= 1 && i <= 3 && repeated != 16 {
			t.Errorf("doc %d: %d of 16 tags repeated", i, repeated)
		}
	}
	// A tag in its place whose case has an outcome this time does not
	// set off a search: in a history in order, nothing is indexed.
	failing := bytes.Replace(docs[0], []byte(`name="t2" time="0.1"/>`), []byte(`name="t2" time="0.1"><failure/></testcase>`), 1)
	if bytes.Equal(failing, docs[0]) {
		t.Fatal("no testcase made to fail")
	}
	// Nor does a test run again after it failed, whose tag comes twice
	// (pytest-rerunfailures): the second is the one before the cursor.
	retried := bytes.Replace(failing, []byte("<failure/></testcase>\n"), []byte("<failure/></testcase>\n  <testcase classname=\"a\" name=\"t2\" time=\"0.1\"/>\n"), 1)
	if bytes.Equal(retried, failing) {
		t.Fatal("no testcase retried")
	}
	r = NewReader()
	parseWith(r, "a.xml", docs[0])
	parseWith(r, "b.xml", failing)
	before := r.repeats
	parseWith(r, "c.xml", retried)
	if n := r.repeats - before; n != 16 {
		t.Errorf("%d of the 16 plain passes of a file with a retried test repeated", n)
	}
	parseWith(r, "d.xml", docs[0])
	if r.indexed != 0 {
		t.Errorf("%d tags indexed for a history in order", r.indexed)
	}
	// So too when Repeat takes the cases it is offered, as the history's
	// Builder does.
	taken := 0
	r = NewReader()
	r.Repeat = func(int32, uint32, *Suite, string) bool { taken++; return true }
	for i, d := range docs[:4] {
		taken = 0
		if _, err := r.Parse("r.xml", bytes.NewReader(d), func(*Case) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if i > 0 && taken != 16 {
			t.Errorf("doc %d: Repeat offered %d of 16 cases", i, taken)
		}
	}
	checkReuse(t, docs)
}
