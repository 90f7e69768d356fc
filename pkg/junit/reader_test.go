package junit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/model"
)

// flat is a Case with its suite resolved, for comparisons.
type flat struct {
	ID       string
	File     string
	Line     int
	Outcome  model.Outcome
	Duration time.Duration
	Detail   Outcome
	Reruns   []Outcome
	Props    Props
	Time     time.Time
}

func parseAll(t *testing.T, name string, src io.Reader) ([]flat, Totals, error) {
	t.Helper()
	var got []flat
	r := NewReader()
	tot, err := r.Parse(name, src, func(c *Case) error {
		got = append(got, flat{ID: c.ID(), File: c.File, Line: c.Line(), Outcome: c.Outcome, Duration: c.Duration(),
			Detail: c.Detail, Reruns: append([]Outcome(nil), c.Reruns...)})
		return nil
	})
	return got, tot, err
}

func parseString(t *testing.T, doc string) ([]flat, error) {
	t.Helper()
	var got []flat
	var cases []*Case
	var lines []int
	var durs []time.Duration
	r := NewReader()
	_, err := r.Parse("doc.xml", strings.NewReader(doc), func(c *Case) error {
		cp := *c
		cp.Reruns = append([]Outcome(nil), c.Reruns...)
		cases = append(cases, &cp)
		lines, durs = append(lines, c.Line()), append(durs, c.Duration())
		return nil
	})
	for i, c := range cases {
		p, ts := c.Meta()
		got = append(got, flat{ID: c.ID(), File: c.File, Line: lines[i], Outcome: c.Outcome, Duration: durs[i],
			Detail: c.Detail, Reruns: c.Reruns, Props: p, Time: ts})
	}
	return got, err
}

