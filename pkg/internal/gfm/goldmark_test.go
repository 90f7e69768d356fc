package gfm

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// goldmarkHTML is the reference: goldmark with GFM and raw HTML kept.
func goldmarkHTML(t testing.TB, md string) string {
	t.Helper()
	var out bytes.Buffer
	g := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := g.Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// agrees fails t where HTML(md) differs from goldmark's.
func agrees(t *testing.T, what, md string) {
	t.Helper()
	if diff := cmp.Diff(goldmarkHTML(t, md), HTML(md)); diff != "" {
		t.Errorf("%s: HTML differs from goldmark's (-goldmark +gfm):\n%s", what, diff)
	}
}

// TestAgreesWithGoldmark: every construct flakegate's Markdown uses, and
// the neighbours a renderer gets wrong (emphasis rules, lazy lines, loose
// lists, cells a row lacks, references, autolinks and their trailing
// punctuation), gives goldmark's HTML. The render package's tests hold
// it to goldmark on every document they render, hostile test names and
// messages included, and the demo's on its pages.
func TestAgreesWithGoldmark(t *testing.T) {
	for _, md := range []string{
		"# h1\n\nSetext\n===\n\nSub\n---\n",
		"a *b* _c_ **d** __e__ ***f*** ~~g~~ ~h~ ~~~i~~~\n",
		"foo*bar*baz _x_y_ *(a)* **a*b**c* a**b",
		"line one  \nline two\\\nline three\n",
		"see http://example.com/a_b. and (https://x.org/y) www.foo.com/bar) a@b.co x",
		"**http://x.com** _www.y.com_ ~http://z.com~",
		"[link *em*](http://a.b/c?d=e&f=g \"title\") [x]( <http://a b> ) [no]",
		"<http://auto.link/x> <a@b.com> <span class=\"x\">t</span> <br> <b>bold</b> 5 < 6 & 7",
		"`code` ``a`b`` ` spaced ` `unclosed\n",
		"| a | b |\n|---|:-:|\n| `x\\|y` | \\| z |\n| only |\n| 1 | 2 | 3 |\n",
		"text\n| a |\n|---|\n| b |\n",
		"- a\n- b\n\n- c\n",
		"1. one\n2. two\n   - nested\n   - items\n3. three\n",
		"- item\n  continued\nlazy\n- two\n",
		"> quote\n> - list\nlazy\n\n> [!NOTE]\n> text\n",
		"```mermaid\nx < y & z\n```\n\n~~~\nfence\n~~~\n",
		"<details><summary>s</summary>\n\n**inner**\n\n</details>\n",
		"<!-- comment -->\ntext\n\n<pre>\na\n\nb\n</pre>\n",
		"&amp; &lt; &#34; &#39; &#91; &#x41; &nbsp; &bogus; & x",
		"\\*not em\\* \\_ \\| \\\\ \\a",
		"***\n---\n___\n",
		"    indented code\n\n  para\n",
		"a\n- b\n1. c\n2) d\n",
		"x @user #12 ::warning:: <script>alert(1)</script>",
		"* star\n+ plus\n",
		"## Heading with `code` and [link](u) ##\n#no\n####### seven\n",
		"- [ ] task\n- [x] done\n",
		"em*pha*sis and _under_score_ snake_case_name",
		"<img src=\"x.png\" alt=\"a\">\n\ntext <img src=\"y\"> more",
		"p1\n\n\n\np2   \n",
		"> a\n>> nested\n> back\n",
		"- para one\n\n  para two\n- next\n",
		"3. three\n4. four\n",
		"intro\n\n| h |\n|--:|\n| [l](u) **b** |\n\nafter\n",
		"[a [b] c](d) [x](y&amp;z) ![alt *t*](img.png \"t\") [e](<f g>)",
		"`multi\nline` code and trailing\\",
		"<details>\n<summary>x</summary>\n\n- a\n- b\n\n</details>\n",
		"**`code`** in bold, *[link](u)* in em, _a_b_ __x__y",
		"- a\n  - b\n    - c\n- d\n",
		"text <!-- c --> more <?p ?> <![CDATA[x]]> <!X y>",
		"a ~~b~~c ~~ d ~~ ~e~",
		"Café — “quotes” ✓ ≈ 😀 *ünï*",
		// Tabs: kept in HTML blocks and code, read as columns elsewhere.
		"<pre>\njava.lang.AssertionError: expected\n\tat org.Foo.bar(Foo.java:12)\n  \tat b\n</pre>\n",
		"```\n\tcode\n```\n", "\tindented\n", "\t\tdouble\n", "  \tmixed\n", "<details>\n\tx\n</details>\n",
		"- a\n\tb\n", "-\tfoo\n", "1.\tbar\n", "- a\n\t- b\n", "- a\n\n\t\tcode\n", "> \tq\n", "> \t\tcode\n", ">\tfoo\n",
		"a stack trace\n\tat org.Foo.bar(Foo.java:12)\n", "| a |\n|---|\n|\tb\t|\n", "# h\t#\n", "a\t\n b\n", "a \\\nb  \nc \t\nd", "c\t \nd", "c  \t\nd", "c \t \nd", "**a**\t\nb", "`x` \ny", "b   \nc", "b \t  \nc", "`x`  \ny",
		"-\tx\ny\n", "> -\tx\ny\n", "1.\tx\ny\n", // a lazy line after an item whose marker a tab follows
		// Blank lines: between an item's blocks, after a nested list.
		"- a\n  - b\n\n  c\n- d\n", "- a\n\n  b\n", "1. a\n\n   ```\n   x\n\n   y\n   ```\n2. b\n", "- a\n- b\n\n\npara\n",
	} {
		agrees(t, md, md)
	}
}

// FuzzHTML renders any text: whatever it is, the renderer neither panics
// nor loops, and on the Markdown that flakegate's renderer writes it
// agrees with goldmark (FuzzUntrustedTextKeepsStructure in pkg/render).
//
//	go test -run '^$' -fuzz FuzzHTML -fuzztime 2m ./pkg/internal/gfm
func FuzzHTML(f *testing.F) {
	for _, s := range []string{"# h\n\n| a |\n|---|\n| b |\n", "- a\n  - b\n> c\n", "**a *b* c**", "[a](b \"c\") <d> `e`", "```\nx\n", "<details>\n\nx\n", "1. a\n\n2. b", "\\\n&#x0; &lt;", "-\tx\ny", "> \t-\t\tz\n\tw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		if len(md) > 4096 {
			return
		}
		HTML(md)
	})
}
