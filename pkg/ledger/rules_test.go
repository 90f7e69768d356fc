package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/sprt"
)

func withEntries(es ...Entry) *Ledger { return &Ledger{Version: 1, Entries: es} }

func TestCheck(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	seed := seedEntry()
	other := seedEntry()
	other.Test, other.Signature = "tests/test_ws.py::test_reconnect", "sha256:0123456789ab"
	expired := seedEntry()
	expired.Expires = Date{2026, time.May, 1}
	later := seedEntry()
	later.Expires = Date{2028, time.January, 31}
	badTrace := other
	badTrace.Evidence.Trace = []sprt.Step{{Passed: false, Step: 1.099, Cumulative: 1.099}}
	badTrace.Evidence.Decision = sprt.Flake

	baseFlaky := map[string]Observation{other.Test: {BaseFailures: 3, HeadRuns: 5, HeadFailures: 1}}
	// The test of other renamed: the same entry under its new name.
	renamed := other
	renamed.Test = "tests/test_ws.py::test_reconnect_after_close"
	renamedObs := map[string]Observation{renamed.Test: {HeadRuns: 5, HeadFailures: 1}}
	renamedOther := renamed
	renamedOther.Signature = "sha256:fedcba987654"
	type want struct {
		rule string
		sev  Severity
	}
	tests := []struct {
		name       string
		base, head *Ledger
		ctx        Context
		want       []want
		text       string // substring of the first finding
	}{
		{name: "unchanged", base: withEntries(seed), head: withEntries(seed)},
		{name: "no ledger at all"},
		{name: "growth without approval, base evidence", base: withEntries(seed), head: withEntries(seed, other),
			ctx: Context{Observed: baseFlaky, ApprovalLabel: "ledger-approved"}, want: []want{{RuleGrowth, Error}}, text: `without the "ledger-approved" label`},
		{name: "growth approved, base evidence", base: withEntries(seed), head: withEntries(seed, other),
			ctx: Context{Observed: baseFlaky, Approved: true}},
		{name: "new entry on head-only evidence", base: withEntries(seed), head: withEntries(seed, other),
			ctx:  Context{Approved: true, Observed: map[string]Observation{other.Test: {HeadRuns: 5, HeadFailures: 2}}},
			want: []want{{RuleNoBaseEvidence, Error}}, text: "head-only evidence is never enough"},
		{name: "new entry for a test the gate never saw", base: nil, head: withEntries(other),
			ctx: Context{Approved: true}, want: []want{{RuleNoBaseEvidence, Error}}},
		{name: "new entry whose trace does not replay", base: nil, head: withEntries(badTrace),
			ctx: Context{Approved: true, Observed: baseFlaky}, want: []want{{RuleEvidence, Error}}, text: "evidence.decision"},
		{name: "expired fails", base: withEntries(expired), head: withEntries(expired), ctx: Context{Now: now},
			want: []want{{RuleExpired, Error}}, text: "expired on 2026-05-01"},
		{name: "expired warns when configured", base: withEntries(expired), head: withEntries(expired), ctx: Context{Now: now, ExpiredWarn: true},
			want: []want{{RuleExpired, Warning}}},
		{name: "expiry extended without approval", base: withEntries(seed), head: withEntries(later), ctx: Context{Now: now},
			want: []want{{RuleExpiryExtended, Error}}, text: "from 2027-01-31 to 2028-01-31"},
		{name: "expiry extended with approval", base: withEntries(seed), head: withEntries(later), ctx: Context{Now: now, Approved: true}},
		{name: "unfreeze while the test still fails", base: withEntries(seed, other), head: withEntries(seed),
			ctx: Context{Now: now, Observed: baseFlaky}, want: []want{{RuleUnfreeze, Error}}, text: "still fails on head (1 of 5 runs)"},
		{name: "unfreeze of a test that no longer runs", base: withEntries(seed, other), head: withEntries(seed),
			ctx: Context{Now: now}, want: []want{{RuleUnfreeze, Error}}, text: "did not run on head"},
		{name: "release: test ran clean", base: withEntries(seed, other), head: withEntries(seed),
			ctx:  Context{Now: now, Observed: map[string]Observation{other.Test: {HeadRuns: 5}}},
			want: []want{{RuleReleased, Warning}}, text: "ran clean on head (5 runs)"},
		{name: "release: scope file changed", base: withEntries(seed), head: withEntries(),
			ctx:  Context{Now: now, ChangedFiles: []string{"tests/test_upload.py"}, Observed: map[string]Observation{seed.Test: {HeadRuns: 5, HeadFailures: 1}}},
			want: []want{{RuleReleased, Warning}}, text: "released by scope_file_changed: tests/test_upload.py changed"},
		{name: "release: signature changed", base: withEntries(seed), head: withEntries(),
			ctx:  Context{Now: now, Observed: map[string]Observation{seed.Test: {HeadRuns: 5, HeadFailures: 1, Signatures: []string{"sha256:ffffffff"}}}},
			want: []want{{RuleReleased, Warning}}, text: "released by signature_changed"},
		{name: "release: expired", base: withEntries(expired), head: withEntries(), ctx: Context{Now: now},
			want: []want{{RuleReleased, Warning}}, text: "it expired on 2026-05-01"},
		// The README tells users to rename an entry with its test: the
		// entry moves, with no base evidence needed under the new name and
		// no unfreeze of the old.
		{name: "entry moved with its renamed test", base: withEntries(seed, other), head: withEntries(seed, renamed),
			ctx: Context{Now: now, Observed: renamedObs}, want: []want{{RuleRenamed, Warning}}, text: "moves to tests/test_ws.py::test_reconnect_after_close"},
		{name: "a move to a test that does not run on head is no rename", base: withEntries(seed, other), head: withEntries(seed, renamed),
			ctx: Context{Now: now}, want: []want{{RuleGrowth, Error}, {RuleUnfreeze, Error}, {RuleNoBaseEvidence, Error}}},
		{name: "a move while the old test still runs is no rename", base: withEntries(seed, other), head: withEntries(seed, renamed),
			ctx:  Context{Now: now, Observed: map[string]Observation{other.Test: {HeadRuns: 5, HeadFailures: 1}, renamed.Test: {HeadRuns: 5}}},
			want: []want{{RuleGrowth, Error}, {RuleUnfreeze, Error}, {RuleNoBaseEvidence, Error}}},
		{name: "a move with another signature is no rename", base: withEntries(seed, other), head: withEntries(seed, renamedOther),
			ctx: Context{Now: now, Observed: renamedObs}, want: []want{{RuleGrowth, Error}, {RuleUnfreeze, Error}, {RuleNoBaseEvidence, Error}}},
		// An entry released (expired) frees no slot: the new one is growth.
		// Counted by entries, this swap passed without the label.
		{name: "swap: an expired entry leaves, another comes", base: withEntries(expired), head: withEntries(other),
			ctx:  Context{Now: now, Observed: baseFlaky, ApprovalLabel: "ledger-approved"},
			want: []want{{RuleGrowth, Error}, {RuleReleased, Warning}}, text: `grows by 1 new entry (tests/test_ws.py::test_reconnect; 1 entries on base, 1 on head) without the "ledger-approved" label`},
		{name: "swap approved", base: withEntries(expired), head: withEntries(other),
			ctx: Context{Now: now, Observed: baseFlaky, Approved: true}, want: []want{{RuleReleased, Warning}}},
		// A move onto a test the base ran is no rename: a new exemption
		// for that test (it passed with a warning).
		{name: "a move onto a test the base ran is no rename", base: withEntries(seed, other), head: withEntries(seed, renamed),
			ctx:  Context{Now: now, Observed: map[string]Observation{renamed.Test: {HeadRuns: 5, HeadFailures: 1, BaseRuns: 5}}},
			want: []want{{RuleGrowth, Error}, {RuleUnfreeze, Error}, {RuleNoBaseEvidence, Error}}},
		// A quarantined test the PR deletes, declared, leaves with its
		// entry (it blocked as an unfreeze, for ever).
		{name: "release: the test removed, declared", base: withEntries(seed, other), head: withEntries(seed),
			ctx:  Context{Now: now, DeclaredBy: `"Test-Changes:" in the PR body`},
			want: []want{{RuleReleased, Warning}}, text: "no longer runs on head, and the PR declares its test changes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := Check(tc.base, tc.head, tc.ctx)
			var got []want
			for _, f := range fs {
				got = append(got, want{f.Rule, f.Severity})
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%v", diff, fs)
			}
			if tc.text != "" && (len(fs) == 0 || !strings.Contains(fs[0].Message, tc.text)) {
				t.Errorf("first finding %v does not contain %q", fs, tc.text)
			}
		})
	}
}

