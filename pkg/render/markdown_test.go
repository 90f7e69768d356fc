package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/score"

	"github.com/flakegate/flakegate/pkg/ghapi"
)

// bigReport has 3,000 flaky tests with huge hostile messages, 5,000
// skipped files and 400 infrastructure runs.
func bigReport() *score.Report { return bigReportN(3000, 5000, 400) }

func bigReportN(tests, skipped, infra int) *score.Report {
	r := &score.Report{GeneratedAt: genAt, Source: "octo-org/monorepo", Threshold: 0.1, MinCommits: 5,
		ResultsParsed: 9_000_000, Runs: 4000, InfraThreshold: 0.5, ResultsWithoutCommit: 12}
	for i := range 200 {
		r.Commits = append(r.Commits, score.Commit{SHA: sha(i), Time: genAt.Add(time.Duration(i) * time.Hour), Runs: 20})
	}
	huge := strings.Repeat("E", 40_000) + " " + hostileMsg + strings.Repeat(" <b>@everyone</b> ", 2000)
	hugeN := fmt.Sprintf("%s %s", strings.Repeat("<@all> ", 1000), huge)
	timeline := strings.Repeat("PMPF.", 40)
	for i := range tests {
		name := fmt.Sprintf("tests.pkg%02d.module_%04d::test_%s_%d", i%97, i, strings.Repeat("long_name_", 8), i)
		if i%10 == 3 {
			name = hostileName + fmt.Sprint(i)
		}
		t := mkTest(name, 40+i%50, 0, 200, 90, 400, 300, timeline, []string{score.EvidenceSameCommit, score.EvidenceRetry},
			sig(fmt.Sprintf("sha256:%064x", i), 50, 60, hugeN),
			sig(fmt.Sprintf("sha256:%064x", i+1e6), 30, 30, huge),
			sig(fmt.Sprintf("sha256:%064x", i+2e6), 10, 10, huge))
		r.Tests = append(r.Tests, t)
	}
	r.TestsAnalyzed, r.FlakyCount, r.FlakyRate = len(r.Tests), len(r.Tests), 1
	for i := range skipped {
		r.SkippedFiles = append(r.SkippedFiles, history.Skipped{Path: fmt.Sprintf("artifacts/run-%d/%s.xml", i, strings.Repeat("x", 300)),
			Error: "XML syntax error: " + strings.Repeat("unexpected EOF ", 40)})
	}
	for i := range infra {
		r.InfraRuns = append(r.InfraRuns, score.InfraRun{RunID: fmt.Sprint(9000 + i), Attempt: 1, Commit: sha(i % 200), Source: "junit.xml", Tests: 3000, Failed: 2990})
	}
	return r
}

func markdown(t testing.TB, r *score.Report, o MarkdownOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, r, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	tableRowRE = regexp.MustCompile(`(?m)^\| \d+ \|`)
	detailsRE  = regexp.MustCompile(`(?m)^<details>`)
	listRE     = regexp.MustCompile(`(?m)^- artifacts/run`)
)

// head is the title, verdict and context lines: what every rendering opens
// with.
func head(md string) string {
	i := strings.Index(md, "generated ")
	return md[:i+strings.IndexByte(md[i:], '\n')+1]
}

