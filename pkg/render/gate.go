package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/score"
)

// GateMeta is what the gate's Markdown says about where it ran.
type GateMeta struct {
	Repository string
	PR         int
	HeadSHA    string
	BaseSHA    string
	RunURL     string // the workflow run, for "the rest is in"
	// ServerURL (https://github.com) links the commits when Repository is
	// set too.
	ServerURL string
	// AI is the AI root-cause section (explain's Markdown) for the
	// blocking tests; empty for none.
	AI string
	// ArtifactHint names where the full report is, e.g. "the
	// flakegate-report artifact".
	ArtifactHint string
	// Flaky are the flaky tests of the last report on the base branch, in
	// rank order; the comment shows the top of them.
	Flaky []score.Test
}

// maxRankingRows is how much of the last report's ranking a comment shows.
const maxRankingRows = 10

// gateLevel is how much of each section a rendering keeps.
type gateLevel struct {
	items  int  // rows kept per section; -1 for all
	traces bool // SPRT traces and reasons in <details>
}

// GateMarkdown writes the gate's PR comment or job summary. It opens with
// the verdict, then lists blocking tests (bucket, tallies, p0 and SPRT
// trace), property violations, ledger changes, pre-existing flakes, and
// tests whose attribution is undefined or undecided. With maxBytes > 0 the
// output never exceeds it: traces go first, then rows from the end of each
// section, and a note says what was cut and where the rest is.
func GateMarkdown(w io.Writer, r gate.Result, m GateMeta, maxBytes int) error {
	levels := []gateLevel{{-1, true}, {-1, false}}
	for _, n := range []int{200, 100, 50, 20, 10, 5, 2, 1, 0} {
		levels = append(levels, gateLevel{n, false})
	}
	var out string
	for i, lv := range levels {
		out = gateDoc(r, m, lv, i > 0)
		if maxBytes <= 0 || len(out) <= maxBytes {
			break
		}
	}
	if maxBytes > 0 && len(out) > maxBytes {
		note := "\n\n_Cut to fit; the full report is in " + hint(m) + "._\n"
		out = cutToBytes(out, maxBytes-len(note)) + note
	}
	_, err := io.WriteString(w, out)
	return err
}

func hint(m GateMeta) string {
	h := m.ArtifactHint
	if h == "" {
		h = "the report artifact"
	}
	if m.RunURL != "" && isSafeURL(m.RunURL) {
		h += " of [this run](" + m.RunURL + ")"
	}
	return h
}

// commitLink is a commit's short SHA, linked to the commit when the
// repository is known. Only a hex SHA is linked: the value comes from an
// event file.
func commitLink(m GateMeta, sha string) string {
	short := "`" + shortSHA(sha) + "`"
	if m.ServerURL == "" || m.Repository == "" || !isHex(sha) || !isSafeURL(m.ServerURL) || strings.ContainsAny(m.Repository, " ()<>\"'`\n\r[]") {
		return short
	}
	return "[" + short + "](" + strings.TrimSuffix(m.ServerURL, "/") + "/" + m.Repository + "/commit/" + sha + ")"
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// isSafeURL accepts the plain https URLs the action builds itself.
func isSafeURL(u string) bool {
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return false
	}
	return !strings.ContainsAny(u, " ()<>\"'`\n\r[]")
}

var verdictIcon = map[gate.Verdict]string{gate.VerdictPass: "✅", gate.VerdictBlock: "❌", gate.VerdictInconclusive: "⚠️"}

