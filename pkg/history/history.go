// Package history folds parsed JUnit results into a compact matrix of
// tests × runs. Attempts of one test inside one run (reruns, retries,
// repeated testcases) fold into one cell, so memory grows with tests × runs
// and never with the number of results.
package history

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/par"
	"github.com/flakegate/flakegate/pkg/junit"
	"github.com/flakegate/flakegate/pkg/model"
)

// maxSigCache bounds a builder's cache of normalised failure texts.
const maxSigCache = 4096

// maxSignatures bounds the distinct failure signatures kept per test. A
// test whose failures never repeat a signature adds to Other instead.
const maxSignatures = 32

// History is every test's outcomes across runs.
type History struct {
	Runs  []Run   // sorted by time, then run id, then source (see runLess)
	Tests []*Test // sorted by ID
	// Totals counts the <testcase> elements read, by final outcome.
	Totals junit.Totals
	// Skipped lists inputs that were left out, with the reason.
	Skipped []Skipped
	// Legs says where a bound kept the legs of a matrix from being told
	// apart as they are below it. Nothing is left out, but results that
	// would be one test per leg may count as one test's attempts, or a
	// rerun's as another project's.
	Legs LegBounds
}

// LegBounds counts where splitLegs met its bounds.
type LegBounds struct {
	// FoldedRuns counts the runs in which more than maxLegs legs were
	// read by one reader: the documents of the legs past it count as one
	// leg, "(more legs)".
	FoldedRuns int
	// SearchStopped is set when the search for reruns and repeated
	// uploads among the legs stopped at its bound (maxRerunWork,
	// maxRerunPairs): every leg counts as a project of its own, so a
	// rerun's passes are another project's, not retries.
	SearchStopped bool
}

// Skipped is an input left out of the history.
type Skipped = model.SkippedSource

// Run is one CI execution with its counts.
type Run struct {
	model.Run
	Tests  int // tests with a pass or a failure in the run
	Failed int // tests that failed every attempt in the run
	// FailedAttempt counts the tests that failed an attempt in the run:
	// Failed and those that passed on a retry.
	FailedAttempt int
	// Repeated counts the tests with more than one attempt (passes and
	// failures) in the run: retried, repeated by the runner, or written
	// to several files of the run that splitLegs did not tell apart.
	Repeated int
	// WorkflowID is the workflow of a run read from GitHub, and
	// WorkflowFile its file name ("ci.yml") when the run was listed by it,
	// so that a later report can leave out the runs of workflows no longer
	// selected. Both are zero for local results and for runs carried in a
	// history written before they were recorded.
	WorkflowFile string
	WorkflowID   int64
	// Partial marks a run read from GitHub with a transient failure (an
	// artifact not listed or not downloaded after retries): what it holds
	// is part of the run. Keys leaves it out, so the next collection
	// reads the run again and its results replace these (Replace).
	Partial bool
	// Parts are the sources of a run read from several files that state
	// no run of their own (JoinRuns): its Source is their directory. Nil
	// for a run of one source or of a stated run id. Not carried.
	Parts []string
}

// Test is one test's cells, one per run it appeared in.
type Test struct {
	// ID is model.TestID, "classname::name", or model.ProjectTestID,
	// "classname::name [project]", for a test that a JUnit file holds
	// under several projects (see qualify in load.go).
	ID string
	// File and Line are where the earliest case that states a file puts
	// the test: the earliest by the time its document states, then by
	// run, then the least file and line.
	File string
	Line int
	// placed is where File and Line were found among the history's
	// cases, so that a combined history keeps the earlier place.
	placed order
	Cells  []Cell // sorted by run
	Sigs   []Sig  // by count, then first appearance
	// OtherFailures counts failures beyond maxSignatures distinct
	// signatures.
	OtherFailures int
}

// Cell is one test in one run: its attempts by outcome.
type Cell struct {
	Run  int32 // index into History.Runs
	Pass uint16
	Fail uint16
	Skip uint16
	// Sig is 1 + the index in Test.Sigs of the run's first failure
	// signature (of a run in several documents that fail differently,
	// the least by hash of each document's first); 0 when the test did
	// not fail or the signature is one of OtherFailures.
	Sig uint16
}

// Failed reports whether the test failed at least once in the run.
func (c Cell) Failed() bool { return c.Fail > 0 }

// Mixed reports whether the test both failed and passed inside the run:
// failed, then passed on a retry.
func (c Cell) Mixed() bool { return c.Fail > 0 && c.Pass > 0 }

// Sig is one failure signature of a test.
type Sig struct {
	Hash    string // "sha256:..."
	Count   int
	Message string // a sample message: the one seen first
	first   order
}

