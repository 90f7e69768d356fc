package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

var update = flag.Bool("update", false, "rewrite docs/demo/*.md and the README's demo excerpt from the demo's output")

// docs is where the demo's Markdown is kept for readers of the repository,
// relative to this package.
const docs = "../../docs/demo"

// TestDemo runs the demo and checks what a newcomer reads: the weekly
// report finds the flaky tests and reports the outage apart; the gate
// blocks the flake the patch made and passes the one that was already
// there, in the comment, the outputs, the exit code and the check run.
func TestDemo(t *testing.T) {
	out := t.TempDir()
	res, err := Run(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	// The weekly report.
	if res.Report.Exit != 0 || res.Report.Outputs["verdict"] != "pass" || res.Report.Outputs["flaky-count"] != "3" {
		t.Errorf("report step: exit %d, outputs %v", res.Report.Exit, res.Report.Outputs)
	}
	var rep struct {
		Tests []struct {
			Name    string `json:"name"`
			IsFlaky bool   `json:"is_flaky"`
		} `json:"tests"`
		InfraRuns []struct {
			Failed int `json:"failed"`
		} `json:"infra_runs"`
	}
	readJSON(t, filepath.Join(out, "report", "report.json"), &rep)
	var flaky []string
	for _, x := range rep.Tests {
		if x.IsFlaky {
			flaky = append(flaky, x.Name)
		}
	}
	slices.Sort(flaky)
	want := []string{PreExistingFlake, "tests.test_search::test_results_are_ordered", "tests.test_upload::test_retry_after_429"}
	if !slices.Equal(flaky, want) {
		t.Errorf("flaky tests in the report = %v, want %v (the outage must not make every test flaky; the regression fixed two commits later is not a flake)", flaky, want)
	}
	if len(rep.InfraRuns) != 1 || rep.InfraRuns[0].Failed < 50 {
		t.Errorf("infra runs = %+v, want the one outage reported apart", rep.InfraRuns)
	}
	for _, s := range []string{"**3 flaky tests**", md(PreExistingFlake), "### Infrastructure failures excluded", "55 of 60 tests failed"} {
		if !strings.Contains(res.Report.Summary, s) {
			t.Errorf("report summary lacks %q", s)
		}
	}

	// The gate.
	if res.Gate.Exit != 1 || res.Gate.Outputs["verdict"] != "block" || res.Gate.Outputs["blocking-count"] != "1" {
		t.Errorf("gate step: exit %d (want 1: the required check fails), outputs %v", res.Gate.Exit, res.Gate.Outputs)
	}
	var gate struct {
		Verdict string `json:"verdict"`
		Tests   []struct {
			Name     string `json:"name"`
			Bucket   string `json:"bucket"`
			Decision string `json:"decision"`
		} `json:"tests"`
	}
	readJSON(t, filepath.Join(out, "gate", "gate.json"), &gate)
	decision := map[string]string{}
	for _, x := range gate.Tests {
		decision[x.Name] = x.Decision + " / " + x.Bucket
		if x.Decision == "block" && x.Name != InducedFlake {
			t.Errorf("%s blocks (%s): only the patch's flake may", x.Name, x.Bucket)
		}
	}
	if d := decision[InducedFlake]; d != "block / patch-induced flake" {
		t.Errorf("%s: %q, want block / patch-induced flake (the outage on main must not make it look flaky on base)", InducedFlake, d)
	}
	flakes := 0
	for _, d := range decision {
		if strings.HasPrefix(d, "pass / pre-existing flake") || strings.HasPrefix(d, "pass / flake not reproduced") {
			flakes++
		}
	}
	if flakes > 10 {
		t.Errorf("%d tests pass as flaky on base: the outage run on main is counted as base history", flakes)
	}
	if d := decision[PreExistingFlake]; d != "pass / pre-existing flake" {
		t.Errorf("%s: %q, want pass / pre-existing flake", PreExistingFlake, d)
	}
	c := res.Comment
	blocking, rest, ok := strings.Cut(c, "### Pre-existing flakes")
	if !ok {
		t.Fatalf("comment has no pre-existing flakes section:\n%s", c)
	}
	if !strings.HasPrefix(c, "## ❌ flakegate: block") || !strings.Contains(blocking, "### Blocking (1)") ||
		!strings.Contains(blocking, md(InducedFlake)) || strings.Contains(blocking, md(PreExistingFlake)) {
		t.Errorf("comment's blocking part:\n%s", blocking)
	}
	if !strings.Contains(rest, "| "+md(PreExistingFlake)+" | pre-existing flake | 1/5 | 2/5 |") {
		t.Errorf("comment does not pass %s as a pre-existing flake:\n%s", PreExistingFlake, rest)
	}
	if !strings.Contains(c, "<!-- flakegate:sticky-comment -->") {
		t.Error("comment has no sticky marker")
	}
	if res.CheckRun != "failure" {
		t.Errorf("check run conclusion %q, want failure", res.CheckRun)
	}

	// The files it prints.
	for _, f := range res.Files {
		b, err := os.ReadFile(f.Path)
		if err != nil || len(b) == 0 {
			t.Errorf("%s (%s): %v, %d bytes", f.Path, f.What, err, len(b))
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "comment.html"))
	for _, s := range []string{"<h2>❌ flakegate: block</h2>", "<table>", "<td>tests.test_cart::test_total_includes_tax</td>", "<details><summary>"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("comment.html lacks %q", s)
		}
	}

	checkPagesAsGoldmark(t, out, res)
	checkDocs(t, res)
}

