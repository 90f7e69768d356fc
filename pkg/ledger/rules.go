package ledger

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/sprt"

	"github.com/flakegate/flakegate/pkg/internal/wilson"
)

// The gate reads the ledger twice: as it is on the base (trusted: it was
// reviewed and merged) and as the PR proposes it on the head. The rules below
// compare the two, with what the gate observed of each test.
//
// Exemption comes from the base ledger only. A patch cannot exempt its own
// failures by adding, re-signing or extending an entry in the same PR: those
// edits take effect once merged, after review.
//
// Freezing and unfreezing:
//   - Growth. More entries at head than at base fails unless the PR carries
//     the approval label.
//   - New entries need base evidence. An entry added (or re-signed, or given
//     new evidence) at head is accepted only if the gate saw its test fail on
//     the base side: in the K base repetitions or in the base-branch history.
//     A test that failed only on head has head-only evidence, which is never
//     enough (article B), however convincing its trace.
//   - Extending an expiry (or dropping it) is debt growth: approval label.
//     So is widening an entry in place: new evidence at a higher flake rate
//     or under another SPRT (p1, alpha, beta), or a release trigger dropped.
//   - New evidence is the gate's: the SPRT's p1, alpha and beta are the
//     gate's (Context.SPRT), and the recorded rate is one the base side
//     allows: at most the p0 the gate's SPRT weighs for the test in this
//     run, the floor, or the Wilson 99.9% upper bound of its failures
//     (article B). ledger verify checks only that a trace replays under the SPRT
//     the entry names, which an author may choose: with beta 0.9, or p1
//     0.999999, one green is FLAKE evidence.
//   - Expiry. An entry past its date fails the gate (or warns, if so
//     configured) until it is renewed with approval or removed.
//   - Unfreezing. Removing an entry is a release, and a release must rest on
//     evidence, as the freeze did: one of its release triggers fired in this
//     PR (a file of its test changed; the test failed with another signature),
//     or it expired, or the test ran clean on head. Removing an entry of a test
//     that still fails on head, or that no longer runs, with no trigger fired,
//     is the patch rewriting the freeze set to suit its own run ("a patch may
//     not unfreeze a quarantined test to make its own run greener"): it fails.
//
// Any change to the set of frozen test names is also a property violation
// unless the PR declares it; the gate checks that (see FreezeSet).

// Observation is what the gate saw of one test in this PR.
type Observation struct {
	BaseFailures int      // failures on the base side: K repetitions plus history
	BaseRuns     int      // pass/fail results on the base side: K repetitions plus history
	HeadRuns     int      // pass/fail results on head
	HeadFailures int      // failures on head
	Signatures   []string // failure signatures seen on head
	File         string   // the test's source file, when known
	// FailedAs lists, when the gate compared the test across its matrix
	// legs (the two sides told them apart differently), the legs in which
	// it failed on head ("c::n [junit-windows]"). Entries for legs cover
	// "c::n" then if every leg it failed on has one (or the test has one):
	// a failure on another leg is not the quarantined flake's.
	FailedAs []string
	// P0 is the baseline rate the gate's SPRT weighed for the test in
	// this evaluation (the p0 gate.json records as its sprt), 0 when it
	// recorded none. New evidence at that rate is the gate's own: the
	// suite prior's posterior mean sits on a grid, and with thousands of
	// base-side runs its nearest rate can lie above the Wilson bound.
	P0 float64
}

// Context carries what the rules need besides the two ledgers.
type Context struct {
	Now           time.Time              // the clock, for expiry
	ChangedFiles  []string               // paths the PR touches (both sides of a rename)
	Observed      map[string]Observation // by test name
	Approved      bool                   // the PR carries the approval label
	ApprovalLabel string                 // its name, for messages
	ExpiredWarn   bool                   // an expired entry warns instead of failing
	// DeclaredBy names the PR's declaration of its test changes (a
	// "Test-Changes:" line or the declaration label), "" without one: a
	// quarantined test the PR removes, declared, leaves the ledger with it.
	DeclaredBy string
	// SPRT is the gate's SPRT (P1, Alpha, Beta; P0 is not used): new
	// evidence must have been computed with it. Zero fields are the
	// seed's defaults.
	SPRT sprt.Test
	// P0Floor is the least p0 the gate's SPRT uses (gate.P0Floor): new
	// evidence may record it whatever the base side's failures.
	P0Floor float64
}

