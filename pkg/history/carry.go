package history

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/flakegate/flakegate/pkg/model"
)

// FormatVersion is the version of the carried history file. A report run
// stores its history in its artifact; the next run reads it back, downloads
// only runs it has not seen, and so keeps history beyond the 90 days that
// GitHub retains artifacts.
const FormatVersion = 1

// maxCarriedBytes bounds a carried history file after decompression.
const maxCarriedBytes = 256 << 20

type carried struct {
	Version int           `json:"version"`
	Runs    []carriedRun  `json:"runs"`
	Tests   []carriedTest `json:"tests"`
}

type carriedRun struct {
	Commit   string    `json:"c,omitempty"`
	RunID    string    `json:"r,omitempty"`
	Attempt  int       `json:"a,omitempty"`
	Time     time.Time `json:"t,omitzero"`
	Workflow string    `json:"w,omitempty"`
	Branch   string    `json:"b,omitempty"`
	Event    string    `json:"e,omitempty"`
	Source   string    `json:"s,omitempty"`
	// Added after version 1 first shipped; a file without them carries
	// runs with no workflow file or id, read in full (Run.WorkflowFile,
	// Run.WorkflowID, Run.Partial).
	WorkflowFile string `json:"wf,omitempty"`
	WorkflowID   int64  `json:"wi,omitempty"`
	Partial      bool   `json:"p,omitempty"`
}

type carriedTest struct {
	ID   string `json:"id"`
	File string `json:"f,omitempty"`
	Line int    `json:"l,omitempty"`
	// PlacedAt and PlacedKey are where File and Line were found among
	// the history's cases (added after version 1 first shipped: a file
	// without them gives its places the earliest order).
	PlacedAt  time.Time `json:"pt,omitzero"`
	PlacedKey string    `json:"pk,omitempty"`
	Other     int       `json:"o,omitempty"`
	// Cells flattened: run, pass, fail, skip, sig for each cell.
	Cells []int32      `json:"c"`
	Sigs  []carriedSig `json:"g,omitempty"`
}

type carriedSig struct {
	Hash    string    `json:"h"`
	Count   int       `json:"n"`
	Message string    `json:"m,omitempty"`
	Time    time.Time `json:"t,omitzero"`
	Key     string    `json:"k,omitempty"`
}

// Encode writes h as gzip-compressed JSON. Skipped inputs, totals and leg
// bounds are not carried: they belong to the report that read them.
func Encode(w io.Writer, h *History) error {
	c := carried{Version: FormatVersion, Runs: make([]carriedRun, len(h.Runs)), Tests: make([]carriedTest, len(h.Tests))}
	for i, r := range h.Runs {
		c.Runs[i] = carriedRun{Commit: r.CommitSHA, RunID: r.RunID, Attempt: r.Attempt, Time: r.Time,
			Workflow: r.Workflow, Branch: r.Branch, Event: r.Event, Source: r.Source,
			WorkflowFile: r.WorkflowFile, WorkflowID: r.WorkflowID, Partial: r.Partial}
	}
	for i, t := range h.Tests {
		ct := carriedTest{ID: t.ID, File: t.File, Line: t.Line, PlacedAt: t.placed.time, PlacedKey: t.placed.key, Other: t.OtherFailures,
			Cells: make([]int32, 0, 5*len(t.Cells))}
		for _, cl := range t.Cells {
			ct.Cells = append(ct.Cells, cl.Run, int32(cl.Pass), int32(cl.Fail), int32(cl.Skip), int32(cl.Sig))
		}
		for _, s := range t.Sigs {
			ct.Sigs = append(ct.Sigs, carriedSig{Hash: s.Hash, Count: s.Count, Message: s.Message, Time: s.first.time, Key: s.first.key})
		}
		c.Tests[i] = ct
	}
	zw := gzip.NewWriter(w)
	if err := json.NewEncoder(zw).Encode(&c); err != nil {
		return err
	}
	return zw.Close()
}

