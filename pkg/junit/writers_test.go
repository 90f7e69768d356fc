package junit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/model"
)

// writersDir holds what the JUnit writers of Node's test runner, Bun,
// Deno, Dart's junitreport, karma-junit-reporter and Robot Framework
// write (see its README.md).
const writersDir = "../../fixtures/junit-writers"

// writerExpectation is an entry of fixtures/junit-writers/expected.json:
// the counts by flakegate's reading (the counting rules of the conformance
// corpus and the writer conventions of writers.go) and every testcase's
// ID in document order.
type writerExpectation struct {
	expectation
	Tool       string   `json:"tool"`
	ToolCounts string   `json:"tool_counts"`
	FlakyTest  string   `json:"flaky_test"`
	IDs        []string `json:"ids"`
	HistoryIDs []string `json:"history_ids"`
}

func loadWriterExpectations(t testing.TB) []writerExpectation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(writersDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exps []writerExpectation
	if err := json.Unmarshal(b, &exps); err != nil || len(exps) == 0 {
		t.Fatalf("expected.json: %v, %d entries", err, len(exps))
	}
	return exps
}

// TestWriters pins how each writer's sample reads: totals by final
// outcome, tests with flaky evidence, and the ID of every testcase in
// order, nothing dropped. A Reader that read the other files first must
// agree with a fresh one (it reuses their tags).
func TestWriters(t *testing.T) {
	shared := NewReader()
	for _, e := range loadWriterExpectations(t) {
		t.Run(e.Path, func(t *testing.T) {
			for _, r := range []*Reader{shared, NewReader()} {
				f, err := os.Open(filepath.Join(writersDir, e.Path))
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				keys := map[[2]string][2]bool{}
				tot, err := r.Parse(e.Path, f, func(c *Case) error {
					ids = append(ids, c.ID())
					k := [2]string{c.Classname, c.Name}
					s := keys[k]
					keys[k] = [2]bool{s[0] || c.Outcome == model.Passed, s[1] || c.Outcome.IsFailure() || len(c.Reruns) > 0}
					return nil
				})
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				want := Totals{Testcases: e.Testcases, Passed: e.Passed, Failed: e.Failed, Errors: e.Errors, Skipped: e.Skipped}
				if diff := cmp.Diff(want, tot); diff != "" {
					t.Errorf("totals (-want +got):\n%s\nthe tool itself: %s", diff, e.ToolCounts)
				}
				flaky := 0
				for _, s := range keys {
					if s[0] && s[1] {
						flaky++
					}
				}
				if flaky != e.Flaky {
					t.Errorf("tests with flaky evidence = %d, want %d", flaky, e.Flaky)
				}
				if diff := cmp.Diff(e.IDs, ids); diff != "" {
					t.Errorf("testcase IDs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestWriterConventions: each rule of writers.go, and that it keeps to the
// writer it is for.
func TestWriterConventions(t *testing.T) {
	type got struct {
		Outcome   model.Outcome
		Classname string
		Message   string
		Commit    string
	}
	read := func(doc string) []got {
		t.Helper()
		var out []got
		var suites []*Suite
		_, err := NewReader().Parse("w.xml", strings.NewReader(doc), func(c *Case) error {
			out = append(out, got{Outcome: c.Outcome, Classname: c.Classname, Message: c.Detail.Message})
			suites = append(suites, c.Suite)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range suites {
			p, _ := s.Meta()
			out[i].Commit = p.CommitSHA
		}
		return out
	}
	for _, tc := range []struct {
		name, doc string
		want      []got
	}{
		{"node: a todo that throws is todo", `<testsuites><testcase name="t" classname="test" failure="boom">` +
			`<skipped type="todo" message="later"/><failure type="testCodeFailure" message="boom">x</failure></testcase></testsuites>`,
			[]got{{Outcome: model.Skipped, Classname: "test", Message: "later"}}},
		// type="skipped" is any writer's word: beside a failure, the failure
		// stands (node's t.skip() then a throw reads failed, a rare case).
		{"a typed skip beside a failure stays failed", `<testsuites><testcase name="t" classname="test">` +
			`<skipped type="skipped" message="true"/><failure type="testCodeFailure" message="boom"/></testcase></testsuites>`,
			[]got{{Outcome: model.Failed, Classname: "test", Message: "boom"}}},
		{"an untyped <skipped> beside a failure stays failed", `<testsuite name="s"><testcase name="t" classname="c">` +
			`<skipped/><failure message="boom"/></testcase></testsuite>`,
			[]got{{Outcome: model.Failed, Classname: "c", Message: "boom"}}},
		{"an error beside node's todo stays an error", `<testsuites><testcase name="t" classname="test">` +
			`<skipped type="todo"/><error message="crash"/></testcase></testsuites>`,
			[]got{{Outcome: model.Error, Classname: "test", Message: "crash"}}},
		{"deno: a parent whose steps failed passed", `<testsuites name="deno test"><testsuite name="./a.ts">` +
			`<testcase name="p" classname="./a.ts"><failure message="2 test steps failed">2 test steps failed.</failure></testcase>` +
			`<testcase name="p &gt; one" classname="./a.ts"><failure message="1 test step failed">1 test step failed.</failure></testcase>` +
			`<testcase name="p &gt; one &gt; leaf" classname="./a.ts"><failure message="Uncaught Error: x">Error: x</failure></testcase>` +
			`</testsuite></testsuites>`,
			[]got{{Outcome: model.Passed, Classname: "./a.ts"}, {Outcome: model.Passed, Classname: "./a.ts"},
				{Outcome: model.Failed, Classname: "./a.ts", Message: "Uncaught Error: x"}}},
		{"deno: a parent's own failure and incomplete steps stay failed", `<testsuites name="deno test"><testsuite name="./a.ts">` +
			`<testcase name="p" classname="./a.ts"><failure message="Uncaught Error: 1 test step failed">Error: 1 test step failed</failure></testcase>` +
			`<testcase name="q" classname="./a.ts"><failure message="Completed while steps were still running">Completed while steps were still running. Ensure all steps are awaited with ` + "`await t.step(...)`" + `.</failure></testcase>` +
			`</testsuite></testsuites>`,
			[]got{{Outcome: model.Failed, Classname: "./a.ts", Message: "Uncaught Error: 1 test step failed"},
				{Outcome: model.Failed, Classname: "./a.ts", Message: "Completed while steps were still running"}}},
		{"the steps message of another writer stays a failure", `<testsuites name="other"><testsuite name="s">` +
			`<testcase name="p" classname="c"><failure message="1 test step failed">1 test step failed.</failure></testcase></testsuite></testsuites>`,
			[]got{{Outcome: model.Failed, Classname: "c", Message: "1 test step failed"}}},
		{"karma: the browser's versions leave the classname", `<testsuite name="Chrome Headless 124.0.6367.60 (Linux x86_64)" package="" id="0">` +
			`<testcase name="A b" classname="Chrome_Headless_124_0_6367_60_(Linux_x86_64).A"/>` +
			`<testcase name="c" classname="Chrome_Headless_124_0_6367_60_(Linux_x86_64)."/>` +
			`<testcase name="d" classname="Other"/></testsuite>`,
			[]got{{Classname: "Chrome_Headless_(Linux_x86_64).A"}, {Classname: "Chrome_Headless_(Linux_x86_64)."}, {Classname: "Other"}}},
		{"a suite named with no dotted version keeps its classnames", `<testsuite name="suite 1"><testcase name="t" classname="suite_1.T"/></testsuite>`,
			[]got{{Classname: "suite_1.T"}}},
		{"bun: the commit property is a commit", `<testsuites name="bun test"><testsuite name="a.test.ts" file="a.test.ts"><properties>` +
			`<property name="ci" value="https://github.com/acme/shop/actions/runs/1" /><property name="commit" value="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b" />` +
			`</properties><testcase name="t" classname="" file="a.test.ts"/></testsuite></testsuites>`,
			[]got{{Commit: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"}}},
		{"commit_sha wins over commit, either order", `<testsuites><testsuite name="a"><properties><property name="commit" value="aaaaaaa"/><property name="commit_sha" value="bbbbbbb"/></properties>` +
			`<testcase name="t" classname="c"/></testsuite><testsuite name="b"><properties><property name="commit_sha" value="ccccccc"/><property name="commit" value="ddddddd"/></properties>` +
			`<testcase name="t" classname="c"/></testsuite></testsuites>`,
			[]got{{Classname: "c", Commit: "bbbbbbb"}, {Classname: "c", Commit: "ccccccc"}}},
		{"a commit property that is no commit is not read", `<testsuite name="a"><properties><property name="commit" value="yes"/></properties>` +
			`<testcase name="t" classname="c"/></testsuite>`,
			[]got{{Classname: "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, read(tc.doc)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStripVersions(t *testing.T) {
	for in, want := range map[string]string{
		"Chrome Headless 124.0.6367.60 (Linux x86_64)": "Chrome Headless (Linux x86_64)",
		"Chrome 124.0.0.0 (Mac OS 10.15.7)":            "Chrome (Mac OS)",
		"Firefox 125.0 (Windows 10)":                   "Firefox (Windows)",
		"HeadlessChrome 0.0.0 (Linux 0.0.0)":           "HeadlessChrome (Linux)",
		"Safari 17.4.1 (Mac OS 14.4.1)":                "Safari (Mac OS)",
	} {
		if got, dotted := stripVersions(in); got != want || !dotted {
			t.Errorf("stripVersions(%q) = %q, %v; want %q, true", in, got, dotted, want)
		}
	}
	for _, in := range []string{"pytest", "suite 1", "x86_64", "v1.2"} {
		if from, to := karmaPrefixes(in); from != "" || to != "" {
			t.Errorf("karmaPrefixes(%q) = %q, %q; want none", in, from, to)
		}
	}
}
