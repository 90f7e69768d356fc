package gate

import (
	"slices"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// Each side's history tells a test apart by leg (a matrix's artifacts, a
// Playwright project) on its own evidence: a test that passed in one leg
// of a run and failed in another becomes "c::n [junit-windows]" and
// "c::n [junit-ubuntu]" there, while legs that never differed are one
// report uploaded twice and keep "c::n" (see pkg/history/legs.go). So one
// base run where a test failed on Windows split its identity on base and
// not on a clean head, and the gate saw every test of the suite removed on
// head and another added. The join compares the same identities on both
// sides: a test named differently on the two sides (plain on one, by leg
// on the other, or by other legs) is compared under its plain name, each
// run failing when it failed in any leg, as a side whose legs were not
// told apart reads it.

// sameIdentities returns base and head with every test whose identities
// differ between the sides folded into its plain identity, and the plain
// identities folded. Tests on one side only, and tests told apart by the
// same legs on both sides, are left alone. The inputs are not changed.
func sameIdentities(base, head *history.History) (*history.History, *history.History, map[string]bool) {
	if base == nil || head == nil {
		return base, head, nil
	}
	bIDs, hIDs := identities(base), identities(head)
	fold := map[string]bool{}
	for plain, b := range bIDs {
		if h, ok := hIDs[plain]; ok && !slices.Equal(b, h) {
			fold[plain] = true
		}
	}
	if len(fold) == 0 {
		return base, head, nil
	}
	return foldIdentities(base, fold), foldIdentities(head, fold), fold
}

// failedAs lists, for each test of fold, the identities of h (its legs)
// in which it failed, sorted: where its failures were before folding, in
// the runs not left out (out: outages, whose failures count for no test).
func failedAs(h *history.History, fold map[string]bool, left map[int32]int) map[string][]string {
	out := map[string][]string{}
	if h == nil {
		return out
	}
	for _, t := range h.Tests {
		p := plainID(t.ID)
		if !fold[p] {
			continue
		}
		if slices.ContainsFunc(t.Cells, func(c history.Cell) bool {
			_, out := left[c.Run]
			return c.Failed() && !out
		}) {
			out[p] = append(out[p], t.ID) // h.Tests is sorted by ID
		}
	}
	return out
}

// plainID is a test's identity without its leg or project.
func plainID(id string) string {
	if p, ok := model.Unrefined(id); ok {
		return p
	}
	return id
}

// identities maps each plain identity of h to the identities its tests
// have, sorted.
func identities(h *history.History) map[string][]string {
	m := make(map[string][]string, len(h.Tests))
	for _, t := range h.Tests {
		p := plainID(t.ID)
		m[p] = append(m[p], t.ID) // h.Tests is sorted by ID
	}
	return m
}

// foldIdentities is h with the tests whose plain identity is in fold made
// one test each, under that identity: in each run, the attempts of every
// leg, so the run failed when any leg failed; the signatures of all.
func foldIdentities(h *history.History, fold map[string]bool) *history.History {
	return history.Fold(h, func(id string) (string, bool) {
		p := plainID(id)
		return p, fold[p]
	})
}
