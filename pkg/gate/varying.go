package gate

import (
	"github.com/flakegate/flakegate/pkg/history"
)

// Some tests have a new name in every run: a property test's random seed
// in its id (test_prop[seed=8812]), a parameterized test's display name
// with a Java hash code (testTotal(Money)[1] Money@6ee12bac), a UUID or a
// timestamp made at collection. Each name is then seen once: a head
// failure of such a flaky test was a "new failing test" and blocked a clean
// pull request, and its base runs, each under another name, were no
// evidence of anything. The join compares such names as one test, under
// the name with its varying part written "…" (test_prop[seed=…]), each run
// failing when its member failed, when the names are one test's:
//
//   - no run of either side holds two of them (two in one run are two
//     tests, whatever their names share), and
//   - a side has two or more of them: the name varies between runs of one
//     commit; or base-branch history holds two or more, none of its runs
//     two (with one run a side, the CI runs of the base and head commits,
//     each side holds one). A number a patch changes in a stable name
//     (test_issue_123 → test_issue_456) is a rename, removed and new, as
//     before, unless the branch's history shows that name varying.
//
// Base-branch history is folded the same way, where its runs hold at most
// one of the names each.

// varyingNames finds the names of base and head that are one test's (see
// above): it returns each family's name, "…" in place of what varies, with
// how many names of base and head it folds. The base-branch history hist
// (nil for none) tells that a name varies too, when it holds two or more
// of the family's names and none of its runs holds two: with one run a
// side (the CI runs of the base and head commits), each side holds one.
func varyingNames(base, head, hist *history.History) map[string]int {
	type family struct {
		ids     map[string]bool
		perSide [3]int  // the names each side holds, and the history
		twice   [3]bool // a run of the side holds two of its names
		runs    [3]map[int32]bool
	}
	fams := map[string]*family{}
	for s, h := range []*history.History{base, head, hist} {
		if h == nil {
			continue
		}
		for _, t := range h.Tests {
			key, ok := history.VaryingKey(t.ID)
			if !ok {
				continue
			}
			f := fams[key]
			if f == nil {
				if s == 2 {
					continue // in the history only
				}
				f = &family{ids: map[string]bool{}}
				fams[key] = f
			}
			if f.runs[s] == nil {
				f.runs[s] = map[int32]bool{}
			}
			if s < 2 {
				f.ids[t.ID] = true
			}
			f.perSide[s]++ // h.Tests holds each name once
			for _, c := range t.Cells {
				f.twice[s] = f.twice[s] || f.runs[s][c.Run]
				f.runs[s][c.Run] = true
			}
		}
	}
	var names map[string]int
	for key, f := range fams {
		varies := f.perSide[0] >= 2 || f.perSide[1] >= 2 || f.perSide[2] >= 2 && !f.twice[2]
		if f.twice[0] || f.twice[1] || len(f.ids) < 2 || !varies {
			continue
		}
		if names == nil {
			names = map[string]int{}
		}
		names[key] = len(f.ids)
	}
	return names
}

// foldVarying is h with the names of each family of names (varyingNames)
// made one test, unless a run of h holds two of them: then they are two
// tests there, and stay apart (base-branch history, whose runs
// varyingNames did not see).
func foldVarying(h *history.History, names map[string]int) *history.History {
	if h == nil || len(names) == 0 {
		return h
	}
	runs := map[string]map[int32]bool{}
	twice := map[string]bool{}
	to := map[string]string{} // the names of a family, to its key
	for _, t := range h.Tests {
		key, ok := history.VaryingKey(t.ID)
		if !ok || names[key] == 0 {
			continue
		}
		to[t.ID] = key
		if runs[key] == nil {
			runs[key] = map[int32]bool{}
		}
		for _, c := range t.Cells {
			twice[key] = twice[key] || runs[key][c.Run]
			runs[key][c.Run] = true
		}
	}
	return history.Fold(h, func(id string) (string, bool) {
		key, ok := to[id]
		return key, ok && !twice[key]
	})
}
