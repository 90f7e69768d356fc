package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"
)

// MarkdownOptions shape the Markdown report. The zero value renders
// everything, with the default title and table length, and no size limit.
type MarkdownOptions struct {
	// MaxBytes caps the output; 0 means no limit. A job summary holds
	// ghapi.MaxSummaryBytes, a PR comment ghapi.MaxCommentChars. Over budget, sections
	// degrade in this order: skipped files and infrastructure runs beyond
	// the first 20 of each, signature details (from the bottom of the
	// ranking up), the charts, those first 20, and last the table's rows.
	// The head (title, verdict, warnings) stays whenever it fits, with a note
	// of what was cut and where the rest is (ArtifactHint).
	MaxBytes int
	// Title is the heading; empty means "flakegate: flaky tests".
	Title string
	// MaxTests is the number of rows in the ranked table; 0 means 50.
	MaxTests int
	// ArtifactHint says where the full report is, e.g. "the
	// flakegate-report artifact". Empty means "the full JSON, CSV or HTML
	// report".
	ArtifactHint string
	// RepoURL (https://github.com/owner/repo) links run ids and commits;
	// empty mentions them unlinked.
	RepoURL string
}

const (
	defaultTitle    = "flakegate: flaky tests"
	defaultMaxTests = 50
	// Bounds on untrusted text, in runes before escaping.
	cellNameRunes    = 150
	cellMessageRunes = 80
	summaryNameRunes = 200
	messageRunes     = 1500
	pathRunes        = 200
	reasonRunes      = 300
	// sigsPerTest is how many signatures a test's details show.
	sigsPerTest = 5
	// listCap is how many skipped files or infrastructure runs are listed
	// once the budget bites.
	listCap = 20
	// chartBars and chartCommits bound the mermaid charts.
	chartBars    = 10
	chartCommits = 60
)

// Markdown writes the report for a job summary or a PR comment: a title, a
// one-line verdict, warnings about what the analysis could not use, a
// mermaid chart of the top flake scores, the ranked table of flagged tests,
// a chart of failing tests per commit, each test's failure signatures in
// <details>, and every skipped file and infrastructure run. Untrusted text is
// escaped (see EscapeMarkdown). With MaxBytes set the output never exceeds
// it.
func Markdown(w io.Writer, r *score.Report, o MarkdownOptions) error {
	if r == nil {
		return fmt.Errorf("markdown report: %w", errNilReport)
	}
	if o.MaxBytes < 0 {
		return fmt.Errorf("markdown report: MaxBytes %d is negative", o.MaxBytes)
	}
	md := newMarkdown(r, o)
	out := md.fit()
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	return nil
}

// mdPlan says how much of each degradable section to show.
type mdPlan struct {
	rows    int  // table rows
	details int  // tests with signature details (a prefix of the rows)
	skipped int  // skipped files listed
	infra   int  // infrastructure runs listed
	charts  bool // the mermaid charts
}

// mdDoc holds a report's Markdown in pieces, so that plans can be measured
// without building them.
type mdDoc struct {
	o    MarkdownOptions
	hint string
	head string // title, verdict, context line
	warn string
	// nFlagged is the number of flagged tests; rows and details cover the
	// first min(nFlagged, MaxTests).
	nFlagged     int
	chartScores  string
	tableHead    string
	rows         []string
	chartCommits string
	details      []string
	skipped      []string
	infra        []string // infrastructure runs, then co-failure events
	runs         int      // how many of infra are runs
	full         mdPlan
}

