package history

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRepeatedTagsKeepTheirIdentity reads histories whose documents repeat
// the same testcase tags, so that from the third document on cases are
// matched by the reader's remembered tag (Builder.memoTest) rather than by
// name, and checks each test's cells against what a history of the same
// documents read afresh, one Builder per document, makes of them.
func TestRepeatedTagsKeepTheirIdentity(t *testing.T) {
	doc := func(run int, body string) string {
		return fmt.Sprintf(`<testsuites><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>%s</testsuites>`, run, run, body)
	}
	tag := func(time string) string {
		return `<testcase classname="k" name="t" file="k.py" line="3" time="` + time + `"/>`
	}
	for _, tc := range []struct {
		name   string
		bodies []string
	}{
		{"one suite", []string{
			`<testsuite name="s">` + tag("1") + `</testsuite>`,
			`<testsuite name="s">` + tag("2") + `</testsuite>`,
			`<testsuite name="s">` + tag("3") + `</testsuite>`,
			`<testsuite name="s">` + tag("4") + `</testsuite>`,
		}},
		// The same tag under two projects in every document: each
		// document, the ones matched by remembered tag too, must split
		// the name into two tests.
		{"two projects", []string{
			`<testsuite name="s" hostname="chromium">` + tag("1") + `</testsuite><testsuite name="s" hostname="firefox">` + tag("2") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("3") + `</testsuite><testsuite name="s" hostname="firefox">` + tag("4") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("5") + `</testsuite><testsuite name="s" hostname="firefox">` + tag("6") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("7") + `</testsuite><testsuite name="s" hostname="firefox">` + tag("8") + `</testsuite>`,
		}},
		// One project at first, then a second one with the same tags: the
		// cases matched by remembered tag must still tell them apart.
		{"a second project later", []string{
			`<testsuite name="s" hostname="chromium">` + tag("1") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("2") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("3") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("4") + `</testsuite><testsuite name="s" hostname="firefox">` + tag("5") + `</testsuite>`,
			`<testsuite name="s" hostname="chromium">` + tag("6") + `</testsuite><testsuite name="s" hostname="firefox">` + tag("7") + `</testsuite>`,
		}},
		// No classname: the suite names the test, so the same tag under
		// another suite is another test.
		{"suite names the test", []string{
			`<testsuite name="a"><testcase name="t" time="1"/></testsuite>`,
			`<testsuite name="a"><testcase name="t" time="2"/></testsuite>`,
			`<testsuite name="a"><testcase name="t" time="3"/></testsuite>`,
			`<testsuite name="b"><testcase name="t" time="4"/></testsuite>`,
			`<testsuite name="a"><testcase name="t" time="5"/></testsuite>`,
		}},
		// A repeated tag that fails, is skipped or is rerun is not a plain
		// pass: its outcome and signature must still count.
		{"outcomes", []string{
			`<testsuite name="s">` + tag("1") + `</testsuite>`,
			`<testsuite name="s">` + tag("2") + `</testsuite>`,
			`<testsuite name="s">` + tag("3") + `</testsuite>`,
			`<testsuite name="s"><testcase classname="k" name="t" file="k.py" line="3" time="4"><failure message="boom"/></testcase></testsuite>`,
			`<testsuite name="s"><testcase classname="k" name="t" file="k.py" line="3" time="5"><skipped/></testcase></testsuite>`,
			`<testsuite name="s"><testcase classname="k" name="t" file="k.py" line="3" time="6"><flakyFailure message="once"/></testcase></testsuite>`,
			`<testsuite name="s">` + tag("7") + tag("8") + `</testsuite>`,
		}},
		// Two documents of 33,000 distinct tags fill what the reader
		// remembers; it starts over for the third and gives its tags the
		// indexes the first one's had.
		{"the reader starts over", []string{many("ca"), many("cb"), many("cb"), many("ca")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srcs []Source
			for i, body := range tc.bodies {
				srcs = append(srcs, stringSource(fmt.Sprintf("d%d.xml", i), doc(i+1, body)))
			}
			got, err := Load(context.Background(), srcs, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			want := afresh(srcs)
			cells := func(h *History) map[string][]Cell {
				m := map[string][]Cell{}
				for _, x := range h.Tests {
					m[x.ID] = x.Cells
				}
				return m
			}
			if diff := cmp.Diff(cells(want), cells(got)); diff != "" {
				t.Errorf("cells (-afresh +read in turn):\n%s", diff)
			}
		})
	}
}

// many is a suite of 33,000 passing tests of classname class.
func many(class string) string {
	var b strings.Builder
	b.WriteString(`<testsuite name="s">`)
	for i := range 33000 {
		fmt.Fprintf(&b, `<testcase classname="%s" name="t%d" time="1"/>`, class, i)
	}
	b.WriteString(`</testsuite>`)
	return b.String()
}