// TestMarkdownCommentBudget: 3,000 flaky tests with huge messages fit a PR
// comment, open with the summary and say what was cut and where the rest is.
func TestMarkdownCommentBudget(t *testing.T) {
	r := bigReport()
	o := MarkdownOptions{MaxBytes: ghapi.MaxCommentChars, ArtifactHint: "the flakegate-report artifact"}
	out := markdown(t, r, o)
	if len(out) > ghapi.MaxCommentChars {
		t.Fatalf("output is %d bytes, over %d", len(out), ghapi.MaxCommentChars)
	}
	if !utf8.ValidString(out) {
		t.Error("output is not valid UTF-8")
	}
	full := markdown(t, r, MarkdownOptions{ArtifactHint: o.ArtifactHint})
	if len(full) <= ghapi.MaxCommentChars {
		t.Fatalf("the unlimited report is only %d bytes: the test proves nothing", len(full))
	}
	h := head(full)
	if !strings.HasPrefix(out, h) || !strings.Contains(h, "**3,000 flaky tests** of 3,000 tests analysed over 200 commits / 4,000 runs.") {
		t.Errorf("output does not open with the summary:\n%s", out[:min(len(out), 600)])
	}
	notice := regexp.MustCompile(`> \[!NOTE\]\n> Shortened to fit 65,536 bytes\. Left out: ([^\n]+)\. Everything is in the flakegate-report artifact\.\n`)
	m := notice.FindStringSubmatch(out)
	if m == nil || !strings.HasPrefix(out[len(h):], "\n"+m[0]) {
		t.Fatalf("no notice of what was cut right after the summary:\n%s", out[:min(len(out), 1500)])
	}
	if !strings.Contains(m[1], "signature details for") {
		t.Errorf("notice %q does not mention the details", m[1])
	}
	// The ranked table keeps rows; MaxTests caps it at 50 and says so.
	if rows := len(tableRowRE.FindAllString(out, -1)); rows == 0 || rows > defaultMaxTests {
		t.Errorf("%d table rows", rows)
	}
	if !strings.Contains(out, "of 3,000 flagged tests; the full ranking is in the flakegate-report artifact.") {
		t.Error("the table does not say where the rest of the ranking is")
	}
	if !strings.Contains(out, "more; every one is listed in the flakegate-report artifact.") {
		t.Error("the skipped files list does not say where the rest is")
	}
	checkTables(t, out)
	checkMermaid(t, out)
	checkFences(t, out)
	if hasMention(out) || rawHTMLRE.MatchString(out) {
		t.Error("mention or raw HTML in the shortened output")
	}
}

// TestMarkdownSummaryBudget: the same report within a job summary's 1 MiB
// keeps the whole table and more details.
func TestMarkdownSummaryBudget(t *testing.T) {
	r := bigReport()
	out := markdown(t, r, MarkdownOptions{MaxBytes: ghapi.MaxSummaryBytes})
	if len(out) > ghapi.MaxSummaryBytes {
		t.Fatalf("%d bytes", len(out))
	}
	if rows := len(tableRowRE.FindAllString(out, -1)); rows != defaultMaxTests {
		t.Errorf("%d table rows, want %d", rows, defaultMaxTests)
	}
	if n := len(detailsRE.FindAllString(out, -1)); n == 0 {
		t.Error("no details within 1 MiB")
	}
	if !strings.Contains(out, "the full JSON, CSV or HTML report") {
		t.Error("default hint missing")
	}
}

// TestMarkdownBudgetSweep: at every budget the output fits; from the size
// of the head on it opens with the head; a larger budget never shows less;
// and degradation drops details before table rows.
func TestMarkdownBudgetSweep(t *testing.T) {
	for _, rep := range []struct {
		name string
		r    *score.Report
	}{{"big", bigReportN(300, 600, 50)}, {"hand", handReport()}, {"hostile", hostileReport()}} {
		full := markdown(t, rep.r, MarkdownOptions{MaxTests: 20})
		h := head(full)
		prevRows, prevDetails, prevList := -1, -1, -1
		budgets := []int{1, 50, 200, len(h) - 1, len(h), len(h) + 100, 700, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000,
			20000, 40000, 65536, 100000, 300000, len(full) - 1, len(full), len(full) + 1}
		for _, b := range budgets {
			if b <= 0 {
				continue
			}
			out := markdown(t, rep.r, MarkdownOptions{MaxBytes: b, MaxTests: 20})
			if len(out) > b {
				t.Errorf("%s: MaxBytes %d: %d bytes", rep.name, b, len(out))
			}
			if !utf8.ValidString(out) {
				t.Errorf("%s: MaxBytes %d: invalid UTF-8", rep.name, b)
			}
			if b >= len(full) {
				if out != full {
					t.Errorf("%s: MaxBytes %d ≥ full size %d, but the output differs", rep.name, b, len(full))
				}
				continue
			}
			if b >= len(h)+200 {
				if !strings.HasPrefix(out, h) {
					t.Errorf("%s: MaxBytes %d: does not open with the head", rep.name, b)
				}
				if !strings.Contains(out, "Shortened to fit") {
					t.Errorf("%s: MaxBytes %d: cut without saying so", rep.name, b)
				}
			}
			rows, details := len(tableRowRE.FindAllString(out, -1)), len(detailsRE.FindAllString(out, -1))
			list := len(listRE.FindAllString(out, -1))
			if rows < prevRows || (rows == prevRows && details < prevDetails) || (rows == prevRows && details == prevDetails && list < prevList && details > 0) {
				t.Errorf("%s: MaxBytes %d shows less (rows %d, details %d, list %d) than a smaller budget (%d, %d, %d)",
					rep.name, b, rows, details, list, prevRows, prevDetails, prevList)
			}
			if details > 0 && rows < len(tableRowRE.FindAllString(full, -1)) {
				t.Errorf("%s: MaxBytes %d: details kept (%d) while table rows were cut (%d)", rep.name, b, details, rows)
			}
			prevRows, prevDetails, prevList = rows, details, list
			checkTables(t, out)
			checkMermaid(t, out)
		}
	}
}