func newMarkdown(r *score.Report, o MarkdownOptions) *mdDoc {
	if o.Title == "" {
		o.Title = defaultTitle
	}
	if o.MaxTests <= 0 {
		o.MaxTests = defaultMaxTests
	}
	d := &mdDoc{o: o, hint: "the full JSON, CSV or HTML report"}
	if o.ArtifactHint != "" {
		d.hint = EscapeMarkdown(Truncate(o.ArtifactHint, 200))
	}
	d.head = mdHead(r, o.Title)
	d.warn = mdWarnings(r)

	fl := flagged(r)
	d.nFlagged = len(fl)
	shown := fl[:min(len(fl), o.MaxTests)]
	d.chartScores = mermaidScores(shown)
	d.chartCommits = mermaidCommits(r)
	// Five columns fit GitHub's 912 px content column. The first number is
	// the one the ranking is by; the flake score, the failure rate of
	// attempts and the signatures are in each test's details.
	d.tableHead = "Ranked by the lower end of the flake rate's 95% interval: the commits a test failed on over its commits, outages and regression blocks left out. Seed score: flaky commits / commits.\n\n" +
		"| # | Test | Flake rate (95% CI) | Seed score (flaky commits) | Evidence |\n" +
		"|--:|---|---|---|---|\n"
	for i, t := range shown {
		d.rows = append(d.rows, mdRow(i+1, t))
		d.details = append(d.details, mdDetails(i+1, t))
	}
	for _, s := range r.SkippedFiles {
		d.skipped = append(d.skipped, fmt.Sprintf("- %s: %s\n",
			EscapeMarkdown(Truncate(s.Path, pathRunes)), EscapeMarkdown(Truncate(s.Error, reasonRunes))))
	}
	for _, ir := range r.InfraRuns {
		d.infra = append(d.infra, mdInfraRun(ir, o.RepoURL))
	}
	d.runs = len(d.infra)
	for _, ev := range r.InfraEvents {
		d.infra = append(d.infra, mdInfraEvent(ev, o.RepoURL))
	}
	d.full = mdPlan{rows: len(d.rows), details: len(d.details), skipped: len(d.skipped), infra: len(d.infra), charts: true}
	return d
}

// fit renders the largest plan within the budget. Sections are granted
// in order of importance, each as far as it fits; the first that does not
// fit whole is cut and everything after it is left out:
//
//  1. the table's rows (the head and warnings always stay);
//  2. the first listCap skipped files and infrastructure runs;
//  3. the charts;
//  4. signature details, from the top of the ranking down;
//  5. the rest of the skipped files and infrastructure runs.
//
// So details go first, then the long lists, the charts, the short lists and
// last the table.
func (d *mdDoc) fit() string {
	budget := d.o.MaxBytes
	if budget == 0 || d.size(d.full) <= budget {
		return d.render(d.full)
	}
	fits := func(p mdPlan) bool { return d.size(p) <= budget }
	// grow sets one count of p to the largest value in [lo, hi] that fits,
	// and reports whether that is hi.
	grow := func(p *mdPlan, field *int, lo, hi int) bool {
		try := func(n int) bool { *field = n; return fits(*p) }
		if try(hi) {
			return true
		}
		// Sizes grow with n (the notice's digits aside, a row or a list
		// item outweighs them): search for the first n that does not fit.
		n := lo + sort.Search(hi-lo, func(i int) bool { return !try(lo + i) })
		*field = max(lo, n-1) // lo itself fits: the plan before this step did
		return false
	}
	p := mdPlan{}
	if !fits(p) {
		// Even the head and warnings are too long: cut them, whole lines
		// first.
		return cutToBytes(d.head+d.notice(p)+d.warn, budget)
	}
	steps := []func() bool{
		func() bool { return grow(&p, &p.rows, 0, d.full.rows) },
		func() bool {
			return grow(&p, &p.skipped, 0, min(listCap, d.full.skipped)) && grow(&p, &p.infra, 0, min(listCap, d.full.infra))
		},
		func() bool { p.charts = true; ok := fits(p); p.charts = ok; return ok },
		func() bool { return grow(&p, &p.details, 0, d.full.details) },
		func() bool {
			return grow(&p, &p.skipped, p.skipped, d.full.skipped) && grow(&p, &p.infra, p.infra, d.full.infra)
		},
	}
	for _, step := range steps {
		if !step() {
			break
		}
	}
	return d.render(p)
}

// size measures a plan's output.
func (d *mdDoc) size(p mdPlan) int {
	n := 0
	d.emit(p, func(s string) { n += len(s) })
	return n
}

func (d *mdDoc) render(p mdPlan) string {
	var b strings.Builder
	b.Grow(d.size(p))
	d.emit(p, func(s string) { b.WriteString(s) })
	return b.String()
}