// checkPagesAsGoldmark: each HTML page's body is what goldmark, with GFM
// and raw HTML kept, makes of the page's Markdown.
func checkPagesAsGoldmark(t *testing.T, out string, res *Result) {
	t.Helper()
	g := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	for name, md := range map[string]string{"comment": res.Comment, "summary-report": res.Report.Summary, "summary-gate": res.Gate.Summary} {
		var want bytes.Buffer
		if err := g.Convert([]byte(md), &want); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(out, name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(string(page), pageHead[:strings.Index(pageHead, "<title>")])
		if !ok {
			t.Fatalf("%s.html does not begin with the page's head", name)
		}
		_, body, _ = strings.Cut(body, "<main>\n")
		body = strings.TrimSuffix(body, pageTail)
		if diff := cmp.Diff(want.String(), body); diff != "" {
			t.Errorf("%s.html: the body differs from goldmark's HTML of %s.md (-goldmark +page):\n%s", name, name, diff)
		}
	}
}

// checkDocs keeps docs/demo and the README's excerpt equal to what the demo
// writes; -update rewrites them.
func checkDocs(t *testing.T, res *Result) {
	t.Helper()
	files := map[string]string{"comment.md": res.Comment, "summary-report.md": res.Report.Summary, "summary-gate.md": res.Gate.Summary}
	for name, got := range files {
		p := filepath.Join(docs, name)
		if *update {
			if err := os.MkdirAll(docs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != got {
			t.Errorf("docs/demo/%s differs from the demo's output (%v): run go test ./pkg/demo -update", name, err)
		}
	}
	readme := "../../README.md"
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	got, err := spliceExcerpt(string(b), Excerpt(res))
	if err != nil {
		t.Fatal(err)
	}
	if got == string(b) {
		return
	}
	if !*update {
		t.Errorf("README.md's demo excerpt differs from the demo's output: run go test ./pkg/demo -update")
		return
	}
	if err := os.WriteFile(readme, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSpliceExcerpt: the README excerpt is replaced between its markers,
// and a README without them is an error, not a silent pass.
func TestSpliceExcerpt(t *testing.T) {
	got, err := spliceExcerpt("a\n"+excerptBegin+"\nold\n"+excerptEnd+"\nb\n", "new\n")
	if err != nil || got != "a\n"+excerptBegin+"\nnew\n"+excerptEnd+"\nb\n" {
		t.Errorf("splice = %q, %v", got, err)
	}
	if _, err := spliceExcerpt("no markers\n", "x"); err == nil {
		t.Error("no error for a README without markers")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// md is a test name as flakegate's Markdown escapes it.
func md(name string) string { return strings.ReplaceAll(name, "_", `\_`) }
