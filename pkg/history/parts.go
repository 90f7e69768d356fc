package history

import "slices"

// RunGroup is runs of a history that are parts of one run: the files of
// one repetition of a sharded suite, or of a runner that writes a file
// per class, none of which states the run it belongs to.
type RunGroup struct {
	Runs   []int  // indexes into History.Runs, two or more
	Source string // the joined run's source: the directory of its parts
}

// JoinRuns returns h with each group's runs read as one run: it takes the
// first part's commit, run id and workflow, the earliest time of any
// part, the group's Source, and the parts' sources in Parts (in natural
// order). A test with
// cells in two parts gets one cell, their sum, as two documents of one
// run would. Runs in no group stay as they are; h is not changed.
func JoinRuns(h *History, groups []RunGroup) *History {
	if h == nil || len(groups) == 0 {
		return h
	}
	remap := make([]int32, len(h.Runs))
	for i := range remap {
		remap[i] = -1
	}
	out := &History{Totals: h.Totals, Skipped: slices.Clone(h.Skipped), Legs: h.Legs, Runs: make([]Run, 0, len(h.Runs))}
	for _, g := range groups {
		if len(g.Runs) == 0 {
			continue
		}
		at := int32(len(out.Runs))
		joined := Run{Run: h.Runs[g.Runs[0]].Run}
		for _, i := range g.Runs {
			remap[i] = at
			joinRun(&joined.Run, h.Runs[i].Run)
			joined.Parts = append(joined.Parts, h.Runs[i].Source)
			joined.Partial = joined.Partial || h.Runs[i].Partial
		}
		slices.SortFunc(joined.Parts, naturalCompare)
		joined.Source = g.Source
		out.Runs = append(out.Runs, joined)
	}
	for i, r := range h.Runs {
		if remap[i] < 0 {
			remap[i] = int32(len(out.Runs))
			r.Tests, r.Failed, r.Repeated, r.FailedAttempt = 0, 0, 0, 0
			out.Runs = append(out.Runs, r)
		}
	}
	out.Tests = make([]*Test, len(h.Tests))
	for k, t := range h.Tests {
		nt := *t
		nt.Cells = make([]Cell, len(t.Cells))
		for i, c := range t.Cells {
			c.Run = remap[c.Run]
			nt.Cells[i] = c
		}
		nt.Sigs = slices.Clone(t.Sigs)
		out.Tests[k] = &nt
	}
	out.finalize()
	return out
}
