package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

func TestGuard(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "plain\n", "plain\n"},
		{"command", "x\n::error::INJECTED\n", "x\n\\::error::INJECTED\n"},
		{"indented command", "  ::set-output name=verdict::pass\n", "\\  ::set-output name=verdict::pass\n"},
		{"tab", "\t::warning::w\n", "\\\t::warning::w\n"},
		{"one colon", ": not a command\n", ": not a command\n"},
		{"mid-line", "a::b\n", "a::b\n"},
		{"ESC and RLO", "\x1b[31mred\x1b[0m \u202eevil\n", "[31mred[0m evil\n"},
		{"CR", "cr\r::error::x\n", "cr::error::x\n"},
		// The runner's String.TrimStart removes any Unicode white space.
		{"NBSP", "\u00a0::error::x\n", "\\\u00a0::error::x\n"},
		{"em and ideographic space", " \u2003\u3000::error::x\n", "\\ \u2003\u3000::error::x\n"},
		{"line separator", "\u2028::error::x\n", "\\\u2028::error::x\n"},
		{"NBSP one colon", "\u00a0: x\n", "\u00a0: x\n"},
		{"blank between colons", ": :x\n", ": :x\n"},
		// Zero-width spaces, which stay, are looked through.
		{"ZWSP kept", "@\u200boctocat http:\u200b//evil.example\n", "@\u200boctocat http:\u200b//evil.example\n"},
		{"ZWSP then command", "\u200b::error::x\n", "\\\u200b::error::x\n"},
		{"ZWSP among blanks", " \u200b\u00a0\u200b::error::x\n", "\\ \u200b\u00a0\u200b::error::x\n"},
		{"ZWSP between colons", ":\u200b:error::x\n", "\\:\u200b:error::x\n"},
		{"ZWSP alone", "\u200b\n\u200b", "\u200b\n\u200b"},
		{"dropped rune then command", "\u202e::error::x\n", "\\::error::x\n"},
		{"every bidi control", "a\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061cb\n", "ab\n"},
		{"other formatting characters", "a\u2060\ufeff\u00ad\u200c\u200d\U000e0041b\n", "ab\n"},
		{"C1 CSI", "a\u009b31mb\n", "a31mb\n"},
		// The old form, "##[name]data", counts anywhere in a line.
		{"legacy", "a ##[error]x\n", "a ##\u200b[error]x\n"},
		{"legacy at start", "##[group]g\n", "##\u200b[group]g\n"},
		{"legacy three hashes", "###[x\n", "###\u200b[x\n"},
		{"legacy twice", "##[a] ##[b]\n", "##\u200b[a] ##\u200b[b]\n"},
		{"legacy through a dropped rune", "#\x1b#\r[x\n", "##\u200b[x\n"},
		{"legacy through ZWSP", "#\u200b#[x\n", "#\u200b#\u200b[x\n"},
		{"legacy after NBSP", "\u00a0##[x\n", "\u00a0##\u200b[x\n"},
		{"one hash", "#[x # [x ## [x\n", "#[x # [x ## [x\n"},
		{"hashes on another line", "##\n[x\n", "##\n[x\n"},
		{"hashes and a tab", "##\t[x\n", "##\t[x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			g := newGuard(&b)
			// Byte by byte: a command split over writes is still caught.
			for i := 0; i < len(tc.in); i++ {
				g.Write([]byte{tc.in[i]})
			}
			g.flush()
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("guard(%q) byte by byte (-want +got):\n%s", tc.in, diff)
			}
			b.Reset()
			g = newGuard(&b)
			g.Write([]byte(tc.in))
			g.flush()
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("guard(%q) in one write (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestHostileNameCLI feeds a test name that tries to print workflow
// commands through gate, and checks that no line of the output starts one.
func TestHostileNameCLI(t *testing.T) {
	dir := t.TempDir()
	hostile := "x&#10;::error::INJECTED&#10;::set-output name=verdict::pass&#10;&#27;[31m&#10;&#xa0;::error::NBSP&#10;a ##[error]LEGACY&#10;&#x200b;::error::ZWSP"
	write := func(side string, n int, fail bool) {
		os.MkdirAll(filepath.Join(dir, side), 0o755)
		for i := range n {
			body := `<testcase classname="t" name="` + hostile + `"/>`
			if fail {
				body = `<testcase classname="t" name="` + hostile + `"><failure message="` + hostile + `">` + hostile + `</failure></testcase>`
			}
			os.WriteFile(filepath.Join(dir, side, side+string(rune('a'+i))+".xml"), []byte(`<testsuite name="`+hostile+`">`+body+`</testsuite>`), 0o644)
		}
	}
	write("base", 5, false)
	write("head", 5, true)
	os.WriteFile(filepath.Join(dir, "head", "broken.xml"), []byte("<testsuite name=\"x\n::error::INJECTED\">"), 0o644)
	r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"))
	out := r.stdout + r.stderr
	if !strings.Contains(out, "INJECTED") {
		t.Fatalf("the hostile name is not in the output at all:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if runnerCommand(line, false) || runnerCommand(line, true) || strings.ContainsRune(line, '\x1b') {
			t.Errorf("output line is a workflow command or holds ESC: %q", line)
		}
	}
	for _, format := range []string{"text", "json", "csv", "md"} {
		r = run(t, fixedClock, "analyze", "--format", format, "--min-commits", "1", "--commit-sha", "c0ffee", filepath.Join(dir, "head"))
		out := r.stdout + r.stderr
		if (format == "json" || format == "csv") && !strings.Contains(out, "LEGACY") {
			t.Errorf("analyze --format %s: the hostile name is not in the output at all:\n%s", format, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if runnerCommand(line, false) || runnerCommand(line, true) {
				t.Errorf("analyze --format %s: output line is a workflow command: %q", format, line)
			}
		}
	}
}

// TestGuardWholeLines: the guard writes whole clean lines as they are and
// filters the other lines byte by byte, and a character cut between writes waits
// for its rest; for any text and any cut into writes the output is what
// filtering the text in one write gives.
func TestGuardWholeLines(t *testing.T) {
	pieces := []string{"a", " ", "\t", ":", "::", "\n", "x y", "\x1b", "\u202e", "é", "\r", "\xff", "  ::e::", "{\"k\": 1}", "\u200b", "\u00a0", "#", "##", "[", "##[e]"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var in []byte
		for range rng.IntN(20) {
			in = append(in, pieces[rng.IntN(len(pieces))]...)
		}
		checkPieces(t, in, rng)
	}
}

// countWrites counts the writes it is given.
type countWrites struct {
	bytes.Buffer
	n int
}

func (c *countWrites) Write(p []byte) (int, error) {
	c.n++
	return c.Buffer.Write(p)
}

// TestGuardWritesOnce: a write whose lines are all other text (names in
// another script, a control character) reaches the writer as one write,
// not one a line, and lines that pass unchanged around it are kept.
func TestGuardWritesOnce(t *testing.T) {
	var in, want strings.Builder
	for i := range 1000 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, "  \"name\": \"tëst %d\",\n", i)
			fmt.Fprintf(&want, "  \"name\": \"tëst %d\",\n", i)
		case 1:
			fmt.Fprintf(&in, "  \"message\": \"\x1b[31mred %d\",\n", i)
			fmt.Fprintf(&want, "  \"message\": \"[31mred %d\",\n", i)
		default:
			fmt.Fprintf(&in, "  \"plain\": %d,\n", i)
			fmt.Fprintf(&want, "  \"plain\": %d,\n", i)
		}
	}
	var out countWrites
	g := newGuard(&out)
	if n, err := g.Write([]byte(in.String())); n != in.Len() || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, in.Len())
	}
	if out.n != 1 {
		t.Errorf("%d writes reached the writer, want 1", out.n)
	}
	if out.String() != want.String() {
		t.Errorf("guard wrote\n%.300s…\nwant\n%.300s…", out.String(), want.String())
	}
}