// order places a sample among runs: earlier runs win, then the lesser run
// key (keyCompare: runs without a run id by their sources' natural order).
type order struct {
	time time.Time
	key  string
}

func (o order) less(p order) bool {
	if !o.time.Equal(p.time) {
		return o.time.Before(p.time)
	}
	return keyCompare(o.key, p.key) < 0
}

// runLess orders runs by time, then by numeric run id, then by attempt,
// then by source in natural order (naturalCompare: head-2.xml before
// head-10.xml, so that runs numbered in their file names are in the order
// of their numbers, padded or not). Runs with no time sort first, by id.
func runLess(a, b *Run) int {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	ai, aerr := strconv.ParseInt(a.RunID, 10, 64)
	bi, berr := strconv.ParseInt(b.RunID, 10, 64)
	if aerr == nil && berr == nil && ai != bi {
		return cmp.Compare(ai, bi)
	}
	if c := cmp.Compare(a.RunID, b.RunID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Attempt, b.Attempt); c != 0 {
		return c
	}
	return naturalCompare(a.Source, b.Source)
}

// finalize sorts runs and tests, renumbers cells, and counts run totals.
func (h *History) finalize() {
	remap := h.sortRuns()
	// A carried history may hold a test with no cells.
	h.Tests = slices.DeleteFunc(h.Tests, func(t *Test) bool { return len(t.Cells) == 0 })
	h.sortTests()
	// Each test's cells and signatures are put in order independently, on
	// every core, and each part counts its tests into the runs' totals.
	var mu sync.Mutex
	par.Parts(len(h.Tests), 256, func(lo, hi int) {
		f := h.newFinisher(&mu)
		for _, t := range h.Tests[lo:hi] {
			for i := range t.Cells {
				t.Cells[i].Run = remap[t.Cells[i].Run]
			}
			f.finish(t)
		}
		f.flush()
	})
}

// sortRuns puts the runs in order and returns, for each run's index
// before, its index now.
func (h *History) sortRuns() []int32 {
	idx := make([]int, len(h.Runs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return runLess(&h.Runs[i], &h.Runs[j]) })
	remap := make([]int32, len(h.Runs))
	runs := make([]Run, len(h.Runs))
	for newI, oldI := range idx {
		remap[oldI] = int32(newI)
		runs[newI] = h.Runs[oldI]
	}
	h.Runs = runs
	return remap
}

// sortTests puts the tests in order of ID, and the skipped sources in
// order of path.
func (h *History) sortTests() {
	slices.SortFunc(h.Tests, func(a, b *Test) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(h.Skipped, func(a, b Skipped) int { return cmp.Compare(a.Path, b.Path) })
}

// finisher puts tests' cells, numbered by the runs in order, in order
// and counts them into the runs' totals: one per goroutine, each adding
// its counts under mu when done.
type finisher struct {
	h                       *History
	mu                      *sync.Mutex
	scratch                 []Cell
	tests, failed, repeated []int
	failedAttempt           []int
}

func (h *History) newFinisher(mu *sync.Mutex) *finisher {
	n := len(h.Runs)
	return &finisher{h: h, mu: mu, tests: make([]int, n), failed: make([]int, n), repeated: make([]int, n), failedAttempt: make([]int, n)}
}

func (f *finisher) finish(t *Test) {
	f.scratch = sortCells(t.Cells, f.scratch)
	t.Cells = f.foldCount(t.Cells, t.Sigs)
	sortSigs(t)
}

// gatherDense moves the filled places of byRun, in order of run, to out
// (whose capacity holds them), counting each run's tests as finish does,
// and leaves byRun empty (Run -1) again. Fields are copied one by one, as
// scatterCells wrote them.
func (f *finisher) gatherDense(byRun, out []Cell, filled int) []Cell {
	out = out[:filled]
	n := 0
	for r := 0; n < filled; r++ {
		x := &byRun[r]
		if x.Run < 0 {
			continue
		}
		o := &out[n]
		o.Run, o.Pass, o.Fail, o.Skip, o.Sig = x.Run, x.Pass, x.Fail, x.Skip, x.Sig
		f.count(o)
		x.Run = -1
		n++
	}
	return out
}

// foldCount merges adjacent cells of the same run (one run's documents
// may have been read by different builders; of their signatures it keeps
// the least by hash, whichever cell comes first) and counts each run's
// tests, failed tests and repeated tests as it goes. A cell is counted
// when the next one is of another run, once it can no longer fold.
func (f *finisher) foldCount(cells []Cell, sigs []Sig) []Cell {
	n := 0
	for i := range cells {
		c := &cells[i]
		if n > 0 && cells[n-1].Run == c.Run {
			cells[n-1].fold(c.Pass, c.Fail, c.Skip, c.Sig, sigs)
			continue
		}
		if n > 0 {
			f.count(&cells[n-1])
		}
		if n != i {
			cells[n] = *c
		}
		n++
	}
	if n > 0 {
		f.count(&cells[n-1])
	}
	return cells[:n]
}

// fold adds to c another cell of its run: its attempts, and of the two
// signatures the least by hash.
func (c *Cell) fold(pass, fail, skip, sig uint16, sigs []Sig) {
	c.Pass, c.Fail, c.Skip = satAdd(c.Pass, pass), satAdd(c.Fail, fail), satAdd(c.Skip, skip)
	c.Sig = leastSig(sigs, c.Sig, sig)
}

func (f *finisher) count(c *Cell) {
	if c.Pass+c.Fail > 0 {
		f.tests[c.Run]++
	}
	if c.Fail > 0 && c.Pass == 0 {
		f.failed[c.Run]++
	}
	if c.Fail > 0 {
		f.failedAttempt[c.Run]++
	}
	if int(c.Pass)+int(c.Fail) > 1 {
		f.repeated[c.Run]++
	}
}

func (f *finisher) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for r := range f.h.Runs {
		f.h.Runs[r].Tests += f.tests[r]
		f.h.Runs[r].Failed += f.failed[r]
		f.h.Runs[r].FailedAttempt += f.failedAttempt[r]
		f.h.Runs[r].Repeated += f.repeated[r]
	}
}