// emit writes the document of plan p, piece by piece.
func (d *mdDoc) emit(p mdPlan, w func(string)) {
	w(d.head)
	w(d.notice(p))
	w(d.warn)

	w("\n### Flaky tests\n\n")
	if d.nFlagged == 0 {
		w("No test was flagged as flaky.\n")
	} else {
		if p.charts && d.chartScores != "" {
			w(d.chartScores)
		}
		if p.rows > 0 {
			w(d.tableHead)
			for _, row := range d.rows[:p.rows] {
				w(row)
			}
		}
		if p.rows < d.nFlagged {
			w(fmt.Sprintf("\nShowing %s of %s flagged tests; the full ranking is in %s.\n",
				group(p.rows), group(d.nFlagged), d.hint))
		}
	}
	if p.charts && d.chartCommits != "" {
		w("\n### Failing tests per commit\n\n")
		w(d.chartCommits)
	}
	if p.details > 0 {
		w("\n### Failure signatures\n\n")
		for _, s := range d.details[:p.details] {
			w(s)
		}
	}
	if n := len(d.skipped); n > 0 {
		w("\n### Skipped files\n\n")
		w(fmt.Sprintf("%s %s left out of this report (not JUnit XML, unreadable, or over a cap):\n\n", plural(n, "input file", "input files"), isAre(n)))
		for _, s := range d.skipped[:p.skipped] {
			w(s)
		}
		if p.skipped < n {
			w(fmt.Sprintf("- … and %s more; every one is listed in %s.\n", group(n-p.skipped), d.hint))
		}
	}
	if n := len(d.infra); n > 0 {
		w("\n### Infrastructure failures excluded\n\n")
		var what []string
		if d.runs > 0 {
			what = append(what, fmt.Sprintf("%s failed across most tests", plural(d.runs, "run", "runs")))
		}
		if ev := n - d.runs; ev > 0 {
			what = append(what, fmt.Sprintf("%s (a suite or a cluster of tests failing together far above its usual rate) counted once each", plural(ev, "co-failure", "co-failures")))
		}
		w(strings.Join(what, ", and ") + "; none of it counts towards a test's flakiness:\n\n")
		for _, s := range d.infra[:p.infra] {
			w(s)
		}
		if p.infra < n {
			w(fmt.Sprintf("- … and %s more; every one is listed in %s.\n", group(n-p.infra), d.hint))
		}
	}
}

// notice says what a plan leaves out for length, or nothing.
func (d *mdDoc) notice(p mdPlan) string {
	var cut []string
	if p.rows < d.full.rows {
		cut = append(cut, fmt.Sprintf("%s of %s table rows", group(d.full.rows-p.rows), group(d.full.rows)))
	}
	if p.details < d.full.details {
		cut = append(cut, fmt.Sprintf("signature details for %s of %s tests", group(d.full.details-p.details), group(d.full.details)))
	}
	if p.charts != d.full.charts && (d.chartScores != "" || d.chartCommits != "") {
		cut = append(cut, "the charts")
	}
	if p.skipped < d.full.skipped {
		cut = append(cut, fmt.Sprintf("%s of %s skipped-file names", group(d.full.skipped-p.skipped), group(d.full.skipped)))
	}
	if p.infra < d.full.infra {
		cut = append(cut, fmt.Sprintf("%s of %s infrastructure runs", group(d.full.infra-p.infra), group(d.full.infra)))
	}
	if len(cut) == 0 {
		return ""
	}
	return fmt.Sprintf("\n> [!NOTE]\n> Shortened to fit %s bytes. Left out: %s. Everything is in %s.\n",
		group(d.o.MaxBytes), strings.Join(cut, "; "), d.hint)
}

func mdHead(r *score.Report, title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", EscapeMarkdown(Truncate(title, 200)))
	verdict := "**No flaky tests**"
	if r.FlakyCount > 0 {
		verdict = fmt.Sprintf("**%s**", plural(r.FlakyCount, "flaky test", "flaky tests"))
	}
	fmt.Fprintf(&b, "%s of %s analysed over %s / %s.\n\n", verdict, plural(r.TestsAnalyzed, "test", "tests"),
		plural(len(r.Commits), "commit", "commits"), plural(r.Runs, "run", "runs"))
	fmt.Fprintf(&b, "Threshold %.2f · at least %s · %s parsed · flaky rate %.2f%% · source %s · generated %s\n",
		r.Threshold, plural(r.MinCommits, "commit", "commits"), plural(r.ResultsParsed, "result", "results"),
		r.FlakyRate*100, EscapeMarkdown(Truncate(r.Source, 100)), r.GeneratedAt.UTC().Format("2006-01-02 15:04 UTC"))
	return b.String()
}