// TestMarkdownDetailsFirst: just under the full size, only signature
// details go; the table, charts and lists stay whole.
func TestMarkdownDetailsFirst(t *testing.T) {
	r := handReport()
	full := markdown(t, r, MarkdownOptions{})
	out := markdown(t, r, MarkdownOptions{MaxBytes: len(full) - 1})
	if got, want := len(tableRowRE.FindAllString(out, -1)), len(tableRowRE.FindAllString(full, -1)); got != want {
		t.Errorf("table rows %d, want %d", got, want)
	}
	if got, want := len(detailsRE.FindAllString(out, -1)), len(detailsRE.FindAllString(full, -1)); got >= want {
		t.Errorf("details %d, want fewer than %d", got, want)
	}
	if !strings.Contains(out, "Left out: signature details for 1 of 3 tests.") {
		t.Errorf("notice:\n%s", out)
	}
	for _, s := range []string{"```mermaid", "### Skipped files", "results/run-17/junit.xml", "### Infrastructure failures excluded", "run 5003"} {
		if !strings.Contains(out, s) {
			t.Errorf("%q cut before the details were all gone", s)
		}
	}
}

func TestMarkdownOptions(t *testing.T) {
	r := handReport()
	tests := []struct {
		name string
		o    MarkdownOptions
		want []string
		not  []string
	}{
		{"defaults", MarkdownOptions{}, []string{"## flakegate: flaky tests\n", "| 3 |"}, []string{"Showing", "Shortened"}},
		{"title escaped", MarkdownOptions{Title: "Flaky <b>@team</b>"}, []string{"## Flaky &lt;b&gt;@\u200bteam&lt;/b&gt;\n"}, nil},
		{"max tests", MarkdownOptions{MaxTests: 1, ArtifactHint: "the `flakegate-report` artifact"},
			[]string{"| 1 |", "Showing 1 of 3 flagged tests; the full ranking is in the \\`flakegate-report\\` artifact."}, []string{"| 2 |", "<details><summary>2."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := markdown(t, r, tc.o)
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("missing %q in:\n%s", s, out)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(out, s) {
					t.Errorf("unexpected %q", s)
				}
			}
		})
	}
	if err := Markdown(&bytes.Buffer{}, r, MarkdownOptions{MaxBytes: -1}); err == nil {
		t.Error("negative MaxBytes accepted")
	}
}

// TestMarkdownNoFlaky: a clean history says so and still lists what was
// left out.
func TestMarkdownNoFlaky(t *testing.T) {
	r := handReport()
	for i := range r.Tests {
		r.Tests[i].IsFlaky = false
	}
	r.FlakyCount = 0
	out := markdown(t, r, MarkdownOptions{})
	for _, s := range []string{"**No flaky tests** of 5 tests analysed over 10 commits / 16 runs.", "No test was flagged as flaky.", "### Skipped files", "### Failing tests per commit"} {
		if !strings.Contains(out, s) {
			t.Errorf("missing %q in:\n%s", s, out)
		}
	}
	if strings.Contains(out, "| # |") || strings.Contains(out, "<details>") {
		t.Error("table or details for no flaky test")
	}
}

