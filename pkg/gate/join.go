package gate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// Outage is a base or head run of the experiment left out as an
// infrastructure failure: more than Threshold of its tests failed, the rule
// the report and the base-branch history use (model.InfraRule). A
// whole-run failure says nothing about any one test, and it breaks the
// independence between tests that the PR-level bound rests on.
type Outage struct {
	Side      string  `json:"side"` // "base" or "head"
	Run       int     `json:"run"`  // 1-based, in the side's run order
	Runs      int     `json:"runs"` // the side's runs, outages included
	ID        string  `json:"id"`   // the run id, or the file the run came from
	Tests     int     `json:"tests"`
	Failed    int     `json:"failed"`
	Threshold float64 `json:"threshold"`
}

func (o Outage) String() string {
	id := ""
	if o.ID != "" {
		id = " (" + o.ID + ")"
	}
	return fmt.Sprintf("%s run %d of %d%s failed %d of %d tests", o.Side, o.Run, o.Runs, id, o.Failed, o.Tests)
}

// Join is JoinInfra with the default rule for infrastructure runs.
func Join(base, head, hist *history.History) []TestInput {
	return JoinInfra(base, head, hist, model.DefaultInfra)
}

// JoinInfra turns the three sides of a gate experiment into the gate's
// input, one entry per test, sorted by name. Any side may be nil.
//
//   - base: the K base repetitions. A run counts as one base run of a test
//     when the test passed or failed in it, and as a failure when any of its
//     attempts failed.
//   - head: the head runs in run order, one outcome per run, counted as
//     base runs are: a run failed when any of its attempts failed, so a
//     rerun that passed inside one run does not hide the failure, and head
//     and base rates are the same quantity; such runs are counted too
//     (TestInput.BaseRetried, HeadRetried), as the test passed in them.
//     The head failure signatures become TestInput.Signatures.
//   - hist: base-branch history, tallied like base into TestInput.History,
//     with the tests that refine a test's identity by a project (see
//     tallyHistory).
//
// A base or head run that infra calls an infrastructure failure
// (IsInfraRun; none when infra.InfraMinTests is 0) is left out of every
// test's tallies and listed in the TestInput.LeftOut of each test that ran
// in it. The history is taken as given: its callers filter it by the same
// rule. Each test counts the runs of each side, not left out, of the
// workflows that collected it, that did not collect it at all: in base
// (TestInput.BaseMissing) and, for a test head collected, in head
// (TestInput.HeadMissing).
//
// Cells with only skipped attempts are no evidence and are left out. A test
// seen only in history did not run in this experiment and is left out too.
// Run order is the history's order (History.Runs: time, then numeric run
// id), so callers that care about the head sequence give each run a time or
// a numeric run id, as Run does.
func JoinInfra(base, head, hist *history.History, infra model.InfraRule) []TestInput {
	base, head, hist = packageFailures(base, head, hist)
	origHead := head
	base, head, folded := sameIdentities(base, head)
	varying := varyingNames(base, head, hist)
	base, head, hist = foldVarying(base, varying), foldVarying(head, varying), foldVarying(hist, varying)
	baseOut, headOut := outages("base", base, infra), outages("head", head, infra)
	var legsFailed map[string][]string
	if len(folded) > 0 {
		legsFailed = failedAs(origHead, folded, runIndex(headOut))
	}
	all := append(append([]Outage{}, baseOut...), headOut...)
	all = all[:len(all):len(all)]
	byName := map[string]*TestInput{}
	left := map[string][]int{} // per test, indexes into all of the outages it ran in
	get := func(t *history.Test) *TestInput {
		ti := byName[t.ID]
		if ti == nil {
			ti = &TestInput{Name: t.ID}
			byName[t.ID] = ti
		}
		if ti.File == "" {
			ti.File, ti.Line = t.File, t.Line
		}
		return ti
	}
	each := func(h *history.History, out map[int32]int, offset int, f func(*TestInput, history.Cell)) {
		if h == nil {
			return
		}
		for _, t := range h.Tests {
			ti := get(t)
			for _, c := range t.Cells {
				if c.Pass+c.Fail == 0 {
					if _, left := out[c.Run]; !left && c.Skip > 0 {
						switch h {
						case head:
							ti.HeadSkipped++
						case base:
							ti.BaseSkipped++
						}
					}
					continue
				}
				if k, ok := out[c.Run]; ok {
					left[t.ID] = append(left[t.ID], offset+k)
					continue
				}
				f(ti, c)
			}
		}
	}
	each(base, runIndex(baseOut), 0, func(ti *TestInput, c history.Cell) {
		ti.Base.Runs++
		if c.Failed() {
			ti.Base.Failures++
		}
		if c.Mixed() {
			ti.BaseRetried++
		}
	})
	headIdx := runIndex(headOut)
	each(head, headIdx, len(baseOut), func(ti *TestInput, c history.Cell) {
		ti.Head = append(ti.Head, !c.Failed())
		if c.Mixed() {
			ti.HeadRetried++
		}
	})
	if head != nil {
		for _, t := range head.Tests {
			ti := byName[t.ID]
			if len(headIdx) == 0 {
				for _, s := range t.Sigs {
					ti.Signatures = append(ti.Signatures, s.Hash)
				}
				continue
			}
			// Only the signatures of the runs that count.
			for _, c := range t.Cells {
				if _, out := headIdx[c.Run]; !out && c.Sig > 0 && int(c.Sig) <= len(t.Sigs) {
					if h := t.Sigs[c.Sig-1].Hash; !slices.Contains(ti.Signatures, h) {
						ti.Signatures = append(ti.Signatures, h)
					}
				}
			}
		}
	}
	if head != nil {
		rc := countRuns(head, headIdx)
		for _, t := range head.Tests {
			if n, seen := rc.missing(t); seen > 0 {
				byName[t.ID].HeadMissing = n
			}
		}
	}
	if base != nil {
		rc := countRuns(base, runIndex(baseOut))
		for _, t := range base.Tests {
			byName[t.ID].BaseMissing, _ = rc.missing(t)
		}
	}
	out := make([]TestInput, 0, len(byName))
	for _, ti := range byName {
		if ks := left[ti.Name]; len(ks) == len(all) && len(all) > 0 {
			ti.LeftOut = all // shared: the test ran in every outage
		} else {
			for _, k := range ks {
				ti.LeftOut = append(ti.LeftOut, all[k])
			}
		}
		if ti.Base.Runs == 0 && len(ti.Head) == 0 && len(ti.LeftOut) == 0 {
			continue
		}
		ti.AcrossLegs = folded[ti.Name]
		ti.VaryingNames = varying[ti.Name]
		ti.HeadFailedAs = legsFailed[ti.Name]
		out = append(out, *ti)
	}
	slices.SortFunc(out, func(a, b TestInput) int { return strings.Compare(a.Name, b.Name) })
	tallyHistory(out, hist)
	leftBaseBranch(out, base, runIndex(baseOut), hist)
	return out
}

