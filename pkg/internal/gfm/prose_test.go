package gfm

import "testing"

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
		"<p hidden>\nTest-Changes: x\n</p>\n\nc\n":                           "c\n",
		"a\n\n    Test-Changes: <describe>\n\nc\n":                           "a\n\nc\n",
		"Test-Changes: <describe the change>\n":                              "Test-Changes: \n",
		"Test-Changes: updates <Button> tests\n":                             "Test-Changes: updates  tests\n",
		"<details>\n<summary>s</summary>\n\nTest-Changes: x\n\n</details>\n": "Test-Changes: x\n\n",
		// An indented line that continues a paragraph is its text.
		"a\n    Test-Changes: x\n":                  "a\n    Test-Changes: x\n",
		"[a link][r] and\n[r]: https://e.example\n": "[a link][r] and\n[r]: https://e.example\n",
	} {
		if got := Prose(in); got != want {
			t.Errorf("Prose(%q) = %q, want %q", in, got, want)
		}
	}
}