// TestMarkdownTableShowsTheRanking: the table's first number is the one
// the ranking is by (score.Score's order: the flake rate's lower bound), so
// its lower bounds never rise down the table, and each test's details give
// the seed's score and the flake score beside it. (The table showed the
// seed's score, which ranked 0.200 above 0.400 on the sample history.)
func TestMarkdownTableShowsTheRanking(t *testing.T) {
	// x fails then passes on 10 of 30 commits and fails alone on 2 more;
	// y fails then passes on 11. x's flake rate is higher (12/30 against
	// 11/30), its flake score lower (10/30): the orders differ.
	outcome := map[string]func(c int) string{
		"x": func(c int) string {
			switch {
			case c < 10:
				return "M"
			case c == 15 || c == 25:
				return "F"
			}
			return "P"
		},
		"y": func(c int) string {
			if c < 11 {
				return "M"
			}
			return "P"
		},
		"z": func(int) string { return "P" },
	}
	var srcs []history.Source
	for c := range 30 {
		for run := range 2 {
			var b strings.Builder
			fmt.Fprintf(&b, `<testsuite name="s" timestamp="2026-11-%02dT%02d:00:00"><properties><property name="commit_sha" value="%040x"/><property name="run_id" value="%d"/></properties>`,
				1+c/2, 10*(c%2)+run, c+1, 2*c+run+1)
			for _, name := range []string{"x", "y", "z"} {
				o := outcome[name](c)
				if o == "F" || o == "M" && run == 0 {
					fmt.Fprintf(&b, `<testcase classname="t" name="%s"><failure message="boom"/></testcase>`, name)
				} else {
					fmt.Fprintf(&b, `<testcase classname="t" name="%s"/>`, name)
				}
			}
			b.WriteString("</testsuite>")
			srcs = append(srcs, docSource(fmt.Sprintf("c%d-r%d.xml", c, run), b.String()))
		}
	}
	rep := scored(t, srcs)
	md := renderString(t, func(w io.Writer, r *score.Report) error { return Markdown(w, r, MarkdownOptions{}) }, rep)
	rows := 0
	last := 2.0
	for _, line := range strings.Split(md, "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 5 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| #") {
			continue
		}
		var x, lo, hi float64
		if _, err := fmt.Sscanf(f[2], "%f [%f, %f]", &x, &lo, &hi); err != nil {
			t.Fatalf("rate cell %q: %v", f[2], err)
		}
		if lo > last+1e-9 {
			t.Errorf("row %q: lower bound %.3f above the row before's %.3f", line, lo, last)
		}
		last = lo
		rows++
	}
	differ := 0
	for _, ts := range rep.Tests {
		if !ts.IsFlaky {
			continue
		}
		if ts.FlakeRate != ts.Score {
			differ++
		}
		for _, want := range []string{fmt.Sprintf("seed score %.3f", ts.Score), fmt.Sprintf("Flake score %.3f", ts.FlakeScore),
			fmt.Sprintf("Flake rate %.3f", ts.FlakeRate)} {
			if !strings.Contains(md, want) {
				t.Errorf("%s: details lack %q", ts.Name, want)
			}
		}
	}
	// The CSV gives the ranking's number, x's first.
	recs, err := csv.NewReader(strings.NewReader(renderString(t, CSV, rep))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "flake_rate_low")
	if col < 0 || recs[1][0] != "t::x" || recs[1][col] != fmt.Sprintf("%.4f", rep.Tests[0].FlakeRateInterval.Low) || recs[1][col] <= recs[2][col] {
		t.Errorf("CSV: %v", recs)
	}
	// The HTML report's table and chart rank the same way.
	page := renderString(t, HTML, rep)
	cells := regexp.MustCompile(`<td class="name"><code>(.*?)</code>(?:<br><span class="note">[^<]*</span>)?</td><td class="num">([0-9.]+) \[([0-9.]+),`).FindAllStringSubmatch(page, -1)
	if len(cells) != 2 || cells[0][1] != "t::<wbr>x" || cells[0][3] < cells[1][3] {
		t.Errorf("HTML table's first numbers: %v, want x then y by the flake rate's lower bound", cells)
	}
	if !strings.Contains(page, "flake rate 0.400, 95% interval") {
		t.Error("the HTML chart does not show x's flake rate, 0.400")
	}
	if rows != 2 || differ == 0 || !strings.Contains(md, "| 1 | t::x |") {
		t.Errorf("%d rows (want x, then y), %d tests whose flake rate and seed score differ: the test needs both\n%s", rows, differ, md)
	}
}

