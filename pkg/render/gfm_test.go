package render

import (
	"bytes"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/flakegate/flakegate/pkg/gate"
	gfmhtml "github.com/flakegate/flakegate/pkg/internal/gfm"
	"github.com/flakegate/flakegate/pkg/score"
)

// gfm renders Markdown as GitHub does: GFM (tables, strikethrough,
// autolinks, task lists) with raw HTML kept. The demo's own renderer
// (pkg/internal/gfm) must give the same HTML for every document the
// tests render, the fuzzer's hostile names and messages included.
func gfm(t *testing.T, md string) string {
	t.Helper()
	var out bytes.Buffer
	g := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := g.Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	if got := gfmhtml.HTML(md); got != out.String() {
		t.Errorf("pkg/internal/gfm renders this Markdown unlike goldmark:\n%s\n(-goldmark +gfm):\n%s", md, cmp.Diff(out.String(), got))
	}
	if gh, ok := cmarkGFM(t, md); ok {
		// GitHub renders with cmark-gfm, whose autolinks differ from
		// goldmark's ("\_www.x.example" is a link there): the links must
		// be the same.
		if a, b := hrefRE.FindAllString(out.String(), -1), hrefRE.FindAllString(gh, -1); !slices.Equal(a, b) {
			t.Errorf("GitHub's renderer (cmark-gfm) makes other links of this Markdown than goldmark:\n%s\n(-goldmark +cmark-gfm):\n%s", md, cmp.Diff(a, b))
		}
	}
	return out.String()
}

var hrefRE = regexp.MustCompile(`<a href="[^"]*"`)

// cmarkGFM renders md with cmark-gfm, GitHub's own renderer, when it is
// installed (Debian's cmark-gfm package; .ci/run installs it where it can).
func cmarkGFM(t *testing.T, md string) (string, bool) {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		return "", false
	}
	cmd := exec.Command(bin, "-e", "autolink", "-e", "table", "-e", "strikethrough", "-e", "tasklist", "--unsafe")
	cmd.Stdin = strings.NewReader(md)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	return string(out), true
}

var (
	// leftEscape is a Markdown backslash escape that a renderer left as
	// text: inside an HTML block GitHub reads no Markdown, so a reader
	// would see "test\_login".
	leftEscape = regexp.MustCompile(`\\[!-/:-@\[-` + "`" + `{-~]`)
	// codeBlocks are fenced blocks (the charts) and <pre>, whose text is
	// shown as written.
	codeBlocks = regexp.MustCompile(`(?s)<pre><code class="language-mermaid">.*?</code></pre>|<pre>.*?</pre>`)
)

func checkNoVisibleEscapes(t *testing.T, what, md string) {
	t.Helper()
	page := codeBlocks.ReplaceAllString(gfm(t, md), "")
	for _, m := range leftEscape.FindAllStringIndex(page, -1) {
		from, to := max(0, m[0]-60), min(len(page), m[1]+60)
		t.Errorf("%s: a backslash escape shows after rendering: …%s…", what, page[from:to])
	}
}

// TestGFMNoVisibleEscapes renders the gate comment, the job summary and
// the report with a GFM renderer: test names full of Markdown punctuation
// must read as written, in tables and in <summary> alike.
func TestGFMNoVisibleEscapes(t *testing.T) {
	r := gateResult(t)
	for i := range r.Tests {
		r.Tests[i].Name = "tests.test_app::test_login[*a*|b_c`d~e#1]" + strings.Repeat("_", i)
	}
	var b bytes.Buffer
	if err := GateMarkdown(&b, r, meta, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<summary><code>") {
		t.Fatal("the gate comment has no test in a <summary>: the test checks nothing")
	}
	checkNoVisibleEscapes(t, "gate comment", b.String())
	page := gfm(t, b.String())
	if !strings.Contains(page, "<summary><code>tests.test_app::test_login") {
		t.Errorf("the test's name does not read as written in its <summary>:\n%s", page)
	}

	// The hostile report's names hold backslashes of their own, which must
	// show; without them, any backslash left is an escape.
	hostile := hostileReport()
	for i := range hostile.Tests {
		tt := &hostile.Tests[i]
		tt.Name, tt.File = strings.ReplaceAll(tt.Name, `\`, ""), strings.ReplaceAll(tt.File, `\`, "")
		for j := range tt.Signatures {
			tt.Signatures[j].Message = strings.ReplaceAll(tt.Signatures[j].Message, `\`, "")
		}
	}
	for name, rep := range map[string]*score.Report{"hand": handReport(), "hostile": hostile} {
		b.Reset()
		if err := Markdown(&b, rep, MarkdownOptions{Title: "flakegate report"}); err != nil {
			t.Fatal(err)
		}
		checkNoVisibleEscapes(t, name+" summary", b.String())
	}
}

// TestGFMLinksCommits checks the comment links the commits and the run.
func TestGFMLinksCommits(t *testing.T) {
	m := meta
	m.ServerURL = "https://github.com"
	var b bytes.Buffer
	if err := GateMarkdown(&b, gate.Result{Verdict: gate.VerdictPass}, m, 0); err != nil {
		t.Fatal(err)
	}
	page := gfm(t, b.String())
	for _, want := range []string{
		`<a href="https://github.com/acme/shop/commit/0123456789abcdef0123456789abcdef01234567"><code>0123456</code></a>`,
		`<a href="https://github.com/acme/shop/commit/fedcba9876543210fedcba9876543210fedcba98"><code>fedcba9</code></a>`,
		`<a href="https://github.com/acme/shop/actions/runs/7">this run</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("rendered comment lacks %s:\n%s", want, page)
		}
	}
	// A SHA that is not hex (an event file's) is shown, not linked.
	m.HeadSHA = "abc)](javascript:alert(1))"
	b.Reset()
	_ = GateMarkdown(&b, gate.Result{Verdict: gate.VerdictPass}, m, 0)
	if strings.Contains(b.String(), "javascript") && strings.Contains(gfm(t, b.String()), `href="javascript`) {
		t.Errorf("a hostile SHA became a link:\n%s", b.String())
	}
}
