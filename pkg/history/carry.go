package history

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
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

// MaxCarriedCells is the most cells (History.Cells) a report should carry
// to the next: Bound keeps the newest runs within it, 1,000 runs of 5,000
// tests. Time alone (a year) let a history grow past maxCarriedBytes,
// after which it could not be read and was lost. Measured with
// BenchmarkCarriedCost on dense histories of this many cells (5,000 tests
// × 1,000 runs, and 1,000 × 5,000), a cell costs:
//   - 12.4 to 13.0 bytes of JSON (Encode's run index, four counts and
//     their commas), 0.3 to 2.3 bytes gzipped: 62 to 65 MB of JSON, a
//     quarter of maxCarriedBytes, which leaves room for longer run
//     indices and counts;
//   - to Decode, 13.7 to 15.4 bytes of heap at the peak, 13.2 to 13.5
//     held by the history it returns, 14.5 to 15.4 allocated in all, and
//     0.40 to 0.43 µs: about 75 MB and 2 s for a gate that reads it (the
//     decoder before streaming took 67 B a cell at the peak, 140 to 178
//     allocated, and 1.1 to 1.2 µs).
const MaxCarriedCells = 5_000_000

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
	Cells cellNumbers  `json:"c"`
	Sigs  []carriedSig `json:"g,omitempty"`
}

type carriedSig struct {
	Hash    string    `json:"h"`
	Count   int       `json:"n"`
	Message string    `json:"m,omitempty"`
	Time    time.Time `json:"t,omitzero"`
	Key     string    `json:"k,omitempty"`
}

// cellNumbers are a test's cells flattened. They are most of a carried
// history, and are read by hand: json's reflection took most of the
// 1.1 µs a cell that Decode took.
type cellNumbers []int32

// UnmarshalJSON reads an array of integers that fit in an int32. The
// decoder has checked that b is one JSON value.
func (c *cellNumbers) UnmarshalJSON(b []byte) error {
	out := (*c)[:0]
	if string(b) == "null" {
		*c = out
		return nil
	}
	if len(b) < 2 || b[0] != '[' {
		return errors.New("cells: not an array")
	}
	for i := 1; ; {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i < len(b) && b[i] == ']' && len(out) == 0 {
			break
		}
		neg := i < len(b) && b[i] == '-'
		if neg {
			i++
		}
		start, v := i, int64(0)
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			v = 10*v + int64(b[i]-'0')
			if v > 1<<31 {
				break // not an int32: refused below, before it overflows
			}
			i++
		}
		if neg {
			v = -v
		}
		if i == start || v < math.MinInt32 || v > math.MaxInt32 {
			return fmt.Errorf("cells: number %d is not a 32-bit integer", len(out))
		}
		out = append(out, int32(v))
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i == len(b)-1 && b[i] == ']' {
			break
		}
		return fmt.Errorf("cells: number %d is not a 32-bit integer", len(out)-1)
	}
	*c = out
	return nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// Encode writes h as gzip-compressed JSON. Skipped inputs, totals and leg