// TestUnflaggedNamed: a test with flaky evidence on fewer than min-commits
// commits is not flagged, and every report says so, by name, escaped.
func TestUnflaggedNamed(t *testing.T) {
	var srcs []history.Source
	for c := range 3 {
		for run := range 2 {
			failure := ""
			if run == 0 && c != 1 {
				failure = `<failure message="boom"/>`
			}
			doc := fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>`+
				`<testcase classname="t" name="a @team &lt;evil&gt;">%s</testcase><testcase classname="t" name="b"/></testsuite>`, c, 2*c+run, failure)
			srcs = append(srcs, docSource(fmt.Sprintf("r%d-%d.xml", c, run), doc))
		}
	}
	rep := scored(t, srcs)
	if rep.FlakyCount != 0 || rep.TooFewCommits != 1 || !rep.Tests[0].TooFewCommits || rep.Tests[1].TooFewCommits {
		t.Fatalf("flaky %d, too few commits %d: %+v", rep.FlakyCount, rep.TooFewCommits, rep.Tests)
	}
	for _, f := range formats {
		out := renderString(t, f.render, rep)
		if f.ext == "csv" {
			continue // one row per test: the JSON's field is enough there
		}
		want := "flaky evidence on fewer than 5 commits"
		if f.ext == "json" {
			want = `"too_few_commits": true`
		}
		if !strings.Contains(out, want) || f.ext != "json" && !strings.Contains(out, "(flaky on 2 of 3 commits)") {
			t.Errorf("%s report does not name the test not flagged for want of commits:\n%s", f.ext, out)
		}
		if f.ext == "md" && strings.Contains(out, "@team") || (f.ext == "md" || f.ext == "html") && strings.Contains(out, "<evil>") {
			t.Errorf("%s report: unescaped name", f.ext)
		}
	}
}

// TestRepeatedRunsSaid: when most tests of a run ran more than once (here
// two matrix legs written as two files of each run), every report says
// that a run's results are attempts of one test; a test retried now and
// then does not set it off.
func TestRepeatedRunsSaid(t *testing.T) {
	scoredLegs := func(legs ...string) *score.Report {
		var srcs []history.Source
		for c := range 6 {
			for _, leg := range legs {
				var b strings.Builder
				fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="c%d"/><property name="run_id" value="%d"/></properties>`, c, c)
				for i := range 6 {
					if i == 0 && (leg == "windows" || len(legs) == 1) {
						// Fails on Windows; alone, a retry that fails first.
						fmt.Fprintf(&b, `<testcase classname="t" name="t%d"><failure message="boom"/></testcase>`, i)
						if leg == "windows" {
							continue
						}
					}
					fmt.Fprintf(&b, `<testcase classname="t" name="t%d"/>`, i)
				}
				b.WriteString("</testsuite>")
				srcs = append(srcs, docSource(fmt.Sprintf("junit-%s/%d.xml", leg, c), b.String()))
			}
		}
		return scored(t, srcs)
	}
	rep := scoredLegs("ubuntu", "windows")
	if rep.RepeatedRuns != 6 {
		t.Fatalf("repeated runs %d, want all 6", rep.RepeatedRuns)
	}
	for _, f := range formats {
		out := renderString(t, f.render, rep)
		want := "In 6 of 6 runs most tests ran more than once"
		switch f.ext {
		case "json":
			want = `"repeated_runs": 6`
		case "csv":
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s report does not say the runs repeat their tests:\n%s", f.ext, out)
		}
	}
	if rep := scoredLegs("ubuntu"); rep.RepeatedRuns != 0 || rep.Tests[0].Name != "t::t0" || !slices.Contains(rep.Tests[0].Evidence, "retry") {
		t.Errorf("one file a run, t0 retried: repeated runs %d, %+v", rep.RepeatedRuns, rep.Tests[0])
	}
}