func TestParseFeatures(t *testing.T) {
	ts := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		doc  string
		want []flat
	}{
		{
			name: "properties at suite level and nested suite timestamp",
			doc: `<testsuites><testsuite name="outer" timestamp="2026-11-30T10:00:00">
<testsuite name="inner"><testcase classname="a.B" name="t1" time="1,234.5" file="a/b.py" line="12"/></testsuite>
<properties><property name="commit_sha" value="abc123"/><property name="run_id" value="77"/><property name="run_attempt" value="2"/></properties>
</testsuite></testsuites>`,
			want: []flat{{ID: "a.B::t1", File: "a/b.py", Line: 12, Duration: 1234500 * time.Millisecond,
				Props: Props{CommitSHA: "abc123", RunID: "77", RunAttempt: 2}, Time: ts}},
		},
		{
			name: "property value as text and testcase-level properties",
			doc: `<testsuite name="s"><properties><property name="commit_sha">  deadbeef </property></properties>
<testcase name="t"><properties><property name="run_id" value="9"/></properties></testcase></testsuite>`,
			want: []flat{{ID: "s::t", Props: Props{CommitSHA: "deadbeef", RunID: "9"}}},
		},
		{
			name: "surefire flaky children and rerun children",
			doc: `<testsuite name="s">
<testcase classname="C" name="flaky"><flakyFailure message="m1" type="AE"><stackTrace>trace one</stackTrace><system-out>noise</system-out></flakyFailure><flakyError message="m2"/></testcase>
<testcase classname="C" name="always"><failure message="first" type="AE"><![CDATA[at C.always(C.java:42)]]></failure><rerunFailure message="again"/><rerunError message="boom"/></testcase>
</testsuite>`,
			want: []flat{
				{ID: "C::flaky", Reruns: []Outcome{{Kind: model.Failed, Type: "AE", Message: "m1", Text: "trace one", Flaky: true}, {Kind: model.Error, Message: "m2", Flaky: true}}},
				{ID: "C::always", Outcome: model.Failed, Detail: Outcome{Kind: model.Failed, Type: "AE", Message: "first", Text: "at C.always(C.java:42)"},
					Reruns: []Outcome{{Kind: model.Failed, Message: "again"}, {Kind: model.Error, Message: "boom"}}},
			},
		},
		{
			name: "precedence error > failure > skipped and disabled status",
			doc: `<testsuite name="s">
<testcase name="a"><skipped/><failure message="f"/><error message="e">x &amp; y &#65;&#x42;</error></testcase>
<testcase name="b" status="disabled"/>
<testcase name="c" status="notrun"><failure message="ran after all"/></testcase>
<testcase name="d" status="run"/>
</testsuite>`,
			want: []flat{
				{ID: "s::a", Outcome: model.Error, Detail: Outcome{Kind: model.Error, Message: "e", Text: "x & y AB"}},
				{ID: "s::b", Outcome: model.Skipped, Detail: Outcome{Kind: model.Skipped, Message: "disabled"}},
				{ID: "s::c", Outcome: model.Failed, Detail: Outcome{Kind: model.Failed, Message: "ran after all"}},
				{ID: "s::d"},
			},
		},
		{
			// GoogleTest 1.10 writes GTEST_SKIP with no <skipped> child;
			// 1.11 adds one (googletest 59e5b401).
			name: "GoogleTest result skipped or suppressed with no outcome child",
			doc: `<testsuite name="s">
<testcase name="a" status="run" result="skipped" time="0.001" classname="g"/>
<testcase name="b" status="notrun" result="suppressed" time="0.001" classname="g"/>
<testcase name="c" status="run" result="skipped" time="0.001" classname="g"><skipped message="why"/></testcase>
<testcase name="d" status="run" result="completed" time="0.001" classname="g"/>
<testcase name="e" result="skipped" classname="g"><failure message="f"/></testcase>
<testcase name="f" result="suppressed" classname="g"/>
</testsuite>`,
			want: []flat{
				{ID: "g::a", Outcome: model.Skipped, Detail: Outcome{Kind: model.Skipped, Message: "skipped"}, Duration: time.Millisecond},
				{ID: "g::b", Outcome: model.Skipped, Detail: Outcome{Kind: model.Skipped, Message: "disabled"}, Duration: time.Millisecond},
				{ID: "g::c", Outcome: model.Skipped, Detail: Outcome{Kind: model.Skipped, Message: "why"}, Duration: time.Millisecond},
				{ID: "g::d", Duration: time.Millisecond},
				{ID: "g::e", Outcome: model.Failed, Detail: Outcome{Kind: model.Failed, Message: "f"}},
				{ID: "g::f", Outcome: model.Skipped, Detail: Outcome{Kind: model.Skipped, Message: "disabled"}},
			},
		},
		{
			name: "entities in names and a byte-order mark",
			doc:  "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?><testsuite name=\"s\"><testcase classname=\"q&quot;c\" name=\"a &lt;b&gt; &apos;c&apos;\"/></testsuite>",
			want: []flat{{ID: `q"c::a <b> 'c'`}},
		},
		{
			name: "comments and processing instructions anywhere",
			doc:  "<!-- head --><?pi x?><testsuite name=\"s\"><!-- a > b --><testcase name=\"t\"/></testsuite><!-- tail -->\n",
			want: []flat{{ID: "s::t"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseString(t, tc.doc)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		msg       string
	}{
		{"empty", "", 1, "empty file"},
		{"whitespace only", "  \n\n", 3, "no root element"},
		{"doctype", "<?xml version=\"1.0\"?>\n<!DOCTYPE x [<!ENTITY a \"b\">]>\n<testsuite/>", 2, "DOCTYPE"},
		{"undeclared entity", "<testsuite>\n<testcase name=\"&xxe;\"/></testsuite>", 2, "undeclared entity &xxe;"},
		{"undeclared entity in text", "<testsuite><testcase name=\"t\"><system-out>\n\n&foo;</system-out></testcase></testsuite>", 3, "undeclared entity"},
		{"bare ampersand", "<testsuite name=\"a & b\"/>", 1, "bare '&'"},
		{"mismatched tag", "<testsuite>\n<testcase></testsuite>", 2, "does not match <testcase>"},
		{"wrong root", "<html><testcase/></html>", 1, "root element <html> is not JUnit"},
		{"truncated", "<testsuites><testsuite>\n<testcase name=\"x\">", 2, "<testcase> is not closed"},
		{"truncated tag", "<testsuites><testsuite>\n<testcase name=\"x", 2, "inside a tag"},
		{"second root", "<testsuite/><testsuite/>", 1, "second root"},
		{"text after root", "<testsuite/>junk", 1, "text after the root"},
		{"unquoted attribute", "<testsuite name=x/>", 1, "not quoted"},
		{"lt in attribute", "<testsuite name=\"<\"/>", 1, "'<'"},
		{"unsupported encoding", "<?xml version=\"1.0\" encoding=\"x-klingon\"?><testsuite/>", 1, "unsupported encoding"},
		{"deep nesting", strings.Repeat("<testsuite>", MaxDepth+1), 1, "nested deeper than 256"},
		{"unterminated comment", "<testsuite><!-- x", 1, "no closing \"-->\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseString(t, tc.doc)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse() error = %v, want *ParseError", err)
			}
			if pe.File != "doc.xml" || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("Parse() error = %v, want doc.xml:%d: ...%s...", err, tc.line, tc.msg)
			}
		})
	}
}

