package junit

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/internal/pieces"
)

var nameMark = regexp.MustCompile(`…\[cut (\d+) bytes, sha256:[0-9a-f]{16}\]$`)

// checkCutName checks that got is value, or value cut to MaxNameBytes on a
// UTF-8 boundary with a mark that counts what was left out.
func checkCutName(t *testing.T, value, got string) {
	t.Helper()
	if len(value) <= MaxNameBytes {
		if got != value {
			t.Errorf("a name of %d bytes was changed to %q", len(value), got)
		}
		return
	}
	m := nameMark.FindStringSubmatchIndex(got)
	if m == nil {
		t.Fatalf("a name of %d bytes became %d bytes ending %q: no cut mark", len(value), len(got), got[max(0, len(got)-40):])
	}
	kept := got[:m[0]]
	cut, _ := strconv.Atoi(got[m[2]:m[3]])
	if len(got) > MaxNameBytes || !strings.HasPrefix(value, kept) || len(kept)+cut != len(value) ||
		len(kept) < MaxNameBytes-nameMarkRoom-utf8.UTFMax || !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
		t.Errorf("a name of %d bytes became %d bytes, keeping %d and marking %d cut: %q", len(value), len(got), len(kept), cut, got[m[0]:])
	}
}

func TestNamesAreCut(t *testing.T) {
	for _, size := range []int{10, MaxNameBytes, MaxNameBytes + 1, 5000, 2 << 20} {
		// Three-byte runes, offset by one, so that the cut falls inside one.
		value := ("a" + strings.Repeat("€", size))[:size]
		value = value[:runeStart([]byte(value), size)]
		for _, tc := range []struct {
			field string
			doc   string
			get   func(*Case) string
		}{
			{"classname", `<testsuite name="s"><testcase classname="%s" name="n"/></testsuite>`, func(c *Case) string { return c.Classname }},
			{"name", `<testsuite name="s"><testcase classname="c" name="%s"/></testsuite>`, func(c *Case) string { return c.Name }},
			{"file", `<testsuite name="s"><testcase name="n" file="%s"/></testsuite>`, func(c *Case) string { return c.File }},
			{"suite name", `<testsuites><testsuite name="%s"><testcase name="n"/></testsuite></testsuites>`, func(c *Case) string { return c.Suite.Name }},
		} {
			t.Run(fmt.Sprintf("%s/%d", tc.field, size), func(t *testing.T) {
				var cases []Case
				if _, err := NewReader().Parse("x.xml", strings.NewReader(fmt.Sprintf(tc.doc, value)), func(c *Case) error {
					cases = append(cases, *c)
					return nil
				}); err != nil || len(cases) != 1 {
					t.Fatalf("%d cases, %v", len(cases), err)
				}
				checkCutName(t, value, tc.get(&cases[0]))
			})
		}
	}
}

// TestCutNameIdentity: the same long name is cut to the same string in
// every file and by every Reader, whether it was written with entity
// references or not, so it stays one test; two long names that differ
// only past the cap stay two tests.
func TestCutNameIdentity(t *testing.T) {
	long := strings.Repeat("parametrised[", 400)
	doc := func(class, name, time string) []byte {
		return []byte(`<testsuite name="s"><testcase classname="` + class + `" name="` + name + `" time="` + time + `"/>` +
			`<testcase classname="c" name="` + name + `2" time="` + time + `"/></testsuite>`)
	}
	ids := func(r *Reader, d []byte) []string {
		var out []string
		cases, errText := parseWith(r, "x.xml", d)
		if errText != "" {
			t.Fatal(errText)
		}
		for _, c := range cases {
			out = append(out, c.ID)
		}
		return out
	}
	shared := NewReader()
	first := ids(shared, doc("c", long, "0.1"))
	if len(first[0]) > 1+2+MaxNameBytes || first[0] == first[1] {
		t.Fatalf("IDs %q", first)
	}
	for name, d := range map[string][]byte{
		"next run, same reader": doc("c", long, "0.2"),
		"entity references":     doc("&#99;", strings.ReplaceAll(long, "[", "&#91;"), "0.3"),
	} {
		if diff := cmp.Diff(first, ids(shared, d)); diff != "" {
			t.Errorf("%s (-first +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(first, ids(NewReader(), d)); diff != "" {
			t.Errorf("%s, fresh reader (-first +got):\n%s", name, diff)
		}
	}
}

func TestMessagesAreCut(t *testing.T) {
	long := strings.Repeat("y", 3*MaxMessageBytes)
	// "é" straddles the cap: the cut keeps whole runes only.
	straddle := strings.Repeat("x", MaxMessageBytes-1) + "é" + "tail"
	message := func(f flat) string { return f.Detail.Message }
	text := func(f flat) string { return f.Detail.Text }
	for _, tc := range []struct {
		name string
		doc  string
		get  func(flat) string
		kept string
		cut  int // bytes left out; 0 for no mark
	}{
		{"message at the cap", `<failure message="` + long[:MaxMessageBytes] + `"/>`, message, long[:MaxMessageBytes], 0},
		{"message", `<failure message="` + long + `"/>`, message, long[:MaxMessageBytes], 2 * MaxMessageBytes},
		{"message on a rune", `<failure message="` + straddle + `"/>`, message, straddle[:MaxMessageBytes-1], 6},
		{"text", `<error>` + long + `</error>`, text, long[:MaxMessageBytes], 2 * MaxMessageBytes},
		{"text on a rune", `<failure><![CDATA[` + straddle + `]]></failure>`, text, straddle[:MaxMessageBytes-1], 6},
		{"text with entities", `<failure>` + strings.Repeat("&lt;", MaxMessageBytes+5) + `</failure>`, text, strings.Repeat("<", MaxMessageBytes), 5},
		{"rerun text", `<failure/><rerunFailure>` + long + `</rerunFailure>`, func(f flat) string { return f.Reruns[0].Text }, long[:MaxMessageBytes], 2 * MaxMessageBytes},
		{"type", `<failure type="` + long[:300] + `"/>`, func(f flat) string { return f.Detail.Type }, long[:maxTypeBytes], 300 - maxTypeBytes},
		{"run id property", `<properties><property name="run_id" value="` + long[:1500] + `"/></properties>`, func(f flat) string { return f.Props.RunID }, long[:maxPropertyBytes], 1500 - maxPropertyBytes},
		{"commit property text", `<properties><property name="commit_sha">` + long[:1500] + `</property></properties>`, func(f flat) string { return f.Props.CommitSHA }, long[:maxPropertyBytes], 1500 - maxPropertyBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseString(t, `<testsuite name="s"><testcase name="t">`+tc.doc+`</testcase></testsuite>`)
			if err != nil || len(got) != 1 {
				t.Fatalf("%d cases, %v", len(got), err)
			}
			want := tc.kept
			if tc.cut > 0 {
				want += fmt.Sprintf("…[cut %d bytes]", tc.cut)
			}
			g := tc.get(got[0])
			if g != want {
				t.Errorf("got %d bytes ending %q, want %d ending %q", len(g), g[max(0, len(g)-30):], len(want), want[max(0, len(want)-30):])
			}
			if u := Uncut(g); u != tc.kept {
				t.Errorf("Uncut kept %d bytes ending %q, want %d", len(u), u[max(0, len(u)-30):], len(tc.kept))
			}
		})
	}
}