// bounds are not carried: they belong to the report that read them. It
// writes the tests one at a time, so that it holds the JSON of one test,
// never the whole file nor a copy of every test's cells: the bytes are
// those of json.Encoder writing the whole carried value at once.
func Encode(w io.Writer, h *History) error {
	runs := make([]carriedRun, len(h.Runs))
	for i, r := range h.Runs {
		runs[i] = carriedRun{Commit: r.CommitSHA, RunID: r.RunID, Attempt: r.Attempt, Time: r.Time,
			Workflow: r.Workflow, Branch: r.Branch, Event: r.Event, Source: r.Source,
			WorkflowFile: r.WorkflowFile, WorkflowID: r.WorkflowID, Partial: r.Partial}
	}
	zw := gzip.NewWriter(w)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // as json.Marshal: HTML escaped, no indent
	// value writes v's JSON, less the newline Encoder adds.
	value := func(v any) error {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := zw.Write(buf.Bytes()[:buf.Len()-1])
		return err
	}
	// The fields in carried's order.
	if _, err := io.WriteString(zw, `{"version":`+strconv.Itoa(FormatVersion)+`,"runs":`); err != nil {
		return err
	}
	if err := value(runs); err != nil {
		return err
	}
	if _, err := io.WriteString(zw, `,"tests":[`); err != nil {
		return err
	}
	// Reused from test to test; never nil, so that a test with no cells
	// has [], not null.
	cells, sigs := make(cellNumbers, 0, 5*64), []carriedSig(nil)
	for i, t := range h.Tests {
		if i > 0 {
			if _, err := io.WriteString(zw, ","); err != nil {
				return err
			}
		}
		cells = cells[:0]
		for _, cl := range t.Cells {
			cells = append(cells, cl.Run, int32(cl.Pass), int32(cl.Fail), int32(cl.Skip), int32(cl.Sig))
		}
		sigs = sigs[:0]
		for _, s := range t.Sigs {
			sigs = append(sigs, carriedSig{Hash: s.Hash, Count: s.Count, Message: s.Message, Time: s.first.time, Key: s.first.key})
		}
		ct := carriedTest{ID: t.ID, File: t.File, Line: t.Line, PlacedAt: t.placed.time, PlacedKey: t.placed.key, Other: t.OtherFailures,
			Cells: cells, Sigs: sigs}
		if err := value(&ct); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(zw, "]}\n"); err != nil {
		return err
	}
	return zw.Close()
}

// Decode reads a carried history written by Encode, checking every index.
// It reads the tests one at a time, so that it holds the JSON of one test,
// never the whole file. A file larger than maxCarriedBytes once
// decompressed is refused with an error that says so.
func Decode(r io.Reader) (*History, error) {
	return decode(r, maxCarriedBytes)
}

// decode is Decode with a bound on the decompressed bytes.
func decode(r io.Reader, maxBytes int64) (*History, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("carried history: not gzip: %w", err)
	}
	lr := &io.LimitedReader{R: zr, N: maxBytes + 1}
	h, err := decodeJSON(json.NewDecoder(lr))
	if err == nil {
		// The rest is Encode's newline: reading it to the end checks the
		// gzip checksum.
		_, err = io.Copy(io.Discard, lr)
	}
	// Checked first: a file cut at the bound ends in the middle of a
	// value, which the decoder reports as an unexpected EOF.
	if lr.N <= 0 {
		return nil, fmt.Errorf("carried history: larger than %d bytes (%d MiB) of JSON, the most that is read", maxBytes, maxBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("carried history: %w", err)
	}
	h.finalize()
	return h, nil
}

// decodeJSON reads the object Encode writes, key by key, and its tests
// one by one. Keys it does not know are skipped, and of a key given twice
// the last counts, as json.Unmarshal would have it.
func decodeJSON(dec *json.Decoder) (*History, error) {
	if err := expectDelim(dec, '{', "not an object"); err != nil {
		return nil, err
	}
	h := &History{}
	version := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key, _ := tok.(string); key {
		case "version":
			if err := dec.Decode(&version); err != nil {
				return nil, fmt.Errorf("version: %w", err)
			}
			if version != FormatVersion {
				return nil, versionError(version)
			}
		case "runs":
			var runs []carriedRun
			if err := dec.Decode(&runs); err != nil {
				return nil, fmt.Errorf("runs: %w", err)
			}
			h.Runs = make([]Run, len(runs))
			for i, r := range runs {
				h.Runs[i] = Run{Run: model.Run{CommitSHA: r.Commit, RunID: r.RunID, Attempt: r.Attempt, Time: r.Time,
					Workflow: r.Workflow, Branch: r.Branch, Event: r.Event, Source: r.Source},
					WorkflowFile: r.WorkflowFile, WorkflowID: r.WorkflowID, Partial: r.Partial}
			}
		case "tests":
			h.Tests = h.Tests[:0]
			if err := decodeTests(dec, h); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	if err := expectDelim(dec, '}', "not an object"); err != nil {
		return nil, err
	}
	if version != FormatVersion {
		return nil, versionError(version)
	}
	// The runs may follow the tests: their cells' runs are checked once
	// both are read.
	for _, t := range h.Tests {
		for k, c := range t.Cells {
			if int(c.Run) >= len(h.Runs) {
				return nil, fmt.Errorf("test %q: cell %d out of range", t.ID, k)
			}
		}
	}
	return h, nil
}

// VersionError is a carried history of a version other than
// FormatVersion. One of a higher version was written by a newer flakegate
// (read after a downgrade, or by a workflow pinned to an older release):
// the runs it holds are not lost, only unreadable here.
type VersionError struct{ Found int }

func (e *VersionError) Error() string {
	return fmt.Sprintf("version %d, this flakegate reads version %d", e.Found, FormatVersion)
}

// Newer reports whether the file was written by a newer flakegate.
func (e *VersionError) Newer() bool { return e.Found > FormatVersion }

func versionError(v int) error { return &VersionError{Found: v} }

// expectDelim reads the next token, which must be d.
func expectDelim(dec *json.Decoder, d json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return errors.New(what)
	}
	return nil
}

// decodeTests reads the tests array into h.Tests, one test at a time.
func decodeTests(dec *json.Decoder, h *History) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // null: no tests
	}
	if tok != json.Delim('[') {
		return errors.New("tests: not an array")
	}
	var cells cellNumbers // reused: the numbers are copied into the test's cells
	for dec.More() {
		ct := carriedTest{Cells: cells[:0]}
		if err := dec.Decode(&ct); err != nil {
			return fmt.Errorf("test %d: %w", len(h.Tests), err)
		}
		cells = ct.Cells
		t, err := ct.test()
		if err != nil {
			return err
		}
		h.Tests = append(h.Tests, t)
	}
	return expectDelim(dec, ']', "tests: not an array")
}

