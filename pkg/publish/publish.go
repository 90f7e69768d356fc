// Package publish owns what the action shows: workflow commands on the log
// (masks, groups, annotations within GitHub's caps), step outputs and the
// job summary here; the sticky comment with its modes and its read-only
// fallback, the check run, the tracking issue and the artifact upload in
// github.go, behind small interfaces that *ghapi.Client and
// *artifact.Client satisfy. It decides no verdict.
package publish

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/render"
)

// MaxSummaryBytes is GitHub's cap on a step summary (ghapi holds every
// GitHub limit).
const MaxSummaryBytes = ghapi.MaxSummaryBytes

// Annotation is a message a user can act on, optionally tied to a file.
type Annotation struct {
	Level   string // notice, warning or error
	Title   string
	File    string
	Line    int
	Message string
}

// Log writes workflow commands to the step log.
type Log struct {
	a        *githubactions.Action
	perKind  map[string]int
	total    int
	Overflow []Annotation // annotations over the caps, for the summary
}

// NewLog returns a Log writing to w.
func NewLog(w io.Writer, getenv func(string) string) *Log {
	return &Log{a: githubactions.New(githubactions.WithWriter(w), githubactions.WithGetenv(getenv)), perKind: map[string]int{}}
}

// Mask hides a secret in the rest of the log. Call it before printing
// anything else.
func (l *Log) Mask(secret string) {
	for _, line := range strings.Split(secret, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			l.a.AddMask(line)
		}
	}
}

// Group starts a collapsible group; the returned func ends it.
func (l *Log) Group(title string) func() {
	l.a.Group(title)
	return l.a.EndGroup
}

// Infof prints a plain log line. The line is put on one line with control
// characters dropped, so that data in it cannot start a workflow command.
func (l *Log) Infof(format string, args ...any) {
	l.a.Infof("%s\n", noCommand(render.Plain(fmt.Sprintf(format, args...))))
}

// noCommand keeps a log line from being a workflow command: one that
// starts with "::" gets a backslash, and the runner's older form, "##["
// anywhere in a line, a zero-width space after the "##" (as the CLI's
// output guard writes it: no "##[" is left, and a search that skipped the
// space would read the command's name from the "[", which names none).
func noCommand(s string) string {
	s = strings.ReplaceAll(s, "##[", "##\u200b[")
	if strings.HasPrefix(strings.TrimLeft(s, " \t"), "::") {
		return "\\" + s
	}
	return s
}

// Annotate prints an annotation. Once GitHub's per-step caps are reached
// (over them the runner drops annotations), it prints the message as a
// plain log line instead and keeps it in Overflow, for the summary.
func (l *Log) Annotate(an Annotation) {
	if l.perKind[an.Level] >= ghapi.MaxStepAnnotationsPerKind || l.total >= ghapi.MaxJobAnnotations {
		l.Overflow = append(l.Overflow, an)
		where := ""
		if an.File != "" {
			where = an.File + ": "
			if an.Line > 0 {
				where = fmt.Sprintf("%s:%d: ", an.File, an.Line)
			}
		}
		for i, line := range strings.Split(an.Message, "\n") {
			if i == 0 {
				line = an.Level + ": " + where + line
			}
			l.Infof("%s", line)
		}
		return
	}
	l.perKind[an.Level]++
	l.total++
	// Titles and files on one line, messages with their lines, and none of
	// them with terminal controls or bidirectional overrides: they carry
	// test names and paths, which are untrusted.
	an.Title, an.File, an.Message = render.Plain(an.Title), render.Plain(an.File), render.PlainLines(an.Message)
	fields := map[string]string{}
	if an.Title != "" {
		fields["title"] = an.Title
	}
	if an.File != "" {
		fields["file"] = an.File
		if an.Line > 0 {
			fields["line"] = fmt.Sprint(an.Line)
		}
	}
	a := l.a
	if len(fields) > 0 {
		a = a.WithFieldsMap(fields)
	}
	msg := cut(an.Message, ghapi.MaxAnnotationMessageChars)
	switch an.Level {
	case "error":
		a.Errorf("%s", msg)
	case "warning":
		a.Warningf("%s", msg)
	default:
		a.Noticef("%s", msg)
	}
}

// Warningf and Noticef annotate without a file.
func (l *Log) Warningf(format string, args ...any) {
	l.Annotate(Annotation{Level: "warning", Message: fmt.Sprintf(format, args...)})
}

func (l *Log) Noticef(format string, args ...any) {
	l.Annotate(Annotation{Level: "notice", Message: fmt.Sprintf(format, args...)})
}

func (l *Log) Errorf(format string, args ...any) {
	l.Annotate(Annotation{Level: "error", Message: fmt.Sprintf(format, args...)})
}

// cut shortens s to n runes.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// WriteOutputs appends step outputs to the GITHUB_OUTPUT file. Each value
// gets a random delimiter that it does not contain: go-githubactions uses
// one fixed delimiter, which a value holding it would break.
func WriteOutputs(path string, outputs [][2]string) error {
	if path == "" {
		return errors.New("GITHUB_OUTPUT is not set")
	}
	var b strings.Builder
	for _, kv := range outputs {
		delim, err := delimiter(kv[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", kv[0], delim, kv[1], delim)
	}
	return appendFile(path, b.String())
}

func delimiter(value string) (string, error) {
	for range 10 {
		var buf [12]byte
		if _, err := rand.Read(buf[:]); err != nil {
			return "", err
		}
		d := "ghadelimiter_" + hex.EncodeToString(buf[:])
		if !strings.Contains(value, d) {
			return d, nil
		}
	}
	return "", errors.New("no output delimiter found that the value does not contain")
}

// AppendSummary appends Markdown to the GITHUB_STEP_SUMMARY file, keeping
// the step's summary under GitHub's 1 MiB. It returns what it wrote: a
// summary that would not fit is cut at a line boundary with a note.
func AppendSummary(path, markdown string) (string, error) {
	if path == "" {
		return "", errors.New("GITHUB_STEP_SUMMARY is not set")
	}
	used := 0
	if fi, err := os.Stat(path); err == nil {
		used = int(fi.Size())
	}
	const note = "\n\n> flakegate: the summary was cut here to stay under GitHub's 1 MiB limit; the full report is in the report artifact.\n"
	room := MaxSummaryBytes - used
	if len(markdown) > room {
		keep := room - len(note)
		if keep < 0 {
			return "", fmt.Errorf("job summary is already %d bytes: no room under GitHub's 1 MiB limit", used)
		}
		cutAt := strings.LastIndexByte(markdown[:keep], '\n')
		if cutAt < 0 {
			cutAt = 0
		}
		markdown = markdown[:cutAt] + note
	}
	if err := appendFile(path, markdown); err != nil {
		return "", err
	}
	return markdown, nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