func TestExempt(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	seed := seedEntry()
	second := seedEntry()
	second.Signature = "sha256:aaaaaaaaaaaa"
	second.Owner = "@other-team"
	l := withEntries(seed, second)
	tests := []struct {
		name string
		obs  Observation
		ctx  Context
		want bool
		why  string
	}{
		{"matching signature", Observation{HeadFailures: 1, Signatures: []string{seed.Signature}}, Context{Now: now}, true, "owner @storage-team"},
		{"both entries' signatures", Observation{Signatures: []string{seed.Signature, second.Signature}}, Context{Now: now}, true, "@other-team"},
		{"one unknown signature", Observation{Signatures: []string{seed.Signature, "sha256:bbbbbbbb"}}, Context{Now: now}, false, "no live ledger entry records"},
		{"no signature", Observation{HeadFailures: 1}, Context{Now: now}, false, "no failure signature"},
		{"expired", Observation{Signatures: []string{seed.Signature}}, Context{Now: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)}, false, "expired"},
		{"scope file changed", Observation{Signatures: []string{seed.Signature}}, Context{Now: now, ChangedFiles: []string{"tests/test_upload.py"}}, false, "scope_file_changed"},
		{"file from the observation", Observation{File: "src/up.py", Signatures: []string{seed.Signature}}, Context{Now: now, ChangedFiles: []string{"src/up.py"}}, false, "src/up.py changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := l.Exempt(seed.Test, tc.obs, tc.ctx)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("Exempt = %v, %q; want %v with %q", got, why, tc.want, tc.why)
			}
		})
	}
	if ok, why := l.Exempt("some::other", Observation{Signatures: []string{seed.Signature}}, Context{Now: now}); ok || why != "no ledger entry" {
		t.Errorf("Exempt(other test) = %v, %q", ok, why)
	}
	var nilLedger *Ledger
	if ok, _ := nilLedger.Exempt(seed.Test, Observation{Signatures: []string{seed.Signature}}, Context{Now: now}); ok {
		t.Errorf("a nil ledger exempted a test")
	}
}

