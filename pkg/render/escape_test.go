package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdef", 5, "abcd…"},
		{"one", "abcdef", 1, "…"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -1, ""},
		{"multibyte kept whole", "ééééé", 5, "ééééé"},
		{"multibyte cut", "日本語のテスト", 4, "日本語…"},
		{"emoji", "😀😀😀😀", 3, "😀😀…"},
		{"bytes over n, runes not", "éé", 3, "éé"},
		{"invalid utf-8", "ab\xffcdef", 4, "ab\xff…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.s, tc.n)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Truncate(%q, %d) (-want +got):\n%s", tc.s, tc.n, diff)
			}
			if tc.n > 0 && utf8.RuneCountInString(got) > tc.n {
				t.Errorf("Truncate(%q, %d) = %q: more than %d runes", tc.s, tc.n, got, tc.n)
			}
		})
	}
}

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "tests.api::test_ok", `tests.api::test\_ok`},
		{"pipe", "a|b", `a\|b`},
		{"backslash before pipe stays one cell", `a\|b`, `a\\\|b`},
		{"html", `<img src=x onerror=alert(1)>`, `&lt;img src=x onerror=alert(1)&gt;`},
		{"comment", "<!-- hidden -->", "&lt;!-- hidden --&gt;"},
		{"entity", "&lt;b&gt;", "&amp;lt;b&amp;gt;"},
		{"mention", "@everyone and @org/team", "@\u200beveryone and @\u200borg/team"},
		{"email-like stays readable", "a@b", "a@\u200bb"},
		{"lone at", "x @ y", "x @ y"},
		{"issue ref", "fixes #123", `fixes \#` + "\u200b123"},
		{"GH- issue ref", "see GH-123 and gh-7", "see GH-\u200b123 and gh-\u200b7"},
		{"not a ref", "x-1 H-", "x-1 H-"},
		{"heading hash", "# title", `\# title`},
		{"link", "[link](javascript:alert(1))", `\[link\](javascript:alert(1))`},
		{"autolink", "see https://evil.example", "see https:\u200b//evil.example"},
		{"www", "www.evil.example", "w\u200bww.evil.example"},
		{"code", "`code`", "\\`code\\`"},
		{"emphasis", "*a* _b_ ~c~", `\*a\* \_b\_ \~c\~`},
		{"math", "$x$", `\$x\$`},
		{"newlines", "a\nb\r\nc\td", "a b c d"},
		{"leading list marker", "- item", `\- item`},
		{"leading ordered list", "1. item", `1\. item`},
		{"leading plus", "+1", `\+1`},
		{"controls and bidi dropped", "a\x1b[31mb\u202ec\u200bd", `a\[31mbcd`},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"unicode kept", "テスト ✓", "テスト ✓"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, EscapeMarkdown(tc.in)); diff != "" {
				t.Errorf("EscapeMarkdown(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestEscapeMarkdownCells: whatever the input, an escaped cell adds no
// column to a table row and leaves no raw HTML or mention.
func TestEscapeMarkdownCells(t *testing.T) {
	inputs := []string{hostileName, hostileMsg, `\`, `\\|`, `|||`, "`|`", "a\n| b | c |\nd", "x\\", "@", "<", "\\\\\\|"}
	for _, in := range inputs {
		cell := EscapeMarkdown(in)
		row := "| " + cell + " | 2 |"
		if got := countCells(row); got != 2 {
			t.Errorf("EscapeMarkdown(%q) = %q splits the row into %d cells", in, cell, got)
		}
		if strings.ContainsAny(cell, "<>\n") || hasMention(cell) {
			t.Errorf("EscapeMarkdown(%q) = %q keeps HTML, a line break or a mention", in, cell)
		}
	}
}

// countCells counts a GFM table row's cells as GitHub's parser splits them:
// a backslash escapes the next character, an unescaped | separates cells.
func countCells(row string) int {
	row = strings.TrimSpace(row)
	pipes := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			pipes++
		}
	}
	// A row with leading and trailing pipes has one cell fewer than pipes.
	return pipes - 1
}

// hasMention reports whether s holds an @ directly followed by a word
// character, which GitHub would turn into a mention.
func hasMention(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '@' {
			c := s[i+1]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
				return true
			}
		}
	}
	return false
}

func TestEscapeHTML(t *testing.T) {
	got := escapeHTML("</pre><b>@everyone</b>\r\n\"q\" & 'a'\x00", true)
	want := "&lt;/pre&gt;&lt;b&gt;@\u200beveryone&lt;/b&gt;\n&#34;q&#34; &amp; &#39;a&#39;"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("escapeHTML (-want +got):\n%s", diff)
	}
	got = escapeHTML("a\n\"b\" [x](javascript:y) `c` | #12 https://e.example www.e.example '@o'", false)
	want = "a &#34;b&#34; &#91;x&#93;(javascript:y) &#96;c&#96; &#124; #\u200b12 https:\u200b//e.example w\u200bww.e.example &#39;@\u200bo&#39;"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("escapeHTML one line (-want +got):\n%s", diff)
	}
}

func TestCutToBytes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc\ndef\n", 100, "abc\ndef\n"},
		{"abc\ndef\n", 6, "abc\n"},
		{"ééé", 5, "éé"},
		{"ééé", 3, "é"},
		{"日本", 2, ""},
	}
	for _, tc := range tests {
		got := cutToBytes(tc.s, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("cutToBytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 19644: "19,644", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCodeSafe(t *testing.T) {
	got := codeSafe("tests/\u202eyp.tset`x\n\x1b[1m.py")
	if strings.ContainsAny(got, "\u202e`\n\x1b") {
		t.Errorf("codeSafe kept a control, bidi override or backtick: %q", got)
	}
}