// cleanLinesSlow is cleanLines's rule a byte at a time.
func cleanLinesSlow(p []byte, midLine bool) int {
	n := 0
	for i := 0; ; midLine = false {
		j := i
		if !midLine {
			for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
				j++
			}
			if j < len(p) && p[j] == ':' {
				return n
			}
		}
		for j < len(p) && (p[j] >= 0x20 && p[j] < 0x7f || p[j] == '\t') {
			j++
		}
		if j == len(p) || p[j] != '\n' {
			return n
		}
		i = j + 1
		n = i
	}
}

// TestCleanLinesAgreesWithByteLoop compares cleanLines, which reads eight
// bytes at a time, with the same rule a byte at a time, on random texts
// made mostly of the bytes at the edges of the rule.
func TestCleanLinesAgreesWithByteLoop(t *testing.T) {
	edges := []byte{0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x21, ':', 'a', '~', 0x7e, 0x7f, 0x80, 0x9b, 0xc2, 0xff}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		p := make([]byte, rng.IntN(80))
		for i := range p {
			switch rng.IntN(10) {
			case 0:
				p[i] = edges[rng.IntN(len(edges))]
			case 1:
				p[i] = '\n'
			case 2, 3:
				p[i] = ' '
			default:
				p[i] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		for _, mid := range []bool{false, true} {
			if got, want := cleanLines(p, mid), cleanLinesSlow(p, mid); got != want {
				t.Fatalf("cleanLines(%q, %v) = %d, want %d", p, mid, got, want)
			}
		}
	}
	for b := range 256 {
		w := uint64(b) * ones8
		if got, want := printable8(w), b >= 0x20 && b <= 0x7e; got != want {
			t.Errorf("printable8 of eight %#x = %v", b, got)
		}
		for k := range 8 { // one byte b among printable ones
			w := uint64('a')*ones8&^(0xff<<(8*k)) | uint64(b)<<(8*k)
			if got, want := printable8(w), b >= 0x20 && b <= 0x7e; got != want {
				t.Errorf("printable8 with %#x at byte %d = %v", b, k, got)
			}
		}
	}
}

// FuzzCleanLines holds cleanLines to the rule read a byte at a time.
//
//	go test -run '^$' -fuzz FuzzCleanLines -fuzztime 1m ./pkg/cli
func FuzzCleanLines(f *testing.F) {
	for _, s := range []string{"", "a\n", "  :x\n", "ab\ncd\n\t::\n", "{\n  \"k\": 1\n}\n", "x\x7f\n", "é\n", "        \t:\n", "\n\n\x1b[1m\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, p []byte, mid bool) {
		if got, want := cleanLines(p, mid), cleanLinesSlow(p, mid); got != want {
			t.Fatalf("cleanLines(%q, %v) = %d, want %d", p, mid, got, want)
		}
	})
}

