package ledger

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// bombEntry is the seed's entry without its evidence, at the indent of an
// entry in "entries:".
const bombEntry = `    test: "tests/test_upload.py::test_retry_after_429"
    signature: "sha256:9f2c0a7d4be1"
    owner: "@storage-team"
    issue: "https://github.com/acme/shop/issues/12"
    replacement: "tests/test_upload.py::test_retry_header_parsed"
    release_triggers: [scope_file_changed]
    evidence:
      p_flake_baseline: 0.30
      p_regression: 0.90
      decision: FLAKE
`

// aliasBomb is issue #8's ledger: one anchored entry aliased entries-1 more
// times, whose llr_trace is a steps-item list of aliases to one anchored
// step. Expanded, it is entries*steps trace steps.
func aliasBomb(entries, steps int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nentries:\n  - &e\n" + bombEntry)
	b.WriteString("      llr_trace: &t [&s [false, 1.099, 1.099]")
	for range steps - 1 {
		b.WriteString(", *s")
	}
	b.WriteString("]\n")
	for range entries - 1 {
		b.WriteString("  - *e\n")
	}
	return []byte(b.String())
}

// TestParseRefusesAliasBombs: before the fix, Parse expanded every alias
// while reading the entries; the 8 KB bomb took about 2.5 s and the 24 KB one
// about 60 s on a 2-core machine. Both are now refused at their first anchor.
func TestParseRefusesAliasBombs(t *testing.T) {
	tests := []struct {
		name           string
		entries, steps int
		minKB, maxKB   int
	}{
		{"8 KB", 250, 1500, 7, 9},
		{"24 KB", 1000, 4200, 23, 25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := aliasBomb(tc.entries, tc.steps)
			if kb := len(data) / 1024; kb < tc.minKB || kb > tc.maxKB {
				t.Fatalf("bomb is %d KB, want %d to %d", kb, tc.minKB, tc.maxKB)
			}
			start := time.Now()
			_, err := Parse(data)
			elapsed := time.Since(start)
			if elapsed >= time.Second {
				t.Errorf("Parse took %v, want well under 1s", elapsed)
			}
			want := "ledger: line 3: YAML anchor &e is not accepted in a ledger: a ledger is a flat list of entries"
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Parse error\n %v\nwant prefix\n %s", err, want)
			}
			if ps := VerifyFile("x.yml", data, verifyDay); len(ps) != 1 || ps[0].Line != 3 || !strings.Contains(ps[0].Message, "anchor &e") {
				t.Errorf("VerifyFile = %v, want the anchor on line 3", ps)
			}
		})
	}
}

func TestParseRefusesAnchorsAliasesAndMergeKeys(t *testing.T) {
	seed := string(readSeed(t))
	tests := []struct {
		name string
		text string
		line int
		msg  string
	}{
		{"anchor on a scalar", strings.Replace(seed, `owner: "@storage-team"`, `owner: &o "@storage-team"`, 1), 8, "YAML anchor &o is not accepted in a ledger"},
		{"anchor on the file", "&top\n" + seed, 1, "YAML anchor &top is not accepted in a ledger"},
		{"merge key", strings.Replace(seed, "    owner:", "    <<: {issue: \"https://github.com/acme/shop/issues/1\"}\n    owner:", 1), 8, "YAML merge key << is not accepted in a ledger"},
		{"merge key of an alias", strings.Replace(seed, "entries:\n", "base: &b {owner: x}\nentries:\n", 1) + "  - <<: *b\n", 5, "YAML anchor &b is not accepted"},
		{"alias to an earlier entry", seed + "  - &again\n" + bombEntry + "  - *again\n", 17, "YAML anchor &again is not accepted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			pe, ok := err.(*ParseError)
			if !ok {
				t.Fatalf("Parse error %v (%T), want *ParseError", err, err)
			}
			if len(pe.Problems) != 1 {
				t.Fatalf("problems %v, want one", pe.Problems)
			}
			p := pe.Problems[0]
			if p.Line != tc.line || !strings.HasPrefix(p.Message, tc.msg) || !strings.Contains(p.Message, "a flat list of entries") {
				t.Errorf("problem %v, want line %d and %q", p, tc.line, tc.msg)
			}
		})
	}
	// A quoted "<<" is a plain string key, not a merge key: an unknown field.
	_, err := Parse([]byte(strings.Replace(seed, "    owner:", "    \"<<\": x\n    owner:", 1)))
	if err == nil || !strings.Contains(err.Error(), `<<: unknown field`) {
		t.Errorf("quoted << key: %v, want an unknown field", err)
	}
}

