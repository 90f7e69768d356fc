package ledger

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/sprt"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func seedEntry() Entry {
	return Entry{
		Test:        "tests/test_upload.py::test_retry_after_429",
		Signature:   "sha256:9f2c0a7d4be1",
		Owner:       "@storage-team",
		Issue:       "https://github.com/acme/shop/issues/12",
		Expires:     Date{2027, time.January, 31},
		Replacement: "tests/test_upload.py::test_retry_header_parsed",
		Evidence: Evidence{
			PFlakeBaseline: 0.30, PRegression: 0.90, Alpha: 0.05, Beta: 0.05,
			Trace: []sprt.Step{
				{Passed: false, Step: 1.099, Cumulative: 1.099},
				{Passed: true, Step: -1.946, Cumulative: -0.847},
				{Passed: true, Step: -1.946, Cumulative: -2.793},
				{Passed: true, Step: -1.946, Cumulative: -4.739},
			},
			Decision: sprt.Flake,
		},
		ReleaseTriggers: []Trigger{ScopeFileChanged, SignatureChanged},
	}
}

func readSeed(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "seed.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSeed(t *testing.T) {
	l, err := Parse(readSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	want := &Ledger{Version: 1, Entries: []Entry{seedEntry()}}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if ps := Verify(l); len(ps) != 0 {
		t.Errorf("Verify(seed) = %v, want no problems", ps)
	}
	if ps := VerifyFile("seed.yml", readSeed(t), verifyDay); len(ps) != 0 {
		t.Errorf("VerifyFile(seed) = %v", ps)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	l := &Ledger{Version: 1, Entries: []Entry{seedEntry()}}
	second := seedEntry()
	second.Test, second.Expires, second.ReleaseTriggers = "pkg/cache_test.go::TestEviction", Date{}, []Trigger{SignatureChanged}
	second.Replacement = "pkg/cache_test.go::TestEvictionOrder"
	l.Entries = append(l.Entries, second)

	got, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "marshal.golden.yml")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	back, err := Parse(got)
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v", err)
	}
	if diff := cmp.Diff(l, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	empty, err := (&Ledger{Version: 1}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if l, err := Parse(empty); err != nil || len(l.Entries) != 0 {
		t.Errorf("empty ledger %q: %v %v", empty, l, err)
	}
}

func TestParseErrors(t *testing.T) {
	seed := string(readSeed(t))
	tests := []struct {
		name  string
		text  string
		entry int
		field string
		msg   string
	}{
		{"unknown field", strings.Replace(seed, "    owner:", "    onwer: x\n    owner:", 1), 0, "onwer", "unknown field: want one of test, signature, owner"},
		{"wrong type", strings.Replace(seed, `owner: "@storage-team"`, "owner: 42", 1), 0, "owner", "want a string, got int 42"},
		{"bad date", strings.Replace(seed, "2027-01-31", "2027-13-01", 1), 0, "expires", `want YYYY-MM-DD`},
		{"date with time", strings.Replace(seed, "2027-01-31", "2027-01-31T10:00:00Z", 1), 0, "expires", `want YYYY-MM-DD`},
		{"unknown trigger", strings.Replace(seed, "signature_changed]", "on_full_moon]", 1), 0, "release_triggers[1]", "unknown trigger \"on_full_moon\": want one of scope_file_changed, signature_changed"},
		{"missing field", strings.Replace(seed, `    replacement: "tests/test_upload.py::test_retry_header_parsed"`+"\n", "", 1), 0, "replacement", "required field is missing"},
		{"missing evidence field", strings.Replace(seed, "decision: FLAKE", "alpha2: 1", 1), 0, "evidence.alpha2", "unknown field"},
		{"version 2", strings.Replace(seed, "version: 1", "version: 2", 1), -1, "version", "unsupported version 2: want 1"},
		{"trace element not a bool", strings.Replace(seed, "[false, 1.099", "[nope, 1.099", 1), 0, "evidence.llr_trace[0][0]", "want true (passed) or false (failed)"},
		{"trace step empty", strings.Replace(seed, "[true, -1.946, -0.847]", "[]", 1), 0, "evidence.llr_trace[1]", "want [passed, step, cumulative], got 0 elements"},
		{"trace step not a list", strings.Replace(seed, "[true, -1.946, -0.847]", "true", 1), 0, "evidence.llr_trace[1]", "want [passed, step, cumulative], got bool true"},
		{"trace triple too short", strings.Replace(seed, "[true, -1.946, -0.847]", "[true, -1.946]", 1), 0, "evidence.llr_trace[1]", "want [passed, step, cumulative], got 2 elements"},
		{"bad signature", strings.Replace(seed, "sha256:9f2c0a7d4be1", "md5:zz", 1), 0, "signature", `want "sha256:" followed by 8 to 64 lowercase hex digits`},
		{"bad decision", strings.Replace(seed, "decision: FLAKE", "decision: MAYBE", 1), 0, "evidence.decision", "want FLAKE, REGRESSION or CONTINUE"},
		{"p0 above p1", strings.Replace(seed, "p_flake_baseline: 0.30", "p_flake_baseline: 0.95", 1), 0, "evidence", "p0 = 0.95 must be below p1 = 0.9"},
		{"duplicate entry", seed + strings.SplitN(seed, "entries:\n", 2)[1], 1, "signature", "duplicates entries[0]"},
		{"duplicate key", strings.Replace(seed, "    owner:", "    issue: x\n    owner:", 1), 0, "issue", "duplicate field"},
		{"empty file", "", -1, "", "empty file"},
		{"entries not a list", "version: 1\nentries: {a: 1}\n", -1, "entries", "want a list, got a mapping"},
		{"not yaml", "version: [1\n", -1, "", "not valid YAML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			pe, ok := err.(*ParseError)
			if !ok {
				t.Fatalf("Parse error %v (%T), want *ParseError", err, err)
			}
			for _, p := range pe.Problems {
				if p.Entry == tc.entry && p.Field == tc.field && strings.Contains(p.Message, tc.msg) {
					if tc.entry >= 0 && p.Test == "" && tc.field != "test" {
						t.Errorf("problem %v does not name the test", p)
					}
					if tc.text != "" && !strings.HasPrefix(tc.name, "not yaml") && p.Line == 0 {
						t.Errorf("problem %v has no line", p)
					}
					return
				}
			}
			t.Errorf("problems %v: want entry %d field %q with %q", pe.Problems, tc.entry, tc.field, tc.msg)
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := Parse([]byte(strings.Replace(string(readSeed(t)), "2027-01-31", "31/01/2027", 1)))
	want := `ledger: line 10: entries[0] (test "tests/test_upload.py::test_retry_after_429"): expires: date "31/01/2027": want YYYY-MM-DD`
	if err == nil || err.Error() != want {
		t.Errorf("error\n %v\nwant\n %s", err, want)
	}
}

func TestVerifyTampered(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(e *Entry)
		fields []string
	}{
		{"step", func(e *Entry) { e.Evidence.Trace[1].Step = -1.5 }, []string{"evidence.llr_trace[1][1]"}},
		{"cumulative", func(e *Entry) { e.Evidence.Trace[2].Cumulative = -2.7 }, []string{"evidence.llr_trace[2][2]"}},
		{"outcome flipped", func(e *Entry) { e.Evidence.Trace[3].Passed = false },
			[]string{"evidence.llr_trace[3][1]", "evidence.llr_trace[3][2]", "evidence.decision"}},
		{"decision", func(e *Entry) { e.Evidence.Decision = sprt.Continue }, []string{"evidence.decision"}},
		{"baseline", func(e *Entry) { e.Evidence.PFlakeBaseline = 0.2 },
			[]string{"evidence.llr_trace[0][1]", "evidence.llr_trace[0][2]", "evidence.llr_trace[1][1]", "evidence.llr_trace[1][2]",
				"evidence.llr_trace[2][1]", "evidence.llr_trace[2][2]", "evidence.llr_trace[3][1]", "evidence.llr_trace[3][2]"}},
		{"truncated trace", func(e *Entry) { e.Evidence.Trace = e.Evidence.Trace[:3] }, []string{"evidence.decision"}},
		{"regression cannot freeze", func(e *Entry) {
			e.Evidence.Trace = []sprt.Step{{Passed: false, Step: 1.099, Cumulative: 1.099}, {Passed: false, Step: 1.099, Cumulative: 2.197}, {Passed: false, Step: 1.099, Cumulative: 3.296}}
			e.Evidence.Decision = sprt.Regression
		}, []string{"evidence.decision"}},
		{"within tolerance", func(e *Entry) { e.Evidence.Trace[0].Step = 1.0995 }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := seedEntry()
			e.Evidence.Trace = append([]sprt.Step(nil), e.Evidence.Trace...)
			tc.tamper(&e)
			var got []string
			for _, p := range Verify(&Ledger{Version: 1, Entries: []Entry{e}}) {
				if p.Entry != 0 || p.Test != e.Test {
					t.Errorf("problem %v does not name entry 0 and its test", p)
				}
				got = append(got, p.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyFileNamesFileAndLine(t *testing.T) {
	text := strings.Replace(string(readSeed(t)), "[true, -1.946, -2.793]", "[true, -1.946, -2.5]", 1)
	ps := VerifyFile(".github/flaky-ledger.yml", []byte(text), verifyDay)
	if len(ps) != 1 {
		t.Fatalf("problems %v, want 1", ps)
	}
	want := `.github/flaky-ledger.yml:14: entries[0] (test "tests/test_upload.py::test_retry_after_429"): evidence.llr_trace[2][2]: cumulative -2.500, but the replay gives -2.793`
	if got := ps[0].String(); got != want {
		t.Errorf("problem\n %s\nwant\n %s", got, want)
	}
	if ps := VerifyFile("x.yml", []byte("version: 3\nentries: []\n"), verifyDay); len(ps) != 1 || ps[0].File != "x.yml" || ps[0].Field != "version" {
		t.Errorf("VerifyFile(version 3) = %v", ps)
	}
}

func TestEvidenceFrom(t *testing.T) {
	tt := sprt.Test{P0: 0.3, P1: 0.9, Alpha: 0.05, Beta: 0.05}
	r := tt.Run([]bool{false, true, true, true}, 1)
	ev := EvidenceFrom(tt, r)
	if diff := cmp.Diff(seedEntry().Evidence, ev); diff != "" {
		t.Errorf("EvidenceFrom(seed trace) (-want +got):\n%s", diff)
	}
	// An estimated p0 with many digits is rounded, and the trace still replays.
	tt.P0 = 0.30448717948717946
	e := seedEntry()
	e.Evidence = EvidenceFrom(tt, tt.Run([]bool{false, true, false, true, true}, 0))
	if e.Evidence.PFlakeBaseline != 0.3045 {
		t.Errorf("p0 recorded as %v, want 0.3045", e.Evidence.PFlakeBaseline)
	}
	if ps := Verify(&Ledger{Version: 1, Entries: []Entry{e}}); len(ps) != 0 {
		t.Errorf("Verify(EvidenceFrom) = %v", ps)
	}
}

func TestDateExpiry(t *testing.T) {
	d := Date{2027, time.January, 31}
	tests := []struct {
		now  time.Time
		want bool
	}{
		{time.Date(2027, 1, 31, 23, 59, 0, 0, time.UTC), false},
		{time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2027, 2, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600*2)), false}, // still Jan 31 in UTC
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), false},
	}
	for _, tc := range tests {
		if got := d.ExpiredAt(tc.now); got != tc.want {
			t.Errorf("ExpiredAt(%v) = %v, want %v", tc.now, got, tc.want)
		}
	}
	if (Date{}).ExpiredAt(time.Now()) {
		t.Errorf("a zero date never expires")
	}
}

func TestScopeFileAndFreezeSet(t *testing.T) {
	for in, want := range map[string]string{
		"tests/test_upload.py::test_retry": "tests/test_upload.py",
		"test_upload.py::TestX::test_y":    "test_upload.py",
		"com.acme.UploadTest::testRetry":   "",
		"no separator":                     "",
	} {
		if got := ScopeFile(in); got != want {
			t.Errorf("ScopeFile(%q) = %q, want %q", in, got, want)
		}
	}
	l := &Ledger{Entries: []Entry{{Test: "b"}, {Test: "a"}, {Test: "b"}}}
	if diff := cmp.Diff([]string{"a", "b"}, FreezeSet(l)); diff != "" {
		t.Errorf("FreezeSet (-want +got):\n%s", diff)
	}
	if FreezeSet(nil) != nil {
		t.Errorf("FreezeSet(nil) should be empty")
	}
}

// verifyDay is the day ledger files are verified on in tests.
var verifyDay = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// TestVerifyFileListsEverything: one run lists every problem, so that a
// user fixes them in one go: an entry's trace is replayed though another
// field of it is wrong, and an expired entry is named.
func TestVerifyFileListsEverything(t *testing.T) {
	seed := string(readSeed(t))
	bad := strings.NewReplacer(`owner: "@storage-team"`, `owner: ""`, "-0.847", "-0.900", "2027-01-31", "2026-01-31").Replace(seed)
	var got []string
	for _, p := range VerifyFile("l.yml", []byte(bad), verifyDay) {
		got = append(got, p.Field)
	}
	if diff := cmp.Diff([]string{"owner", "expires", "evidence.llr_trace[1][2]"}, got); diff != "" {
		t.Errorf("problems' fields (-want +got):\n%s", diff)
	}
	// A trace that could not be read is not replayed: its problem is the
	// reading's alone.
	unread := strings.Replace(seed, "[true, -1.946, -0.847]", "[true, -1.946, zero]", 1)
	if ps := VerifyFile("l.yml", []byte(unread), verifyDay); len(ps) != 1 || !strings.HasPrefix(ps[0].Field, "evidence.llr_trace[1]") {
		t.Errorf("unreadable trace: %v", ps)
	}
	// The seed's entry expires on 2027-01-31: valid through that day.
	if ps := VerifyFile("l.yml", []byte(seed), time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC)); len(ps) != 0 {
		t.Errorf("on its expiry day: %v", ps)
	}
	if ps := VerifyFile("l.yml", []byte(seed), time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)); len(ps) != 1 || !strings.Contains(ps[0].Message, "expired on 2027-01-31") {
		t.Errorf("the day after its expiry: %v", ps)
	}
}
