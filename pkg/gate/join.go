package gate

import (
	"slices"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"
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
//     and base rates are the same quantity. The head failure signatures
//     become TestInput.Signatures.
//   - hist: base-branch history, tallied like base into TestInput.History.
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
	})
	each(hist, func(ti *TestInput, c history.Cell) {
		ti.History.Runs++
		if c.Failed() {
			ti.History.Failures++
		}
	})
	each(head, func(ti *TestInput, c history.Cell) {
		ti.Head = append(ti.Head, !c.Failed())
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
	return out
}
