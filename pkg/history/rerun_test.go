package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/junit"
)

// TestPytestReruns: in a pytest document, an empty testcase that another
// case of its test follows is a failed attempt (pytest-rerunfailures
// 16.6.1 and later, the flaky plugin; see testdata/rerun). Other tools'
// repeated testcases keep the outcome they state.
func TestPytestReruns(t *testing.T) {
	const always = "testdata/rerun/pytest-rerunfailures-16.6.1-programbench64-always-fails.xml"
	const issue170 = "testdata/rerun/pytest-rerunfailures-issue170-flaky-pass-on-rerun.xml"
	file := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pytest := func(cases string) string {
		return `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1" time="0.1" timestamp="2026-01-01T00:00:00" hostname="h">` +
			cases + `</testsuite></testsuites>`
	}
	const a = `<testcase classname="tests.test_a" name="test_a" time="0.010" />`
	const aFail = `<testcase classname="tests.test_a" name="test_a" time="0.010"><failure message="assert False">E assert False</failure></testcase>`
	const aError = `<testcase classname="tests.test_a" name="test_a" time="0.010"><error message="failed on teardown with &quot;boom&quot;">boom</error></testcase>`
	const aSkip = `<testcase classname="tests.test_a" name="test_a" time="0.010"><skipped type="pytest.skip" message="no">no</skipped></testcase>`
	const b = `<testcase classname="tests.test_a" name="test_b" time="0.010" />`
	for _, tc := range []struct {
		name, doc string
		cells     map[string][]Cell
		totals    junit.Totals
	}{
		{"rerunfailures 16.6.1, failed every attempt", file(always),
			map[string][]Cell{"test_rerun::test_always_fails": {{Fail: 3, Sig: 1}}},
			junit.Totals{Testcases: 3, Failed: 3}},
		{"rerunfailures issue 170, passed on rerun", file(issue170),
			map[string][]Cell{"test_sample::test_random": {{Pass: 1, Fail: 1}}},
			junit.Totals{Testcases: 2, Passed: 1, Failed: 1}},
		{"attempts apart (pytest-xdist)", pytest(a + b + a + aFail),
			map[string][]Cell{"tests.test_a::test_a": {{Fail: 3, Sig: 1}}, "tests.test_a::test_b": {{Pass: 1}}},
			junit.Totals{Testcases: 4, Passed: 1, Failed: 3}},
		{"pytest 8 with junit_suite_name set", strings.Replace(strings.Replace(pytest(a+a), `<testsuites>`, `<testsuites name="pytest tests">`, 1), `name="pytest" `, `name="unit" `, 1),
			map[string][]Cell{"tests.test_a::test_a": {{Pass: 1, Fail: 1}}},
			junit.Totals{Testcases: 2, Passed: 1, Failed: 1}},
		{"pytest, one attempt", pytest(a + b),
			map[string][]Cell{"tests.test_a::test_a": {{Pass: 1}}, "tests.test_a::test_b": {{Pass: 1}}},
			junit.Totals{Testcases: 2, Passed: 2}},
		// pytest writes a failure in the call and an error in the
		// teardown as two testcases: each states its outcome.
		{"pytest, failure then teardown error", pytest(aFail + aError),
			map[string][]Cell{"tests.test_a::test_a": {{Fail: 2, Sig: 1}}},
			junit.Totals{Testcases: 2, Failed: 1, Errors: 1}},
		{"pytest, a skip is not an attempt", pytest(aSkip + a),
			map[string][]Cell{"tests.test_a::test_a": {{Pass: 1, Skip: 1}}},
			junit.Totals{Testcases: 2, Passed: 1, Skipped: 1}},
		// go test -count=3 through go-junit-report: three passes.
		{"go test -count", file(filepath.Join(corpusDir, "go-junit-report/016-report.xml")),
			map[string][]Cell{"package/repeated-names::TestRepeat": {{Pass: 3}}},
			junit.Totals{Testcases: 3, Passed: 3}},
		{"another tool's suite", strings.Replace(pytest(a+a+aFail), `name="pytest" `, `name="tests" `, 1),
			map[string][]Cell{"tests.test_a::test_a": {{Pass: 2, Fail: 1, Sig: 1}}},
			junit.Totals{Testcases: 3, Passed: 2, Failed: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Read twice by one builder: the second read takes the
			// repeated tags by the reader's memo (onRepeat).
			for _, workers := range []int{1, 2} {
				h, err := Load(context.Background(), []Source{stringSource("junit.xml", tc.doc)}, Options{Workers: workers})
				if err != nil || len(h.Skipped) > 0 {
					t.Fatal(err, h.Skipped)
				}
				if diff := cmp.Diff(tc.cells, cellsByID(h)); diff != "" {
					t.Errorf("cells (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.totals, h.Totals); diff != "" {
					t.Errorf("totals (-want +got):\n%s", diff)
				}
			}
			bs := NewBuilders(1)
			for i := range 2 {
				bs[0].Add(stringSource("run"+string(rune('1'+i))+"/junit.xml", tc.doc))
			}
			h := Merge(bs...)
			for _, x := range h.Tests {
				if want := tc.cells[x.ID]; len(x.Cells) != 2 || x.Cells[0].Pass != want[0].Pass || x.Cells[1].Pass != want[0].Pass ||
					x.Cells[0].Fail != want[0].Fail || x.Cells[1].Fail != want[0].Fail {
					t.Errorf("%s read twice by one builder: %+v, want twice %+v", x.ID, x.Cells, want)
				}
			}
		})
	}
}

// TestRepeatedOutsidePytestUnchanged: over the conformance corpus and the
// real-tool fixtures, where no pytest document repeats a test, a history
// holds the attempts the cases state, and counts the cases as they do.
func TestRepeatedOutsidePytestUnchanged(t *testing.T) {
	var paths []string
	for _, dir := range []string{corpusDir, "../../fixtures/tools"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".xml") {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	r := junit.NewReader()
	checked := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var want [3]int // passed, failed and skipped attempts
		tot, perr := r.Parse(p, f, func(c *junit.Case) error {
			pass, fail, skip := c.Attempts()
			want[0], want[1], want[2] = want[0]+pass, want[1]+fail, want[2]+skip
			return nil
		})
		f.Close()
		if perr != nil {
			continue
		}
		h, err := Load(context.Background(), []Source{fileSource(p)}, Options{Workers: 1})
		if err != nil || len(h.Skipped) > 0 {
			continue // left out: TestIdentityOverCorpus's concern
		}
		var got [3]int
		for _, x := range h.Tests {
			for _, c := range x.Cells {
				got[0], got[1], got[2] = got[0]+int(c.Pass), got[1]+int(c.Fail), got[2]+int(c.Skip)
			}
		}
		if got != want || h.Totals != tot {
			t.Errorf("%s: attempts %v and totals %+v, want %v and %+v", p, got, h.Totals, want, tot)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("only %d files checked", checked)
	}
}

// TestPytestRepeatedSuiteIsNotReruns: pytest-flakefinder
// (dropbox/pytest-flakefinder) runs each unittest.TestCase test --flake-runs
// times by appending copies of the item, so pytest's junitxml writes the same
// classname and name several times, each case with its real outcome. Three
// passes of a test that always passes stay three passes: the document
// repeats every test it holds, which reruns (only of what failed) never do.
func TestPytestRepeatedSuiteIsNotReruns(t *testing.T) {
	const a = `<testcase classname="tests.test_mod.TestThing" name="test_ok" file="tests/test_mod.py" line="5" time="0.001" />`
	const b = `<testcase classname="tests.test_mod.TestThing" name="test_other" file="tests/test_mod.py" line="9" time="0.001" />`
	doc := `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="6" time="0.1" timestamp="2026-01-01T00:00:00" hostname="h">` +
		a + b + a + b + a + b + `</testsuite></testsuites>`
	h, err := Load(context.Background(), []Source{stringSource("junit.xml", doc)}, Options{Workers: 1})
	if err != nil || len(h.Skipped) > 0 {
		t.Fatal(err, h.Skipped)
	}
	want := map[string][]Cell{
		"tests.test_mod.TestThing::test_ok":    {{Pass: 3}},
		"tests.test_mod.TestThing::test_other": {{Pass: 3}},
	}
	if diff := cmp.Diff(want, cellsByID(h)); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(junit.Totals{Testcases: 6, Passed: 6}, h.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

// TestPytestRerunsOfAnOutage: under pytest-rerunfailures, a run in which
// every test failed every attempt writes each test as empty cases, then a
// failure: every test repeated, as in a repeated suite, which read them as
// a pass and a failure each (all flagged flaky, and no outage; a report
// audit). Every test ending failed after empty cases is reruns; a repeated
// suite's copies carry their own outcomes and do not all fail last.
func TestPytestRerunsOfAnOutage(t *testing.T) {
	tc := func(name, body string) string {
		if body == "" {
			return `<testcase classname="tests.test_mod" name="` + name + `" />`
		}
		return `<testcase classname="tests.test_mod" name="` + name + `">` + body + `</testcase>`
	}
	const fail = `<failure message="connection refused">E</failure>`
	var cases string
	for _, n := range []string{"test_a", "test_b", "test_c"} {
		cases += tc(n, "") + tc(n, "") + tc(n, fail)
	}
	doc := `<testsuites name="pytest tests"><testsuite name="pytest" timestamp="2026-01-01T00:00:00">` + cases + `</testsuite></testsuites>`
	h, err := Load(context.Background(), []Source{stringSource("junit.xml", doc)}, Options{Workers: 1})
	if err != nil || len(h.Skipped) > 0 {
		t.Fatal(err, h.Skipped)
	}
	for id, cells := range cellsByID(h) {
		if len(cells) != 1 || cells[0].Pass != 0 || cells[0].Fail != 3 {
			t.Errorf("%s: cells %+v, want 3 failed attempts", id, cells)
		}
	}
	// With --reruns 2, some tests passing on a rerun: counts differ.
	mixed := `<testsuites name="pytest tests"><testsuite name="pytest" timestamp="2026-01-01T00:00:00">` +
		tc("test_a", "") + tc("test_a", "") + tc("test_a", fail) + tc("test_b", "") + tc("test_b", "") + tc("test_c", "") + tc("test_c", "") + tc("test_c", "") +
		`</testsuite></testsuites>`
	h2, err := Load(context.Background(), []Source{stringSource("junit.xml", mixed)}, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]Cell{"tests.test_mod::test_a": {Fail: 3}, "tests.test_mod::test_b": {Pass: 1, Fail: 1}, "tests.test_mod::test_c": {Pass: 1, Fail: 2}} {
		if got := cellsByID(h2)[id]; len(got) != 1 || got[0].Pass != want.Pass || got[0].Fail != want.Fail {
			t.Errorf("reruns of unequal counts: %s %+v, want %+v", id, got, want)
		}
	}
	// One test repeated and passing last: a repeated suite after all.
	doc = strings.Replace(doc, tc("test_c", fail), tc("test_c", ""), 1)
	if h, err = Load(context.Background(), []Source{stringSource("junit.xml", doc)}, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if got := cellsByID(h)["tests.test_mod::test_c"]; len(got) != 1 || got[0].Pass != 3 {
		t.Errorf("repeated suite: test_c %+v, want 3 passes", got)
	}
}

// TestNextestFlakyFailSignature: under nextest's flaky-result = "fail",
// the <failure> beside the flaky children is nextest's note ("test passed
// on attempt 3/3 …"), not a failure: the children's messages are the
// signatures (a review: the note was the top signature, the assertion had
// no run).
func TestNextestFlakyFailSignature(t *testing.T) {
	doc := `<testsuites><testsuite name="nextest-run"><testcase classname="crate" name="t0">` +
		`<failure message="test passed on attempt 3/3 but is configured to fail when flaky" type="flaky failure"/>` +
		`<flakyFailure message="assertion failed: left == right"/><flakyFailure message="assertion failed: left == right"/>` +
		`</testcase></testsuite></testsuites>`
	h, err := Load(context.Background(), []Source{stringSource("junit.xml", doc)}, Options{Workers: 1})
	if err != nil || len(h.Tests) != 1 {
		t.Fatal(err, h.Tests)
	}
	for _, s := range h.Tests[0].Sigs {
		if strings.Contains(s.Message, "configured to fail when flaky") {
			t.Errorf("nextest's note is a signature: %+v", h.Tests[0].Sigs)
		}
	}
	if c := h.Tests[0].Cells; len(c) != 1 || c[0].Pass != 1 || c[0].Fail != 2 {
		t.Errorf("cells %+v, want a pass after 2 failed attempts", c)
	}
}