func mdWarnings(r *score.Report) string {
	var items []string
	if n := r.ResultsWithoutCommit; n > 0 {
		items = append(items, fmt.Sprintf("%s came from runs with no commit SHA: they cannot be compared across commits and were not scored.",
			plural(n, "result", "results")))
	}
	// XML that holds no results (a coverage report beside the JUnit files)
	// is listed under Skipped files, but is no warning: nothing was lost.
	if n := unreadCount(r.SkippedFiles); n > 0 {
		items = append(items, fmt.Sprintf("%s %s left out: not JUnit XML, unreadable, or over a cap (see *Skipped files*).",
			plural(n, "input file", "input files"), isAre(n)))
	}
	if n := len(r.InfraRuns); n > 0 {
		items = append(items, infraRunsText(n, fmt.Sprintf("%.0f%%", r.InfraThreshold*100))+" (see *Infrastructure failures excluded*).")
	}
	if s := unflaggedText(r, EscapeMarkdown); s != "" {
		items = append(items, s)
	}
	if s := recurringText(r, EscapeMarkdown); s != "" {
		items = append(items, s)
	}
	if s := directorySplitText(r, EscapeMarkdown); s != "" {
		items = append(items, s)
	}
	if s := repeatedText(r); s != "" {
		items = append(items, s)
	}
	if s := varyingText(r); s != "" {
		items = append(items, EscapeMarkdown(s))
	}
	if s := LegBoundsNote(r); s != "" {
		items = append(items, s)
	}
	if len(items) == 0 {
		return ""
	}
	return "\n> [!WARNING]\n> - " + strings.Join(items, "\n> - ") + "\n"
}

func mdRow(rank int, t *score.Test) string {
	ev := "–"
	if len(t.Evidence) > 0 {
		ev = EscapeMarkdown(Truncate(strings.Join(t.Evidence, ", "), 80))
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s |\n", rank, cell(t.Name, cellNameRunes),
		withInterval(t.FlakeRate, t.FlakeRateInterval), fmt.Sprintf("%.3f (%d/%d)", t.Score, t.FlakyCommits, t.Commits), ev)
}

// cell is untrusted text for a table cell: on one line, at most n runes,
// escaped. Only the start of a long text is read.
func cell(s string, n int) string {
	return EscapeMarkdown(Truncate(oneLine(Truncate(s, 4*n)), n))
}

func withInterval(x float64, iv score.Interval) string {
	return fmt.Sprintf("%.3f [%.3f, %.3f]", x, iv.Low, iv.High)
}

