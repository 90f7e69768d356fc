package demo

import (
	"bytes"
	"fmt"
	"html"

	"github.com/flakegate/flakegate/pkg/internal/gfm"
)

// HTML renders Markdown as a self-contained page styled like GitHub's
// Markdown body. The Markdown is GitHub-flavoured (tables, strikethrough,
// task lists, autolinks); raw HTML is passed through, as GitHub passes
// the <details>, <summary> and <br> that flakegate writes. The text inside
// has already been escaped by flakegate's renderer (test names and
// messages are untrusted), and the demo renders only its own bundled
// scenario.
func HTML(title, md string) []byte {
	var page bytes.Buffer
	fmt.Fprintf(&page, pageHead, html.EscapeString(title))
	page.WriteString(gfm.HTML(md))
	page.WriteString(pageTail)
	return page.Bytes()
}

const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>
body { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; font-size: 14px; line-height: 1.5; color: #1f2328; background: #fff; margin: 0; }
main { max-width: 980px; margin: 24px auto; padding: 16px 32px; border: 1px solid #d1d9e0; border-radius: 6px; }
h1, h2 { border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
h1, h2, h3, h4 { margin-top: 24px; margin-bottom: 16px; font-weight: 600; line-height: 1.25; }
table { border-collapse: collapse; display: block; width: max-content; max-width: 100%%; overflow: auto; margin-bottom: 16px; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
tr:nth-child(2n) { background: #f6f8fa; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 85%%; background: #eff1f3; border-radius: 6px; }
code { padding: .2em .4em; }
pre { padding: 16px; overflow: auto; }
pre code { padding: 0; background: none; }
details { margin-bottom: 16px; }
summary { cursor: pointer; }
blockquote { color: #59636e; border-left: .25em solid #d1d9e0; margin: 0 0 16px; padding: 0 1em; }
a { color: #0969da; }
</style>
</head>
<body>
<main>
`

const pageTail = `</main>
</body>
</html>
`
