package gate

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// FileChange is one file of a PR diff, in the shape of GitHub's "list pull
// request files" API, which the action passes; ParseUnifiedDiff builds the
// same from the diff text the CLI gets.
type FileChange struct {
	Path         string `json:"filename"`
	PreviousPath string `json:"previous_filename,omitempty"` // renames and copies
	// Status is GitHub's: added, removed, modified, renamed, copied, changed
	// or unchanged.
	Status string `json:"status"`
	// Patch holds the unified-diff hunks, from the first "@@" line on. It is
	// empty for binary files, pure renames, and files GitHub did not diff.
	Patch string `json:"patch,omitempty"`
	// Changes counts the lines added and deleted, when the files API gave
	// it: with it and no Patch, GitHub left the diff out (too large).
	Changes int `json:"changes,omitempty"`
}

// diffLine is one line of a hunk, numbered in the file version it belongs to.
type diffLine struct {
	No   int
	Text string
}

var hunkRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`) })

// ParseUnifiedDiff splits a unified diff (git diff, git format-patch or
// diff -u output) into file changes. Text outside file sections, such as a
// patch e-mail's header, is ignored. A malformed hunk header, or a hunk cut
// short, is an error naming the line: a partial diff must not pass as a
// complete one.
func ParseUnifiedDiff(text string) ([]FileChange, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var out []FileChange
	var cur *FileChange
	var patch []string
	oldLeft, newLeft := 0, 0 // lines still expected in the current hunk
	hunkStart := 0
	flush := func() {
		if cur == nil {
			return
		}
		cur.Patch = strings.Join(patch, "\n")
		if cur.Status == "" {
			cur.Status = "modified"
		}
		if cur.PreviousPath == cur.Path {
			cur.PreviousPath = ""
		}
		out = append(out, *cur)
		cur, patch = nil, nil
	}
	for i, l := range lines {
		no := i + 1
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(l, "\\"): // "\ No newline at end of file"
			case l == "" || l[0] == ' ':
				oldLeft--
				newLeft--
			case l[0] == '-':
				oldLeft--
			case l[0] == '+':
				newLeft--
			default:
				return nil, fmt.Errorf("diff line %d: hunk from line %d ends early: %q", no, hunkStart, l)
			}
			if oldLeft < 0 || newLeft < 0 {
				return nil, fmt.Errorf("diff line %d: hunk from line %d is longer than its header says", no, hunkStart)
			}
			patch = append(patch, l)
			continue
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			cur = &FileChange{}
			cur.PreviousPath, cur.Path = gitHeaderPaths(strings.TrimPrefix(l, "diff --git "))
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if cur == nil || len(patch) > 0 {
				flush()
				cur = &FileChange{}
			}
			if p, ok := diffPath(strings.TrimPrefix(l, "--- ")); ok {
				cur.PreviousPath = p
			} else {
				cur.Status = "added"
			}
		case strings.HasPrefix(l, "+++ ") && cur != nil:
			if p, ok := diffPath(strings.TrimPrefix(l, "+++ ")); ok {
				cur.Path = p
			} else {
				cur.Status = "removed"
				cur.Path = cur.PreviousPath
			}
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				return nil, fmt.Errorf("diff line %d: hunk outside a file", no)
			}
			m := hunkRE().FindStringSubmatch(l)
			if m == nil {
				return nil, fmt.Errorf("diff line %d: malformed hunk header %q: want @@ -a,b +c,d @@", no, l)
			}
			oldLeft, newLeft = count(m[2]), count(m[4])
			oldStart, err1 := strconv.Atoi(m[1])
			newStart, err2 := strconv.Atoi(m[3])
			if err1 != nil || err2 != nil || (oldStart == 0 && oldLeft > 0) || (newStart == 0 && newLeft > 0) {
				return nil, fmt.Errorf("diff line %d: malformed hunk header %q: line numbers start at 1 (0 only for an empty side)", no, l)
			}
			hunkStart = no
			patch = append(patch, l)
		case cur == nil:
			// preamble: commit message, e-mail headers
		case strings.HasPrefix(l, "\\") && len(patch) > 0:
			patch = append(patch, l) // "\ No newline at end of file" after a hunk's last line
		case strings.HasPrefix(l, "new file mode"):
			cur.Status = "added"
		case strings.HasPrefix(l, "deleted file mode"):
			cur.Status = "removed"
		case strings.HasPrefix(l, "rename from "):
			cur.PreviousPath, cur.Status = unquote(strings.TrimPrefix(l, "rename from ")), "renamed"
		case strings.HasPrefix(l, "rename to "):
			cur.Path, cur.Status = unquote(strings.TrimPrefix(l, "rename to ")), "renamed"
		case strings.HasPrefix(l, "copy from "):
			cur.PreviousPath, cur.Status = unquote(strings.TrimPrefix(l, "copy from ")), "copied"
		case strings.HasPrefix(l, "copy to "):
			cur.Path, cur.Status = unquote(strings.TrimPrefix(l, "copy to ")), "copied"
		}
	}
	if oldLeft > 0 || newLeft > 0 {
		return nil, fmt.Errorf("diff: hunk from line %d is cut short at the end of the input", hunkStart)
	}
	flush()
	if len(out) == 0 && strings.TrimSpace(text) != "" {
		// Text that is no diff (a README, a JUnit file given by mistake)
		// must not pass for a diff that changes nothing.
		return nil, errors.New("diff: no file in it: want unified diff output, as git diff writes it, with a 'diff --git' or '---' and '+++' header per file")
	}
	for i := range out {
		if out[i].Path == "" {
			return nil, fmt.Errorf("diff: file %d has a header with no path", i+1)
		}
		if out[i].Status == "added" || out[i].Status == "removed" {
			out[i].PreviousPath = ""
		}
	}
	return out, nil
}

func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// diffPath reads the path of a ---/+++ line: quoted or not, without the a/ or
// b/ prefix and without diff -u's trailing tab and timestamp. ok is false for
// /dev/null.
func diffPath(s string) (string, bool) {
	if i := strings.IndexByte(s, '\t'); i >= 0 && !strings.HasPrefix(s, `"`) {
		s = s[:i]
	}
	s = unquote(strings.TrimSpace(s))
	if s == "/dev/null" {
		return "", false
	}
	return stripPrefix(s), true
}