// TestLegBoundsSaid: when a run has more legs than a reader tells apart,
// and its legs alike stop the search for repeats, every report says that
// some legs were not told apart as usual, and a report without legs says
// nothing of it.
func TestLegBoundsSaid(t *testing.T) {
	var srcs []history.Source
	for l := range 600 {
		src := docSource(fmt.Sprintf("leg%03d/junit.xml", l),
			`<testsuite name="s"><properties><property name="commit_sha" value="c1"/><property name="run_id" value="1"/></properties><testcase classname="t" name="x"/></testsuite>`)
		src.Leg = fmt.Sprintf("art/leg%03d", l)
		srcs = append(srcs, src)
	}
	rep := scored(t, srcs)
	if rep.FoldedLegRuns != 1 || !rep.LegSearchStopped {
		t.Fatalf("folded leg runs %d, search stopped %v; want 1 and true", rep.FoldedLegRuns, rep.LegSearchStopped)
	}
	quiet := scored(t, srcs[:1])
	for _, f := range formats {
		if f.ext == "csv" {
			continue
		}
		want := []string{"Some legs were not told apart as usual: 1 run had more than 256 legs", "the search for legs that rerun or repeat another stopped"}
		if f.ext == "json" {
			want = []string{`"folded_leg_runs": 1`, `"leg_search_stopped": true`}
		}
		out := renderString(t, f.render, rep)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s report does not say %q:\n%s", f.ext, w, out)
			}
		}
		if out := renderString(t, f.render, quiet); strings.Contains(out, "not told apart as usual") || strings.Contains(out, "leg_search_stopped") {
			t.Errorf("%s report of one leg speaks of leg bounds:\n%s", f.ext, out)
		}
	}
}

// TestNotResultsAreNoWarning: XML holding no results (a coverage report
// beside the JUnit files) is listed under Skipped files, but warns of
// nothing lost; a file that could not be read still does.
func TestNotResultsAreNoWarning(t *testing.T) {
	const warning = "left out: not JUnit XML, unreadable, or over a cap"
	r := handReport()
	r.SkippedFiles = []history.Skipped{{Path: "run-1/coverage.xml", Error: "line 2: root element <coverage> is not JUnit but a coverage report", NotResults: "a coverage report"}}
	out := markdown(t, r, MarkdownOptions{})
	if strings.Contains(out, warning) || !strings.Contains(out, "run-1/coverage.xml") {
		t.Errorf("a coverage report warned, or was not listed:\n%s", out)
	}
	r.SkippedFiles = append(r.SkippedFiles, history.Skipped{Path: "run-2/junit.xml", Error: "line 9: unexpected end of file inside a tag (truncated file?)"})
	if out := markdown(t, r, MarkdownOptions{}); !strings.Contains(out, "1 input file is "+warning) {
		t.Errorf("the truncated file was not warned of:\n%s", out)
	}
}

// TestVaryingNamesNote: the report says which tests were scored under a
// name with its varying part written "…", in every format, escaped: a
// test's name is the test author's text.
func TestVaryingNamesNote(t *testing.T) {
	r := &score.Report{Tests: []score.Test{}, VaryingNames: []score.VaryingName{{Test: "c::t[seed=…] <b>@team</b>", Names: 13}}}
	var md, txt, html bytes.Buffer
	if err := Markdown(&md, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Text(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "text": txt.String(), "html": html.String()} {
		if !strings.Contains(out, "1 test has a name that changes from run to run") || !strings.Contains(out, "(13 names)") {
			t.Errorf("%s: no note of the varying names:\n%s", name, out)
		}
		if name != "text" && strings.Contains(out, "<b>@team") {
			t.Errorf("%s: the name is not escaped:\n%s", name, out)
		}
	}
}