// gateSPRT is ctx.SPRT with the seed's defaults for its zero fields.
func (ctx Context) gateSPRT() sprt.Test {
	t := ctx.SPRT
	if t.P1 == 0 {
		t.P1 = sprt.DefaultP1
	}
	if t.Alpha == 0 {
		t.Alpha = sprt.DefaultAlpha
	}
	if t.Beta == 0 {
		t.Beta = sprt.DefaultBeta
	}
	return t
}

// observed is what the gate saw of test: its own observation, or, when
// the gate told the test apart by project (a matrix's legs, "c::n
// [junit-windows]"), all of its projects' together, so that an entry for
// "c::n" covers every leg.
func (ctx Context) observed(test string) (Observation, bool) {
	if o, ok := ctx.Observed[test]; ok {
		return o, true
	}
	var all Observation
	seen := false
	names := make([]string, 0)
	for name := range ctx.Observed {
		if model.Refines(name, test) {
			names = append(names, name)
		}
	}
	slices.Sort(names) // the same File and signature order every time
	for _, name := range names {
		o := ctx.Observed[name]
		seen = true
		all.BaseFailures += o.BaseFailures
		all.BaseRuns += o.BaseRuns
		all.HeadRuns += o.HeadRuns
		all.HeadFailures += o.HeadFailures
		for _, s := range o.Signatures {
			if !slices.Contains(all.Signatures, s) {
				all.Signatures = append(all.Signatures, s)
			}
		}
		if all.File == "" {
			all.File = o.File
		}
		all.P0 = max(all.P0, o.P0)
	}
	return all, seen
}

// Severity says whether a finding fails the gate.
type Severity string

// Severities.
const (
	Error   Severity = "error"   // fails the gate
	Warning Severity = "warning" // reported only
)

// Finding is one ledger rule outcome.
type Finding struct {
	Rule     string   `json:"rule"` // growth, no-base-evidence, evidence, expiry-extended, widened, expired, unfreeze, released, renamed
	Severity Severity `json:"severity"`
	Test     string   `json:"test,omitempty"`
	Message  string   `json:"message"`
}

// Rule names.
const (
	RuleGrowth         = "growth"
	RuleNoBaseEvidence = "no-base-evidence"
	RuleEvidence       = "evidence"
	RuleExpiryExtended = "expiry-extended"
	RuleWidened        = "widened"
	RuleExpired        = "expired"
	RuleUnfreeze       = "unfreeze"
	RuleReleased       = "released"
	RuleRenamed        = "renamed"
)

type entryKey struct{ test, sig string }

func keyOf(e Entry) entryKey { return entryKey{e.Test, e.Signature} }