func stripPrefix(s string) string {
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// gitHeaderPaths reads "a/x b/y" from a diff --git line; the ---/+++ and
// rename lines that follow override it when present.
func gitHeaderPaths(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		if end := strings.Index(s[1:], `" `); end >= 0 {
			return stripPrefix(unquote(s[:end+2])), stripPrefix(unquote(strings.TrimSpace(s[end+3:])))
		}
	}
	// Unquoted: a/P b/P with the same P on both sides unless renamed; or,
	// with --no-prefix, P P.
	if half := (len(s) - 1) / 2; len(s)%2 == 1 && s[half] == ' ' {
		if half >= 2 && s[2:half] == s[half+3:] && strings.HasPrefix(s, "a/") && strings.HasPrefix(s[half+1:], "b/") {
			return s[2:half], s[half+3:]
		}
		if s[:half] == s[half+1:] {
			return s[:half], s[half+1:]
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return stripPrefix(s[:i]), s[i+3:]
	}
	return s, s
}

// hunkLines returns the added lines (numbered in the new file) and the
// removed lines (numbered in the old file) of a patch.
func hunkLines(patch string) (added, removed []diffLine) {
	oldNo, newNo := 0, 0
	for _, l := range strings.Split(patch, "\n") {
		if m := hunkRE().FindStringSubmatch(l); m != nil {
			oldNo, _ = strconv.Atoi(m[1])
			newNo, _ = strconv.Atoi(m[3])
			continue
		}
		switch {
		case strings.HasPrefix(l, "+"):
			added = append(added, diffLine{No: newNo, Text: l[1:]})
			newNo++
		case strings.HasPrefix(l, "-"):
			removed = append(removed, diffLine{No: oldNo, Text: l[1:]})
			oldNo++
		case strings.HasPrefix(l, "\\"):
		default:
			oldNo++
			newNo++
		}
	}
	return added, removed
}
