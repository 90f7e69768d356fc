package ledger

import (
	"flag"
	"fmt"
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
		// Three reds reach the REGRESSION bound (3.296 >= 2.944); four greens
		// after them end at -4.488, which alone reads FLAKE: rerun until
		// green, which ledger verify accepted.
		{"regression bound reached, then greens", func(e *Entry) {
			e.Evidence.Trace = []sprt.Step{{Passed: false, Step: 1.099, Cumulative: 1.099}, {Passed: false, Step: 1.099, Cumulative: 2.197}, {Passed: false, Step: 1.099, Cumulative: 3.296},
				{Passed: true, Step: -1.946, Cumulative: 1.350}, {Passed: true, Step: -1.946, Cumulative: -0.596}, {Passed: true, Step: -1.946, Cumulative: -2.542}, {Passed: true, Step: -1.946, Cumulative: -4.488}}
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
	// A step written over several lines: the line is its element's own.
	block := strings.Replace(text, "[[false, 1.099, 1.099], ", "[\n      [\n        false,\n        1.5,\n        1.099],\n      ", 1)
	ps = VerifyFile("x.yml", []byte(block), verifyDay)
	if len(ps) != 2 || ps[0].Field != "evidence.llr_trace[0][1]" || ps[0].Line != 16 || ps[1].Field != "evidence.llr_trace[2][2]" || ps[1].Line != 19 {
		t.Errorf("VerifyFile(block step) = %v, want llr_trace[0][1] on line 16 and llr_trace[2][2] on line 19", ps)
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

// TestScopeFileFromModuleName: with no file attribute (pytest's default
// JUnit) a test named by its dotted module or class is released by
// scope_file_changed when that module's file changes: tests.test_up, a
// class in it, a JVM class under its source root. Other files do not.
func TestScopeFileFromModuleName(t *testing.T) {
	e := Entry{Test: "", Signature: "sha256:aaaaaaaa", ReleaseTriggers: []Trigger{ScopeFileChanged}}
	for _, tc := range []struct {
		test    string
		changed []string
		want    bool
	}{
		{"tests.test_up::test_b", []string{"tests/test_up.py"}, true},
		{"tests.test_up.TestUp::test_b", []string{"README.md", "tests/test_up.py"}, true},
		{"com.acme.UploadTest::testRetry", []string{"src/test/java/com/acme/UploadTest.java"}, true},
		{"com.acme.UploadTest$Inner::testRetry", []string{"src/test/java/com/acme/UploadTest.java"}, true},
		{"tests.test_up::test_b", []string{"tests/test_upload.py", "tests/other/test_up_more.py"}, false},
		{"tests.test_up::test_b", []string{"app/up.py"}, false},
	} {
		e.Test = tc.test
		if got := e.Released(Observation{}, tc.changed) != ""; got != tc.want {
			t.Errorf("%s with %v changed: released %v, want %v", tc.test, tc.changed, got, tc.want)
		}
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

// TestVerifyFileEveryProblem: one run of verify lists every problem of a
// ledger with several broken fields in several entries, in file order, each
// with its line. Before the fix, a field that could not be read (the bad date
// of entries[0]) stopped the value checks of every other field and entry,
// the partial-parse branch of verify never ran them, and problems found after
// the first one lost their line. verify: the problem is found by VerifyFile
// only (a replay or an expiry), not by Parse.
func TestVerifyFileEveryProblem(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "broken.yml"))
	if err != nil {
		t.Fatal(err)
	}
	const t0 = `entries[0] (test "tests/test_upload.py::test_retry_after_429")`
	const t5 = `entries[5] (test "tests/test_upload.py::test_retry_after_429")`
	want := []struct {
		verify bool
		text   string
	}{
		{false, `8: ` + t0 + `: owner: required: want a non-empty string`},
		{false, `10: ` + t0 + `: expires: date "2025-13-45": want YYYY-MM-DD`},
		{false, `11: ` + t0 + `: replacement: required: want a non-empty string`},
		{true, `15: ` + t0 + `: evidence.decision: recorded REGRESSION, but replaying the trace gives FLAKE (LLR -4.739, bounds -2.944 and 2.944)`},
		{false, `16: ` + t0 + `: release_triggers[1]: unknown trigger "bogus_trigger": want one of scope_file_changed, signature_changed`},
		{false, `18: entries[1] (test "a::b"): signature: "": want "sha256:" followed by 8 to 64 lowercase hex digits`},
		{false, `22: entries[1] (test "a::b"): evidence: p0 = 0.95 must be below p1 = 0.9 (p_flake_baseline = p0, p_regression = p1)`},
		{false, `24: entries[1] (test "a::b"): release_triggers: required: want a non-empty list of scope_file_changed, signature_changed`},
		{false, `27: entries[2] (test "c::d"): owner: want a string, got int 42`},
		{false, `28: entries[2] (test "c::d"): issue: required: want a non-empty string`},
		{true, `29: entries[2] (test "c::d"): expires: expired on 2026-06-30 (today is 2026-12-01): the gate fails on an expired entry unless told to warn (the action's fail-on-expired-ledger: false, gate --expired-ledger warn); renew it with fresh evidence or remove it`},
		{false, `36: entries[2] (test "c::d"): evidence.llr_trace[1][2]: want a finite number, got the string "zero"`},
		{false, `39: entries[3]: want a mapping, got int 42`},
		{false, `41: entries[4] (test "e::f"): onwer: unknown field: want one of test, signature, owner, issue, expires, replacement, evidence, release_triggers`},
		{true, `51: entries[4] (test "e::f"): evidence.llr_trace[1][2]: cumulative -0.900, but the replay gives -0.847`},
		{false, `55: entries[4] (test "e::f"): release_triggers[1]: duplicate trigger "signature_changed"`},
		{false, `56: ` + t5 + `: replacement: required field is missing`},
		{false, `57: ` + t5 + `: signature: duplicates entries[0]: one entry per test and signature`},
		{false, `60: ` + t5 + `: evidence.p_regression: want a finite number, got the string "high"`},
		{false, `61: ` + t5 + `: evidence.decision: "MAYBE": want FLAKE, REGRESSION or CONTINUE`},
		{false, `64: comment: unknown field: want one of version, entries`},
	}
	var wantVerify, wantParse, got []string
	for _, w := range want {
		wantVerify = append(wantVerify, "broken.yml:"+w.text)
		if !w.verify {
			wantParse = append(wantParse, "line "+w.text)
		}
	}
	for _, p := range VerifyFile("broken.yml", data, verifyDay) {
		got = append(got, p.String())
	}
	if diff := cmp.Diff(wantVerify, got); diff != "" {
		t.Errorf("VerifyFile (-want +got):\n%s", diff)
	}
	_, err = Parse(data)
	pe, ok := err.(*ParseError)
	if !ok {
		t.Fatalf("Parse error %v (%T), want *ParseError", err, err)
	}
	got = nil
	for _, p := range pe.Problems {
		got = append(got, p.String())
	}
	if diff := cmp.Diff(wantParse, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// TestUnreadableFieldSaidOnce: a field that cannot be read is one problem,
// where it is, and stops only the checks that depend on it: the other fields
// are still checked (here the emptied issue, line 9), and the trace is
// replayed unless the trace or the SPRT's parameters could not be read.
func TestUnreadableFieldSaidOnce(t *testing.T) {
	seed := strings.Replace(string(readSeed(t)), `"https://github.com/acme/shop/issues/12"`, `""`, 1)
	const issue = `9 issue: required: want a non-empty string`
	tests := []struct {
		name, old, new string
		want           []string
	}{
		{"version a string", "version: 1", `version: "1"`,
			[]string{`4 version: want the integer 1, got the string "1"`, issue}},
		{"entry without a test", `- test: "tests/`, `- tset: "tests/`,
			[]string{`6 tset: unknown field: want one of test, signature, owner, issue, expires, replacement, evidence, release_triggers`,
				`6 test: required field is missing`, issue}},
		{"owner an int", `owner: "@storage-team"`, "owner: 42",
			[]string{`8 owner: want a string, got int 42`, issue}},
		{"bad date", "2027-01-31", "2027-13-01",
			[]string{issue, `10 expires: date "2027-13-01": want YYYY-MM-DD`}},
		{"evidence a string", "evidence: {", "evidence: x\n    x_evidence: {",
			[]string{issue, `12 evidence: want a mapping, got the string "x"`,
				`13 x_evidence: unknown field: want one of test, signature, owner, issue, expires, replacement, evidence, release_triggers`}},
		{"p0 a word", "p_flake_baseline: 0.30", "p_flake_baseline: low",
			[]string{issue, `12 evidence.p_flake_baseline: want a finite number, got the string "low"`}},
		{"alpha a word", "alpha: 0.05", "alpha: small",
			[]string{issue, `12 evidence.alpha: want a finite number, got the string "small"`}},
		{"trace a string", "llr_trace: [[false, 1.099, 1.099], [true, -1.946, -0.847],\n                           [true, -1.946, -2.793], [true, -1.946, -4.739]]",
			"llr_trace: none", []string{issue, `13 evidence.llr_trace: want a list, got the string "none"`}},
		{"trace step short", "[true, -1.946, -0.847]", "[true, -1.946]",
			[]string{issue, `13 evidence.llr_trace[1]: want [passed, step, cumulative], got 2 elements`}},
		{"trace outcome a word", "[true, -1.946, -2.793]", "[yes please, -1.946, -2.793]",
			[]string{issue, `14 evidence.llr_trace[2][0]: want true (passed) or false (failed), got the string "yes please"`}},
		{"decision a list", "decision: FLAKE", "decision: [FLAKE]",
			[]string{issue, `15 evidence.decision: want a string, got a list`}},
		{"triggers a string", "[scope_file_changed, signature_changed]", "scope_file_changed",
			[]string{issue, `16 release_triggers: want a list, got the string "scope_file_changed"`}},
		{"trigger an int", "[scope_file_changed, signature_changed]", "[scope_file_changed, 7]",
			[]string{issue, `16 release_triggers[1]: want a string, got int 7`}},
		// Read, but wrong: the trace is replayed along with the other checks.
		{"trace wrong", "[true, -1.946, -2.793]", "[true, -1.946, -2.5]",
			[]string{issue, `14 evidence.llr_trace[2][2]: cumulative -2.500, but the replay gives -2.793`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(seed, tc.old, tc.new, 1)
			if text == seed {
				t.Fatalf("%q is not in the seed", tc.old)
			}
			var got []string
			for _, p := range VerifyFile("l.yml", []byte(text), verifyDay) {
				got = append(got, fmt.Sprintf("%d %s: %s", p.Line, p.Field, p.Message))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("VerifyFile (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseBoundListsFirstProblems: past the bound, the problems listed are
// the first ones in the file, whichever check found them: the value check of
// entries[0], found after reading the whole file, comes before the 150
// unreadable steps of entries[1], and the two problems of entries[2] are
// among those counted.
func TestParseBoundListsFirstProblems(t *testing.T) {
	owner := strings.Replace(string(readSeed(t)), `owner: "@storage-team"`, `owner: ""`, 1)
	_, second, _ := strings.Cut(owner, "entries:\n")
	text := owner + "  - {evidence: {llr_trace: [" + strings.TrimSuffix(strings.Repeat("[], ", 150), ", ") + "]}}\n" + second
	ps := VerifyFile("l.yml", []byte(text), verifyDay)
	if len(ps) != maxProblems+1 {
		t.Fatalf("%d problems, want %d and a count of the rest", len(ps), maxProblems+1)
	}
	if p := ps[0]; p.Entry != 0 || p.Field != "owner" || p.Line != 8 {
		t.Errorf("first problem %v, want entries[0]'s owner on line 8", p)
	}
	for i, p := range ps[1:maxProblems] {
		if p.Entry != 1 || p.Line != 17 {
			t.Errorf("problem %d: %v, want one of entries[1] on line 17", i+1, p)
		}
	}
	// entries[1]: 6 fields and 3 evidence fields missing, 150 empty steps;
	// entries[2]: its owner, and it duplicates entries[0].
	want := fmt.Sprintf("%d more problems not listed", 1+6+3+150+2-maxProblems)
	if last := ps[maxProblems]; last.Entry != -1 || last.Message != want {
		t.Errorf("last problem %v, want %q", last, want)
	}
}

// TestParseOneDocument: a ledger is one YAML document. A second one,
// after ---, is refused at the line of its ---, by Parse (the gate, the
// report) and VerifyFile (ledger verify) alike, whether it is a ledger,
// garbage or empty. Before, yaml.Unmarshal read the first and dropped the
// rest: ledger verify said "every entry verified" of a valid ledger
// followed by --- and anything. Markers around the one document are fine.
func TestParseOneDocument(t *testing.T) {
	seed := string(readSeed(t))
	n := strings.Count(seed, "\n")
	for _, tc := range []struct {
		name string
		text string
		line int // of the problem; 0: accepted
	}{
		{"one document", seed, 0},
		{"within markers", "---\n" + seed + "...\n", 0},
		{"a second ledger", seed + "---\n" + seed, n + 1},
		{"a second document of another version", seed + "\n# more\n---\nversion: 7\nentries: [{bogus: 1}]\n", n + 3},
		{"garbage after ---", seed + "---\n  - : : [\n", n + 1},
		{"an empty second document: nothing to ignore", seed + "---\n", 0},
		{"empty documents with a comment", seed + "---\n# nothing\n---\n", 0},
		{"a second document after an empty one", seed + "---\n---\nversion: 1\n", n + 2},
		{"garbage after an empty one", seed + "---\n---\n  - : : [\n", n + 2},
		{"after an end marker", seed + "...\n---\nversion: 1\n", n + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			ps := VerifyFile("ledger.yml", []byte(tc.text), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
			if tc.line == 0 {
				if err != nil || len(ps) > 0 {
					t.Errorf("Parse: %v; VerifyFile: %v", err, ps)
				}
				return
			}
			pe, ok := err.(*ParseError)
			if !ok || len(pe.Problems) != 1 || len(ps) != 1 {
				t.Fatalf("Parse: %v; VerifyFile: %v; want one problem each", err, ps)
			}
			for _, p := range []Problem{pe.Problems[0], ps[0]} {
				if p.Line != tc.line || !strings.Contains(p.Message, "a second YAML document is not accepted") {
					t.Errorf("problem %v, want line %d: a second YAML document", p, tc.line)
				}
			}
		})
	}
}

// TestParseYAMLErrorLine: go-yaml names the line where the block it was
// reading begins, not the fault's (an entry's last key, line 16, indented
// one space less is reported at "entries:", line 5); the message says so.
func TestParseYAMLErrorLine(t *testing.T) {
	seed := string(readSeed(t))
	text := strings.Replace(seed, "    release_triggers:", "   release_triggers:", 1)
	_, err := Parse([]byte(text))
	want := "line 5: did not find expected '-' indicator (the line where the block or flow being read begins: the fault is there or further down in it)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