// BenchmarkGuard passes the benchmark history's JSON report (1.9 MB)
// through the guard in the JSON writer's pieces of 256 KB: as it is, and
// with one test name of other text (non-ASCII) near its start, which only
// that line's filtering should cost.
//
//	go test -run '^$' -bench Guard -count 6 ./pkg/cli
func BenchmarkGuard(b *testing.B) {
	paths, _ := benchFiles(b)
	var report bytes.Buffer
	args := append([]string{"analyze", "--format", "json"}, paths...)
	if code := Main(context.Background(), Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &report, Stderr: io.Discard}); code != 0 {
		b.Fatalf("analyze: exit %d", code)
	}
	plain := report.Bytes()
	i := bytes.Index(plain, []byte(`"name": "`))
	other := slices.Concat(plain[:i], []byte(`"name": "Ünïcödé ✓", "was": "`), plain[i:])
	for _, c := range []struct {
		name string
		doc  []byte
	}{{"ascii", plain}, {"one-other-line", other}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			for b.Loop() {
				g := newGuard(io.Discard)
				for p := c.doc; len(p) > 0; {
					k := min(len(p), 256<<10)
					if _, err := g.Write(p[:k]); err != nil {
						b.Fatal(err)
					}
					p = p[k:]
				}
			}
		})
	}
}

