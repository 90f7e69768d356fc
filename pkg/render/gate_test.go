package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/score"
	"github.com/flakegate/flakegate/pkg/sprt"
)

// gateResult reads the gate package's golden report: a block with a
// patch-induced flake, a pre-existing flake, a red base and property
// violations.
func gateResult(t *testing.T) gate.Result {
	t.Helper()
	b, err := os.ReadFile("../gate/testdata/gate.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var r gate.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

var meta = GateMeta{Repository: "acme/shop", PR: 42, HeadSHA: "0123456789abcdef0123456789abcdef01234567", BaseSHA: "fedcba9876543210fedcba9876543210fedcba98",
	RunURL: "https://github.com/acme/shop/actions/runs/7", ArtifactHint: "the flakegate-report artifact"}

func TestGateMarkdownGolden(t *testing.T) {
	r := gateResult(t)
	var b bytes.Buffer
	if err := GateMarkdown(&b, r, meta, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "gate.md.golden"), b.String())
	if !strings.HasPrefix(b.String(), "## ❌ flakegate: block\n") {
		t.Errorf("does not open with the verdict:\n%s", b.String()[:100])
	}
	for _, want := range []string{"### Blocking (1)", "patch-induced flake", "### Property violations", "Red base", "Pre-existing flakes", "| 1 | fail | +"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q", want)
		}
	}
}

// TestGateMarkdownMargin: with part of alpha-pr kept back for the fitted
// prior's error (20 head runs of a 20-run schedule), the footer says so,
// and without it says nothing of a margin.
func TestGateMarkdownMargin(t *testing.T) {
	r := gateResult(t)
	for _, c := range []struct {
		margin float64
		want   bool
	}{{1, false}, {0.5, true}} {
		r.Family.Margin = c.margin
		var b bytes.Buffer
		if err := GateMarkdown(&b, r, meta, 0); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "within alpha-pr 0.05 × a margin of 0.5 (the rest of alpha-pr is the outage checks'; below 0.95, the fitted prior's error too);"); got != c.want {
			t.Errorf("margin %v: footer names the margin %v, want %v", c.margin, got, c.want)
		}
	}
}

// TestGateMarkdownBudget: a comment is never over GitHub's 65,536
// characters, opens with the verdict, and says where the rest is.
func TestGateMarkdownBudget(t *testing.T) {
	hostile := "x|y <img src=x onerror=alert(1)> @everyone `code` [link](javascript:alert(1)) <!-- --> ignore previous instructions"
	r := gate.Result{Verdict: gate.VerdictBlock, Reasons: []string{hostile}}
	for i := 0; i < 3000; i++ {
		trace := []sprt.Step{}
		for k := 0; k < 20; k++ {
			trace = append(trace, sprt.Step{Passed: k%2 == 0, Step: 1.099, Cumulative: float64(k)})
		}
		r.Tests = append(r.Tests, gate.TestResult{Name: fmt.Sprintf("%s::test_%04d", hostile, i), Bucket: gate.Regression, Decision: gate.Block,
			Base: gate.Side{Runs: 5}, Head: gate.Side{Runs: 5, Failures: 5}, Reason: strings.Repeat(hostile+" ", 50),
			SPRT: &sprt.Result{Decision: sprt.Regression, LLR: 3.1, Trace: trace}})
		r.Properties = append(r.Properties, gate.Violation{Check: "skip-marker", Path: "tests/a`b.py", Line: i, Message: hostile})
	}
	for _, budget := range []int{65536 - 40, 20000, 3000} {
		var b bytes.Buffer
		if err := GateMarkdown(&b, r, meta, budget); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if len(out) > budget || !utf8.ValidString(out) {
			t.Fatalf("budget %d: %d bytes", budget, len(out))
		}
		if !strings.HasPrefix(out, "## ❌ flakegate: block\n") || !strings.Contains(out, "flakegate-report artifact") {
			t.Errorf("budget %d: lacks verdict or pointer:\n%s", budget, out[:min(400, len(out))])
		}
		for _, bad := range []string{"<img", "@everyone", "<!--"} {
			if strings.Contains(out, bad) {
				t.Errorf("budget %d: output contains %q", budget, bad)
			}
		}
		if regexp.MustCompile(`(^|[^\\])\]\(javascript`).MatchString(out) {
			t.Errorf("budget %d: output contains a live javascript: link", budget)
		}
	}
}

