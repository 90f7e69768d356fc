package render

import (
	"bufio"
	_ "embed"
	"fmt"
	"html"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/flakegate/flakegate/pkg/score"
)

//go:embed report.html.tmpl
var htmlSource string

// htmlTemplate is parsed on first use, not at start-up.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(htmlSource))
})

const (
	// htmlStrips is how many flagged tests get an outcome strip and their
	// signatures on the page; the rest are in the table and the JSON.
	htmlStrips = 200
	// htmlBars is how many tests the flake-score chart shows.
	htmlBars = 20
	// htmlSigRunes caps a signature's message on the page.
	htmlSigRunes = 4000
	// htmlNameRunes caps a test name in chart labels.
	htmlNameRunes = 48
)

// outcome states of a timeline letter: the label for tooltips, the CSS
// class, and the bar height (not only colour tells them apart).
var outcomes = map[byte]struct {
	label, class string
	height       float64
}{
	'P': {"passed (P)", "p", 5},
	'F': {"failed (F)", "f", 16},
	'M': {"passed and failed (M)", "m", 11},
	'.': {"no result (.)", "n", 1},
}

const stripHeight = 16

type htmlPage struct {
	Title, HeadCount, TestsCountText        string
	Generated, Source                       string
	Threshold, MinCommits, FlakyRate        string
	Flaky, Tests, Commits, Runs, Results    string
	FailingOthers, Infra, Skipped, NoCommit int
	// AI is the AI root-cause section's Markdown, shown as text.
	AI                           string
	NoCommitText, InfraThreshold string
	Unflagged                    string // tests with flaky evidence on too few commits
	Recurring                    string // suites whose co-failure events recur
	SplitByDirectory             string // flagged tests whose results split by directory
	Repeated                     string // runs in which most tests ran more than once
	Varying                      string // tests whose names vary from run to run
	LegBounds                    string // where the legs of a matrix were not told apart
	SkippedText, InfraText       string
	Rows                         []htmlRow
	StripsShown, StripsCut       int
	ScoreChart                   *scoreChart
	CommitChart                  *commitChart
	SkippedFiles                 []htmlPair
	InfraRuns                    []htmlInfra
	// Events are the co-failures left out (InfraEvents), the first
	// maxHTMLEvents of them; MoreEvents counts the rest.
	Events     []htmlEvent
	MoreEvents int
	EventCount int
}

type htmlRow struct {
	Rank                           int
	ID                             string // element id, the target of the chart's links
	Name, File, Owners             string
	NameWrapped                    template.HTML // Name, escaped, with <wbr> after its separators
	Score, Flake, Failure, Commits string
	Evidence, TopSig               string
	Strip                          *strip
	Sigs                           []htmlSig
	SigCount, RunsText             string
	FailuresText                   string
	SigsCut                        int
}

type htmlSig struct {
	Hash, Full             string
	RunsText, FailuresText string
	Message                string
	MessageCut             bool
}

type htmlPair struct{ A, B string }

// maxHTMLEvents bounds the co-failures the HTML report lists one by one.
const maxHTMLEvents = 200

// htmlEvent is one co-failure left out as an infrastructure event.
type htmlEvent struct {
	What, RunID, Attempt, Commit, Source, Expected string
	Tests, Failed                                  int
}

type htmlInfra struct {
	RunID, Attempt, Commit, Time, Source string
	Tests, Failed                        int
}

type strip struct {
	Width, Height string
	Label         string
	Rects         []rect
}

type rect struct {
	X, Y, W, H string
	Class      string
	Title      string
}

type scoreChart struct {
	Width, Height string
	Label         string
	Bars          []scoreBar
	Ticks         []tick
}

type scoreBar struct {
	Href               string
	LabelY, Label      string
	X, Y, W, H         string
	ErrX1, ErrX2, ErrY string
	CapY1, CapY2       string
	Title              string
	ValueX, Value      string
}

type line struct{ X1, Y1, X2, Y2 string }

type tick struct{ X, Y, Label string }

type commitChart struct {
	Width, Height string
	Label         string
	Cols          []commitCol
	Ticks         []tick
	Axis          line
}

type commitCol struct {
	Title                     string
	X, W                      string
	FlakyY, FlakyH            string
	OtherY, OtherH            string
	HasFlaky, HasOther, Empty bool
}

