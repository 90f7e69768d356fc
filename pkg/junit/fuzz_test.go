package junit

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// addCorpus seeds f with the files of the conformance corpus and the
// fixtures smaller than max bytes.
func addCorpus(f *testing.F, max int) {
	for _, dir := range []string{corpusDir, "../../fixtures"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".xml") {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && len(b) < max {
				f.Add(b)
			}
			return nil
		})
	}
}

// FuzzParse feeds the reader arbitrary bytes, seeded from the conformance
// corpus and the fixtures. Nothing may panic, the totals must add up, a
// reader that returns one byte at a time must agree with one that returns
// the whole input, and a Reader that has read earlier inputs (and reuses
// their tags) must agree with a fresh one.
func FuzzParse(f *testing.F) {
	addCorpus(f, 64<<10)
	r1, r2 := NewReader(), NewReader()
	// r3 lets Repeat take every other case it is offered: the cases it
	// takes and those fn gets must add up to the totals.
	r3, take, taken := NewReader(), false, 0
	r3.Repeat = func(int32, uint32, *Suite, string) bool {
		if take = !take; take {
			taken++
		}
		return take
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n1 := 0
		tot, err := r1.Parse("fuzz.xml", bytes.NewReader(data), func(c *Case) error {
			n1++
			if c.Suite == nil {
				t.Fatalf("case %q has no suite", c.Name)
			}
			return nil
		})
		if s := tot.Passed + tot.Failed + tot.Errors + tot.Skipped; s != tot.Testcases || tot.Testcases != n1 {
			t.Fatalf("totals do not add up: %+v, %d callbacks", tot, n1)
		}
		// Byte-at-a-time reads are slow on big inputs, which makes
		// minimising them crawl: big inputs are read in halves instead.
		var src io.Reader = iotest.OneByteReader(bytes.NewReader(data))
		if len(data) > 4<<10 {
			src = iotest.HalfReader(bytes.NewReader(data))
		}
		tot2, err2 := r2.Parse("fuzz.xml", src, nil)
		if (err == nil) != (err2 == nil) || tot != tot2 {
			t.Fatalf("whole read: %+v, %v; small reads: %+v, %v", tot, err, tot2, err2)
		}
		taken = 0
		n3 := 0
		tot3, err3 := r3.Parse("fuzz.xml", bytes.NewReader(data), func(*Case) error { n3++; return nil })
		if (err == nil) != (err3 == nil) || tot != tot3 || (err == nil && n3+taken != tot.Testcases) {
			t.Fatalf("whole read: %+v, %v; with Repeat: %+v, %v, %d cases to fn and %d taken", tot, err, tot3, err3, n3, taken)
		}
		// r1 reuses tags of the inputs before; a fresh Reader must agree.
		got, gotErr := parseWith(r1, "fuzz.xml", data)
		want, wantErr := parseWith(NewReader(), "fuzz.xml", data)
		if gotErr != wantErr || len(got) != len(want) {
			t.Fatalf("reused reader: %d cases, %q; fresh: %d cases, %q", len(got), gotErr, len(want), wantErr)
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].File != want[i].File || got[i].Line != want[i].Line || got[i].Outcome != want[i].Outcome {
				t.Fatalf("case %d: reused %+v, fresh %+v", i, got[i], want[i])
			}
		}
	})
}