func TestUncut(t *testing.T) {
	for in, want := range map[string]string{
		"boom":                "boom",
		"boom…[cut 12 bytes]": "boom",
		"…[cut 1 bytes]":      "",
		"boom…[cut bytes]":    "boom…[cut bytes]",
		"boom…[cut 1x bytes]": "boom…[cut 1x bytes]",
		"…[cut bytes]":        "…[cut bytes]",
		" bytes]":             " bytes]",
		"a…[cut 3 bytes] b":   "a…[cut 3 bytes] b",
		"name…[cut 3 bytes, sha256:0123456789abcdef]": "name…[cut 3 bytes, sha256:0123456789abcdef]",
	} {
		if got := Uncut(in); got != want {
			t.Errorf("Uncut(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLongNamesMemory: 40 test names of 7 MiB each (which took 895 MB
// when names had no cap) are cut, read with memory bounded by the window
// that holds one tag, and nothing of them is kept for the next file.
func TestLongNamesMemory(t *testing.T) {
	const n, size = 40, 7 << 20
	doc := func() io.Reader { return pieces.LongNames(n, size) }
	r := NewReader()
	var ids []string
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := r.Parse("names.xml", doc(), func(c *Case) error {
		ids = append(ids, c.ID())
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		checkCutName(t, strings.Repeat("x", size-4)+fmt.Sprintf("%04d", i), strings.TrimPrefix(id, "c::"))
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct IDs for %d distinct names", len(seen), n)
	}
	// The window grows by doubling to hold one 7 MiB tag: about 32 MiB
	// allocated in all, where keeping each name took 20 MiB a name.
	if grew := after.TotalAlloc - before.TotalAlloc; !raceEnabled && grew > 48<<20 {
		t.Errorf("reading %d names of %d MiB allocated %d MiB", n, size>>20, grew>>20)
	}
	for _, m := range r.pool {
		if len(m.prefix) > maxMemoPrefix {
			t.Errorf("a testcase tag of %d bytes is remembered", len(m.prefix))
		}
	}
	if _, err := r.Parse("next.xml", strings.NewReader(`<testsuite/>`), nil); err != nil {
		t.Fatal(err)
	}
	if len(r.buf) > maxIdleBuf {
		t.Errorf("the reader keeps a %d MiB window after the long tags", len(r.buf)>>20)
	}
}

// TestLongSuffixNotRemembered: a testcase tag whose attributes after its
// time are longer than a remembered tag may be is read, not remembered,
// and so not repeated: what a Reader keeps per tag stays bounded whichever
// side of the time the long attribute is on.
func TestLongSuffixNotRemembered(t *testing.T) {
	for _, n := range []int{maxMemoPrefix - 40, maxMemoPrefix + 1} {
		name := strings.Repeat("n", n)
		doc := fmt.Sprintf(`<testsuite><testcase classname="c" time="1" name="%s"/><testcase classname="c" time="2" name="b"/></testsuite>`, name)
		r := NewReader()
		want, _ := parseWith(NewReader(), "f.xml", []byte(doc))
		for i := range 2 {
			got, err := parseWith(r, "f.xml", []byte(doc))
			if err != "" || len(got) != 2 || !cmp.Equal(got, want) {
				t.Fatalf("%d: read %d: %d cases, %q; a fresh Reader: %d", n, i, len(got), err, len(want))
			}
		}
		for _, m := range r.pool {
			if len(m.prefix)+len(m.suffix) > 2*maxMemoPrefix || len(m.suffix) > maxMemoPrefix {
				t.Errorf("%d: a tag of %d+%d bytes is remembered", n, len(m.prefix), len(m.suffix))
			}
		}
		// The short tag repeats; the long one only when within bounds.
		repeats := 2
		if n > maxMemoPrefix {
			repeats = 1
		}
		if r.repeats != repeats {
			t.Errorf("%d: %d tags repeated, want %d", n, r.repeats, repeats)
		}
	}
}