// Check applies the rules above to the base and head ledgers. A nil ledger is
// an absent file, which has no entries. Findings come out sorted by test, then
// rule.
func Check(base, head *Ledger, ctx Context) []Finding {
	var out []Finding
	add := func(rule string, sev Severity, test, msg string, args ...any) {
		out = append(out, Finding{Rule: rule, Severity: sev, Test: test, Message: fmt.Sprintf(msg, args...)})
	}
	baseEntries := entriesOf(base)
	headEntries := entriesOf(head)
	label := ctx.ApprovalLabel
	if label == "" {
		label = "the approval label"
	} else {
		label = fmt.Sprintf("the %q label", label)
	}

	byKey := map[entryKey]Entry{}
	for _, e := range baseEntries {
		byKey[keyOf(e)] = e
	}
	moved := renames(baseEntries, headEntries, byKey, ctx)
	// Growth is any entry new to the ledger, not a larger count: an entry
	// released (expired, its file changed) frees no slot for another.
	var added []string
	for _, e := range headEntries {
		_, existed := byKey[keyOf(e)]
		if _, ok := moved[keyOf(e)]; !existed && !ok {
			added = append(added, e.Test)
		}
	}
	if len(added) > 0 && !ctx.Approved {
		more := ""
		if len(added) > 3 {
			more = fmt.Sprintf(" and %d more", len(added)-3)
		}
		add(RuleGrowth, Error, "", "the ledger grows by %d new entr%s (%s%s; %d entries on base, %d on head) without %s: every new exemption needs it, also where another entry leaves",
			len(added), map[bool]string{true: "y", false: "ies"}[len(added) == 1], strings.Join(added[:min(len(added), 3)], ", "), more, len(baseEntries), len(headEntries), label)
	}
	onHead := map[entryKey]bool{}
	for i, e := range headEntries {
		onHead[keyOf(e)] = true
		old, existed := byKey[keyOf(e)]
		if from, ok := moved[keyOf(e)]; ok {
			old, existed = from, true
			onHead[keyOf(from)] = true
			add(RuleRenamed, Warning, e.Test, "the entry for %s moves to %s with its evidence: the test was renamed (the old name no longer runs on head, the new one does)", from.Test, e.Test)
		}
		fresh := !existed || !reflect.DeepEqual(old.Evidence, e.Evidence)
		if fresh {
			what := "new entry"
			if existed {
				what = "entry with new evidence"
			}
			obs, seen := ctx.observed(e.Test)
			if !seen || obs.BaseFailures == 0 {
				add(RuleNoBaseEvidence, Error, e.Test,
					"%s for %s (%s) has no base evidence: the test never failed on the base side (base repetitions or history) in this gate's data, and head-only evidence is never enough",
					what, e.Test, e.Signature)
			}
			for _, p := range replay(i, e) {
				add(RuleEvidence, Error, e.Test, "%s does not replay: %s", what, p)
			}
			if why := foreignEvidence(e.Evidence, obs, seen, ctx.gateSPRT(), ctx.P0Floor); why != "" {
				add(RuleEvidence, Error, e.Test, "%s for %s is not the gate's evidence: %s", what, e.Test, why)
			}
		}
		if existed && !ctx.Approved {
			if why := widens(old, e); why != "" {
				add(RuleWidened, Error, e.Test, "the entry for %s widens its exemption (%s) without %s", e.Test, why, label)
			}
		}
		if existed && extends(old.Expires, e.Expires) && !ctx.Approved {
			add(RuleExpiryExtended, Error, e.Test, "the entry for %s moves its expiry from %s to %s without %s",
				e.Test, dateOrNever(old.Expires), dateOrNever(e.Expires), label)
		}
		if e.Expires.ExpiredAt(ctx.Now) {
			sev := Error
			if ctx.ExpiredWarn {
				sev = Warning
			}
			add(RuleExpired, sev, e.Test, "the entry for %s (owner %s, %s) expired on %s: renew it with evidence or fix the test",
				e.Test, e.Owner, e.Issue, e.Expires)
		}
	}

	for _, e := range baseEntries {
		if onHead[keyOf(e)] {
			continue
		}
		obs, seen := ctx.observed(e.Test)
		if why := releaseEvidence(e, obs, seen, ctx); why != "" {
			add(RuleReleased, Warning, e.Test, "the entry for %s (%s) is removed: %s", e.Test, e.Signature, why)
			continue
		}
		state := "did not run on head"
		if seen && obs.HeadFailures > 0 {
			state = fmt.Sprintf("still fails on head (%d of %d runs)", obs.HeadFailures, obs.HeadRuns)
		}
		add(RuleUnfreeze, Error, e.Test,
			"the entry for %s (%s) is removed without release evidence: no release trigger fired, it has not expired, and the test %s; a patch may not unfreeze a quarantined test to suit its own run",
			e.Test, e.Signature, state)
	}

	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.Test, b.Test); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return out
}

// renames finds the entries a PR moved to a renamed test: a head entry
// that is not on base, and a base entry that is not on head, with the same
// signature and the same recorded evidence, for a test that no longer runs
// on head while the head entry's test does. Such an entry is the base
// entry under the test's new name: its evidence was admitted when the
// entry was, so it needs no new base evidence (the renamed test has none
// under its new name), and its removal under the old name is no unfreeze.
// Each base entry moves at most once. It is keyed by the head entry.
// Renaming a frozen test still changes the frozen set's names, which the
// PR must declare (FreezeSet), and exemption still comes from the base
// ledger only.
func renames(baseEntries, headEntries []Entry, byKey map[entryKey]Entry, ctx Context) map[entryKey]Entry {
	headKeys := map[entryKey]bool{}
	for _, e := range headEntries {
		headKeys[keyOf(e)] = true
	}
	var gone []Entry // base entries not on head whose test did not run there
	for _, e := range baseEntries {
		if headKeys[keyOf(e)] {
			continue
		}
		if obs, seen := ctx.observed(e.Test); seen && obs.HeadRuns > 0 {
			continue
		}
		gone = append(gone, e)
	}
	moved := map[entryKey]Entry{}
	used := map[entryKey]bool{}
	for _, e := range headEntries {
		if _, existed := byKey[keyOf(e)]; existed {
			continue
		}
		// The new name must run on head and be new there: an entry moved
		// onto a test the base ran is a new exemption for that test.
		if obs, seen := ctx.observed(e.Test); !seen || obs.HeadRuns == 0 || obs.BaseRuns > 0 {
			continue
		}
		for _, o := range gone {
			if !used[keyOf(o)] && o.Test != e.Test && o.Signature == e.Signature && reflect.DeepEqual(o.Evidence, e.Evidence) {
				used[keyOf(o)] = true
				moved[keyOf(e)] = o
				break
			}
		}
	}
	return moved
}

