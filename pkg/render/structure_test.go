package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// FuzzUntrustedTextKeepsStructure renders the report's Markdown and the
// gate's PR comment twice, once with a plain test name and message and
// once with the fuzzer's, and renders both as GitHub does (GFM): the HTML
// must have the same elements in the same order (a name or a message
// cannot open a tag, close ours, start a list, a heading or a table row,
// or make a link), and no text outside code may @-mention anyone.
//
//	go test -run '^$' -fuzz FuzzUntrustedTextKeepsStructure -fuzztime 5m ./pkg/render
func FuzzUntrustedTextKeepsStructure(f *testing.F) {
	for _, s := range []string{hostileName, hostileMsg, "a|b", "`x`", "<b>x</b>", "@admins", "[x](https://e.example)",
		"line\n## Heading", "* item", "1. item", "> quote", "---", "a\\|b", "x_y*z~w", "&amp;", "&#64;admins", "www.e.example", "test_www.evil.example/track.png", "__www.f.example__", "~www.e.example", "a\r\nb",
		"java.lang.AssertionError: expected 1\n\tat org.Foo.bar(Foo.java:12)\n\tat org.Baz.qux(Baz.java:34)", "a \t\n  b  \nc\\\nd"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, name, msg string) {
		if len(name) > 300 || len(msg) > 600 {
			return // names and messages are cut to fit; the structure of a cut is another test's
		}
		if !strings.ContainsFunc(name, isWord) || !strings.ContainsFunc(msg, isWord) {
			return // nothing to show: a message section is left out, as it should be
		}
		plain := structure(t, renderBoth(t, "tests.test_x::test_plain", "plain message"))
		got := structure(t, renderBoth(t, name, msg))
		for k := range plain {
			if plain[k].tags != got[k].tags {
				t.Fatalf("%s: name %q, message %q change the rendered elements:\n%s\nplain:\n%s", k, name, msg, got[k].tags, plain[k].tags)
			}
			if got[k].mention != "" {
				t.Fatalf("%s: name %q, message %q @-mention in %q", k, name, msg, got[k].mention)
			}
		}
	})
}

// renderBoth renders the report's Markdown with the first flaky test named
// name and failing with msg, and the gate comment with its first test
// named name.
func renderBoth(t *testing.T, name, msg string) map[string]string {
	r := handReport()
	r.Tests[0].Name = name
	r.Tests[0].Signatures[0].Message = msg
	r.Tests[0].ErrorMessages = []string{msg}
	var md bytes.Buffer
	if err := Markdown(&md, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	g := gateResult(t)
	g.Tests[0].Name = name
	var gm bytes.Buffer
	if err := GateMarkdown(&gm, g, meta, 0); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"report": md.String(), "gate comment": gm.String()}
}

func isWord(r rune) bool { return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

type shape struct {
	tags    string // the rendered elements, in order
	mention string // text outside code with an @-mention, if any
}

func structure(t *testing.T, docs map[string]string) map[string]shape {
	out := map[string]shape{}
	for k, md := range docs {
		z := html.NewTokenizer(strings.NewReader(gfm(t, md)))
		var s shape
		var tags strings.Builder
		code := 0
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			tok := z.Token()
			switch tt {
			case html.StartTagToken, html.SelfClosingTagToken:
				fmt.Fprintf(&tags, "<%s", tok.Data)
				for _, a := range tok.Attr {
					fmt.Fprintf(&tags, " %s", a.Key)
				}
				tags.WriteString(">")
				if tok.Data == "code" || tok.Data == "pre" {
					code++
				}
			case html.EndTagToken:
				fmt.Fprintf(&tags, "</%s>", tok.Data)
				if (tok.Data == "code" || tok.Data == "pre") && code > 0 {
					code--
				}
			case html.TextToken:
				if code == 0 && hasMention(tok.Data) && s.mention == "" {
					s.mention = tok.Data
				}
			}
		}
		s.tags = tags.String()
		out[k] = s
	}
	return out
}