func mdDetails(rank int, t *score.Test) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%d. %s: %s</summary>\n\n", rank, escapeHTML(Truncate(oneLine(Truncate(t.Name, 4*summaryNameRunes)), summaryNameRunes), false),
		plural(len(t.Signatures), "signature", "signatures"))
	commits := fmt.Sprintf("%d of %d", t.FlakyCommits, t.Commits)
	if t.IntermittentCommits > 0 {
		commits += fmt.Sprintf(", and %d intermittent", t.IntermittentCommits)
	}
	fmt.Fprintf(&b, "Flake rate %s: failed on %d of %d commits, outages and regression blocks left out. Flake score %s; seed score %s, flaky commits %s. Failure rate of attempts %s.\n\n",
		withInterval(t.FlakeRate, t.FlakeRateInterval), t.FailedCommits, t.RateCommits, withInterval(t.FlakeScore, flakeInterval(t)),
		withInterval(t.Score, t.ScoreInterval), commits, withInterval(t.FailureRate, t.FailureInterval))
	if t.File != "" {
		fmt.Fprintf(&b, "File: %s", EscapeMarkdown(Truncate(t.File, pathRunes)))
		if t.Line > 0 {
			fmt.Fprintf(&b, " line %d", t.Line)
		}
		b.WriteString("\n\n")
	}
	if len(t.Owners) > 0 {
		// Shown, not mentioned: a weekly report should not page anyone.
		owners := make([]string, len(t.Owners))
		for i, o := range t.Owners {
			owners[i] = EscapeMarkdown(Truncate(o, 100))
		}
		fmt.Fprintf(&b, "Owners (CODEOWNERS): %s\n\n", strings.Join(owners, ", "))
	}
	for i, s := range t.Signatures {
		if i == sigsPerTest {
			fmt.Fprintf(&b, "… and %s more.\n\n", plural(len(t.Signatures)-i, "signature", "signatures"))
			break
		}
		fmt.Fprintf(&b, "**`%s`**: first failure in %s, %s in all\n\n", shortSig(s.Hash),
			plural(s.Runs, "run", "runs"), plural(s.Failures, "failure", "failures"))
		if s.Message != "" {
			fmt.Fprintf(&b, "<pre>\n%s\n</pre>\n\n", escapeHTML(Truncate(strings.TrimSpace(s.Message), messageRunes), true))
		}
	}
	if len(t.Signatures) == 0 {
		b.WriteString("No failure signature was recorded.\n\n")
	}
	b.WriteString("</details>\n")
	return b.String()
}