// TestEntryCoversLegs: the gate tells a test apart by matrix leg when its
// runs come from a matrix's artifacts ("c::n [junit-windows]"). An entry
// for "c::n" covers each leg: it exempts the leg's failures, and the legs'
// base failures are its base evidence. An entry for one leg covers that
// leg only.
func TestEntryCoversLegs(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	seed := seedEntry()
	leg := seed.Test + " [junit-windows]"
	obs := Observation{HeadRuns: 5, HeadFailures: 2, Signatures: []string{seed.Signature}}
	l := withEntries(seed)
	if ok, why := l.Exempt(leg, obs, Context{Now: now}); !ok {
		t.Errorf("an entry for %s does not exempt %s: %s", seed.Test, leg, why)
	}
	narrow := seedEntry()
	narrow.Test = leg
	for _, other := range []string{seed.Test, seed.Test + " [junit-ubuntu]", seed.Test + "2 [junit-windows]"} {
		if ok, _ := withEntries(narrow).Exempt(other, obs, Context{Now: now}); ok {
			t.Errorf("an entry for %s exempts %s", leg, other)
		}
	}
	// A new entry for the test, with base failures seen on one leg only.
	ctx := Context{Now: now, Approved: true, Observed: map[string]Observation{
		seed.Test + " [junit-ubuntu]":  {HeadRuns: 5},
		seed.Test + " [junit-windows]": {BaseFailures: 2, HeadRuns: 5, HeadFailures: 1},
	}}
	if fs := Check(nil, withEntries(seed), ctx); len(fs) != 0 {
		t.Errorf("a new entry with base evidence on a leg: %+v", fs)
	}
	delete(ctx.Observed, seed.Test+" [junit-windows]")
	if fs := Check(nil, withEntries(seed), ctx); len(fs) != 1 || fs[0].Rule != RuleNoBaseEvidence {
		t.Errorf("a new entry without base evidence on any leg: %+v", fs)
	}
}

// A move onto a test the base ran is no rename, also when the gate told the
// test apart by leg ("c::n [junit-windows]"): observed sums the legs'
// observations but not their BaseRuns, so the move read as a rename and
// the new exemption needed neither the label nor base evidence.
func TestMoveOntoALeggedBaseTestIsNoRename(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	seed := seedEntry()
	other := seedEntry()
	other.Test, other.Signature = "tests/test_ws.py::test_reconnect", "sha256:0123456789ab"
	moved := other
	moved.Test = "tests/test_ws.py::test_send"
	obs := map[string]Observation{
		moved.Test + " [junit-ubuntu]":  {HeadRuns: 5, HeadFailures: 1, BaseRuns: 5},
		moved.Test + " [junit-windows]": {HeadRuns: 5, HeadFailures: 1, BaseRuns: 5},
	}
	got := Check(withEntries(seed, other), withEntries(seed, moved), Context{Now: now, Observed: obs})
	rules := map[string]bool{}
	for _, f := range got {
		rules[f.Rule] = true
	}
	if rules[RuleRenamed] || !rules[RuleGrowth] {
		t.Errorf("findings %+v: want growth, no rename", got)
	}
}
