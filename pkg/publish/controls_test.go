package publish

import (
	"bytes"
	"strings"
	"testing"
)

// TestLogDropsControls: annotation titles, files and messages, and info
// lines, carry test names and paths; no ESC, bidi override or line break of
// theirs reaches the log, and no info line starts a workflow command.
func TestLogDropsControls(t *testing.T) {
	var b bytes.Buffer
	l := NewLog(&b, func(string) string { return "" })
	l.Annotate(Annotation{Level: "error", Title: "t\x1b[31m\u202eevil\n::error::x", File: "a\u202e.py\r\n::warning::y", Message: "m\x1b[0m\u2066\nline 2"})
	l.Infof("name %s", "x\n::set-output name=verdict::pass\x1b[2J")
	out := b.String()
	for _, bad := range []string{"\x1b", "\u202e", "\u2066"} {
		if strings.Contains(out, bad) {
			t.Errorf("log holds %q:\n%q", bad, out)
		}
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if s := strings.TrimLeft(line, " \t"); strings.HasPrefix(s, "::") && !strings.HasPrefix(s, "::error ") {
			t.Errorf("line starts a workflow command: %q", line)
		}
	}
	if !strings.Contains(out, "line 2") {
		t.Errorf("the message's second line is lost:\n%q", out)
	}
}