func entriesOf(l *Ledger) []Entry {
	if l == nil {
		return nil
	}
	return l.Entries
}

// paramEqual compares SPRT parameters read from YAML with the gate's.
func paramEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// foreignEvidence says why new evidence is not what the gate would record
// for the test, or "": an SPRT other than the gate's, or a flake rate
// above what the base side's failures allow.
func foreignEvidence(ev Evidence, obs Observation, seen bool, gate sprt.Test, floor float64) string {
	var bad []string
	for _, p := range []struct {
		field     string
		got, want float64
	}{{"p_regression", ev.PRegression, gate.P1}, {"alpha", ev.Alpha, gate.Alpha}, {"beta", ev.Beta, gate.Beta}} {
		if !paramEqual(p.got, p.want) {
			bad = append(bad, fmt.Sprintf("%s %v, the gate's is %v", p.field, p.got, p.want))
		}
	}
	if seen && obs.BaseRuns > 0 && obs.BaseFailures > 0 { // none: no-base-evidence says so
		// The evidence was most often recorded in another run (README: a
		// run in which the test failed on head), on other base
		// repetitions and another history window: held to the 95% bound
		// of this run's sample, a stationary flake's own evidence was
		// refused in 3-7% of the PRs adding it. The 99.9% bound still
		// refuses a rate the base side rules out (0.8 against 15 of 155).
		if hi := max(wilson.UpperZ(obs.BaseFailures, obs.BaseRuns, wilson.Z999), floor, obs.P0); ev.PFlakeBaseline > hi+1e-9 {
			bad = append(bad, fmt.Sprintf("p_flake_baseline %v is above %.4f, the most of the Wilson 99.9%% upper bound of the base side's %d failures in %d runs, the gate's floor and the p0 its SPRT weighed in this run (%.4f)", ev.PFlakeBaseline, hi, obs.BaseFailures, obs.BaseRuns, obs.P0))
		}
	}
	return strings.Join(bad, "; ")
}

// widens says how a head entry exempts more than the base entry it
// replaces (same test and signature), or "": a higher recorded flake rate,
// which the ledger's contradiction test reads as what the test may fail
// at; another SPRT; or a release trigger dropped.
func widens(old, e Entry) string {
	var why []string
	if e.Evidence.PFlakeBaseline > old.Evidence.PFlakeBaseline+1e-9 {
		why = append(why, fmt.Sprintf("p_flake_baseline %v → %v", old.Evidence.PFlakeBaseline, e.Evidence.PFlakeBaseline))
	}
	for _, p := range []struct {
		field    string
		old, new float64
	}{{"p_regression", old.Evidence.PRegression, e.Evidence.PRegression}, {"alpha", old.Evidence.Alpha, e.Evidence.Alpha}, {"beta", old.Evidence.Beta, e.Evidence.Beta}} {
		if !paramEqual(p.old, p.new) {
			why = append(why, fmt.Sprintf("%s %v → %v", p.field, p.old, p.new))
		}
	}
	for _, t := range old.ReleaseTriggers {
		if !slices.Contains(e.ReleaseTriggers, t) {
			why = append(why, "release trigger "+string(t)+" dropped")
		}
	}
	return strings.Join(why, "; ")
}

// extends reports whether an expiry moved later, or was dropped.
func extends(old, new Date) bool {
	switch {
	case old.IsZero():
		return false
	case new.IsZero():
		return true
	default:
		return new.after(old)
	}
}

func dateOrNever(d Date) string {
	if d.IsZero() {
		return "never"
	}
	return d.String()
}

