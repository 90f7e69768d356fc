package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNaturalCompare(t *testing.T) {
	long := "123456789012345678901234567890" // past uint64
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"head-1.xml", "head-1.xml", 0},
		{"head-2.xml", "head-10.xml", -1},
		{"head-9.xml", "head-10.xml", -1},
		{"head-10.xml", "head-11.xml", -1},
		{"head-02.xml", "head-10.xml", -1},
		// Equal values: byte order, so that no two names tie.
		{"head-01.xml", "head-1.xml", -1},
		{"head-001.xml", "head-01.xml", -1},
		{"v0", "v00", -1},
		{"v0", "v", 1},
		{"a01b", "a1a", 1}, // the values tie; the text after them decides
		// Runs of digits longer than any integer type.
		{"r" + long, "r" + long, 0},
		{"r" + long, "r" + long[:len(long)-1] + "1", -1},
		{"r1" + strings.Repeat("0", 30), "r" + strings.Repeat("9", 30), 1},
		{"r" + strings.Repeat("0", 40) + "7", "r8", -1},
		{"r000" + long, "r" + long, -1},
		{"r" + long + "a", "r" + long + "b", -1},
		// Text and several numbers.
		{"a", "b", -1},
		{"a", "a0", -1},
		{"file", "file1", -1},
		{"", "1", -1},
		{"a9z", "a10", -1},
		{"a1b", "a1c", -1},
		{"1.2.10", "1.10.2", -1},
		{"1.10.2", "1.10.10", -1},
		{"a-1", "a1", -1}, // '-' sorts before the digits
		{"a_1", "a1", 1},  // '_' after them
		{"x.xml", "x1.xml", -1},
		{"run-2/b.xml", "run-10/a.xml", -1},
		{"é2", "é10", -1},
		{"Head-2", "head-1", -1}, // case is text: byte order
	} {
		if got := naturalCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := naturalCompare(tc.b, tc.a); got != -tc.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
	names := []string{"head-10.xml", "head-1.xml", "head-2.xml", "head-01.xml", "head-11.xml", "head-020.xml", "head-20.xml", "head-3.xml"}
	slices.SortFunc(names, naturalCompare)
	want := []string{"head-01.xml", "head-1.xml", "head-2.xml", "head-3.xml", "head-10.xml", "head-11.xml", "head-020.xml", "head-20.xml"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
}

// naturalRef is naturalCompare's order spelled out: a name is a list of
// numbers (digits without leading zeros) and single bytes.
func naturalRef(a, b string) int {
	type tok struct {
		num  bool
		text string
	}
	split := func(s string) []tok {
		var out []tok
		for i := 0; i < len(s); {
			if !isDigit(s[i]) {
				out = append(out, tok{false, s[i : i+1]})
				i++
				continue
			}
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			out = append(out, tok{true, strings.TrimLeft(s[i:j], "0")})
			i = j
		}
		return out
	}
	ta, tb := split(a), split(b)
	for k := 0; k < len(ta) && k < len(tb); k++ {
		x, y := ta[k], tb[k]
		var c int
		switch {
		case x.num && y.num:
			if c = len(x.text) - len(y.text); c == 0 {
				c = strings.Compare(x.text, y.text)
			}
		case x.num: // a digit against a byte that is not one
			c = strings.Compare("0", y.text)
		case y.num:
			c = strings.Compare(x.text, "0")
		default:
			c = strings.Compare(x.text, y.text)
		}
		if c != 0 {
			return max(-1, min(1, c))
		}
	}
	if len(ta) != len(tb) {
		if len(ta) < len(tb) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// TestNaturalCompareIsTotal checks naturalCompare against naturalRef on
// random names, and that it is a total order: antisymmetric, zero only for
// equal names, and transitive.
func TestNaturalCompareIsTotal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "000123456789-._aZé"
	name := func() string {
		var b strings.Builder
		// Many share a prefix, as the names of one history's runs do,
		// and some end it in a run of digits.
		b.WriteString([]string{"", "", "runs/head-", "runs/head-1", "runs/head-0"}[rng.IntN(5)])
		for n := rng.IntN(9); n > 0; n-- {
			if rng.IntN(12) == 0 {
				b.WriteString(strings.Repeat("9", 18+rng.IntN(4))) // near and past uint64
				continue
			}
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	names := make([]string, 400)
	for i := range names {
		names[i] = name()
	}
	for _, a := range names {
		for _, b := range names {
			got := naturalCompare(a, b)
			if want := naturalRef(a, b); got != want {
				t.Fatalf("naturalCompare(%q, %q) = %d, want %d", a, b, got, want)
			}
			if got != -naturalCompare(b, a) || (got == 0) != (a == b) {
				t.Fatalf("naturalCompare(%q, %q) = %d, not antisymmetric or ties distinct names", a, b, got)
			}
		}
	}
	slices.SortFunc(names, naturalCompare)
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if naturalCompare(names[i], names[j]) > 0 {
				t.Fatalf("not transitive: %q sorted before %q", names[i], names[j])
			}
		}
	}
}

// TestKeyCompare: run keys of one commit's runs without a run id compare
// by their sources' natural order, every other pair byte by byte, and the
// order stays total.
func TestKeyCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"c|src:head-2.xml", "c|src:head-10.xml", -1},
		{"c|src:head-01.xml", "c|src:head-1.xml", -1},
		{"|src:head-2.xml", "|src:head-10.xml", -1},
		{"c1|src:head-10.xml", "c2|src:head-2.xml", -1}, // commits first
		{"c|999", "c|1001", 1},                          // run ids: bytes, as before
		{"c|src:x", "c|5", 1},
		{"", "c|src:x", -1},
		{"c|src:a", "c|src:a", 0},
	} {
		if got := keyCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("keyCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := keyCompare(tc.b, tc.a); got != -tc.want {
			t.Errorf("keyCompare(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
	var keys []string
	for _, c := range []string{"", "a1", "a10", "a|b", "a|src", "b"} {
		for _, k := range []string{"src:h-1", "src:h-01", "src:h-10", "src:h-9x", "src:", "src", "sr", "12", "9", "src:|src:2", "src:|src:10", "|src:3"} {
			keys = append(keys, c+"|"+k)
		}
	}
	keys = append(keys, "", "a1", "src:1", "|", "a|")
	for _, a := range keys {
		for _, b := range keys {
			ab := keyCompare(a, b)
			if ab != -keyCompare(b, a) || (ab == 0) != (a == b) {
				t.Fatalf("keyCompare(%q, %q) = %d, not antisymmetric or ties distinct keys", a, b, ab)
			}
			for _, c := range keys {
				if ab < 0 && keyCompare(b, c) < 0 && keyCompare(a, c) >= 0 {
					t.Fatalf("not transitive: %q < %q < %q but not %q < %q", a, b, c, a, c)
				}
			}
		}
	}
}

func TestNaturalCompareAllocates(t *testing.T) {
	a, b := "runs/head-0012/TEST-x.xml", "runs/head-12/TEST-x.xml"
	ka, kb := "c0ffee|src:"+a, "c0ffee|src:"+b
	if n := testing.AllocsPerRun(100, func() {
		naturalCompare(a, b)
		keyCompare(ka, kb)
	}); n != 0 {
		t.Errorf("%v allocations per comparison, want 0", n)
	}
}

// TestRunOrderIgnoresPadding: runs with no run id and no time are in the
// order of the numbers in their file names, whether or not they are padded
// with zeros, so the same results named head-1 ... head-20 and head-01 ...
// head-20 give the same history: the same runs in the same order, the same
// cells, signatures in the same order and the same place for a test. (The
// gate reads the head runs in this order, sequentially.)
func TestRunOrderIgnoresPadding(t *testing.T) {
	doc := func(run int) string {
		var b strings.Builder
		b.WriteString(`<testsuite name="s">`)
		b.WriteString(`<testcase classname="k" name="stable"/>`)
		// Fails in runs 2 and 10-12, each time with another message.
		if run == 2 || run >= 10 && run <= 12 {
			fmt.Fprintf(&b, `<testcase classname="k" name="flaky"><failure message="boom %d"/></testcase>`, run)
		} else {
			b.WriteString(`<testcase classname="k" name="flaky"/>`)
		}
		// States its file from run 2 on, at a line of each run's own.
		if run == 1 {
			b.WriteString(`<testcase classname="k" name="moves"/>`)
		} else {
			fmt.Fprintf(&b, `<testcase classname="k" name="moves" file="k_test.py" line="%d"/>`, run)
		}
		b.WriteString(`</testsuite>`)
		return b.String()
	}
	load := func(format string, reverse bool) *History {
		var srcs []Source
		for run := 1; run <= 20; run++ {
			srcs = append(srcs, stringSource(fmt.Sprintf(format, run), doc(run)))
		}
		if reverse {
			slices.Reverse(srcs)
		}
		h, err := Load(context.Background(), srcs, Options{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Runs) != 20 {
			t.Fatalf("%s: %d runs, want 20", format, len(h.Runs))
		}
		for i, r := range h.Runs {
			if want := fmt.Sprintf(format, i+1); r.Source != want {
				t.Errorf("%s: run %d is %s, want %s", format, i, r.Source, want)
			}
		}
		return h
	}
	type summary struct {
		Cells    map[string][]Cell
		Sigs     map[string][]string
		File     map[string]string
		Failures []int // the failing runs of k::flaky, by index
	}
	sum := func(h *History) summary {
		s := summary{Cells: cellsByID(h), Sigs: map[string][]string{}, File: map[string]string{}}
		for _, tt := range h.Tests {
			for _, sig := range tt.Sigs {
				s.Sigs[tt.ID] = append(s.Sigs[tt.ID], sig.Message)
			}
			s.File[tt.ID] = fmt.Sprintf("%s:%d", tt.File, tt.Line)
			if tt.ID == "k::flaky" {
				for _, c := range tt.Cells {
					if c.Failed() {
						s.Failures = append(s.Failures, int(c.Run))
					}
				}
			}
		}
		return s
	}
	plain := sum(load("runs/head-%d.xml", false))
	if diff := cmp.Diff([]int{1, 9, 10, 11}, plain.Failures); diff != "" {
		t.Errorf("failing runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"boom 2", "boom 10", "boom 11", "boom 12"}, plain.Sigs["k::flaky"]); diff != "" {
		t.Errorf("signatures, by first appearance (-want +got):\n%s", diff)
	}
	if got := plain.File["k::moves"]; got != "k_test.py:2" {
		t.Errorf("k::moves is at %s, want k_test.py:2 (its earliest run that states a file)", got)
	}
	for _, v := range []struct {
		format  string
		reverse bool
	}{{"runs/head-%d.xml", true}, {"runs/head-%02d.xml", false}, {"runs/head-%03d.xml", true}} {
		if diff := cmp.Diff(plain, sum(load(v.format, v.reverse))); diff != "" {
			t.Errorf("%s (reversed %v) differs from unpadded names (-unpadded +padded):\n%s", v.format, v.reverse, diff)
		}
	}
}

// TestRunNamedByNaturallyLeastSource: a run read from several files (one
// run id) is named by the first of them in natural order, whichever was
// read first.
func TestRunNamedByNaturallyLeastSource(t *testing.T) {
	doc := `<testsuite name="s"><properties><property name="run_id" value="7"/></properties><testcase classname="k" name="t"/></testsuite>`
	names := []string{"r/shard-10.xml", "r/shard-2.xml", "r/shard-11.xml"}
	for _, workers := range []int{1, 3} {
		for rot := range names {
			var srcs []Source
			for k := range names {
				srcs = append(srcs, stringSource(names[(k+rot)%len(names)], doc))
			}
			h, err := Load(context.Background(), srcs, Options{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Runs) != 1 || h.Runs[0].Source != "r/shard-2.xml" {
				t.Errorf("workers %d, rotation %d: runs %+v, want one named r/shard-2.xml", workers, rot, h.Runs)
			}
		}
	}
}
