package history

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Fold is h with the tests that to maps to another identity made one
// test each under it: in each run, the attempts of all (so the run failed
// when any of them failed), and the signatures of all. h itself when to
// maps none; h is not changed.
func Fold(h *History, to func(id string) (string, bool)) *History {
	if h == nil {
		return h
	}
	out := *h
	out.Tests = make([]*Test, 0, len(h.Tests))
	folded := map[string]*Test{}
	for _, t := range h.Tests {
		p, ok := to(t.ID)
		if !ok {
			out.Tests = append(out.Tests, t)
			continue
		}
		f := folded[p]
		if f == nil {
			f = &Test{ID: p, File: t.File, Line: t.Line}
			folded[p] = f
			out.Tests = append(out.Tests, f)
		}
		mergeTest(f, t)
	}
	if len(folded) == 0 {
		return h
	}
	slices.SortFunc(out.Tests, func(a, b *Test) int { return strings.Compare(a.ID, b.ID) })
	return &out
}

// mergeTest adds t's cells and signatures to f.
func mergeTest(f, t *Test) {
	if f.File == "" {
		f.File, f.Line = t.File, t.Line
	}
	// t's signature k (1-based) is f's sigAt[k-1] (1-based).
	sigAt := make([]uint16, len(t.Sigs))
	for k, s := range t.Sigs {
		i := slices.IndexFunc(f.Sigs, func(x Sig) bool { return x.Hash == s.Hash })
		if i < 0 {
			f.Sigs = append(f.Sigs, Sig{Hash: s.Hash, Message: s.Message})
			i = len(f.Sigs) - 1
		}
		f.Sigs[i].Count += s.Count
		sigAt[k] = uint16(min(i+1, math.MaxUint16))
	}
	f.OtherFailures += t.OtherFailures
	cells := make([]Cell, 0, len(f.Cells)+len(t.Cells))
	i, j := 0, 0
	for i < len(f.Cells) || j < len(t.Cells) {
		switch {
		case j == len(t.Cells) || i < len(f.Cells) && f.Cells[i].Run < t.Cells[j].Run:
			cells = append(cells, f.Cells[i])
			i++
		default:
			c := t.Cells[j]
			if c.Sig > 0 && int(c.Sig) <= len(sigAt) {
				c.Sig = sigAt[c.Sig-1]
			} else {
				c.Sig = 0
			}
			if i < len(f.Cells) && f.Cells[i].Run == c.Run {
				c = addCells(f.Cells[i], c)
				i++
			}
			cells = append(cells, c)
			j++
		}
	}
	f.Cells = cells
}

// addCells is one run's attempts of two legs: their sum, and the first
// signature of the first that failed.
func addCells(a, b Cell) Cell {
	sum := func(x, y uint16) uint16 { return uint16(min(int(x)+int(y), math.MaxUint16)) }
	c := Cell{Run: a.Run, Pass: sum(a.Pass, b.Pass), Fail: sum(a.Fail, b.Fail), Skip: sum(a.Skip, b.Skip)}
	c.Sig = cmp.Or(a.Sig, b.Sig)
	return c
}
