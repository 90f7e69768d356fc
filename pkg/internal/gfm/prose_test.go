package gfm

import (
	"regexp"
	"testing"
)

// TestProse: fenced code and HTML comments go, as the renderer leaves them
// out of the text read; the rest stays, line by line.
func TestProse(t *testing.T) {
	for in, want := range map[string]string{
		"a\n```\nb\n```\nc\n":           "a\nc\n",
		"a <!-- b --> c\n":              "a  c\n",
		"a <!--\nb\n--> c\n":            "a  c\n",
		"````\n```\nb\n````\nc":         "c",
		"```\n```go\nb\n```\nc":         "c",
		"Run ```make``` here\n":         "Run ```make``` here\n",
		"    ```\nindented code line\n": "indented code line\n",
		"<!-- unclosed\nb":              "",
		"```\nunclosed":                 "",
		// What GitHub does not show (an audit's hidden declarations).
		"[//]: # (\nTest-Changes: x\n)\nc\n":                                 "c\n",
		"[//]: # \"Test-Changes: x\"\nc\n":                                   "c\n",
		"<img src=\"x.png\" alt=\"\nTest-Changes: x\n\">\nc\n":               "\nc\n",
		"<p hidden>\nTest-Changes: x\n</p>\n\nc\n":                           "\nTest-Changes: x\n\n\nc\n",
		"a\n\n    Test-Changes: <describe>\n\nc\n":                           "a\n\nc\n",
		"Test-Changes: <describe the change>\n":                              "Test-Changes: \n",
		"Test-Changes: updates <Button> tests\n":                             "Test-Changes: updates  tests\n",
		"<details>\n<summary>s</summary>\n\nTest-Changes: x\n\n</details>\n": "\ns\n\nTest-Changes: x\n\n\n",
		// An indented line that continues a paragraph is its text.
		"a\n    Test-Changes: x\n":                  "a\n    Test-Changes: x\n",
		"[a link][r] and\n[r]: https://e.example\n": "[a link][r] and\n[r]: https://e.example\n",
	} {
		if got := Prose(in); got != want {
			t.Errorf("Prose(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProseShowsWhatGitHubShows: lines GitHub renders as text are read
// (their block quote and list markers gone), lines it does not are not (a
// review of the first version, each case checked with cmark-gfm).
func TestProseShowsWhatGitHubShows(t *testing.T) {
	declared := regexp.MustCompile(`(?m)^[ \t]*Test-Changes: x`)
	for body, want := range map[string]bool{
		// Shown: the text of HTML blocks, list items' continuations.
		"## Summary\nFix.\n<details>\n<summary>Checklist</summary>\nTest-Changes: x\n</details>":            true,
		"Fixes.\n\n<img width=\"600\" alt=\"screenshot\" src=\"https://e.example/a.png\">\nTest-Changes: x": true,
		"<div>\nTest-Changes: x\n</div>\n":    true,
		"- Changes:\n\n    Test-Changes: x\n": true,
		"1. one\n\n    Test-Changes: x\n":     true,
		"- Changes:\n\n\tTest-Changes: x\n":   true,
		"- Test-Changes: x\n":                 true,
		"> Test-Changes: x\n":                 true,
		"[//]: # (note\n\nTest-Changes: x\n":  true,
		// Not shown as text: code, in a list item or after a heading or a
		// rule, and a script.
		"- ```\n  Test-Changes: x\n  ```\n":      false,
		"# H\n    Test-Changes: x\n":             false,
		"Title\n===\n    Test-Changes: x\n":      false,
		"***\n    Test-Changes: x\n":             false,
		"<script>\nTest-Changes: x\n</script>\n": false,
		// A fence ends with its block quote or list item (a review).
		"> ```\nTest-Changes: x\n":     true,
		"- ```\nTest-Changes: x\n":     true,
		"> > ```\n> Test-Changes: x\n": true,
		"-     Test-Changes: x\n":      false,
		"1.      Test-Changes: x\n":    false,
		"* * *\n    Test-Changes: x\n": false,
		// "<!--" in a code span, or unclosed within a line, is text.
		"Make the sanitizer drop `<!--` comments.\n\nTest-Changes: x": true,
		"a <!-- b\n\nTest-Changes: x\n":                               true,
		"<!-- a hint\nTest-Changes: x\n":                              false,
		"a <!-- b -->\nTest-Changes: x\n":                             true,
		"  <!-- a hint\nTest-Changes: x\n":                            false,
	} {
		if got := declared.MatchString(Prose(body)); got != want {
			t.Errorf("Prose(%q) = %q: declaration read %v, want %v", body, Prose(body), got, want)
		}
	}
}

// FuzzProse: any body, a PR author's, is read without a panic (a tab after
// a container's marker widens a line's content past its bytes, and the
// search for a comment's end indexes the body by them).
//
//	go test -run '^$' -fuzz FuzzProse -fuzztime 1m ./pkg/internal/gfm
func FuzzProse(f *testing.F) {
	for _, body := range []string{"> \t<!-- x\nTest-Changes: x\n", ">\t\t`a` <!-- b", "- \t> \t<!--", "<details>\nTest-Changes: x\n</details>", "[//]: # (\nx\n)"} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) { _ = Prose(body) })
}