// FuzzGuard: any text, written in any pieces, comes out as the byte-by-byte
// filter writes it whole, and holds no workflow command.
//
//	go test -run '^$' -fuzz FuzzGuard -fuzztime 1m ./pkg/cli
func FuzzGuard(f *testing.F) {
	for _, s := range []string{"plain\n", "x\n::error::a\n", "  \t::x\n", "tëst\nok\n\x1b[1m\n  :\n", "é", "\xe2\x80\xae\n::\n", "a\r\n\xc2\x9b\n", "\u200b:\u200b:x\n\u00a0::y\n", "a ##[error]x\n#\n#[\n"} {
		f.Add([]byte(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		checkPieces(t, in, rand.New(rand.NewPCG(seed, 0)))
		var out bytes.Buffer
		g := newGuard(&out)
		g.Write(in)
		g.flush()
		for line := range strings.SplitSeq(out.String(), "\n") {
			if runnerCommand(line, false) || runnerCommand(line, true) {
				t.Fatalf("guard(%q) wrote %q, a workflow command", in, line)
			}
		}
	})
}

// checkPieces writes in to a guard in pieces cut at random and compares the
// output with the byte-by-byte filter's of the whole.
func checkPieces(t *testing.T, in []byte, rng *rand.Rand) {
	t.Helper()
	var want bytes.Buffer
	ref := newGuard(&want)
	ref.filter(in)
	ref.flush()
	var got bytes.Buffer
	g := newGuard(&got)
	for rest := in; len(rest) > 0; {
		k := 1 + rng.IntN(len(rest))
		if n, err := g.Write(rest[:k]); n != k || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		rest = rest[k:]
	}
	g.flush()
	if got.String() != want.String() {
		t.Fatalf("guard(%q) in pieces = %q, filtered whole %q", in, got.String(), want.String())
	}
}

// registeredCommands are the workflow commands the runner knows
// (actions/runner, src/Runner.Worker/ActionCommandManager.cs and the
// command extensions it registers).
var registeredCommands = []string{"set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher", "remove-matcher", "debug", "warning", "error", "notice", "group", "endgroup", "echo", "stop-commands", "internal-set-repo-path"}

// runnerCommand reports whether the runner would take line as a workflow
// command: ActionCommand.TryParseV2 ("::name::data" after TrimStart) or
// TryParse ("##[name]data" anywhere), in UTF-16 as .NET reads it. With
// ignoreZWSP the runner's StartsWith and IndexOf are taken to skip U+200B,
// as a culture-aware comparison may, and a match is taken wherever one
// starts, not only the first.
func runnerCommand(line string, ignoreZWSP bool) bool {
	registered := func(info []uint16) bool {
		name := string(utf16.Decode(info))
		name, _, _ = strings.Cut(name, " ")
		return slices.Contains(registeredCommands, name)
	}
	// matchAt reports whether pat is in u at i, U+200B skipped if asked.
	matchAt := func(u []uint16, i int, pat string) bool {
		for k := 0; k < len(pat); i++ {
			switch {
			case i >= len(u):
				return false
			case u[i] == uint16(pat[k]):
				k++
			case ignoreZWSP && u[i] == zwsp && k > 0:
			default:
				return false
			}
		}
		return true
	}
	starts := func(u []uint16, pat string, from int) []int {
		var at []int
		for i := from; i < len(u); i++ {
			if matchAt(u, i, pat) {
				at = append(at, i)
				if !ignoreZWSP {
					break
				}
			}
		}
		return at
	}

	// TryParseV2.
	v2 := utf16.Encode([]rune(strings.TrimLeftFunc(line, unicode.IsSpace)))
	lead := 0
	for ignoreZWSP && lead < len(v2) && v2[lead] == zwsp {
		lead++
	}
	if matchAt(v2, lead, "::") {
		for _, end := range starts(v2, "::", 2) {
			if registered(v2[2:end]) {
				return true
			}
		}
	}
	// TryParse.
	u := utf16.Encode([]rune(line))
	for _, at := range starts(u, "##[", 0) {
		rb := slices.Index(u[at:], ']')
		if rb >= 0 && at+3 <= at+rb && registered(u[at+3:at+rb]) {
			return true
		}
	}
	return false
}

// TestRunnerCommandModel: the model of the runner's parse finds the
// commands a hostile name would try.
func TestRunnerCommandModel(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"::error::x", true},
		{"  \u00a0\u2003::set-output name=v::pass", true},
		{"::error file=a.go,line=1::x", true},
		{"a ##[error]x", true},
		{"##[stop-commands]token", true},
		{"##[error file=a]x", true},
		{"::nope::x", false},
		{"a::error::x", false},
		{"\\::error::x", false},
		{"## [error]x", false},
		{"##\u200b[error]x", false},
		{"\u200b::error::x", false},
		{":\u200b:error::x", false},
	} {
		for _, ignore := range []bool{false, true} {
			if got := runnerCommand(tc.line, ignore); got != tc.want {
				t.Errorf("runnerCommand(%q, ignoreZWSP=%v) = %v, want %v", tc.line, ignore, got, tc.want)
			}
		}
	}
}

