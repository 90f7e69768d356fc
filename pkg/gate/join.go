package gate

import (
	"slices"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// Join turns the three sides of a gate experiment into the gate's input,
// one entry per test, sorted by name. Any side may be nil.
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
// Cells with only skipped attempts are no evidence and are left out. A test
// seen only in history did not run in this experiment and is left out too.
// Run order is the history's order (History.Runs: time, then numeric run
// id), so callers that care about the head sequence give each run a time or
// a numeric run id, as Run does.
func Join(base, head, hist *history.History) []TestInput {
	byName := map[string]*TestInput{}
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
	each := func(h *history.History, f func(*TestInput, history.Cell)) {
		if h == nil {
			return
		}
		for _, t := range h.Tests {
			ti := get(t)
			for _, c := range t.Cells {
				if c.Pass+c.Fail > 0 {
					f(ti, c)
				}
			}
		}
	}
	each(base, func(ti *TestInput, c history.Cell) {
		ti.Base.Runs++
		if c.Failed() {
			ti.Base.Failures++
		}
		if c.Mixed() {
			ti.BaseRetried++
		}
	})
	each(head, func(ti *TestInput, c history.Cell) {
		ti.Head = append(ti.Head, !c.Failed())
		if c.Mixed() {
			ti.HeadRetried++
		}
	})
	if head != nil {
		for _, t := range head.Tests {
			ti := byName[t.ID]
			for _, s := range t.Sigs {
				ti.Signatures = append(ti.Signatures, s.Hash)
			}
		}
	}
	out := make([]TestInput, 0, len(byName))
	for _, ti := range byName {
		if ti.Base.Runs == 0 && len(ti.Head) == 0 {
			continue
		}
		out = append(out, *ti)
	}
	slices.SortFunc(out, func(a, b TestInput) int { return strings.Compare(a.Name, b.Name) })
	tallyHistory(out, hist)
	return out
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
			for _, c := range ht.Cells {
				if c.Pass+c.Fail > 0 {
					ti.History.Runs++
					if c.Failed() {
						ti.History.Failures++
					}
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
		for _, f := range failed {
			ti.History.Runs++
			if f {
				ti.History.Failures++
			}
		}
	}
}

// UnreadFiles lists what each side's history left out (History.Skipped):
// unparsable files, expired artifacts.
func UnreadFiles(base, head *history.History) []Unread {
	var out []Unread
	for _, s := range []struct {
		name string
		h    *history.History
	}{{"base", base}, {"head", head}} {
		if s.h == nil {
			continue
		}
		for _, k := range s.h.Skipped {
			out = append(out, Unread{Side: s.name, Path: k.Path, Error: k.Error})
		}
	}
	return out
}
