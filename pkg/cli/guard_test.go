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
)

func TestGuard(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"x\n::error::INJECTED\n", "x\n\\::error::INJECTED\n"},
		{"  ::set-output name=verdict::pass\n", "\\  ::set-output name=verdict::pass\n"},
		{"\t::warning::w\n", "\\\t::warning::w\n"},
		{": not a command\n", ": not a command\n"},
		{"a::b\n", "a::b\n"},
		{"\x1b[31mred\x1b[0m \u202eevil\n", "[31mred[0m evil\n"},
		{"cr\r::error::x\n", "cr::error::x\n"},
	} {
		var b bytes.Buffer
		g := newGuard(&b)
		// Byte by byte: a command split over writes is still caught.
		for i := 0; i < len(tc.in); i++ {
			g.Write([]byte{tc.in[i]})
		}
		g.flush()
		if b.String() != tc.want {
			t.Errorf("guard(%q) = %q, want %q", tc.in, b.String(), tc.want)
		}
		b.Reset()
		g = newGuard(&b)
		g.Write([]byte(tc.in))
		g.flush()
		if b.String() != tc.want {
			t.Errorf("guard(%q) in one write = %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// TestHostileNameCLI feeds a test name that tries to print workflow
// commands through gate, and checks that no line of the output starts one.
func TestHostileNameCLI(t *testing.T) {
	dir := t.TempDir()
	hostile := "x&#10;::error::INJECTED&#10;::set-output name=verdict::pass&#10;&#27;[31m"
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
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") || strings.ContainsRune(line, '\x1b') {
			t.Errorf("output line starts a workflow command or holds ESC: %q", line)
		}
	}
	r = run(t, fixedClock, "analyze", "--format", "csv", filepath.Join(dir, "head"))
	for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") {
			t.Errorf("analyze output line starts a workflow command: %q", line)
		}
	}
}

// TestGuardWholeLines: the guard writes whole clean lines as they are and
// filters the other lines byte by byte, and a character cut between writes waits
// for its rest; for any text and any cut into writes the output is what
// filtering the text in one write gives.
func TestGuardWholeLines(t *testing.T) {
	pieces := []string{"a", " ", "\t", ":", "::", "\n", "x y", "\x1b", "\u202e", "é", "\r", "\xff", "  ::e::", "{\"k\": 1}"}
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
// filter writes it whole.
//
//	go test -run '^$' -fuzz FuzzGuard -fuzztime 1m ./pkg/cli
func FuzzGuard(f *testing.F) {
	for _, s := range []string{"plain\n", "x\n::error::a\n", "  \t::x\n", "tëst\nok\n\x1b[1m\n  :\n", "é", "\xe2\x80\xae\n::\n", "a\r\n\xc2\x9b\n"} {
		f.Add([]byte(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		checkPieces(t, in, rand.New(rand.NewPCG(seed, 0)))
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