// HTML writes a self-contained page: inline CSS and SVG, no script and no
// external resource. It shows the summary numbers, a chart of the top flake
// scores with their Wilson 95% intervals as error bars, the tests failing on
// each commit over time, the ranked table of flagged tests with an outcome
// strip per test (one mark per commit, with the commit and state in a
// tooltip and told apart by height as well as colour), their failure
// signatures with messages, the skipped files and the infrastructure runs.
// html/template escapes every value.
func HTML(w io.Writer, r *score.Report) error { return HTMLWith(w, r, HTMLOptions{}) }

// HTMLOptions adds to the HTML report.
type HTMLOptions struct {
	// AI is the AI root-cause section (explain's Markdown), shown as
	// escaped text under its AI-generated label.
	AI string
}

// HTMLWith is HTML with options.
func HTMLWith(w io.Writer, r *score.Report, o HTMLOptions) error {
	if r == nil {
		return fmt.Errorf("html report: %w", errNilReport)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	page := htmlData(r)
	page.AI = o.AI
	if err := htmlTemplate().Execute(bw, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

func htmlData(r *score.Report) *htmlPage {
	fl := flagged(r)
	threshold := fmt.Sprintf("%.0f%%", r.InfraThreshold*100)
	p := &htmlPage{
		Title:            "flakegate report",
		Generated:        r.GeneratedAt.UTC().Format("2006-01-02 15:04 UTC"),
		Source:           oneLine(r.Source),
		Threshold:        fmt.Sprintf("%.2f", r.Threshold),
		MinCommits:       group(r.MinCommits),
		FlakyRate:        fmt.Sprintf("%.2f%%", r.FlakyRate*100),
		Flaky:            group(r.FlakyCount),
		Tests:            group(r.TestsAnalyzed),
		Commits:          group(len(r.Commits)),
		Runs:             group(r.Runs),
		Results:          group(r.ResultsParsed),
		Infra:            len(r.InfraRuns),
		Skipped:          len(r.SkippedFiles),
		NoCommit:         r.ResultsWithoutCommit,
		NoCommitText:     plural(r.ResultsWithoutCommit, "result", "results"),
		Unflagged:        unflaggedText(r, func(s string) string { return s }), // the template escapes
		Recurring:        recurringText(r, func(s string) string { return s }),
		SplitByDirectory: directorySplitText(r, func(s string) string { return s }),
		Repeated:         repeatedText(r),
		Varying:          varyingText(r),
		LegBounds:        LegBoundsNote(r),
		InfraThreshold:   threshold,
		SkippedText:      plural(len(r.SkippedFiles), "input file", "input files"),
		InfraText:        infraRunsText(len(r.InfraRuns), threshold),
		HeadCount:        plural(r.FlakyCount, "flaky test", "flaky tests"),
		TestsCountText:   plural(r.TestsAnalyzed, "test", "tests"),
	}
	for i := range r.Tests {
		if t := &r.Tests[i]; !t.IsFlaky && t.Failures > 0 {
			p.FailingOthers++
		}
	}
	for i, t := range fl {
		row := htmlRow{
			Rank: i + 1, ID: fmt.Sprintf("t%d", i+1), Name: oneLine(t.Name), NameWrapped: wrapped(oneLine(t.Name)),
			Score:    withInterval(t.Score, t.ScoreInterval),
			Flake:    withInterval(t.FlakeRate, t.FlakeRateInterval),
			Failure:  withInterval(t.FailureRate, t.FailureInterval),
			Commits:  fmt.Sprintf("%d/%d", t.FlakyCommits, t.Commits),
			Evidence: oneLine(strings.Join(t.Evidence, ", ")),
			RunsText: plural(t.Runs, "run", "runs"), FailuresText: plural(t.Failures, "failure", "failures"),
			SigCount: plural(len(t.Signatures), "signature", "signatures"),
		}
		if t.IntermittentCommits > 0 {
			row.Commits += fmt.Sprintf(" +%d intermittent", t.IntermittentCommits)
		}
		if len(t.Owners) > 0 {
			row.Owners = oneLine(strings.Join(t.Owners, " "))
		}
		if t.File != "" {
			row.File = oneLine(t.File)
			if t.Line > 0 {
				row.File += fmt.Sprintf(":%d", t.Line)
			}
		}
		if s, ok := topSignature(t); ok {
			row.TopSig = fmt.Sprintf("%s ×%d", shortSig(s.Hash), s.Runs)
		}
		if i < htmlStrips {
			p.StripsShown++
			row.Strip = outcomeStrip(r, t)
			for j, s := range t.Signatures {
				if j == sigsPerTest {
					row.SigsCut = len(t.Signatures) - j
					break
				}
				msg := cleanLines(strings.TrimSpace(s.Message))
				cut := Truncate(msg, htmlSigRunes)
				row.Sigs = append(row.Sigs, htmlSig{Hash: shortSig(s.Hash), Full: alnum(strings.TrimPrefix(s.Hash, "sha256:"), 64),
					RunsText: plural(s.Runs, "run", "runs"), FailuresText: plural(s.Failures, "failure", "failures"), Message: cut, MessageCut: cut != msg})
			}
		} else {
			p.StripsCut++
		}
		p.Rows = append(p.Rows, row)
	}
	p.ScoreChart = newScoreChart(fl)
	p.CommitChart = newCommitChart(r)
	for _, s := range r.SkippedFiles {
		p.SkippedFiles = append(p.SkippedFiles, htmlPair{oneLine(s.Path), oneLine(s.Error)})
	}
	for _, ir := range r.InfraRuns {
		hi := htmlInfra{RunID: oneLine(ir.RunID), Commit: shortSHA(ir.Commit), Source: oneLine(ir.Source), Tests: ir.Tests, Failed: ir.Failed}
		if ir.Attempt > 0 {
			hi.Attempt = fmt.Sprint(ir.Attempt)
		}
		if !ir.Time.IsZero() {
			hi.Time = ir.Time.UTC().Format("2006-01-02 15:04 UTC")
		}
		p.InfraRuns = append(p.InfraRuns, hi)
	}
	p.EventCount = len(r.InfraEvents)
	for i, ev := range r.InfraEvents {
		if i == maxHTMLEvents {
			p.MoreEvents = len(r.InfraEvents) - i
			break
		}
		he := htmlEvent{RunID: oneLine(ev.RunID), Commit: shortSHA(ev.Commit), Source: oneLine(ev.Source), Tests: ev.Tests, Failed: ev.Failed,
			Expected: fmt.Sprintf("%.2f", ev.Expected)}
		if ev.Attempt > 0 {
			he.Attempt = fmt.Sprint(ev.Attempt)
		}
		switch ev.Kind {
		case score.EventCluster:
			he.What = "cluster of " + plural(ev.Tests, "test", "tests") + " led by " + oneLine(ev.Group)
		default:
			he.What = "suite " + oneLine(ev.Group)
		}
		p.Events = append(p.Events, he)
	}
	return p
}

func px(x float64) string { return fmt.Sprintf("%.1f", x) }

// outcomeStrip draws one mark per commit of the report's axis.
func outcomeStrip(r *score.Report, t *score.Test) *strip {
	n := len(r.Commits)
	if n == 0 || t.Timeline == "" {
		return nil
	}
	w := min(6, max(2, 600/float64(n)))
	s := &strip{Width: px(w * float64(n)), Height: px(stripHeight)}
	counts := map[byte]int{}
	for c := 0; c < n; c++ {
		state := byte('.')
		if c < len(t.Timeline) {
			state = t.Timeline[c]
		}
		o, ok := outcomes[state]
		if !ok {
			state, o = '.', outcomes['.']
		}
		counts[state]++
		sha := shortSHA(r.Commits[c].SHA)
		if sha == "" {
			sha = fmt.Sprintf("commit %d", c+1)
		}
		title := fmt.Sprintf("%s: %s", sha, o.label)
		if tm := r.Commits[c].Time; !tm.IsZero() {
			title = fmt.Sprintf("%s (%s): %s", sha, tm.UTC().Format("2006-01-02 15:04"), o.label)
		}
		s.Rects = append(s.Rects, rect{X: px(float64(c) * w), Y: px(stripHeight - o.height), W: px(max(1, w-0.5)), H: px(o.height),
			Class: o.class, Title: title})
	}
	s.Label = fmt.Sprintf("Outcomes over %d commits, oldest first: %d passed, %d failed, %d both, %d no result",
		n, counts['P'], counts['F'], counts['M'], counts['.'])
	return s
}

// newScoreChart draws the top flake rates, by whose lower bounds the tests
// are ranked, as horizontal bars with their Wilson 95% intervals as error
// bars.
func newScoreChart(fl []*score.Test) *scoreChart {
	if len(fl) == 0 {
		return nil
	}
	fl = fl[:min(len(fl), htmlBars)]
	const (
		labelW = 330.0
		plotW  = 400.0
		rowH   = 22.0
		top    = 10.0
	)
	x := func(v float64) float64 { return labelW + v*plotW }
	h := top + rowH*float64(len(fl)) + 30
	c := &scoreChart{Width: px(labelW + plotW + 60), Height: px(h),
		Label: fmt.Sprintf("Flake rate of the top %s with 95%% intervals", plural(len(fl), "flagged test", "flagged tests"))}
	bottom := top + rowH*float64(len(fl))
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.Ticks = append(c.Ticks, tick{X: px(x(v)), Y: px(bottom + 16), Label: fmt.Sprintf("%.2f", v)})
	}
	for i, t := range fl {
		y := top + rowH*float64(i)
		iv := t.FlakeRateInterval
		mid := y + rowH/2
		b := scoreBar{
			Href:   fmt.Sprintf("#t%d", i+1),
			LabelY: px(mid + 4), Label: fmt.Sprintf("%d. %s", i+1, Truncate(oneLine(t.Name), htmlNameRunes)),
			X: px(labelW), Y: px(y + 4), W: px(max(0.5, t.FlakeRate*plotW)), H: px(rowH - 8),
			ErrX1: px(x(iv.Low)), ErrX2: px(x(iv.High)), ErrY: px(mid), CapY1: px(mid - 5), CapY2: px(mid + 5),
			Title: fmt.Sprintf("%s: flake rate %.3f, 95%% interval [%.3f, %.3f], failed on %d of %d commits",
				oneLine(t.Name), t.FlakeRate, iv.Low, iv.High, t.FailedCommits, t.RateCommits),
			ValueX: px(x(iv.High) + 6), Value: fmt.Sprintf("%.2f", t.FlakeRate),
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// newCommitChart draws, per commit in time order, how many flagged and
// other tests failed on it.
func newCommitChart(r *score.Report) *commitChart {
	n := len(r.Commits)
	if n < 2 {
		return nil
	}
	flaky, other := failingPerCommit(r)
	top := 0
	for c := range n {
		top = max(top, flaky[c]+other[c])
	}
	if top == 0 {
		return nil
	}
	const (
		left  = 40.0
		plotH = 140.0
		pad   = 10.0
	)
	w := min(14, max(2, 800/float64(n)))
	ch := &commitChart{Width: px(left + w*float64(n) + pad), Height: px(pad + plotH + 24),
		Label: fmt.Sprintf("Tests failing on each of %d commits, oldest first", n)}
	base := pad + plotH
	ch.Axis = line{X1: px(left), Y1: px(base), X2: px(left + w*float64(n)), Y2: px(base)}
	scale := plotH / float64(top)
	for _, v := range []int{0, top / 2, top} {
		ch.Ticks = append(ch.Ticks, tick{X: px(left - 6), Y: px(base - float64(v)*scale + 4), Label: fmt.Sprint(v)})
	}
	if top/2 == 0 || top/2 == top {
		ch.Ticks = []tick{ch.Ticks[0], ch.Ticks[2]}
	}
	for c := range n {
		sha := shortSHA(r.Commits[c].SHA)
		if sha == "" {
			sha = fmt.Sprintf("commit %d", c+1)
		}
		fh, oh := float64(flaky[c])*scale, float64(other[c])*scale
		col := commitCol{
			Title: fmt.Sprintf("%s: %s failed, %s", sha, plural(flaky[c], "flagged test", "flagged tests"),
				plural(other[c], "other test", "other tests")),
			X: px(left + float64(c)*w), W: px(max(1, w-1)),
			FlakyY: px(base - fh), FlakyH: px(fh), OtherY: px(base - fh - oh), OtherH: px(oh),
			HasFlaky: flaky[c] > 0, HasOther: other[c] > 0, Empty: flaky[c]+other[c] == 0,
		}
		if tm := r.Commits[c].Time; !tm.IsZero() {
			col.Title = fmt.Sprintf("%s (%s)%s", sha, tm.UTC().Format("2006-01-02 15:04"), col.Title[len(sha):])
		}
		ch.Cols = append(ch.Cols, col)
	}
	return ch
}

// wrapped escapes a test name and lets it break after "::", ".", "/" and
// "_" rather than anywhere: tests.test_checkout::test_payment_times_out,
// not tests.test_checkout: :test_payment_times_.
func wrapped(name string) template.HTML {
	var b strings.Builder
	for i := 0; i < len(name); {
		j := strings.IndexAny(name[i:], ".:/_")
		if j < 0 {
			b.WriteString(html.EscapeString(name[i:]))
			break
		}
		j += i + 1
		for j < len(name) && name[j] == ':' { // "::" stays whole
			j++
		}
		b.WriteString(html.EscapeString(name[i:j]))
		if j < len(name) {
			b.WriteString("<wbr>")
		}
		i = j
	}
	return template.HTML(b.String())
}