// sortCells sorts cells by run, in place. Cells arrive as a few ascending
// runs, one per builder, so it merges those runs instead of sorting from
// scratch: each following run is copied to scratch and merged with what
// precedes it from the back, so that only the cells that move are
// written. Of cells of one run, those of the earlier builder stay first.
// It returns the scratch buffer for reuse.
func sortCells(cells, scratch []Cell) []Cell {
	runs := 1
	for i := 1; i < len(cells); i++ {
		if cells[i].Run < cells[i-1].Run {
			runs++
		}
	}
	if runs == 1 {
		return scratch
	}
	if runs > 8 {
		slices.SortFunc(cells, func(a, b Cell) int { return cmp.Compare(a.Run, b.Run) })
		return scratch
	}
	end := 1
	for end < len(cells) && cells[end].Run >= cells[end-1].Run {
		end++
	}
	for end < len(cells) {
		next := end + 1
		for next < len(cells) && cells[next].Run >= cells[next-1].Run {
			next++
		}
		b := append(scratch[:0], cells[end:next]...)
		i, j, k := end-1, len(b)-1, next-1
		for j >= 0 {
			if i >= 0 && cells[i].Run > b[j].Run {
				cells[k] = cells[i]
				i--
			} else {
				cells[k] = b[j]
				j--
			}
			k--
		}
		scratch = b
		end = next
	}
	return scratch
}

// sortSigs orders a test's signatures by count, then first appearance, and
// renumbers its cells' references.
func sortSigs(t *Test) {
	if len(t.Sigs) < 2 {
		return // nothing to reorder: most tests never failed
	}
	perm := make([]int, len(t.Sigs))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(i, j int) int {
		a, b := &t.Sigs[i], &t.Sigs[j]
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		if a.first.less(b.first) {
			return -1
		}
		if b.first.less(a.first) {
			return 1
		}
		return cmp.Compare(a.Hash, b.Hash)
	})
	sorted := make([]Sig, len(t.Sigs))
	newIdx := make([]uint16, len(t.Sigs)+1)
	for n, o := range perm {
		sorted[n] = t.Sigs[o]
		newIdx[o+1] = uint16(n + 1)
	}
	t.Sigs = sorted
	for i := range t.Cells {
		t.Cells[i].Sig = newIdx[t.Cells[i].Sig]
	}
}

// Messages returns the test's sample failure messages in order of first
// appearance, one per signature for which keep is true.
func (t *Test) Messages(keep func(hash string) bool) []string {
	sigs := slices.Clone(t.Sigs)
	slices.SortStableFunc(sigs, func(a, b Sig) int {
		if a.first.less(b.first) {
			return -1
		}
		if b.first.less(a.first) {
			return 1
		}
		return 0
	})
	out := make([]string, 0, len(sigs))
	for _, s := range sigs {
		if s.Message != "" && keep(s.Hash) && !slices.Contains(out, s.Message) {
			out = append(out, s.Message)
		}
	}
	return out
}