// entryText is one valid entry whose test is named by i and whose trace has
// the given steps (all "[true, -1.946, -1.946]"; Parse does not replay).
func entryText(i, steps int) string {
	s := strings.Replace(bombEntry, "test_retry_after_429", fmt.Sprintf("test_%d", i), 1)
	return "  - " + strings.TrimPrefix(s, "    ") + "      llr_trace: [" +
		strings.TrimSuffix(strings.Repeat("[true, -1.946, -1.946], ", steps), ", ") + "]\n"
}

func ledgerText(entries, steps int) string {
	var b strings.Builder
	b.WriteString("version: 1\nentries:\n")
	for i := range entries {
		b.WriteString(entryText(i, steps))
	}
	return b.String()
}

func TestParseLimits(t *testing.T) {
	seed := string(readSeed(t))
	tests := []struct {
		name  string
		text  string
		field string
		line  int
		msg   string // "" for a ledger that parses
	}{
		{"largest file", seed + "#" + strings.Repeat("x", MaxFileSize-len(seed)-2) + "\n", "", 0, ""},
		{"file too large", seed + "#" + strings.Repeat("x", MaxFileSize-len(seed)-1) + "\n", "", 0,
			"file is 1048577 bytes: at most 1048576 bytes (1 MiB) are accepted"},
		{"most entries", ledgerText(MaxEntries, 1), "", 0, ""},
		{"too many entries", "version: 1\nentries:\n" + strings.Repeat("  - {}\n", MaxEntries+1), "entries", 3, "1001 entries: at most 1000 (MaxEntries) are accepted"},
		{"longest trace", ledgerText(1, MaxTraceSteps), "", 0, ""},
		{"trace too long", ledgerText(2, 1) + entryText(2, MaxTraceSteps+1), "evidence.llr_trace", 35,
			"1001 steps: at most 1000 (MaxTraceSteps) are accepted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Parse([]byte(tc.text))
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(l.Entries) == 0 {
					t.Errorf("Parse read no entries")
				}
				return
			}
			pe, ok := err.(*ParseError)
			if !ok {
				t.Fatalf("Parse error %v (%T), want *ParseError", err, err)
			}
			for _, p := range pe.Problems {
				if p.Field == tc.field && p.Line == tc.line && p.Message == tc.msg {
					return
				}
			}
			t.Errorf("problems %v: want field %q line %d %q", pe.Problems, tc.field, tc.line, tc.msg)
		})
	}
}

// TestParseBoundedProblems: a file that is wrong everywhere lists the first
// 100 problems and counts the rest.
func TestParseBoundedProblems(t *testing.T) {
	const entries = 20
	var b strings.Builder
	b.WriteString("version: 1\nentries:\n")
	for range entries {
		b.WriteString("  - {evidence: {llr_trace: [" + strings.TrimSuffix(strings.Repeat("[], ", 250), ", ") + "]}}\n")
	}
	_, err := Parse([]byte(b.String()))
	pe, ok := err.(*ParseError)
	if !ok {
		t.Fatalf("Parse error %v (%T), want *ParseError", err, err)
	}
	if len(pe.Problems) != maxProblems+1 {
		t.Fatalf("%d problems, want %d and a count of the rest", len(pe.Problems), maxProblems+1)
	}
	// Each entry: 6 required fields missing, 3 evidence fields missing, 250 empty steps.
	want := fmt.Sprintf("%d more problems not listed", entries*(6+3+250)-maxProblems)
	if last := pe.Problems[maxProblems]; last.Entry != -1 || last.Message != want {
		t.Errorf("last problem %v, want %q", last, want)
	}
}