func mdInfraRun(ir score.InfraRun, repoURL string) string {
	var b strings.Builder
	b.WriteString("- run ")
	b.WriteString(runRef(ir.RunID, ir.Attempt, ir.Commit, repoURL))
	if !ir.Time.IsZero() {
		b.WriteString(", " + ir.Time.UTC().Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(&b, ": %d of %d tests failed", ir.Failed, ir.Tests)
	if ir.Source != "" {
		b.WriteString(" (" + EscapeMarkdown(Truncate(ir.Source, pathRunes)) + ")")
	}
	b.WriteString("\n")
	return b.String()
}

// mdInfraEvent is one co-failure: the group, where, and how far above its
// usual rate.
func mdInfraEvent(ev score.InfraEvent, repoURL string) string {
	var b strings.Builder
	switch ev.Kind {
	case score.EventCluster:
		fmt.Fprintf(&b, "- cluster of %s led by `%s`", plural(ev.Tests, "test", "tests"), codeSafe(ev.Group))
	default:
		fmt.Fprintf(&b, "- suite `%s`", codeSafe(ev.Group))
	}
	b.WriteString(" in run " + runRef(ev.RunID, ev.Attempt, ev.Commit, repoURL))
	fmt.Fprintf(&b, ": %s of %s tests failed, %.2f expected at their usual rates", group(ev.Failed), group(ev.Tests), ev.Expected)
	if ev.RunID == "" && ev.Source != "" {
		b.WriteString(" (" + EscapeMarkdown(Truncate(ev.Source, pathRunes)) + ")")
	}
	b.WriteString("\n")
	return b.String()
}

// runRef names a run (and its commit), linked to GitHub when repoURL is
// given and the id and SHA look like GitHub's: they come from JUnit files.
func runRef(id string, attempt int, commit, repoURL string) string {
	var b strings.Builder
	link := repoURL != "" && isSafeURL(repoURL)
	switch {
	case id == "":
		b.WriteString("(no id)")
	case link && isDigits(id):
		fmt.Fprintf(&b, "[%s](%s/actions/runs/%s)", id, strings.TrimSuffix(repoURL, "/"), id)
	default:
		b.WriteString(EscapeMarkdown(Truncate(id, 40)))
	}
	if attempt > 1 {
		fmt.Fprintf(&b, " attempt %d", attempt)
	}
	if sha := shortSHA(commit); sha != "" {
		if link && isHex(commit) {
			fmt.Fprintf(&b, ", commit [`%s`](%s/commit/%s)", sha, strings.TrimSuffix(repoURL, "/"), commit)
		} else {
			fmt.Fprintf(&b, ", commit `%s`", sha)
		}
	}
	return b.String()
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// mermaidScores charts the top flake rates with their 95% lower bounds,
// by which the tests are ranked.
func mermaidScores(tests []*score.Test) string {
	if len(tests) == 0 {
		return ""
	}
	tests = tests[:min(len(tests), chartBars)]
	labels := make([]string, len(tests))
	bars := make([]string, len(tests))
	lows := make([]string, len(tests))
	for i, t := range tests {
		labels[i] = fmt.Sprintf("%q", fmt.Sprintf("%d %s", i+1, mermaidLabel(shortName(t.Name), 24)))
		bars[i] = fmt.Sprintf("%.3f", t.FlakeRate)
		lows[i] = fmt.Sprintf("%.3f", t.FlakeRateInterval.Low)
	}
	return "```mermaid\n" + chartTheme + "xychart-beta\n" +
		"    title \"Top flake rates (bars) and their 95% lower bounds (line), the ranking\"\n" +
		"    x-axis [" + strings.Join(labels, ", ") + "]\n" +
		"    y-axis \"failing commits / commits\" 0 --> 1\n" +
		"    bar [" + strings.Join(bars, ", ") + "]\n" +
		"    line [" + strings.Join(lows, ", ") + "]\n" +
		"```\n\n"
}

// mermaidCommits charts how many tests failed on each of the last commits.
func mermaidCommits(r *score.Report) string {
	if len(r.Commits) < 2 {
		return ""
	}
	flaky, other := failingPerCommit(r)
	from := max(0, len(r.Commits)-chartCommits)
	labels := make([]string, 0, len(r.Commits)-from)
	counts := make([]string, 0, len(r.Commits)-from)
	top := 0
	for c := from; c < len(r.Commits); c++ {
		label := shortSHA(r.Commits[c].SHA)
		if label == "" {
			label = fmt.Sprintf("c%d", c+1)
		}
		labels = append(labels, fmt.Sprintf("%q", label))
		n := flaky[c] + other[c]
		top = max(top, n)
		counts = append(counts, fmt.Sprintf("%d", n))
	}
	if top == 0 {
		return ""
	}
	title := "Tests that failed on each commit"
	if from > 0 {
		title += fmt.Sprintf(", last %d of %d commits", len(r.Commits)-from, len(r.Commits))
	}
	return "```mermaid\n" + chartTheme + "xychart-beta\n" +
		"    title \"" + title + "\"\n" +
		"    x-axis [" + strings.Join(labels, ", ") + "]\n" +
		fmt.Sprintf("    y-axis \"failing tests\" 0 --> %d\n", top) +
		"    bar [" + strings.Join(counts, ", ") + "]\n" +
		"```\n"
}

// shortName is the part of a test ID after the last "::".
func shortName(id string) string {
	if i := strings.LastIndex(id, "::"); i >= 0 && i+2 < len(id) {
		return id[i+2:]
	}
	return id
}

// chartTheme gives the charts visible colours: mermaid's default bars are
// a pale lavender that barely shows on white. Bars are GitHub's blue, the
// line its red.
const chartTheme = `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#0969da, #cf222e"}}}}%%` + "\n"

// mermaidLabel keeps letters, digits and _ . : - of s, at most n runes, so
// that a label can neither close its quotes nor the code fence nor form a
// mermaid entity or directive. A longer s keeps its start and its end with
// ".." between: test names that share a prefix differ at the end.
func mermaidLabel(s string, n int) string {
	if r := []rune(s); len(r) > n {
		head := (n - 2) / 2
		s = string(r[:head]) + ".." + string(r[len(r)-(n-2-head):])
	}
	var b strings.Builder
	count := 0
	for _, r := range s {
		if count == n {
			break
		}
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-", r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		count++
	}
	return b.String()
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// cutToBytes cuts s to at most n bytes, at a line end when one is near,
// never inside a UTF-8 sequence.
func cutToBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > 0 {
		return s[:i+1]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // s[n] continues the rune that s[:n] would split
	}
	return s[:n]
}

// unreadCount counts the skipped inputs that may have held results: not
// those known to hold none (SkippedSource.NotResults).
func unreadCount(skipped []model.SkippedSource) int {
	n := 0
	for _, s := range skipped {
		if s.NotResults == "" {
			n++
		}
	}
	return n
}