// goTestMain is the name of the case gotestsum writes for a Go package that failed outside any test: the test binary hit
// -timeout, or a TestMain or init function panicked or exited. Its
// classname is empty, so the package's suite names it, "pkg::TestMain".
// The case is written only then (gotestsum's Package.TestMainFailed): a
// package that times out now and then has it in those runs alone.
const goTestMain = "::TestMain"

// packageFailures gives a package's TestMain case a pass in every run, of
// each side and the history, that ran another test of its package without
// it: the package did not fail outside its tests there. It does so for the
// tests named so that never passed nor were skipped on any side, and only
// in the runs of its package that lack it: a test function named TestMain
// (func(*testing.T), which go vet reports) that passes, or fails in every
// run of its package, is left as it is. The histories are
// not changed: a side with such a case is a copy.
//
// Without it, the case was in no base run when the package timed out on
// head only, a "new failing test" that blocked a clean PR, and read as red
// (failed in every run it was in) wherever the base runs or the history
// had it.
func packageFailures(hs ...*history.History) (base, head, hist *history.History) {
	cases := map[string]bool{}
	for _, h := range hs {
		if h == nil {
			continue
		}
		for _, t := range h.Tests {
			class, ok := strings.CutSuffix(t.ID, goTestMain)
			if !ok || class == "" {
				continue
			}
			if _, seen := cases[t.ID]; !seen {
				cases[t.ID] = true
			}
			for _, c := range t.Cells {
				if c.Pass > 0 || c.Skip > 0 {
					cases[t.ID] = false
				}
			}
		}
	}
	if len(cases) == 0 {
		return hs[0], hs[1], hs[2]
	}
	ids := make([]string, 0, len(cases))
	for id, ok := range cases {
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	byID := func(t *history.Test, id string) int { return strings.Compare(t.ID, id) } // History.Tests is sorted by ID
	for i, h := range hs {
		if h == nil {
			continue
		}
		var cp *history.History
		all := make(map[int32]bool, len(h.Runs))
		for r := range h.Runs {
			all[int32(r)] = true
		}
		for _, id := range ids {
			class := strings.TrimSuffix(id, goTestMain)
			withClass, _ := classRuns(h, class, id, false, all)
			nt := &history.Test{ID: id}
			k, found := slices.BinarySearchFunc(h.Tests, id, byID)
			if found {
				nt = h.Tests[k]
				for _, c := range nt.Cells {
					delete(withClass, c.Run)
				}
			}
			if len(withClass) == 0 {
				continue
			}
			if cp == nil {
				c := *h
				c.Tests = slices.Clone(h.Tests)
				c.Runs = slices.Clone(h.Runs)
				cp = &c
			}
			t := *nt
			t.Cells = slices.Clone(nt.Cells)
			for r := range withClass {
				t.Cells = append(t.Cells, history.Cell{Run: r, Pass: 1})
				cp.Runs[r].Tests++
			}
			slices.SortFunc(t.Cells, func(a, b history.Cell) int { return cmp.Compare(a.Run, b.Run) })
			k, found = slices.BinarySearchFunc(cp.Tests, id, byID)
			if found {
				cp.Tests[k] = &t
			} else {
				cp.Tests = slices.Insert(cp.Tests, k, &t)
			}
		}
		if cp != nil {
			hs[i] = cp
		}
	}
	return hs[0], hs[1], hs[2]
}

// leftBaseBranch sets TestInput.LeftBaseBranch for the tests in base runs
// and in no head run, when the base branch's later runs show it dropped the
// test. The runs that can show it are the history's runs after the last
// base run that collected the test, of a workflow (by id where known) and
// event of those base runs, first attempts read whole (not Partial), that
// collected at least half as many tests and some other test of its class: a run
// without the class (a job or shard that did not run, a paths filter)
// says nothing of the test. Names are compared without their legs, as the
// sides may tell legs apart differently. The test left the branch when at
// least two commits' such runs exist and none of them collected it. Runs
// from local files (no workflow) are no such evidence.
func leftBaseBranch(tests []TestInput, base *history.History, out map[int32]int, hist *history.History) {
	if base == nil || hist == nil || len(hist.Runs) == 0 {
		return
	}
	type kind struct {
		workflow string
		id       int64
		event    string
	}
	kindOfRun := func(r history.Run) kind {
		if r.WorkflowID != 0 {
			return kind{id: r.WorkflowID, event: r.Event}
		}
		return kind{workflow: r.Workflow, event: r.Event}
	}
	byID := map[string]*history.Test{}
	for _, t := range base.Tests {
		byID[t.ID] = t
	}
	for i := range tests {
		ti := &tests[i]
		bt := byID[ti.Name]
		if bt == nil || len(ti.Head) > 0 || ti.Base.Runs == 0 {
			continue
		}
		class, _, ok := strings.Cut(bareID(ti.Name), "::")
		if !ok {
			continue
		}
		var last time.Time
		kinds := map[kind]bool{}
		most := 0
		timed := true
		for _, c := range bt.Cells {
			if _, left := out[c.Run]; left || c.Pass+c.Fail == 0 {
				continue
			}
			r := base.Runs[c.Run]
			if r.Time.IsZero() || r.Workflow == "" {
				timed = false // nothing is "after" it, or it is no CI run
				break
			}
			if r.Time.After(last) {
				last = r.Time
			}
			kinds[kindOfRun(r)] = true
			most = max(most, r.Tests)
		}
		if !timed || last.IsZero() {
			continue
		}
		after := map[int32]bool{}
		for k, r := range hist.Runs {
			// A re-run (attempt 2 on) starts late but may be of an older
			// commit, which never had the test.
			if r.Time.After(last) && r.Attempt <= 1 && !r.Partial && kinds[kindOfRun(r)] && 2*r.Tests >= most {
				after[int32(k)] = true
			}
		}
		if len(after) == 0 {
			continue
		}
		withClass, withTest := classRuns(hist, class, bareID(ti.Name), ti.VaryingNames > 0, after)
		if len(withTest) > 0 {
			continue
		}
		commits := map[string]bool{}
		for k := range withClass {
			commits[hist.Runs[k].CommitSHA] = true
		}
		if len(commits) >= 2 {
			ti.LeftBaseBranch = len(withClass)
		}
	}
}

// bareID is a test's identity without any of the legs or projects that
// refine it ("c::n" for "c::n [chromium] [junit-windows]").
func bareID(id string) string {
	for {
		u, ok := model.Unrefined(id)
		if !ok {
			return id
		}
		id = u
	}
}

// classRuns lists, among runs, those that collected (passed, failed or
// skipped) some test of class other than the test plain, and those that
// collected plain itself, legs aside. When varying, plain is a name
// whose varying part is written "…" (varyingNames), and a history that
// was not folded (a run of it holds two of the names) holds it under its
// names: each is plain.
func classRuns(h *history.History, class, plain string, varying bool, runs map[int32]bool) (withClass, withTest map[int32]bool) {
	withClass, withTest = map[int32]bool{}, map[int32]bool{}
	prefix := class + "::"
	byID := func(t *history.Test, id string) int { return strings.Compare(t.ID, id) } // History.Tests is sorted by ID
	k, _ := slices.BinarySearchFunc(h.Tests, prefix, byID)
	for ; k < len(h.Tests) && strings.HasPrefix(h.Tests[k].ID, prefix); k++ {
		t := h.Tests[k]
		dst := withClass
		if b := bareID(t.ID); b == plain {
			dst = withTest
		} else if varying {
			if k, ok := history.VaryingKey(b); ok && k == plain {
				dst = withTest
			}
		}
		for _, c := range t.Cells {
			if runs[c.Run] && c.Pass+c.Fail+c.Skip > 0 {
				dst[c.Run] = true
			}
		}
	}
	return withClass, withTest
}

// outages lists the runs of one side that infra calls infrastructure
// failures.
func outages(side string, h *history.History, infra model.InfraRule) []Outage {
	if h == nil || infra.MinTests <= 0 {
		return nil
	}
	var out []Outage
	for i, r := range h.Runs {
		if infra.Is(r.Tests, r.FailedAttempt) {
			out = append(out, Outage{Side: side, Run: i + 1, Runs: len(h.Runs), ID: cmp.Or(r.RunID, r.Source),
				Tests: r.Tests, Failed: r.FailedAttempt, Threshold: infra.Threshold})
		}
	}
	return out
}

// runIndex maps a side's outage runs (History.Runs indexes) to their place
// in the list.
func runIndex(out []Outage) map[int32]int {
	m := make(map[int32]int, len(out))
	for k, o := range out {
		m[int32(o.Run-1)] = k
	}
	return m
}

// tallyHistory counts each test's base-branch history: the history's test
// of the same identity, and those that refine it with a project. The
// history reads every leg of a matrix (junit-ubuntu, junit-windows) and
// tells a test apart by leg when two legs hold it, "c::n [junit-ubuntu]";
// the experiment's runs are most often one leg's, "c::n", whose baseline
// is then what every leg saw.
func tallyHistory(tests []TestInput, hist *history.History) {
	if hist == nil {
		return
	}
	byID := func(t *history.Test, id string) int { return strings.Compare(t.ID, id) } // History.Tests is sorted by ID
	for i := range tests {
		ti := &tests[i]
		var from []*history.Test
		if k, ok := slices.BinarySearchFunc(hist.Tests, ti.Name, byID); ok {
			from = append(from, hist.Tests[k])
		}
		refined := ti.Name + " ["
		for k, _ := slices.BinarySearchFunc(hist.Tests, refined, byID); k < len(hist.Tests) && strings.HasPrefix(hist.Tests[k].ID, refined); k++ {
			if model.Refines(hist.Tests[k].ID, ti.Name) {
				from = append(from, hist.Tests[k])
			}
		}
		if len(from) == 1 {
			// One test: each cell is one run.
			ht := from[0]
			if ti.File == "" {
				ti.File, ti.Line = ht.File, ht.Line
			}
			last := int32(-1) // the newest run it failed in
			for _, c := range ht.Cells {
				if c.Pass+c.Fail > 0 {
					ti.History.Runs++
					if c.Failed() {
						ti.History.Failures++
						last = max(last, c.Run)
					}
				}
			}
			for _, c := range ht.Cells {
				if c.Pass+c.Fail > 0 && c.Run > last {
					ti.HistoryCleanSince++
				}
			}
			continue
		}
		failed := map[int32]bool{} // per run: failed in any leg
		for _, ht := range from {
			if ti.File == "" {
				ti.File, ti.Line = ht.File, ht.Line
			}
			for _, c := range ht.Cells {
				if c.Pass+c.Fail > 0 {
					failed[c.Run] = failed[c.Run] || c.Failed()
				}
			}
		}
		last := int32(-1)
		for run, f := range failed {
			ti.History.Runs++
			if f {
				ti.History.Failures++
				last = max(last, run)
			}
		}
		for run := range failed {
			if run > last {
				ti.HistoryCleanSince++
			}
		}
	}
}

// UnreadFiles lists what each side's history left out (History.Skipped):
// unparsable files, expired artifacts. Files that are XML of a known kind
// holding no JUnit results (NotResults: a coverage report, Maven Failsafe's
// summary, TestNG's own report beside Surefire's), which a pattern for the
// reports' directory takes with them, hold no results to miss: they are not
// unread, and the evidence is whole without them; notes says how many were
// left out so.
func UnreadFiles(base, head *history.History) (unread []Unread, notes []string) {
	for _, s := range []struct {
		name string
		h    *history.History
	}{{"base", base}, {"head", head}} {
		if s.h == nil {
			continue
		}
		var other []string
		for _, k := range s.h.Skipped {
			if k.NotResults != "" {
				other = append(other, k.Path+" ("+k.NotResults+")")
				continue
			}
			unread = append(unread, Unread{Side: s.name, Path: k.Path, Error: k.Error})
		}
		if len(other) > 0 {
			more := ""
			if len(other) > 3 {
				more = fmt.Sprintf(" and %d more", len(other)-3)
			}
			notes = append(notes, fmt.Sprintf("%s: %d XML file(s) left out that hold no JUnit results: %s%s",
				s.name, len(other), strings.Join(other[:min(len(other), 3)], "; "), more))
		}
	}
	return unread, notes
}

// CollectedCounts are the gate's test counts (Input.Collected) from the
// runs: for each kind of run (workflow and event) both sides have, the
// tests with a pass or a failure in a run (a test's legs counted once),
// over the runs not left out as outages: their median on base, their most
// on head; summed. A name that varies by run (a hash code or a seed in it)
// is one test in each run; a test the patch deletes or newly skips is one
// fewer in every head run; a base run that crashed lowers its own count
// only; head runs that lost a shard do not lower head's (the tests missing
// from them are evidence missing, said apart); a test base skipped in
// every run counts on neither side. A test that base runs skipped at run
// time (a t.Skip on a missing service, now and then) and ran in others
// counts on both sides in the runs that skipped it too: with its skips left out, head's best
// run, where a crash took some tests from the others, fell below base's
// median by chance (the audit: 2 of 38 clean Go PRs). nil when a side has
// no run.
func CollectedCounts(base, head *history.History, infra model.InfraRule) *Counts {
	if base == nil || head == nil || len(base.Runs) == 0 || len(head.Runs) == 0 {
		return nil
	}
	baseOut := runIndex(outages("base", base, infra))
	// The tests base skipped at run time now and then: skipped in some
	// base runs and run (passed or failed) in others. A test base skipped
	// in every run is counted on neither side, as before: its deletion is
	// not a test fewer. By name and, for a name that may vary by run (a
	// seed in it), by its key too: head's runs skip it under names of
	// their own.
	const wasSkipped, ran = 1, 2
	byName, byKey := map[string]int{}, map[string]int{}
	for _, t := range base.Tests {
		b := bareID(t.ID)
		k, varies := history.VaryingKey(b)
		for _, c := range t.Cells {
			if _, left := baseOut[c.Run]; left {
				continue
			}
			f := 0
			switch {
			case c.Pass+c.Fail > 0:
				f = ran
			case c.Skip > 0:
				f = wasSkipped
			}
			byName[b] |= f
			if varies {
				byKey[k] |= f
			}
		}
	}
	skipped := func(b string) bool {
		if byName[b] == wasSkipped|ran {
			return true
		}
		if len(byKey) == 0 {
			return false
		}
		k, ok := history.VaryingKey(b)
		return ok && byKey[k] == wasSkipped|ran
	}
	per := func(h *history.History, out map[int32]int) map[runKind][]int {
		// Tests by their names without legs: the sides may tell a
		// matrix's legs apart differently (sameIdentities). h.Tests is
		// sorted by ID, so a test's legs follow it.
		n := make([]int, len(h.Runs))
		seen := make([]int, len(h.Runs)) // per run, the last group counted, +1
		g, last, skips := 0, "", false
		for _, t := range h.Tests {
			if b := bareID(t.ID); b != last || g == 0 {
				g, last, skips = g+1, b, skipped(b)
			}
			for _, c := range t.Cells {
				if _, left := out[c.Run]; !left && (c.Pass+c.Fail > 0 || skips && c.Skip > 0) && seen[c.Run] != g {
					seen[c.Run] = g
					n[c.Run]++
				}
			}
		}
		m := map[runKind][]int{}
		for i, r := range h.Runs {
			if _, left := out[int32(i)]; !left {
				m[kindOf(r)] = append(m[kindOf(r)], n[i])
			}
		}
		return m
	}
	b := per(base, baseOut)
	hd := per(head, runIndex(outages("head", head, infra)))
	median := func(xs []int) int {
		slices.Sort(xs)
		return xs[(len(xs)-1)/2]
	}
	var c Counts
	for k, xs := range b {
		if ys, ok := hd[k]; ok {
			c.Base += median(xs)
			c.Head += slices.Max(ys)
		}
	}
	return &c
}

// runCounts counts a side's runs, not left out, by kind (runKind).
type runCounts struct {
	h       *history.History
	out     map[int32]int // the runs left out
	counted int
	byKind  map[runKind]int
}

// runKind is what a run collects: its workflow, and the event that started
// it, as a workflow's jobs may run on some events only (a slow job on push,
// not on pull_request).
type runKind struct{ workflow, event string }

func kindOf(r history.Run) runKind { return runKind{r.Workflow, r.Event} }

func countRuns(h *history.History, out map[int32]int) runCounts {
	rc := runCounts{h: h, out: out, counted: len(h.Runs) - len(out), byKind: map[runKind]int{}}
	for i, r := range h.Runs {
		if _, left := out[int32(i)]; !left {
			rc.byKind[kindOf(r)]++
		}
	}
	return rc
}

// missing counts the runs, not left out, that did not collect t: of the
// kinds whose runs collected it, as a run of another workflow (a monorepo's
// frontend.yml beside backend.yml) or event never does; of every kind when
// no such run collected it. seen counts the runs that did.
func (rc runCounts) missing(t *history.Test) (n, seen int) {
	kinds := map[runKind]bool{}
	for _, c := range t.Cells {
		if _, left := rc.out[c.Run]; !left {
			seen++ // collected, even if skipped
			kinds[kindOf(rc.h.Runs[c.Run])] = true
		}
	}
	could := rc.counted
	if len(kinds) > 0 {
		could = 0
		for k := range kinds {
			could += rc.byKind[k]
		}
	}
	return max(could-seen, 0), seen
}