func TestLatin1Declared(t *testing.T) {
	got, _, err := parseAll(t, "latin1", mustOpen(t, filepath.Join(corpusDir, "hostile/latin1-declared.xml")))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	want := []string{"de.example.GrüßeTest::grüßt_Müller", "de.example.GrüßeTest::fällt_durch", "de.example.GrüßeTest::übersprungen"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if got[1].Detail.Message != "erwartet «été» aber war «hiver»" {
		t.Errorf("message = %q", got[1].Detail.Message)
	}
}

func TestUTF16WithBOM(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-16"?><testsuite name="s"><testcase name="ü"/></testsuite>`
	var u16 bytes.Buffer
	u16.Write([]byte{0xFF, 0xFE})
	for _, r := range doc {
		u16.WriteByte(byte(r))
		u16.WriteByte(byte(r >> 8))
	}
	got, _, err := parseAll(t, "u16", &u16)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "s::ü" {
		t.Errorf("got %+v", got)
	}
}

// TestUTF16WithoutBOM: UTF-16 without the byte-order mark XML asks for
// (a writer that leaves it out, the declaration saying UTF-16LE) reads as
// UTF-16 in the byte order its first "<" shows, with or without the
// declaration; read as UTF-8 it was "malformed start tag" or "not an XML
// document". A gzip-compressed file says so.
func TestUTF16WithoutBOM(t *testing.T) {
	for _, doc := range []string{
		`<?xml version="1.0" encoding="UTF-16LE"?><testsuite name="s"><testcase name="ü"/></testsuite>`,
		`<testsuite name="s"><testcase name="ü"/></testsuite>`,
	} {
		for _, big := range []bool{false, true} {
			var u16 bytes.Buffer
			for _, r := range doc {
				lo, hi := byte(r), byte(r>>8)
				if big {
					lo, hi = hi, lo
				}
				u16.WriteByte(lo)
				u16.WriteByte(hi)
			}
			got, _, err := parseAll(t, "u16", iotest.HalfReader(&u16))
			if err != nil || len(got) != 1 || got[0].ID != "s::ü" {
				t.Errorf("big endian %v, %.40q: got %+v, %v", big, doc, got, err)
			}
		}
	}
	gz := []byte{0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03}
	if _, _, err := parseAll(t, "report.xml.gz", bytes.NewReader(gz)); err == nil || !strings.Contains(err.Error(), "gzip-compressed") {
		t.Errorf("gzip: err = %v, want it to say gzip-compressed", err)
	}
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// TestWindowBoundaries parses every corpus file through readers that return
// one byte, or half of what was asked, at a time. Tokens then straddle the
// window at every position, and the result must not change.
func TestWindowBoundaries(t *testing.T) {
	for _, e := range loadExpectations(t, corpusDir) {
		b, err := os.ReadFile(filepath.Join(corpusDir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		want, wantTot, wantErr := parseAll(t, e.Path, bytes.NewReader(b))
		for name, src := range map[string]io.Reader{
			"one-byte": iotest.OneByteReader(bytes.NewReader(b)),
			"half":     iotest.HalfReader(bytes.NewReader(b)),
		} {
			got, gotTot, gotErr := parseAll(t, e.Path, src)
			if (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%s %s: error = %v, want %v", e.Path, name, gotErr, wantErr)
				continue
			}
			if gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("%s %s: error = %v, want %v", e.Path, name, gotErr, wantErr)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || gotTot != wantTot {
				t.Errorf("%s %s: cases differ (-whole +%s):\n%s", e.Path, name, name, diff)
			}
		}
	}
}

func TestMessageIsBounded(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	doc := `<testsuite name="s"><testcase name="t"><failure message="m"><![CDATA[` + big + `]]>` + big + `</failure><system-out>` + big + `</system-out></testcase></testsuite>`
	got, err := parseString(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	want := big[:MaxMessageBytes] + fmt.Sprintf("…[cut %d bytes]", 2<<20-MaxMessageBytes)
	if got := got[0].Detail.Text; got != want {
		t.Errorf("kept %d bytes of text ending %q, want %d ending %q", len(got), got[len(got)-30:], len(want), want[len(want)-30:])
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1.5": 1500 * time.Millisecond, "1,234.5": 1234500 * time.Millisecond, "12,345": 12345 * time.Second,
		"0,5": 500 * time.Millisecond, "": 0, "-345345": 0, "abc": 0, " 2 ": 2 * time.Second,
	} {
		if got := parseDuration([]byte(in)); got != want {
			t.Errorf("parseDuration(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestOtherFormats: XML that CI jobs write beside their JUnit reports
// (coverage and lint reports, other test tools' formats) is refused with
// ParseError.Other saying what it is, from its root element or from the
// DOCTYPE naming it, whose declaration is not read, and Results when it
// holds results of its own; any other root, and a DOCTYPE naming a JUnit
// root, stay plain errors.
func TestOtherFormats(t *testing.T) {
	for _, tc := range []struct {
		name, doc, other string
		results          bool
	}{
		{"coverage.py", "<?xml version=\"1.0\" ?>\n<coverage version=\"7.4.1\" line-rate=\"0.5\">\n\t<!-- Generated by coverage.py -->\n<packages/></coverage>", "a coverage report: Cobertura, coverage.py or Clover", false},
		{"Cobertura with DOCTYPE", "<?xml version=\"1.0\"?>\n<!DOCTYPE coverage SYSTEM \"http://cobertura.sourceforge.net/xml/coverage-04.dtd\">\n<coverage line-rate=\"1\"/>", "a coverage report: Cobertura, coverage.py or Clover", false},
		{"JaCoCo", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="app"><counter type="LINE" missed="1" covered="2"/></report>`, "a JaCoCo coverage report", false},
		{"DOCTYPE with a subset", "<!DOCTYPE\n  coverage[<!ENTITY a \"b\">]><coverage/>", "a coverage report: Cobertura, coverage.py or Clover", false},
		{"Checkstyle", `<?xml version="1.0" encoding="UTF-8"?><checkstyle version="10.12"><file name="A.java"/></checkstyle>`, "a Checkstyle-format lint report", false},
		{"Failsafe summary", `<failsafe-summary result="254" timeout="false"><completed>2</completed></failsafe-summary>`, "Maven Failsafe's summary", false},
		{"TestNG", `<testng-results ignored="0" total="2" passed="2" failed="0" skipped="0"><suite name="S"/></testng-results>`, "TestNG's own report (its default JUnitReportReporter writes JUnit)", true},
		{"testng-failed.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE suite SYSTEM \"https://testng.org/testng-1.0.dtd\">\n<suite name=\"Failed suite [Suite]\"><test name=\"Test(failed)\"/></suite>", "a TestNG suite definition (testng-failed.xml)", false},
		{"PHPUnit coverage", `<?xml version="1.0"?><phpunit xmlns="https://schema.phpunit.de/coverage/1.0"><file name="Duration.php"/></phpunit>`, "PHPUnit's XML coverage or configuration", false},
		{"Microsoft Code Coverage", `<?xml version="1.0" encoding="utf-8"?><results><modules><module name="app.dll"/></modules></results>`, "a Microsoft Code Coverage or cppcheck report", false},
		// Other tools' results are said, but stay unread: nothing says the
		// JUnit files beside them hold the same.
		{"NUnit 3", `<test-run id="0" testcasecount="2" result="Passed"/>`, "an NUnit 3 report (the JunitXml.TestLogger logger writes JUnit)", true},
		{"Robot Framework", `<?xml version="1.0" encoding="UTF-8"?><robot generator="Robot 7.0" schemaversion="5"><suite name="Login"/></robot>`, "Robot Framework's output.xml (its --xunit option writes JUnit)", true},
		{"CTest", `<?xml version="1.0" encoding="UTF-8"?><Site BuildName="Linux" Name="host"><Testing/></Site>`, "a CTest dashboard file (ctest --output-junit writes JUnit)", true},
		{"unknown root", `<html><body/></html>`, "", false},
		{"JUnit DOCTYPE", "<!DOCTYPE testsuite [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><testsuite>&x;</testsuite>", "", false},
		{"truncated DOCTYPE", "<!DOCTYPE", "", false},
		{"second root", "<testsuite/><coverage/>", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseString(t, tc.doc)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse() error = %v, want *ParseError", err)
			}
			if pe.Other != tc.other || pe.Results != tc.results {
				t.Errorf("Other = %q, Results = %t, want %q, %t (error %v)", pe.Other, pe.Results, tc.other, tc.results, err)
			}
			if tc.other != "" && !strings.Contains(pe.Msg, "is not JUnit but "+tc.other) {
				t.Errorf("error %v does not say what the file is", err)
			}
		})
	}
}

// TestAttempts: the final outcome plus every rerun child; cargo-nextest's
// flaky-result = "fail" writes a <failure> beside the flaky children of a
// test whose last attempt passed, which is flake evidence, not three
// failures (a report audit: the case also tipped its run into an outage).
func TestAttempts(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "..", "shared", "conformance", "junit", "nextest", "quick-junit-basic_report.xml"))
	if err != nil {
		t.Skipf("conformance corpus: %v", err)
	}
	defer f.Close()
	got := map[string][3]int{}
	if _, err := NewReader().Parse("basic.xml", f, func(c *Case) error {
		p, fl, s := c.Attempts()
		got[c.Name] = [3]int{p, fl, s}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]int{"testcase7": {1, 2, 0}} {
		if got[name] != want {
			t.Errorf("%s: attempts (passed, failed, skipped) %v, want %v", name, got[name], want)
		}
	}
	doc := `<testsuite name="s">
<testcase classname="C" name="flaky"><flakyFailure message="m1"/><flakyError message="m2"/></testcase>
<testcase classname="C" name="always"><failure message="first"/><rerunFailure message="again"/><rerunError message="boom"/></testcase>
</testsuite>`
	if _, err := NewReader().Parse("s.xml", strings.NewReader(doc), func(c *Case) error {
		p, fl, s := c.Attempts()
		got[c.Name] = [3]int{p, fl, s}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]int{"flaky": {1, 2, 0}, "always": {0, 3, 0}} {
		if got[name] != want {
			t.Errorf("%s: attempts %v, want %v", name, got[name], want)
		}
	}
}