func gateDoc(r gate.Result, m GateMeta, lv gateLevel, shortened bool) string {
	var b strings.Builder
	by := map[gate.Decision][]gate.TestResult{}
	var preexisting []gate.TestResult
	for _, t := range r.Tests {
		if t.Decision == gate.Pass && (t.Bucket == gate.PreExistingFlake || t.Bucket == gate.FlakeNotReproduced || t.Bucket == gate.FlakyToBroken) {
			preexisting = append(preexisting, t)
			continue
		}
		by[t.Decision] = append(by[t.Decision], t)
	}
	fmt.Fprintf(&b, "## %s flakegate: %s\n\n", verdictIcon[r.Verdict], r.Verdict)
	fmt.Fprintf(&b, "**%d blocking**, %d exempt by the ledger, %s, %d with a red base, %d undecided, %s, %s; %s compared",
		len(by[gate.Block]), len(by[gate.Exempt]), plural(len(preexisting), "pre-existing flake", "pre-existing flakes"), len(by[gate.Invalid]),
		len(by[gate.Inconclusive]), plural(len(r.Properties), "property violation", "property violations"),
		plural(countErrors(r), "ledger error", "ledger errors"), plural(len(r.Tests), "test", "tests"))
	if m.HeadSHA != "" {
		fmt.Fprintf(&b, " at head %s", commitLink(m, m.HeadSHA))
		if m.BaseSHA != "" {
			fmt.Fprintf(&b, " against base %s", commitLink(m, m.BaseSHA))
		}
	}
	if m.RunURL != "" && isSafeURL(m.RunURL) {
		fmt.Fprintf(&b, " in [this run](%s)", m.RunURL)
	}
	b.WriteString(".\n")
	if shortened {
		fmt.Fprintf(&b, "\n> Shortened to fit; every test, trace and reason is in %s.\n", hint(m))
	}

	section(&b, "Blocking", by[gate.Block], lv, true)
	if len(r.Unread) > 0 {
		fmt.Fprintf(&b, "\n### Result files not read (%d)\n\nThe verdict rests on the other runs' results; these were left out:\n\n", len(r.Unread))
		for i, u := range r.Unread {
			if lv.items >= 0 && i >= lv.items {
				fmt.Fprintf(&b, "- … and %d more\n", len(r.Unread)-i)
				break
			}
			fmt.Fprintf(&b, "- %s `%s`: %s\n", EscapeMarkdown(u.Side), codeSafe(Truncate(u.Path, 200)), EscapeMarkdown(Truncate(u.Error, 300)))
		}
	}
	if len(r.Properties) > 0 {
		b.WriteString("\n### Property violations\n\n")
		for i, v := range r.Properties {
			if lv.items >= 0 && i >= lv.items {
				fmt.Fprintf(&b, "- … and %d more\n", len(r.Properties)-i)
				break
			}
			where := ""
			if v.Path != "" {
				where = " `" + codeSafe(v.Path) + "`"
				if v.Line > 0 {
					where = " `" + codeSafe(v.Path) + ":" + strconv.Itoa(v.Line) + "`"
				}
			}
			fmt.Fprintf(&b, "- **%s**%s: %s\n", EscapeMarkdown(v.Check), where, EscapeMarkdown(Truncate(v.Message, 400)))
		}
	}
	if len(r.Ledger) > 0 {
		b.WriteString("\n### Quarantine ledger\n\n")
		for i, f := range r.Ledger {
			if lv.items >= 0 && i >= lv.items {
				fmt.Fprintf(&b, "- … and %d more\n", len(r.Ledger)-i)
				break
			}
			fmt.Fprintf(&b, "- %s **%s**: %s\n", EscapeMarkdown(string(f.Severity)), EscapeMarkdown(f.Rule), EscapeMarkdown(Truncate(f.Message, 400)))
		}
	}
	section(&b, "Undecided", by[gate.Inconclusive], lv, true)
	if more := decideMore(by[gate.Inconclusive], r.Params.MaxRuns); more != "" {
		b.WriteString("\n" + more + "\n")
	}
	section(&b, "Red base: attribution undefined", by[gate.Invalid], lv, false)
	section(&b, "Exempt by the ledger", by[gate.Exempt], lv, false)
	section(&b, "Pre-existing flakes (not blocking)", preexisting, lv, true)
	if len(m.Flaky) > 0 && lv.traces {
		n := min(len(m.Flaky), maxRankingRows)
		fmt.Fprintf(&b, "\n<details><summary>Top %d of %d flaky tests on the base branch (last report)</summary>\n\n| # | test | flake rate | evidence |\n|--:|---|---|---|\n", n, len(m.Flaky))
		for i, t := range m.Flaky[:n] {
			fmt.Fprintf(&b, "| %d | %s | %.3f | %s |\n", i+1, cell(t.Name, 120), t.FlakeRate, EscapeMarkdown(strings.Join(t.Evidence, ", ")))
		}
		b.WriteString("\n</details>\n")
	}
	if m.AI != "" && len(by[gate.Block]) > 0 {
		b.WriteString("\n<details><summary>AI root causes of the blocking tests (AI-generated)</summary>\n\n" + m.AI + "\n</details>\n")
	}
	if len(r.Reasons) > 0 && lv.traces {
		b.WriteString("\n<details><summary>Reasons for the verdict</summary>\n\n")
		for _, s := range r.Reasons {
			fmt.Fprintf(&b, "- %s\n", EscapeMarkdown(Truncate(s, 600)))
		}
		b.WriteString("\n</details>\n")
	}
	f := r.Family
	margin := ""
	if f.Margin > 0 && f.Margin < 1 {
		// gate.fitMargin: the calibration kept part of alpha-pr back.
		margin = " × a margin of " + num(f.Margin) + " (the rest of alpha-pr is the outage checks'; below 0.95, the fitted prior's error too)"
	}
	fmt.Fprintf(&b, "\n<sub>%s compared, %d with base-branch history (%d history runs); the chance that a test blocks a PR changing nothing: %s, within alpha-pr %s%s; undecided → %s. Ledger evidence: SPRT with p1 %s, α %s, β %s.</sub>\n",
		plural(f.Tests, "test", "tests"), f.HistoryTests, f.HistoryRuns, num(f.Cost), num(r.Params.AlphaPR), margin, EscapeMarkdown(string(r.Params.OnInconclusive)),
		num(r.Params.P1), num(r.Params.Alpha), num(r.Params.Beta))
	return b.String()
}

