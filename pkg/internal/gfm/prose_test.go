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
		"    ```\nindented code line\n": "    ```\nindented code line\n",
		"<!-- unclosed\nb":              "",
		"```\nunclosed":                 "",
	} {
		if got := Prose(in); got != want {
			t.Errorf("Prose(%q) = %q, want %q", in, got, want)
		}
	}
}