// releaseEvidence says why removing e is a legitimate release, or "".
func releaseEvidence(e Entry, obs Observation, seen bool, ctx Context) string {
	if why := e.Released(obs, ctx.ChangedFiles); why != "" {
		return why
	}
	if e.Expires.ExpiredAt(ctx.Now) {
		return "it expired on " + e.Expires.String()
	}
	if seen && obs.HeadRuns > 0 && obs.HeadFailures == 0 {
		return fmt.Sprintf("the test ran clean on head (%d runs)", obs.HeadRuns)
	}
	if (!seen || obs.HeadRuns == 0) && ctx.DeclaredBy != "" {
		// Removed with its test: the gate judges the removal (declared,
		// or a new skip, which no declaration waives).
		return "the test no longer runs on head, and the PR declares its test changes (" + ctx.DeclaredBy + ")"
	}
	return ""
}

// Released says which release trigger of e fired for this PR, or "" when
// none did:
//   - scope_file_changed: the test's file is among the changed files (the
//     file comes from the observation, or from the test's name, see ScopeFile);
//   - signature_changed: the test failed on head, and with none of the
//     recorded signature.
func (e Entry) Released(obs Observation, changedFiles []string) string {
	for _, t := range e.ReleaseTriggers {
		switch t {
		case ScopeFileChanged:
			file := obs.File
			if file == "" {
				file = ScopeFile(e.Test)
			}
			if file == "" {
				file = moduleFile(e.Test, changedFiles)
			}
			if file != "" && slices.Contains(changedFiles, file) {
				return fmt.Sprintf("released by %s: %s changed", t, file)
			}
		case SignatureChanged:
			if len(obs.Signatures) > 0 && !slices.Contains(obs.Signatures, e.Signature) {
				return fmt.Sprintf("released by %s: head failed with %s, not %s", t, strings.Join(obs.Signatures, ", "), e.Signature)
			}
		}
	}
	return ""
}

// Exempt reports whether the ledger exempts a test's head failures, and why
// (or why not). It does when every failure signature seen on head matches a
// live entry for the test: one that has not expired at now and that no
// release trigger has released. Failures with no signature cannot match. Call
// it with the base ledger: see the notes at the top of this file.
func (l *Ledger) Exempt(test string, obs Observation, ctx Context) (bool, string) {
	e, why := l.Exemption(test, obs, ctx)
	return e != nil, why
}

// Exemption is Exempt with the entry that exempts: nil, and why not, when
// none does.
func (l *Ledger) Exemption(test string, obs Observation, ctx Context) (*Entry, string) {
	var live []Entry
	var notes []string
	for _, e := range entriesOf(l) {
		onALeg := slices.Contains(obs.FailedAs, e.Test) // checked below: every failing leg covered
		if e.Test != test && !model.Refines(test, e.Test) && !onALeg {
			continue // an entry for c::n covers c::n [junit-windows] too
		}
		switch why := e.Released(obs, ctx.ChangedFiles); {
		case e.Expires.ExpiredAt(ctx.Now):
			notes = append(notes, fmt.Sprintf("entry %s expired on %s", e.Signature, e.Expires))
		case why != "":
			notes = append(notes, fmt.Sprintf("entry %s %s", e.Signature, why))
		default:
			live = append(live, e)
		}
	}
	if len(live) == 0 {
		if len(notes) == 0 {
			return nil, "no ledger entry"
		}
		return nil, strings.Join(notes, "; ")
	}
	if len(obs.Signatures) == 0 {
		return nil, "ledger entry is live, but no failure signature was observed to match it"
	}
	// Compared across its legs, the test failed on head in obs.FailedAs:
	// each of those legs needs a live entry, its own or the test's.
	for _, leg := range obs.FailedAs {
		if !slices.ContainsFunc(live, func(e Entry) bool { return e.Test == leg || e.Test == test || model.Refines(leg, e.Test) }) {
			return nil, fmt.Sprintf("head failed on %s, which no live ledger entry covers", leg)
		}
	}
	var e Entry
	for _, sig := range obs.Signatures {
		i := slices.IndexFunc(live, func(e Entry) bool { return e.Signature == sig })
		if i < 0 {
			return nil, fmt.Sprintf("head failed with %s, which no live ledger entry records", sig)
		}
		e = live[i]
	}
	return &e, fmt.Sprintf("live ledger entry (owner %s, %s, expires %s) matches signature %s",
		e.Owner, e.Issue, dateOrNever(e.Expires), strings.Join(obs.Signatures, ", "))
}