// test is ct as a Test, its cells checked but for their runs (decodeJSON).
func (ct *carriedTest) test() (*Test, error) {
	if len(ct.Cells)%5 != 0 {
		return nil, fmt.Errorf("test %q: cells are not in fives", ct.ID)
	}
	t := &Test{ID: ct.ID, File: ct.File, Line: ct.Line, placed: order{time: ct.PlacedAt, key: ct.PlacedKey}, OtherFailures: ct.Other}
	if len(ct.Sigs) > 0 {
		t.Sigs = make([]Sig, len(ct.Sigs))
		for i, s := range ct.Sigs {
			t.Sigs[i] = Sig{Hash: s.Hash, Count: s.Count, Message: s.Message, first: order{time: s.Time, key: s.Key}}
		}
	}
	t.Cells = make([]Cell, len(ct.Cells)/5)
	for k := range t.Cells {
		v := ct.Cells[5*k : 5*k+5]
		if v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[1] > 0xFFFF || v[2] > 0xFFFF || v[3] > 0xFFFF ||
			v[4] < 0 || int(v[4]) > len(t.Sigs) {
			return nil, fmt.Errorf("test %q: cell %d out of range", ct.ID, k)
		}
		t.Cells[k] = Cell{Run: v[0], Pass: uint16(v[1]), Fail: uint16(v[2]), Skip: uint16(v[3]), Sig: uint16(v[4])}
	}
	return t, nil
}

// Cells counts the cells h holds: one per test and run it has results in.
// It is what a history costs to carry and to read (MaxCarriedCells).
func (h *History) Cells() int {
	n := 0
	for _, t := range h.Tests {
		n += len(t.Cells)
	}
	return n
}

// Bound keeps the newest runs of h whose cells fit in maxCells, and
// returns them with the number of older runs it dropped. Runs are dropped
// whole, oldest first (h.Runs' order): of the runs kept, none is older
// than a run dropped, and the next older run would not have fitted. A
// run with more cells than maxCells is dropped with every run before it.
// As with FilterRuns, tests left with no cells are dropped, signature
// counts lose the failures of the dropped runs, and the totals, skipped
// inputs and leg bounds are h's. h is not changed; when nothing is
// dropped, h itself is returned. A nil h gives an empty history.
func Bound(h *History, maxCells int) (*History, int) {
	if h == nil {
		return &History{}, 0
	}
	perRun := make([]int, len(h.Runs))
	total := 0
	for _, t := range h.Tests {
		for _, c := range t.Cells {
			perRun[c.Run]++
		}
		total += len(t.Cells)
	}
	if total <= maxCells {
		return h, 0
	}
	from, kept := len(h.Runs), 0
	for from > 0 && kept+perRun[from-1] <= maxCells {
		from--
		kept += perRun[from]
	}
	// combine asks keep of h's runs once each, in order.
	i := 0
	return FilterRuns(h, func(Run) bool {
		i++
		return i > from
	}), from
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

// inWindow keeps the runs since since, and those with no time: local
// files that state none, which a gate's history input names and a report
// scores whatever their dates. A report stamps them before it carries
// them (Stamped), so that none stays in a carried history for good.
func inWindow(since time.Time) func(Run) bool {
	return func(r Run) bool {
		return since.IsZero() || r.Time.IsZero() || !r.Time.Before(since)
	}
}

// Stamped returns h with t as the time of every run that has none, its
// runs put in order again: a report stamps the runs it carries with its
// own time when they are first carried, so that they leave the carried
// history (Combine's since) and the report's window as any run does. The
// samples and places such runs gave keep their order (a run with no time
// is the earliest), as the time is not the run's own. h is not changed;
// with no run to stamp, h itself is returned.
func Stamped(h *History, t time.Time) *History {
	if h == nil || !slices.ContainsFunc(h.Runs, func(r Run) bool { return r.Time.IsZero() }) {
		return h
	}
	out := FilterRuns(h, func(Run) bool { return true }) // a copy: runs, tests and cells of its own
	for i := range out.Runs {
		r := &out.Runs[i]
		if r.Time.IsZero() {
			r.Time = t
		}
		r.Tests, r.Failed, r.Repeated, r.FailedAttempt = 0, 0, 0, 0 // counted again by finalize
	}
	out.finalize()
	return out
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
			rr.Tests, rr.Failed, rr.Repeated, rr.FailedAttempt = 0, 0, 0, 0
			out.Runs = append(out.Runs, rr)
		}
		remaps[n] = remap
	}
	// The tests, and how many cells each keeps: its cells are then
	// placed in one slab at their exact length. Appended one by one, a
	// test's cells took half as much again as they hold, and as much
	// again in the garbage of their growth.
	tests := map[string]int{}
	var kept []int
	total := 0
	for n, h := range []*History{newer, older} {
		for _, t := range h.Tests {
			i, ok := tests[t.ID]
			if !ok {
				i = len(out.Tests)
				tests[t.ID] = i
				out.Tests = append(out.Tests, &Test{ID: t.ID})
				kept = append(kept, 0)
			}
			for _, c := range t.Cells {
				if remaps[n][c.Run] >= 0 {
					kept[i]++
					total++
				}
			}
		}
	}
	slab := make([]Cell, total)
	for i, g := range out.Tests {
		g.Cells, slab = slab[:0:kept[i]], slab[kept[i]:]
	}
	for n, h := range []*History{newer, older} {
		for _, t := range h.Tests {
			g := out.Tests[tests[t.ID]]
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