// Decode reads a carried history written by Encode, checking every index.
func Decode(r io.Reader) (*History, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("carried history: not gzip: %w", err)
	}
	lr := &io.LimitedReader{R: zr, N: maxCarriedBytes + 1}
	var c carried
	if err := json.NewDecoder(lr).Decode(&c); err != nil {
		return nil, fmt.Errorf("carried history: %w", err)
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("carried history: larger than %d bytes", maxCarriedBytes)
	}
	if c.Version != FormatVersion {
		return nil, fmt.Errorf("carried history: version %d, this flakegate reads version %d", c.Version, FormatVersion)
	}
	h := &History{Runs: make([]Run, len(c.Runs))}
	for i, r := range c.Runs {
		h.Runs[i] = Run{Run: model.Run{CommitSHA: r.Commit, RunID: r.RunID, Attempt: r.Attempt, Time: r.Time,
			Workflow: r.Workflow, Branch: r.Branch, Event: r.Event, Source: r.Source},
			WorkflowFile: r.WorkflowFile, WorkflowID: r.WorkflowID, Partial: r.Partial}
	}
	for _, ct := range c.Tests {
		if len(ct.Cells)%5 != 0 {
			return nil, fmt.Errorf("carried history: test %q: cells are not in fives", ct.ID)
		}
		t := &Test{ID: ct.ID, File: ct.File, Line: ct.Line, placed: order{time: ct.PlacedAt, key: ct.PlacedKey}, OtherFailures: ct.Other}
		for _, s := range ct.Sigs {
			t.Sigs = append(t.Sigs, Sig{Hash: s.Hash, Count: s.Count, Message: s.Message, first: order{time: s.Time, key: s.Key}})
		}
		for k := 0; k < len(ct.Cells); k += 5 {
			v := ct.Cells[k : k+5]
			if v[0] < 0 || int(v[0]) >= len(h.Runs) || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[1] > 0xFFFF || v[2] > 0xFFFF || v[3] > 0xFFFF ||
				v[4] < 0 || int(v[4]) > len(t.Sigs) {
				return nil, fmt.Errorf("carried history: test %q: cell %d out of range", ct.ID, k/5)
			}
			t.Cells = append(t.Cells, Cell{Run: v[0], Pass: uint16(v[1]), Fail: uint16(v[2]), Skip: uint16(v[3]), Sig: uint16(v[4])})
		}
		h.Tests = append(h.Tests, t)
	}
	h.finalize()
	return h, nil
}

// RunKey identifies a run across histories: its commit and run key.
func RunKey(r model.Run) string { return r.CommitSHA + "|" + r.Key() }

// Keys returns the run keys h holds, so a collector can skip runs it has
// already read. A Partial run is left out: it was not read in full, and
// the next collection reads it again.
func (h *History) Keys() map[string]bool {
	m := make(map[string]bool, len(h.Runs))
	for _, r := range h.Runs {
		if !r.Partial {
			m[RunKey(r.Run)] = true
		}
	}
	return m
}

// Combine joins an older history with a newer one. A run present in both
// is taken from the newer. Runs older than since are dropped (zero keeps
// everything), and so are tests left with no cells. A nil history counts as
// an empty one: with both nil the result is empty, never nil. The totals
// and skipped inputs are the newer history's.
func Combine(older, newer *History, since time.Time) (*History, error) {
	return combine(older, newer, inWindow(since), false), nil
}

// Replace is Combine for a newer history read from workflow runs that
// older may hold already: a run of newer replaces every run of older with
// the same commit and run id, whatever their attempts. A workflow run read
// again (re-run since older was made, or read in part then) is what was
// read now: a document that names no attempt is filed under the latest
// attempt, so its earlier filing would otherwise count twice.
func Replace(older, newer *History, since time.Time) *History {
	return combine(older, newer, inWindow(since), true)
}

func inWindow(since time.Time) func(Run) bool {
	return func(r Run) bool {
		return since.IsZero() || r.Time.IsZero() || !r.Time.Before(since)
	}
}

// Filter returns the runs of h that keep accepts, and the tests left with
// cells in them. h is not changed; a nil h gives an empty history.
func Filter(h *History, keep func(model.Run) bool) *History {
	return combine(nil, h, func(r Run) bool { return keep(r.Run) }, false)
}

// FilterRuns is Filter with the whole Run, its counts and origin, to
// judge by.
func FilterRuns(h *History, keep func(Run) bool) *History {
	return combine(nil, h, keep, false)
}