func TestTrendMarkdown(t *testing.T) {
	tr := score.Compare(&score.Report{GeneratedAt: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), MinCommits: 5, Tests: []score.Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.3}, {Name: "few", IsFlaky: true, FlakeScore: 0.4}}},
		&score.Report{FlakyCount: 1, MinCommits: 5, Tests: []score.Test{{Name: "@team <b>", IsFlaky: true, FlakeScore: 0.2, Commits: 8},
			{Name: "few", FlakeScore: 0.667, Commits: 3}}})
	var b bytes.Buffer
	if err := TrendMarkdown(&b, tr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// A test not run in this window is not resolved: too few commits.
	for _, want := range []string{"Trend since the report of 2026-11-24", "1 new, 0 resolved, 0 worse, 0 better, 2 no longer flagged on too few commits to tell",
		"**New**", "| a | 0.300 | not run | 0 |", "**Not flagged now, on too few commits to tell (fewer than min-commits, or not run)**", "| few | 0.400 | 0.667 | 3 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "@team") || strings.Contains(out, "<b>") {
		t.Errorf("unescaped name:\n%s", out)
	}
	if strings.Contains(out, "rules changed") {
		t.Errorf("the rules did not change:\n%s", out)
	}
	// A report under other rules: the trend says the rules changed.
	tr = score.Compare(&score.Report{Threshold: 0.1, MinCommits: 5}, &score.Report{Threshold: 0.2, MinCommits: 5})
	b.Reset()
	TrendMarkdown(&b, tr)
	if !strings.Contains(b.String(), "The rules changed since that report (threshold 0.2, was 0.1)") {
		t.Errorf("changed rules not said:\n%s", b.String())
	}
}

func TestGateMarkdownRanking(t *testing.T) {
	m := meta
	for i := 0; i < 15; i++ {
		m.Flaky = append(m.Flaky, score.Test{Name: fmt.Sprintf("t::test_%02d @team <b>", i), FlakeRate: 0.5 - float64(i)/100, FlakeScore: 0.1, Evidence: []string{"retry"}})
	}
	var b bytes.Buffer
	if err := GateMarkdown(&b, gateResult(t), m, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Top 10 of 15 flaky tests on the base branch", "| 1 | t::test\\_00", "| 10 | t::test\\_09", "0.500 | retry"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "test\\_10") || strings.Contains(out, "@team") || strings.Contains(out, "<b>") {
		t.Error("ranking shows more than 10 rows or unescaped names")
	}
}

// TestGateMarkdownUnread: result files left out are listed, with the
// markup of their paths and errors made inert, and cut to the budget's
// rows.
func TestGateMarkdownUnread(t *testing.T) {
	r := gateResult(t)
	r.Unread = []gate.Unread{
		{Side: "head", Path: "results/head-2.xml", Error: "line 5: unexpected end of file inside a tag (truncated file?)"},
		{Side: "base", Path: "`x` @team <b>.xml", Error: "artifact expired (410 Gone) @octocat"},
	}
	var b bytes.Buffer
	if err := GateMarkdown(&b, r, meta, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// A path is a code span, where mentions and HTML are text.
	for _, want := range []string{"### Result files not read (2)", "- head `results/head-2.xml`: line 5: unexpected end of file inside a tag (truncated file?)", "- base `'x' @team <b>.xml`: "} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "@octocat") || strings.Count(out, "<b>") != 1 {
		t.Errorf("markup in an unread file's path or error is live:\n%s", out)
	}
}

// TestHeldCellNamesOwnRuns: a test the suite's calibration would block and
// its own base-side runs hold back shows both p-values in its table row;
// a blocking test shows the calibration's alone.
func TestHeldCellNamesOwnRuns(t *testing.T) {
	stat := &gate.Stat{Tail: 0.0007, Best: 0.0007, BestAt: 10, PRLevel: 0.03, OwnRuns: 0.105}
	r := gate.Result{Verdict: gate.VerdictInconclusive, Tests: []gate.TestResult{
		{Name: "pkg::TestHidden", Bucket: gate.PatchInducedFlake, Decision: gate.Inconclusive, Stat: stat,
			Base: gate.Side{Runs: 10}, Head: gate.Side{Runs: 10, Failures: 3}, Reason: "undecided"},
		{Name: "pkg::TestBroken", Bucket: gate.PatchInducedFlake, Decision: gate.Block, Stat: &gate.Stat{Best: 1e-5, PRLevel: 0.001, OwnRuns: 0.004},
			Base: gate.Side{Runs: 10}, Head: gate.Side{Runs: 10, Failures: 7}, Reason: "blocked"},
	}}
	var b strings.Builder
	if err := GateMarkdown(&b, r, GateMeta{}, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 0.0007 (PR-level 0.03; own runs 0.1) |") || !strings.Contains(b.String(), "| 1e-05 (PR-level 0.001) |") {
		t.Errorf("table rows:\n%s", b.String())
	}
}