func countErrors(r gate.Result) int {
	n := 0
	for _, f := range r.Ledger {
		if f.Severity == "error" {
			n++
		}
	}
	return n
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// section writes a table of tests, and their reasons and traces when the
// level keeps them.
func section(b *strings.Builder, title string, tests []gate.TestResult, lv gateLevel, withTrace bool) {
	if len(tests) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### %s (%d)\n\n| test | bucket | base failed | head failed | p0 (runs it rests on) | P if nothing changed |\n|---|---|---|---|---|---|\n", title, len(tests))
	kept := tests
	if lv.items >= 0 && len(kept) > lv.items {
		kept = kept[:lv.items]
	}
	for _, t := range kept {
		p := "–"
		if t.Stat != nil {
			p = fmt.Sprintf("%.2g (PR-level %.2g)", t.Stat.Best, t.Stat.PRLevel)
			if t.Decision != gate.Block && t.Stat.OwnRuns != 0 {
				// Held back by its own base-side runs (the reason says so).
				p = fmt.Sprintf("%.2g (PR-level %.2g; own runs %.2g)", t.Stat.Best, t.Stat.PRLevel, t.Stat.OwnRuns)
			}
		}
		fmt.Fprintf(b, "| %s | %s | %d/%d | %d/%d | %s | %s |\n", cell(t.Name, 120), EscapeMarkdown(string(t.Bucket)),
			t.Base.Failures, t.Base.Runs, t.Head.Failures, t.Head.Runs, p0Cell(t), p)
	}
	if len(kept) < len(tests) {
		fmt.Fprintf(b, "\n… and %d more.\n", len(tests)-len(kept))
	}
	if !lv.traces {
		return
	}
	for _, t := range kept {
		fmt.Fprintf(b, "\n<details><summary><code>%s</code></summary>\n\n%s\n", escapeHTML(Truncate(t.Name, 200), false), EscapeMarkdown(Truncate(t.Reason, 1200)))
		if withTrace && t.SPRT != nil && len(t.SPRT.Trace) > 0 {
			fmt.Fprintf(b, "\nSPRT against p1, the ledger's evidence: %s.\n\n| run | outcome | step | cumulative LLR |\n|---|---|---|---|\n", EscapeMarkdown(string(t.SPRT.Decision)))
			for i, s := range t.SPRT.Trace {
				o := "fail"
				if s.Passed {
					o = "pass"
				}
				fmt.Fprintf(b, "| %d | %s | %+.3f | %+.3f |\n", i+1, o, s.Step, s.Cumulative)
			}
		}
		b.WriteString("\n</details>\n")
	}
}

// p0Cell shows the baseline rate and the runs it rests on, history apart.
func p0Cell(t gate.TestResult) string {
	if t.P0.Runs == 0 {
		return "– (no base runs)"
	}
	hist := "no history"
	if t.History.Runs > 0 {
		hist = fmt.Sprintf("%d/%d history", t.History.Failures, t.History.Runs)
	}
	return fmt.Sprintf("%.3g (%d/%d base, %s)", t.P0.Estimate, t.Base.Failures, t.Base.Runs, hist)
}

// decideMore says what would decide the undecided tests: how many more head
// runs, and of which tests.
func decideMore(tests []gate.TestResult, budget int) string {
	var pending []string
	most := 0
	for _, t := range tests {
		if t.Pending {
			pending = append(pending, "`"+codeSafe(t.Name)+"`")
			most = max(most, budget-t.Head.Runs)
		}
	}
	if len(pending) == 0 {
		return ""
	}
	if len(pending) > 10 {
		pending = append(pending[:10], fmt.Sprintf("and %d more", len(pending)-10))
	}
	return fmt.Sprintf("**What would decide:** up to %d more head runs of %s (each test's reason says how many failures block it); `flakegate matrix` runs them and stops as soon as every test has a verdict, or give base-branch history.",
		most, strings.Join(pending, ", "))
}

// codeSafe makes text safe inside a one-backtick code span.
func codeSafe(s string) string {
	return strings.ReplaceAll(oneLine(Truncate(s, 200)), "`", "'")
}

// TrendMarkdown writes the comparison with the previous report: new,
// resolved, worsened and improved tests.
func TrendMarkdown(w io.Writer, t *score.Trend) error {
	if t == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Trend since the report of %s\n\n", t.PreviousAt.UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "%d new, %d resolved, %d worse, %d better", len(t.New), len(t.Resolved), len(t.Worsened), len(t.Improved))
	if len(t.Unclear) > 0 {
		fmt.Fprintf(&b, ", %d no longer flagged on too few commits to tell", len(t.Unclear))
	}
	fmt.Fprintf(&b, "; flaky tests %+d.\n", t.FlakyDelta)
	if t.RulesChanged != "" {
		fmt.Fprintf(&b, "\nThe rules changed since that report (%s): some of these changes are the rules', not the tests'.\n", EscapeMarkdown(t.RulesChanged))
	}
	for _, s := range []struct {
		title string
		list  []score.TrendEntry
	}{{"New", t.New}, {"Worse", t.Worsened}, {"Resolved", t.Resolved},
		{"Not flagged now, on too few commits to tell (fewer than min-commits, or not run)", t.Unclear}, {"Better", t.Improved}} {
		if len(s.list) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s**\n\n| test | flake rate before | after | commits now |\n|---|---|---|--:|\n", s.title)
		for i, e := range s.list {
			if i == 25 {
				fmt.Fprintf(&b, "\n… and %d more (see report.json).\n", len(s.list)-i)
				break
			}
			after := fmt.Sprintf("%.3f", e.After)
			if !e.Seen {
				after = "not run"
			}
			fmt.Fprintf(&b, "| %s | %.3f | %s | %d |\n", cell(e.Name, 120), e.Before, after, e.Commits)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