// runOf is a workflow run's identity across its attempts.
type runOf struct{ commit, id string }

func combine(older, newer *History, keep func(Run) bool, replace bool) *History {
	if older == nil {
		older = &History{}
	}
	if newer == nil {
		newer = &History{}
	}
	out := &History{Totals: newer.Totals, Skipped: newer.Skipped, Legs: newer.Legs}
	var reread map[runOf]bool
	if replace {
		reread = map[runOf]bool{}
		for _, r := range newer.Runs {
			if r.RunID != "" {
				reread[runOf{r.CommitSHA, r.RunID}] = true
			}
		}
	}
	keys := map[string]int32{}
	remaps := [2][]int32{}
	for n, h := range []*History{newer, older} {
		remap := make([]int32, len(h.Runs))
		for i, r := range h.Runs {
			k := RunKey(r.Run)
			if !keep(r) || n == 1 && r.RunID != "" && reread[runOf{r.CommitSHA, r.RunID}] {
				remap[i] = -1
				continue
			}
			if j, ok := keys[k]; ok {
				if n == 1 {
					remap[i] = -1 // the newer history has this run
				} else {
					remap[i] = j
				}
				continue
			}
			keys[k] = int32(len(out.Runs))
			remap[i] = int32(len(out.Runs))
			rr := r
			rr.Tests, rr.Failed, rr.Repeated = 0, 0, 0
			out.Runs = append(out.Runs, rr)
		}
		remaps[n] = remap
	}
	tests := map[string]*Test{}
	for n, h := range []*History{newer, older} {
		for _, t := range h.Tests {
			g := tests[t.ID]
			if g == nil {
				g = &Test{ID: t.ID}
				tests[t.ID] = g
				out.Tests = append(out.Tests, g)
			}
			// The earlier place, as a history read at once would have
			// it (Test.File).
			if t.File != "" && (g.File == "" || placeBefore(t.placed, location{t.File, t.Line}, g.placed, location{g.File, g.Line})) {
				g.File, g.Line, g.placed = t.File, t.Line, t.placed
			}
			sigs := keptSigs(t, remaps[n])
			sigMap := make([]uint16, len(t.Sigs)+1)
			for k, s := range sigs {
				if s.Count > 0 || t.Sigs[k].Count <= 0 { // not emptied by dropped runs
					sigMap[k+1] = addSig(g, s)
				}
			}
			for _, c := range t.Cells {
				ri := remaps[n][c.Run]
				if ri < 0 {
					continue
				}
				c.Run, c.Sig = ri, sigMap[c.Sig]
				g.Cells = append(g.Cells, c)
			}
			g.OtherFailures += t.OtherFailures
		}
	}
	out.Tests = slices.DeleteFunc(out.Tests, func(t *Test) bool { return len(t.Cells) == 0 })
	out.finalize()
	return out
}

// keptSigs returns t's signatures counting only the failures of the cells
// remap keeps: a signature's count less the failures of the dropped cells
// that name it, so that a run left out (older than the window, or replaced
// by a newer reading of it) does not count its failures twice or outside
// the window. A cell records one signature for all its failures; those
// of a cell that failed with several are taken off the one it names, and
// a signature a kept cell names keeps a count of at least one. A
// signature left with no failure has Count 0. With nothing dropped, t.Sigs
// itself is returned.
func keptSigs(t *Test, remap []int32) []Sig {
	var dropped []int
	for _, c := range t.Cells {
		if remap[c.Run] < 0 && c.Sig > 0 && c.Fail > 0 {
			if dropped == nil {
				dropped = make([]int, len(t.Sigs)+1)
			}
			dropped[c.Sig] += int(c.Fail)
		}
	}
	if dropped == nil {
		return t.Sigs
	}
	named := make([]bool, len(t.Sigs)+1)
	for _, c := range t.Cells {
		if remap[c.Run] >= 0 {
			named[c.Sig] = true
		}
	}
	sigs := slices.Clone(t.Sigs)
	for k := range sigs {
		sigs[k].Count = max(sigs[k].Count-dropped[k+1], 0)
		if named[k+1] {
			sigs[k].Count = max(sigs[k].Count, 1)
		}
	}
	return sigs
}
