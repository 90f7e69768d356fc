package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzLedgerParse: Parse never panics and returns promptly, and a ledger it
// accepts comes back equal through Marshal and Parse. Seeds: the files in
// testdata/, small alias bombs, a merge key, and a few broken shapes.
func FuzzLedgerParse(f *testing.F) {
	for _, name := range []string{"seed.yml", "marshal.golden.yml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed, err := os.ReadFile(filepath.Join("testdata", "seed.yml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(aliasBomb(3, 4)),
		string(aliasBomb(250, 1500)),
		strings.Replace(string(seed), "    owner:", "    <<: {issue: x}\n    owner:", 1),
		ledgerText(2, 3),
		"version: 1\nentries: []\n",
		"version: 1\nentries:\n",
		"version: 1\nentries:\n  - {evidence: {llr_trace: [[], [true], 3]}}\n",
		"",
		"[1, 2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// verify reads what it can of any file, and names the file in
		// every problem; it accepts exactly what Parse accepts, expiry
		// aside.
		ps := VerifyFile("l.yml", data, verifyDay)
		for _, p := range ps {
			if p.File != "l.yml" {
				t.Fatalf("problem without the file's name: %+v", p)
			}
		}
		start := time.Now()
		l, err := Parse(data)
		if err != nil && len(ps) == 0 {
			t.Fatalf("verify found nothing in a file Parse refuses: %v", err)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Fatalf("Parse of %d bytes took %v", len(data), elapsed)
		}
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse error %v (%T), want *ParseError", err, err)
			}
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("Marshal of an accepted ledger: %v", err)
		}
		if len(out) > MaxFileSize {
			return // the canonical layout can outgrow a compact file near the cap
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal()): %v\n%s", err, out)
		}
		if diff := cmp.Diff(l, back); diff != "" {
			t.Errorf("round trip (-parsed +reparsed):\n%s", diff)
		}
	})
}