// TestGuardLeavesNoCommand: whatever text goes in, no line that comes out
// is a workflow command to the runner, whether its comparisons skip
// zero-width spaces or not.
func TestGuardLeavesNoCommand(t *testing.T) {
	pieces := []string{"::", ":", "error", "set-output name=v", " ", "\t", "\u00a0", "\u2003", "\u200b", "\u202e", "\x1b", "\r", "\n", "#", "##", "[", "]", "x", "stop-commands"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var in strings.Builder
		for range 1 + rng.IntN(12) {
			in.WriteString(pieces[rng.IntN(len(pieces))])
		}
		var out bytes.Buffer
		g := newGuard(&out)
		g.Write([]byte(in.String()))
		g.flush()
		for line := range strings.SplitSeq(out.String(), "\n") {
			for _, ignore := range []bool{false, true} {
				if runnerCommand(line, ignore) {
					t.Fatalf("guard(%q) wrote %q, a workflow command (ignoreZWSP=%v)", in.String(), line, ignore)
				}
			}
		}
	}
}

// TestMarkdownStdoutIsTheReport: `analyze --format md` on stdout is
// report.md byte for byte, so the zero-width spaces that keep @mentions
// and autolinks from working stay in both. JSON and CSV on stdout are their
// files but for the bidirectional override, which only the guard drops.
func TestMarkdownStdoutIsTheReport(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	name := "test @octocat please look @github/security-team [link](http://evil.example) &#x202e;evil www.example.com #12"
	message := "boom @octocat see http://evil.example&#10;@github/security-team"
	for i := range 4 {
		body := ""
		if i%2 == 1 {
			body = `<failure message="` + message + `">trace</failure>`
		}
		doc := fmt.Sprintf(`<testsuite name="s"><properties><property name="commit_sha" value="c0ffee000000000000000000000000000000000%d"/><property name="run_id" value="%d"/></properties><testcase classname="t" name="%s">%s</testcase></testsuite>`, i/2, 100+i, name, body)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%d.xml", i)), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct{ format, file string }{{"md", "report.md"}, {"json", "report.json"}, {"csv", "report.csv"}} {
		t.Run(tc.format, func(t *testing.T) {
			r := run(t, fixedClock, "analyze", "--min-commits", "1", "--format", tc.format, "--out", out, dir)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			file := read(tc.file)
			if !strings.Contains(file, "octocat please look") {
				t.Fatalf("%s does not name the test:\n%s", tc.file, file)
			}
			want := file
			if tc.format == "md" {
				for _, s := range []string{"@\u200boctocat", "@\u200bgithub/security-team", "http:\u200b//evil.example", "w\u200bww.example.com", "\\#\u200b12"} {
					if !strings.Contains(r.stdout, s) {
						t.Errorf("stdout lacks %q", s)
					}
				}
			} else if tc.format == "csv" {
				// CSV has no escapes: the guard drops the bidi control on
				// a terminal. JSON writes it as \u202e, in the file too.
				want = strings.ReplaceAll(file, "\u202e", "")
			}
			if diff := cmp.Diff(want, r.stdout); diff != "" {
				t.Errorf("--format %s on stdout is not %s (-want +got):\n%s", tc.format, tc.file, diff)
			}
		})
	}
}
