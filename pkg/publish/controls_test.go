package publish

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
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

// TestLogNoLegacyCommand: the runner also reads "##[name]data" anywhere in
// a line; an info line carrying one (a path or message from an artifact)
// reaches the log with a zero-width space after the "##", and lines that
// begin with white space before "::" get the backslash.
func TestLogNoLegacyCommand(t *testing.T) {
	var b bytes.Buffer
	l := NewLog(&b, func(string) string { return "" })
	l.Infof("skipped %s: %s", "a/##[error]pwned.xml", "##[stop-commands]tok")
	l.Infof("%s", "\u00a0\u2003::error::x")
	out := b.String()
	if strings.Contains(out, "##[") || !strings.Contains(out, "a/##\u200b[error]pwned.xml: ##\u200b[stop-commands]tok") {
		t.Errorf("a legacy command reaches the log:\n%q", out)
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
			t.Errorf("line starts a workflow command: %q", line)
		}
	}
}
