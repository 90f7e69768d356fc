package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/flakegate/flakegate/pkg/internal/hugepage"
	"github.com/flakegate/flakegate/pkg/internal/par"
	"github.com/flakegate/flakegate/pkg/junit"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/signature"
)

// Source is one JUnit document to read.
type Source struct {
	Name string
	Open func() (io.ReadCloser, error)
	// Run, when set, is what the CI system says about the run the document
	// belongs to (the GitHub API's workflow run). Its non-empty fields win
	// over the document's properties.
	Run *model.Run
	// Default, when set, is what the user says of runs whose documents do
	// not say it themselves (flakegate analyze --commit-sha): its
	// non-empty fields fill the document's empty ones.
	Default *model.Run
	// Leg, when set, names the part of its run that the document comes
	// from, as a slash-separated path: the artifact and the directory
	// inside it ("junit-windows/reports"), or a local file's directory.
	// Documents of one run under different legs may hold the same tests
	// side by side, as the legs of a matrix job do; see splitLegs.
	Leg string
}

// Caps on what one history holds. A file over a cap is left out whole and
// listed in History.Skipped with the reason: reading only part of it would
// present a partial run as complete.
const (
	// MaxTestsPerFile bounds the distinct tests (test identities) in one
	// file. Runners write a file per class, module, package or shard; the
	// largest real file in the conformance corpus, a whole jest run, has
	// 4,239 testcases, so this leaves room for a suite ten times that in
	// one file. Unbounded, a 1 MB zip of 200,000 testcases took 470 MB and
	// 76 s and made a 124 MB report.json; reading a file to the cap takes
	// about 85 MB and a fraction of a second.
	MaxTestsPerFile = 50_000
	// MaxTests bounds the distinct tests of one history load, across all
	// its files: twice MaxTestsPerFile, so a suite split across several
	// files may hold more tests than one file may, while many files of new
	// names cannot grow a history without end. A file whose new tests
	// would take the history past it is left out; files that add no new
	// test are still read. Builders read concurrently, so which file
	// crosses the cap first depends on the order in which files finish.
	MaxTests = 2 * MaxTestsPerFile
)

// limits are the caps a Builder enforces; tests lower them.
type limits struct {
	perFile, total int
}

var defaultLimits = limits{perFile: MaxTestsPerFile, total: MaxTests}

// Options tune Load. The zero value is the default.
type Options struct {
	// Workers is the number of documents parsed at once; 0 means GOMAXPROCS.
	Workers int
}

// Load parses the sources concurrently and folds them into a History. A
// source that cannot be opened or parsed is listed in History.Skipped with
// the reason, and the rest are read. Load stops early only when ctx ends.
func Load(ctx context.Context, sources []Source, opts Options) (*History, error) {
	return load(ctx, sources, opts, defaultLimits)
}

func load(ctx context.Context, sources []Source, opts Options, lim limits) (*History, error) {
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = max(1, min(w, len(sources)))
	units := plan(sources, w)
	builders := newBuilders(w, lim)
	par.Each(len(units), w, func(worker, k int) {
		for _, i := range units[k] {
			if ctx.Err() != nil {
				return
			}
			builders[worker].Add(sources[i])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Merge(builders...), nil
}

// plan splits the sources into units of work, each read in order by one
// worker. Files that share a base name form a series: Surefire and Gradle
// write TEST-<class>.xml once per run, and a run's single report is often
// junit.xml. A file repeats the tests, and nearly every byte of the tags,
// of the file before it in its series, which the Reader and the Builder
// reuse only when they read that file last; reading files in the order
// given, the workers' turns would split each series among them.
//
// A series longer than its share is cut, so that every worker gets work:
// there are at least four units per worker.
func plan(sources []Source, workers int) (units [][]int32) {
	at := map[string]int{} // grown as series are met: most histories have few
	var series [][]int32
	for i, s := range sources {
		k := baseName(s.Name)
		j, ok := at[k]
		if !ok {
			j = len(series)
			at[k] = j
			series = append(series, nil)
		}
		series[j] = append(series[j], int32(i))
	}
	cut := max(1, (len(sources)+4*workers-1)/(4*workers))
	for _, s := range series {
		for len(s) > cut {
			units = append(units, s[:cut])
			s = s[cut:]
		}
		units = append(units, s)
	}
	return units
}

// baseName is the last element of a source's name: a path, or an
// artifact's label ending in the path inside it.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		return name[i+1:]
	}
	return name
}

// Builder folds documents into a partial history. Each goroutine uses its
// own Builder; Merge joins them.
type Builder struct {
	reader  *junit.Reader
	tests   []*Test
	order   []order // per test: the earliest run that stated its File and Line
	testIdx map[string]int32
	runs    []Run
	legs    []runLeg       // per run: the part of a whole run it is
	legsIn  map[string]int // per whole run: its legs, up to maxLegs
	// legFails lists failures by test, run and signature, for runs that
	// are legs (see splitLegs).
	legFails []legFailed
	runIdx   map[runLeg]int32
	totals   junit.Totals
	skipped  []Skipped

	pend      []pending
	pendSigs  []pendingSig
	locs      []location     // new file locations of this document's cases
	props     []junit.Props  // testcase-level properties of this document
	suites    []*junit.Suite // suites of this document's cases, in order met
	lastSuite *junit.Suite
	key       []byte
	names     [][2]string // per test: classname and name as read
	cellOf    []int64     // per pending case: its cell, as chunk × chunkCells + index
	bySuite   []resolved  // per suite of the document: its run, once resolved (run -1 before)
	// Each test's cells are a chain of chunks of chunkCells slots, taken
	// in turn from blocks that never move: a list grows without copying
	// and wastes at most one chunk, whether a run is one document or
	// hundreds (Surefire writes a file per class). Merge gathers each
	// chain into a list of the exact length. first and last are per test,
	// -1 before its first cell; count is its cells. A slot is a cell of
	// one attempt that passed, or one that was skipped, as its run alone
	// (most cells are one of the two); any other cell is kept in rich,
	// and its slot says where (see slotRich).
	blocks      [][]cellChunk
	chunks      int32 // chunks taken
	rich        [][]Cell
	richCells   int32 // cells kept in rich
	first, last []int32
	count       []int32
	files       []string // per test, densely, for the per-case work
	lines       []int    // per test, with files
	// latest is the latest run order any test's location was set at: a
	// document of a run not before it cannot move a location earlier, so
	// its cases need no comparison.
	latest   order
	sigCache map[string]string  // failure text to signature
	docSigs  map[int64]docSig   // per cell of the document being committed: its first failure signature
	moved    map[int32]location // per test whose place the document being committed changed: the place before
	prevSeq  []int32            // tests of the document this one follows, in document order
	cursor   int                // next expected position in prevSeq
	// seqs holds the tests of earlier documents by their first test: a
	// document follows the last one read, unless it begins with the test
	// another began with (a file per class: the class's file of the
	// previous run).
	seqs map[int32][]int32

	// Per test, its first case in the current document, an index into
	// pend (valid when seen is the document): a second case of it under
	// another suite or file may be another project's (qualify). Indexes,
	// not pointers, so the per-case work writes no pointer.
	firstPend []int32
	multi     []int32 // tests of this document met under several suites or files
	reruns    []int32 // tests this document repeats under a pytest suite (markReruns)
	inMulti   []int32 // per test: the last document it was put in multi

	// memoTest maps the reader's remembered testcase tags (junit.Case.Memo)
	// to the tests they were found to be, for tags of generation memoGen:
	// a case whose tag repeats one whose test, suite, file and outcome
	// were plain is that test again, without comparing its names. An
	// entry counts while filesGen, bumped whenever a test's file changes,
	// is the one it was made in.
	memoTest []memoHit
	memoGen  uint32
	filesGen uint32

	lim      limits
	all      *registry // the distinct tests of this builder and those it shares the cap with
	doc      int32     // documents begun, numbering the current one
	seen     []int32   // per test: the last document it appeared in
	docTests int       // distinct tests in the current document
}

// registry holds the distinct tests of builders that share the MaxTests
// cap.
type registry struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// admit adds a document's new tests, unless that takes the registry past
// max. It returns how many of them were new to it.
func (g *registry) admit(tests []*Test, max int) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.ids) == 0 && len(tests) <= max {
		g.ids = make(map[string]struct{}, len(tests)) // the first document's tests, at once
	}
	n := 0
	for _, t := range tests {
		if _, ok := g.ids[t.ID]; !ok {
			n++
		}
	}
	if len(g.ids)+n > max {
		return n, false
	}
	for _, t := range tests {
		g.ids[t.ID] = struct{}{}
	}
	return n, true
}

type pending struct {
	test       int32
	base       int32 // the test its classname and name make, before qualify
	loc        int32 // index+1 into locs when the case named a new file; 0 otherwise
	suite      int32 // index into the document's suites
	props      int32 // index+1 into props for testcase-level properties; 0 otherwise
	pass, fail uint16
	skip       uint16
	noFile     bool // the case has no file attribute
}

// resolved is the run of a suite's cases, and their place among the
// history's cases: the time their document states for the run (not the
// run's earliest, which later documents may move), then the run's key. A
// choice made by it (a test's location, a signature's sample message) is
// the same whichever order and whichever builders read the documents in.
type resolved struct {
	run   int32
	order order
}

type location struct {
	file string
	line int
}

type pendingSig struct {
	pend    int32 // index into pend
	hash    string
	message string
}

// NewBuilders returns n empty Builders, one per goroutine, that share the
// MaxTests cap: their merged history holds at most MaxTests tests.
func NewBuilders(n int) []*Builder {
	return newBuilders(n, defaultLimits)
}

func newBuilders(n int, lim limits) []*Builder {
	all := &registry{ids: map[string]struct{}{}}
	bs := make([]*Builder, n)
	for i := range bs {
		bs[i] = &Builder{reader: junit.NewReader(), testIdx: map[string]int32{}, runIdx: map[runLeg]int32{}, sigCache: map[string]string{},
			seqs: map[int32][]int32{}, legsIn: map[string]int{}, docSigs: map[int64]docSig{}, moved: map[int32]location{}, lim: lim, all: all}
		bs[i].reader.Repeat = bs[i].onRepeat
	}
	return bs
}

// Add reads one source. Errors are recorded as skipped inputs.
func (b *Builder) Add(src Source) {
	if err := b.add(src); err != nil {
		k := Skipped{Path: src.Name, Error: err.Error()}
		if pe := (*junit.ParseError)(nil); errors.As(err, &pe) {
			// The line is in the message; the path is already the
			// Skipped entry's.
			k.Error = trimFile(pe)
			if !pe.Results {
				k.NotResults = pe.Other
			}
		}
		b.skipped = append(b.skipped, k)
	}
}

func (b *Builder) add(src Source) error {
	rc, err := src.Open()
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer rc.Close()
	if s, ok := rc.(sizer); ok && len(b.tests) == 0 {
		b.reserve(int(min(s.Size()/bytesPerCase, maxReserve)))
	}
	b.pend, b.pendSigs, b.locs, b.props, b.cursor = b.pend[:0], b.pendSigs[:0], b.locs[:0], b.props[:0], 0
	b.suites, b.lastSuite = b.suites[:0], nil
	b.multi, b.reruns = b.multi[:0], b.reruns[:0]
	b.doc++
	b.docTests = 0
	mark := b.mark()
	tot, err := b.reader.Parse(src.Name, rc, b.onCase)
	if err != nil {
		b.rollback(mark)
		return err
	}
	fresh := b.tests[mark.tests:]
	if len(b.multi) > 0 {
		fresh = b.qualify(mark.tests)
	}
	if len(b.reruns) > 0 {
		b.markReruns(&tot)
	}
	if len(fresh) > 0 {
		if n, ok := b.all.admit(fresh, b.lim.total); !ok {
			b.rollback(mark)
			return fmt.Errorf("new tests in this file (%d) would take the history past %d distinct tests: "+
				"flakegate reads at most %d tests in all, so it left this file out and kept the files read before it", n, b.lim.total, b.lim.total)
		}
	}
	b.totals.Merge(tot)
	b.commit(src)
	var seq []int32 // the sequence this one replaces, no longer used, or a new one
	if len(b.pend) > 0 {
		seq = b.seqs[b.pend[0].base]
	}
	seq = seq[:0]
	for _, p := range b.pend {
		seq = append(seq, p.base)
	}
	if len(seq) > 0 && len(b.seqs) < maxSeqs {
		b.seqs[seq[0]] = seq
	}
	b.prevSeq = seq
	return nil
}

// sizer is a document's reader that knows the document's size in bytes:
// a local file's, or a zip entry's declared size.
type sizer interface{ Size() int64 }

// A builder's first document of n bytes holds at most about
// n/bytesPerCase tests: a testcase tag that tools write, with a classname,
// a name and a time, takes about that much or more. Its tables are sized
// for them before it is read, instead of growing through doublings, each a
// copy into fresh pages that fault one by one (a 2,000-test first document
// took 3.4 MB and a tenth of a worker's CPU). maxReserve bounds the guess
// for a document of long failure texts, and a document too small to hold
// minReserve tests is left to grow.
const (
	bytesPerCase = 80
	minReserve   = 256
	maxReserve   = 1 << 13
)

// reserve sizes an empty builder's tables, and its reader's, for about n
// tests.
func (b *Builder) reserve(n int) {
	if n < minReserve {
		return
	}
	b.testIdx = make(map[string]int32, n)
	b.moved = make(map[int32]location, n)
	b.tests, b.order, b.names = slices.Grow(b.tests, n), slices.Grow(b.order, n), slices.Grow(b.names, n)
	b.first, b.last, b.count = slices.Grow(b.first, n), slices.Grow(b.last, n), slices.Grow(b.count, n)
	b.files, b.lines, b.seen = slices.Grow(b.files, n), slices.Grow(b.lines, n), slices.Grow(b.seen, n)
	b.firstPend, b.inMulti = slices.Grow(b.firstPend, n), slices.Grow(b.inMulti, n)
	b.pend, b.locs, b.memoTest = slices.Grow(b.pend, n), slices.Grow(b.locs, n), slices.Grow(b.memoTest, n)
	b.reader.Reserve(n)
}

// builderMark is where a builder's tests stood before a document.
type builderMark struct {
	tests int
}

func (b *Builder) mark() builderMark {
	return builderMark{tests: len(b.tests)}
}

// rollback forgets the tests a refused document added: a document left out
// adds nothing, and a run of refused documents cannot fill the builder.
func (b *Builder) rollback(m builderMark) {
	n := m.tests
	for _, t := range b.tests[n:] {
		delete(b.testIdx, t.ID)
	}
	clear(b.tests[n:])
	clear(b.names[n:])
	clear(b.files[n:])
	b.filesGen++ // tests from n on are gone, and the memos that name them
	b.tests, b.order, b.names, b.files, b.lines, b.seen = b.tests[:n], b.order[:n], b.names[:n], b.files[:n], b.lines[:n], b.seen[:n]
	b.first, b.last, b.count = b.first[:n], b.last[:n], b.count[:n]
	b.firstPend, b.inMulti = b.firstPend[:n], b.inMulti[:n]
	// Cells are written only when a document is committed: a refused one
	// took no chunk.
}

func trimFile(pe *junit.ParseError) string {
	if pe.Line > 0 {
		return fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
	}
	return pe.Msg
}

func sat16(n int) uint16 {
	if n > 0xFFFF {
		return 0xFFFF
	}
	return uint16(n)
}

// memoHit is a memoTest entry: the test + 1 (0 for none) and the
// filesGen it was made in.
type memoHit struct {
	test int32
	gen  uint32
}

// plainPass reports whether a case passed once, with no reruns and no
// properties of its own: all onCase needs of it beyond its test.
func plainPass(c *junit.Case) bool {
	return c.Outcome == model.Passed && len(c.Reruns) == 0 && !ownProps(c)
}

// ownProps reports whether a case states run properties of its own. The
// fields are compared one by one: comparing the struct calls its
// generated equality function, for every case.
func ownProps(c *junit.Case) bool {
	return c.Props.CommitSHA != "" || c.Props.RunID != "" || c.Props.RunAttempt != 0
}

// suiteIndex returns the index in suites of case c's suite, adding the
// suite when c begins a run of cases under another one.
func (b *Builder) suiteIndex(s *junit.Suite) int32 {
	if s != b.lastSuite || len(b.suites) == 0 {
		b.suites = append(b.suites, s)
		b.lastSuite = s
	}
	return int32(len(b.suites) - 1)
}

func (b *Builder) onCase(c *junit.Case) error {
	k, gen := c.Memo()
	if k >= 0 && gen != b.memoGen {
		clear(b.memoTest)
		b.memoGen = gen
	}
	if k >= 0 && int(k) < len(b.memoTest) {
		if e := b.memoTest[k]; e.test > 0 && e.gen == b.filesGen && plainPass(c) {
			ti := e.test - 1
			suite := b.suiteIndex(c.Suite)
			if err := b.count1(ti, c.Suite, c.File); err != nil {
				return err
			}
			b.pend = append(b.pend, pending{test: ti, base: ti, suite: suite, pass: 1, noFile: c.File == ""})
			return nil
		}
	}
	// The test identity (model.AppendTestID) is built in a reused buffer;
	// the map lookup does not allocate when the test is known.
	suite := ""
	if c.Suite != nil {
		suite = c.Suite.Name
	}
	cls := model.TestClass(c.Classname, suite)
	// Runs of one suite list tests in the same order: try the test at this
	// position in the previous document before the map.
	ti := int32(-1)
	for j := b.cursor; j < b.cursor+2 && j < len(b.prevSeq); j++ {
		if n := b.names[b.prevSeq[j]]; n[1] == c.Name && n[0] == cls {
			ti, b.cursor = b.prevSeq[j], j+1
			break
		}
	}
	if ti < 0 {
		b.key = model.AppendTestID(b.key[:0], cls, c.Name, "")
		var ok bool
		ti, ok = b.testIdx[string(b.key)]
		if ok && len(b.pend) == 0 {
			if seq, ok := b.seqs[ti]; ok {
				b.prevSeq, b.cursor = seq, 1
			}
		}
		if !ok {
			ti = b.newTest(string(b.key), cls, c.Name)
		}
	}
	pass, fail, skip := c.Attempts()
	p := pending{test: ti, base: ti, suite: b.suiteIndex(c.Suite), pass: sat16(pass), fail: sat16(fail), skip: sat16(skip),
		noFile: c.File == ""}
	if c.File != "" && (c.File != b.files[ti] || c.Line() != b.lines[ti]) {
		b.locs = append(b.locs, location{c.File, c.Line()})
		p.loc = int32(len(b.locs))
	}
	if err := b.count1(ti, c.Suite, c.File); err != nil {
		return err
	}
	if ownProps(c) {
		b.props = append(b.props, c.Props)
		p.props = int32(len(b.props))
	}
	b.pend = append(b.pend, p)
	pi := int32(len(b.pend) - 1)
	if c.Outcome.IsFailure() && !c.PassedLast() {
		b.addSig(pi, c.Detail)
	}
	for _, r := range c.Reruns {
		b.addSig(pi, r)
	}
	// The next case whose tag repeats this one is this test again, while
	// no test's file changes: its classname names the test whatever the
	// suite, and it keeps the test's file.
	if k >= 0 && p.loc == 0 && c.Classname != "" && plainPass(c) {
		if int(k) >= len(b.memoTest) {
			b.memoTest = append(b.memoTest, make([]memoHit, int(k)+1-len(b.memoTest))...)
		}
		b.memoTest[k] = memoHit{test: ti + 1, gen: b.filesGen}
	}
	return nil
}

// onRepeat takes a plain pass whose tag repeats one the reader remembered
// (junit.Reader.Repeat), as onCase would from its memo, without a Case. It
// declines, for onCase to read it, a case whose tag is not known to be a
// test, or that would take the document past the per-file cap.
func (b *Builder) onRepeat(k int32, gen uint32, s *junit.Suite, file string) bool {
	if gen != b.memoGen || int(k) >= len(b.memoTest) {
		return false
	}
	e := b.memoTest[k]
	if e.test == 0 || e.gen != b.filesGen {
		return false
	}
	ti := e.test - 1
	if b.seen[ti] != b.doc && b.docTests >= b.lim.perFile {
		return false
	}
	suite := b.suiteIndex(s)
	_ = b.count1(ti, s, file) // cannot fail: the cap was checked above
	// Written field by field where it lands: a pending built first and
	// then copied is read back as wider words than it was written in,
	// which stalls the store.
	n := len(b.pend)
	if n == cap(b.pend) {
		b.pend = append(b.pend, pending{})
	} else {
		b.pend = b.pend[:n+1]
	}
	p := &b.pend[n]
	p.test, p.base, p.loc, p.suite, p.props = ti, ti, 0, suite, 0
	p.pass, p.fail, p.skip, p.noFile = 1, 0, 0, file == ""
	return true
}

// count1 counts a case of test ti, under suite and naming file, in the
// document being read: the first of a test in the document counts toward
// the per-file cap; a second under another suite or file marks the test as
// held by several projects (qualify).
func (b *Builder) count1(ti int32, suite *junit.Suite, file string) error {
	if b.seen[ti] != b.doc {
		b.seen[ti] = b.doc
		b.firstPend[ti] = int32(len(b.pend))
		if b.docTests++; b.docTests > b.lim.perFile {
			return fmt.Errorf("more than %d distinct tests in one file: flakegate reads at most %d tests per file, so it left this file out",
				b.lim.perFile, b.lim.perFile)
		}
	} else {
		// A test met again in the document: rare.
		if first := &b.pend[b.firstPend[ti]]; (b.suites[first.suite] != suite || b.caseFile(first) != file) && b.inMulti[ti] != b.doc {
			b.inMulti[ti] = b.doc
			b.multi = append(b.multi, ti)
		}
		if pytestSuite(suite) {
			b.reruns = append(b.reruns, ti)
		}
	}
	return nil
}

// pytestSuite reports whether a testcase's suite is pytest's: the
// <testsuite> pytest writes is named by its junit_suite_name option,
// "pytest" unless set, and recent pytest names the <testsuites> around it
// "pytest tests" whatever the option (pytest-dev/pytest#12736).
func pytestSuite(s *junit.Suite) bool {
	return s != nil && (s.Name == "pytest" || s.Parent != nil && s.Parent.Name == "pytest tests")
}

// markReruns reads the attempts of pytest-rerunfailures (16.6.1 and
// later) and of the flaky plugin. pytest's junitxml writes nothing for an
// attempt whose outcome is "rerun", and the attempt's teardown then closes
// an empty <testcase>: a failed attempt is a plain pass followed by the
// next attempt, a testcase of the same test. So in a pytest document, a
// case with no outcome child (and no rerun child) that another case of its
// test follows is a failed attempt, and tot counts it so, unless the
// document repeats every test it holds (a repeated suite). Other tools that
// repeat a test in one file (go test -count, gotestsum --rerun-fails,
// Surefire) write each attempt's outcome and keep their reading.
func (b *Builder) markReruns(tot *junit.Totals) {
	repeated := make(map[int32]bool, len(b.reruns)) // by base test
	for _, ti := range b.reruns {
		repeated[ti] = true
	}
	// A document that repeats every one of its tests ran the whole suite
	// several times (pytest-flakefinder, which repeats each test under its
	// own name; xdist's --dist each), each case with its real outcome:
	// reruns repeat only what failed. Its tests are left as they read.
	tests := map[int32]bool{}
	for i := range b.pend {
		if p := &b.pend[i]; pytestSuite(b.suites[p.suite]) {
			tests[p.base] = true
		}
	}
	if len(tests) > 1 && len(repeated) == len(tests) && !rerunsOfAllFailed(b.pend, b.suites) {
		return
	}
	later := make(map[int32]bool, len(b.reruns)) // by test: a case of it follows
	for i := len(b.pend) - 1; i >= 0; i-- {
		p := &b.pend[i]
		if !repeated[p.base] {
			continue
		}
		if later[p.test] && p.pass == 1 && p.fail == 0 && p.skip == 0 && pytestSuite(b.suites[p.suite]) {
			p.pass, p.fail = 0, 1
			tot.Passed--
			tot.Failed++
		}
		later[p.test] = true
	}
}

// rerunsOfAllFailed reports whether a pytest document that repeats every
// test it holds is reruns after all: its tests repeated unequally often, or
// every one ending in a failure after cases that are all empty: what
// pytest-rerunfailures writes for a run in which every test failed every
// attempt (an outage), not a repeated suite, whose repetitions carry their
// own outcomes and do not all fail last after passing. Read as a repeated
// suite, every test of such a run was a pass, then a failure: all flagged
// flaky, and no outage (a report audit).
func rerunsOfAllFailed(pend []pending, suites []*junit.Suite) bool {
	last := map[int32]int{}  // by base test, its last case's index in pend
	count := map[int32]int{} // by base test, its cases
	for i := range pend {
		if pytestSuite(suites[pend[i].suite]) {
			last[pend[i].base] = i
			count[pend[i].base]++
		}
	}
	// A repeated suite repeats every test as often; reruns stop at a
	// test's first pass, so counts that differ are reruns (--reruns 2 or
	// more, some tests passing on a rerun).
	n := -1
	for _, k := range count {
		if n >= 0 && k != n {
			return true
		}
		n = k
	}
	for i := range pend {
		p := &pend[i]
		if !pytestSuite(suites[p.suite]) {
			continue
		}
		switch {
		case last[p.base] == i:
			if p.fail == 0 {
				return false
			}
		case !(p.pass == 1 && p.fail == 0 && p.skip == 0):
			return false
		}
	}
	return len(last) > 0
}

// newTest adds a test to the builder and returns its index. cls and name
// are what the cursor of onCase compares; a qualified test has none.
func (b *Builder) newTest(id, cls, name string) int32 {
	ti := int32(len(b.tests))
	b.testIdx[id] = ti
	b.tests = append(b.tests, &Test{ID: id})
	b.order = append(b.order, order{})
	b.names = append(b.names, [2]string{cls, name})
	b.first, b.last, b.count = append(b.first, -1), append(b.last, -1), append(b.count, 0)
	b.files, b.lines = append(b.files, ""), append(b.lines, 0)
	b.seen = append(b.seen, 0)
	b.firstPend = append(b.firstPend, 0)
	b.inMulti = append(b.inMulti, 0)
	return ti
}

// qualify gives each test that this document holds under several projects
// one identity per project, model.ProjectTestID. A project is told by the
// nearest hostname (Playwright writes its project there), the suite's name
// and the file: the parts that differ between the test's cases name it.
// Cases that differ in none (a suite or file restated) stay attempts of one
// test. It returns the tests new in this document that its cases now use,
// from first.
func (b *Builder) qualify(first int) []*Test {
	for _, ti := range b.multi {
		// A part tells projects apart when the cases give it two values
		// or more; an empty value (a rerun that states no file) tells
		// nothing apart.
		var hosts, suites, files []string
		for i := range b.pend {
			p := &b.pend[i]
			if p.base != ti {
				continue
			}
			s := b.suites[p.suite]
			hosts = addValue(hosts, s.Host())
			suites = addValue(suites, s.Name)
			files = addValue(files, b.caseFile(p))
		}
		host, suite, file := len(hosts) > 1, len(suites) > 1, len(files) > 1
		if !host && !suite && !file {
			continue
		}
		base := b.tests[ti]
		for i := range b.pend {
			p := &b.pend[i]
			if p.base != ti {
				continue
			}
			s := b.suites[p.suite]
			var parts []string
			if host {
				parts = append(parts, s.Host())
			}
			if suite {
				parts = append(parts, s.Name)
			}
			if file {
				parts = append(parts, b.caseFile(p))
			}
			id := model.ProjectTestID(base.ID, strings.Join(parts, ", "))
			qi, ok := b.testIdx[id]
			if !ok {
				qi = b.newTest(id, "", "")
			}
			if p.loc == 0 && !p.noFile && (b.files[qi] != b.files[ti] || b.lines[qi] != b.lines[ti]) {
				// The case named the location its test was known by,
				// which the project's test does not have: commit sets
				// it, with this document's run.
				b.locs = append(b.locs, location{b.files[ti], b.lines[ti]})
				p.loc = int32(len(b.locs))
			}
			p.test = qi
		}
	}
	// The new tests the document's cases use: a test made for the document
	// whose cases all went to projects is not counted.
	var fresh []*Test
	for ti := first; ti < len(b.tests); ti++ {
		if b.seen[ti] != b.doc || b.inMulti[ti] != b.doc || b.used(int32(ti)) {
			fresh = append(fresh, b.tests[ti])
		}
	}
	return fresh
}

// caseFile returns the file attribute of a pending case of this document,
// before its test is qualified or committed.
func (b *Builder) caseFile(p *pending) string {
	switch {
	case p.loc > 0:
		return b.locs[p.loc-1].file
	case p.noFile:
		return ""
	}
	return b.files[p.base]
}

func addValue(vs []string, v string) []string {
	if v == "" || slices.Contains(vs, v) {
		return vs
	}
	return append(vs, v)
}

// used reports whether a pending case of this document is of test ti.
func (b *Builder) used(ti int32) bool {
	for i := range b.pend {
		if b.pend[i].test == ti {
			return true
		}
	}
	return false
}

func (b *Builder) addSig(pi int32, o junit.Outcome) {
	msg := o.Message
	if msg == "" {
		msg = firstLine(o.Text)
	}
	// A text cut at its cap ends in a mark that counts the bytes left out;
	// the signature is of what was kept, as two runs of one bug may
	// differ past the cap.
	typ, message, text := junit.Uncut(o.Type), junit.Uncut(o.Message), junit.Uncut(o.Text)
	// The same failure text recurs across runs; normalising it (a dozen
	// regular expressions) once is enough.
	key := typ + "\x00" + message + "\x00" + text
	hash, ok := b.sigCache[key]
	if !ok {
		hash = signature.Of(typ, message, text)
		if len(b.sigCache) >= maxSigCache {
			clear(b.sigCache)
		}
		b.sigCache[key] = hash
	}
	b.pendSigs = append(b.pendSigs, pendingSig{pend: pi, hash: hash, message: clipString(msg, 500)})
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// commit folds the pending cases of one document into the partial history,
// now that every suite's properties are known.
func (b *Builder) commit(src Source) {
	// Each suite's run, resolved once it is needed; a case with
	// properties of its own is resolved alone.
	bySuite := b.bySuite[:0]
	for range b.suites {
		bySuite = append(bySuite, resolved{run: -1})
	}
	b.bySuite = bySuite
	// Suites of one run restate the same properties and timestamp (a
	// <testsuite> per class): the run is resolved once per distinct set.
	var last struct {
		ok    bool
		props junit.Props
		ts    time.Time
		res   resolved
	}
	resolve := func(p *pending) resolved {
		if p.props == 0 && bySuite[p.suite].run >= 0 {
			return bySuite[p.suite]
		}
		props, ts := b.suites[p.suite].Meta()
		if p.props > 0 {
			own := b.props[p.props-1]
			if own.CommitSHA != "" {
				props.CommitSHA = own.CommitSHA
			}
			if own.RunID != "" {
				props.RunID = own.RunID
			}
			if own.RunAttempt != 0 {
				props.RunAttempt = own.RunAttempt
			}
		}
		if last.ok && props == last.props && ts.Equal(last.ts) {
			if p.props == 0 {
				bySuite[p.suite] = last.res
			}
			return last.res
		}
		last.ok, last.props, last.ts = true, props, ts
		run := model.Run{CommitSHA: props.CommitSHA, RunID: props.RunID, Attempt: props.RunAttempt, Time: ts, Source: src.Name}
		if d := src.Default; d != nil {
			fill(&run, d)
		}
		if o := src.Run; o != nil {
			override(&run, o)
		}
		key := run.CommitSHA + "|" + run.Key()
		idx := runLeg{leg: src.Leg, base: key}
		ri, ok := b.runIdx[idx]
		if !ok && idx.leg != "" {
			// A run of more legs than a matrix can have: the rest are
			// one leg, so that crafted input cannot multiply the cells.
			if b.legsIn[key]++; b.legsIn[key] > maxLegs {
				idx.leg = overflowLeg
				ri, ok = b.runIdx[idx]
			}
		}
		if !ok {
			ri = int32(len(b.runs))
			b.runIdx[idx] = ri
			b.runs = append(b.runs, Run{Run: run})
			b.legs = append(b.legs, idx)
		} else {
			joinRun(&b.runs[ri].Run, run)
		}
		res := resolved{run: ri, order: order{time: run.Time, key: key}}
		last.res = res
		if p.props == 0 {
			bySuite[p.suite] = res
		}
		return res
	}
	b.cellOf = b.cellOf[:0]
	withSigs := len(b.pendSigs) > 0
	var res resolved
	suite := int32(-1) // the suite res is of; -1 after a case resolved alone
	earlier := false   // res may be before a test's location's run
	for i := range b.pend {
		p := &b.pend[i]
		if p.props > 0 || p.suite != suite {
			res, suite = resolve(p), p.suite
			if p.props > 0 {
				suite = -1
			}
			earlier = res.order.less(b.latest)
		}
		t, n := p.test, b.count[p.test]
		k, i := b.last[t], (n+chunkCells-1)%chunkCells
		if k >= 0 && b.runAt(k, i) == res.run {
			c := b.richCell(k, i)
			c.Pass, c.Fail, c.Skip = satAdd(c.Pass, p.pass), satAdd(c.Fail, p.fail), satAdd(c.Skip, p.skip)
		} else {
			if k, i = b.last[t], n%chunkCells; i == 0 {
				k = b.linkChunk(t, n)
			}
			b.count[t]++
			b.setCell(k, i, res.run, p.pass, p.fail, p.skip)
		}
		if withSigs {
			b.cellOf = append(b.cellOf, int64(k)*chunkCells+int64(i))
		}
		// A case in its test's place of an earlier run than the place's
		// must be looked at; one in the same place of a later run need
		// not be (most cases).
		if p.loc > 0 || !p.noFile && (earlier || len(b.moved) > 0) {
			b.place(p, res)
		}
	}
	clear(b.moved)
	// A cell's signature is its document's first failure's; a run whose
	// documents (read by this builder or another, in any order) fail
	// differently keeps the least by hash, so that what a history holds
	// does not depend on which builder read which document.
	clear(b.docSigs)
	for _, s := range b.pendSigs {
		p := &b.pend[s.pend]
		res := resolve(p)
		t := b.tests[p.test]
		k := addSig(t, Sig{Hash: s.hash, Count: 1, Message: s.message, first: res.order})
		if b.legs[res.run].leg != "" {
			// Kept by leg until splitLegs: a test it splits counts each
			// leg's failures by signature.
			b.legFails = append(b.legFails, legFailed{test: p.test, run: res.run, sig: k})
		}
		at := b.cellOf[s.pend]
		if _, ok := b.docSigs[at]; !ok && k != 0 {
			b.docSigs[at] = docSig{test: p.test, sig: k}
		}
	}
	for at, d := range b.docSigs {
		c := b.richCell(int32(at/chunkCells), int32(at%chunkCells))
		c.Sig = leastSig(b.tests[d.test].Sigs, c.Sig, d.sig)
	}
}

// place weighs a pending case's file and line against its test's: a
// test's are those of its earliest run that states a file (and the least
// of that run's), so a case in another place sets them when it comes
// first, and one in the same place of an earlier run moves their run
// earlier.
func (b *Builder) place(p *pending, res resolved) {
	t := p.test
	cur := location{b.files[t], b.lines[t]}
	l := cur // a case with no location of its own was in its test's place
	if p.loc > 0 {
		l = b.locs[p.loc-1]
	} else if m, ok := b.moved[t]; ok {
		l = m // when it was read: a case before it in the document moved it
	}
	switch {
	case l == cur:
		if res.order.less(b.order[t]) {
			b.order[t] = res.order
		}
	case cur.file == "" || placeBefore(res.order, l, b.order[t], cur):
		if _, ok := b.moved[t]; !ok {
			b.moved[t] = cur
		}
		x := b.tests[t]
		x.File, x.Line, b.order[t] = l.file, l.line, res.order
		b.files[t], b.lines[t] = l.file, l.line
		b.filesGen++
		if b.latest.less(res.order) {
			b.latest = res.order
		}
	}
}

// placeBefore reports whether location l, seen in a run of order o, comes
// before location m, seen in a run of order p: an earlier run first, then,
// for one run's documents, the lesser file and line, so that the choice
// does not depend on the order the documents were read in.
func placeBefore(o order, l location, p order, m location) bool {
	if o.less(p) || p.less(o) {
		return o.less(p)
	}
	return l.file < m.file || l.file == m.file && l.line < m.line
}

// docSig is the first failure signature of a test in a document.
type docSig struct {
	test int32
	sig  uint16
}

// leastSig returns whichever of two signature references (1 + an index in
// sigs, or 0 for none) names the least hash; a reference beats none.
func leastSig(sigs []Sig, a, b uint16) uint16 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	case sigs[b-1].Hash < sigs[a-1].Hash:
		return b
	}
	return a
}

// maxSeqs bounds the documents a builder remembers by their first test.
const maxSeqs = 1 << 12

// chunkCells is the slots of one chunk of a test's chain, so that a chunk
// with its next is one 64-byte cache line, and blockChunks the chunks of
// one block (1<<blockShift). richBlock is the cells of one block of rich.
const (
	chunkCells  = 15
	blockShift  = 10
	blockChunks = 1 << blockShift
	richShift   = 12
	richBlock   = 1 << richShift
)

// cellChunk is a piece of a test's cells; next is the chunk after it, or
// -1.
type cellChunk struct {
	slots [chunkCells]uint32
	next  int32
}

// A slot holds a cell of a test's chain. Two kinds of cell, which are
// nearly all of a history's, are the cell's run and a kind bit: one
// attempt that passed (the run alone), and one that was skipped
// (plainSkip and the run). Any other cell (a failure, several attempts, a signature) is slotRich
// and its index in the builder's rich cells; so is a cell of a run past
// slotIndex. Rich cells are numbered in an int32, as chunks are: 1<<31 of
// them would take 24 GB.
const (
	slotRich  = 1 << 31
	plainSkip = 1 << 30
	slotIndex = plainSkip - 1
)

// cellOfSlot is the cell slot s holds.
func (b *Builder) cellOfSlot(s uint32) Cell {
	switch {
	case s&slotRich != 0:
		return *b.richAt(s &^ slotRich)
	case s&plainSkip != 0:
		return Cell{Run: int32(s & slotIndex), Skip: 1}
	}
	return Cell{Run: int32(s), Pass: 1}
}

// newCells returns n zeroed cells for a merged history: the largest
// allocation of a run, written once by Merge, so a large one is taken on
// huge pages (hugepage.Bytes; a Cell holds no pointers).
func newCells(n int) []Cell {
	size := int(unsafe.Sizeof(Cell{}))
	if n < hugepage.Min/size {
		return make([]Cell, n)
	}
	b := hugepage.Bytes(n * size)
	return unsafe.Slice((*Cell)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

func (b *Builder) richAt(i uint32) *Cell { return &b.rich[i>>richShift][i&(richBlock-1)] }

// newChunk takes a chunk and returns its number.
func (b *Builder) newChunk() int32 {
	k := b.chunks
	if int(k>>blockShift) == len(b.blocks) {
		b.blocks = append(b.blocks, make([]cellChunk, blockChunks))
	}
	b.chunks++
	b.chunk(k).next = -1
	return k
}

func (b *Builder) chunk(k int32) *cellChunk { return &b.blocks[k>>blockShift][k&(blockChunks-1)] }

// linkChunk takes a chunk for test t, which has n cells, all in full
// chunks, and makes it t's last.
func (b *Builder) linkChunk(t, n int32) int32 {
	k := b.newChunk()
	if n == 0 {
		b.first[t] = k
	} else {
		b.chunk(b.last[t]).next = k
	}
	b.last[t] = k
	return k
}

// runAt is the run of the cell in slot i of chunk k.
func (b *Builder) runAt(k, i int32) int32 {
	s := b.chunk(k).slots[i]
	if s&slotRich != 0 {
		return b.richAt(s &^ slotRich).Run
	}
	return int32(s & slotIndex)
}

// setCell puts a cell of run with these counts, and no signature, in
// slot i of chunk k. The counts come one by one: a Cell built by the
// caller and read here in wider words than it was written in would stall
// the store.
func (b *Builder) setCell(k, i, run int32, pass, fail, skip uint16) {
	slot := &b.chunk(k).slots[i]
	if fail == 0 && run >= 0 && run <= slotIndex {
		switch {
		case pass == 1 && skip == 0:
			*slot = uint32(run)
			return
		case pass == 0 && skip == 1:
			*slot = plainSkip | uint32(run)
			return
		}
	}
	*slot = b.newRich(Cell{Run: run, Pass: pass, Fail: fail, Skip: skip})
}

// richCell returns the cell in slot i of chunk k, to be changed in place:
// a plain one is moved to the rich cells first.
func (b *Builder) richCell(k, i int32) *Cell {
	s := &b.chunk(k).slots[i]
	if *s&slotRich == 0 {
		*s = b.newRich(b.cellOfSlot(*s))
	}
	return b.richAt(*s &^ slotRich)
}

// newRich keeps c among the rich cells and returns its slot.
func (b *Builder) newRich(c Cell) uint32 {
	i := b.richCells
	if int(i>>richShift) == len(b.rich) {
		b.rich = append(b.rich, make([]Cell, richBlock))
	}
	b.richCells++
	*b.richAt(uint32(i)) = c
	return slotRich | uint32(i)
}

// appendCells appends test t's cells, with runs renumbered by remap, to
// out.
func (b *Builder) appendCells(out []Cell, t int32, remap []int32, sigMap []uint16) []Cell {
	n := int(b.count[t])
	out = slices.Grow(out, n)
	got := out[len(out) : len(out)+n]
	j := 0
	for k := b.first[t]; k >= 0 && j < n; k = b.chunk(k).next {
		for _, s := range b.chunk(k).slots[:min(n-j, chunkCells)] {
			// Written where it lands: a Cell (five fields) built in a
			// variable lives on the stack, and copying it reads back in
			// wide words what was written in narrow ones, which stalls.
			x := &got[j]
			switch {
			case s < plainSkip:
				*x = Cell{Run: remap[s], Pass: 1}
			case s < slotRich:
				*x = Cell{Run: remap[s&slotIndex], Skip: 1}
			default:
				*x = *b.richAt(s &^ slotRich)
				x.Run = remap[x.Run]
				if sigMap != nil {
					x.Sig = sigMap[x.Sig]
				}
			}
			j++
		}
	}
	return out[:len(out)+n]
}

// scatterCells writes test t's cells at their runs' places in byRun (Run
// -1 where no cell is yet), folding a cell into one of the same run
// already there, and returns how many places it filled. Fields are
// written one by one, as gatherDense reads them.
func (b *Builder) scatterCells(byRun []Cell, t int32, remap []int32, sigMap []uint16, sigs []Sig) int {
	n := int(b.count[t])
	filled := 0
	j := 0
	for k := b.first[t]; k >= 0 && j < n; k = b.chunk(k).next {
		for _, s := range b.chunk(k).slots[:min(n-j, chunkCells)] {
			j++
			// Scalars, not a Cell: Go keeps a Cell (five fields) on the
			// stack.
			var run int32
			var pass, fail, skip, sig uint16
			switch {
			case s < plainSkip:
				run, pass = remap[s], 1
			case s < slotRich:
				run, skip = remap[s&slotIndex], 1
			default:
				r := b.richAt(s &^ slotRich)
				run, pass, fail, skip, sig = remap[r.Run], r.Pass, r.Fail, r.Skip, r.Sig
				if sigMap != nil {
					sig = sigMap[sig]
				}
			}
			x := &byRun[run]
			if x.Run < 0 {
				x.Run, x.Pass, x.Fail, x.Skip, x.Sig = run, pass, fail, skip, sig
				filled++
				continue
			}
			x.fold(pass, fail, skip, sig, sigs)
		}
	}
	return filled
}

// joinRun adds to r what another document of the same run says of it: the
// run began at the earliest time stated, and is named by the least source
// in natural order (naturalCompare, as runs are ordered), whichever
// document was read first.
func joinRun(r *model.Run, o model.Run) {
	if !o.Time.IsZero() && (r.Time.IsZero() || o.Time.Before(r.Time)) {
		r.Time = o.Time
	}
	if naturalCompare(o.Source, r.Source) < 0 {
		r.Source = o.Source
	}
}

func satAdd(a, b uint16) uint16 {
	if s := uint32(a) + uint32(b); s <= 0xFFFF {
		return uint16(s)
	}
	return 0xFFFF
}

func override(r *model.Run, o *model.Run) {
	if o.CommitSHA != "" {
		r.CommitSHA = o.CommitSHA
	}
	if o.RunID != "" {
		r.RunID = o.RunID
	}
	if o.Attempt != 0 {
		r.Attempt = o.Attempt
	}
	if !o.Time.IsZero() {
		r.Time = o.Time
	}
	if o.Workflow != "" {
		r.Workflow = o.Workflow
	}
	if o.Branch != "" {
		r.Branch = o.Branch
	}
	if o.Event != "" {
		r.Event = o.Event
	}
}

// fill sets the commit and run id a document left empty from d.
func fill(r *model.Run, d *model.Run) {
	if r.CommitSHA == "" {
		r.CommitSHA = d.CommitSHA
	}
	if r.RunID == "" {
		r.RunID = d.RunID
	}
}

// addSig counts a signature for a test, keeping the earliest sample. It
// returns 1 + the signature's index, or 0 when the test has too many.
func addSig(t *Test, s Sig) uint16 {
	for i := range t.Sigs {
		g := &t.Sigs[i]
		if g.Hash == s.Hash {
			g.Count += s.Count
			// The earliest sample, and of one run's, the least: the
			// same whichever builder read which document.
			if s.first.less(g.first) || !g.first.less(s.first) && s.Message < g.Message {
				g.first, g.Message = s.first, s.Message
			}
			return uint16(i + 1)
		}
	}
	if len(t.Sigs) >= maxSignatures {
		t.OtherFailures += s.Count
		return 0
	}
	t.Sigs = append(t.Sigs, s)
	return uint16(len(t.Sigs))
}

// Merge joins partial histories into one, sorted and with run totals.
// Runs and test identities are matched in one pass; each test's cells are
// then gathered, from every builder that has some, into one slab of lists
// of the exact length, on every core.
func Merge(builders ...*Builder) *History {
	return merge(builders, true)
}

// merge is Merge; with gather false it leaves putting each test's cells
// in order to finalize, as it must when splitLegs has legs to tell apart,
// so that tests can compare the two ways.
func merge(builders []*Builder, gather bool) *History {
	h := &History{}
	runIdx := map[runLeg]int32{}
	var legs []runLeg // per run of h, until splitLegs
	remaps := make([][]int32, len(builders))
	for bi, b := range builders {
		h.Totals.Merge(b.totals)
		h.Skipped = append(h.Skipped, b.skipped...)
		remap := make([]int32, len(b.runs))
		for key, ri := range b.runIdx {
			r := b.runs[ri]
			gi, ok := runIdx[key]
			if !ok {
				gi = int32(len(h.Runs))
				runIdx[key] = gi
				h.Runs = append(h.Runs, r)
				legs = append(legs, b.legs[ri])
			} else {
				joinRun(&h.Runs[gi].Run, r.Run)
			}
			remap[ri] = gi
		}
		remaps[bi] = remap
	}
	folded := map[string]bool{}
	for _, b := range builders {
		for key, n := range b.legsIn {
			if n > maxLegs {
				folded[key] = true
			}
		}
	}
	h.Legs.FoldedRuns = len(folded)
	// With one leg per run there is nothing for splitLegs to tell apart:
	// the runs are put in order now, and each test's cells are put in
	// order and counted as they are gathered, while they are in the
	// cache, instead of in a pass of finalize's.
	ordered := gather && oneLegEach(legs)
	var finMu sync.Mutex
	if ordered {
		final := h.sortRuns()
		for _, remap := range remaps {
			for i, gi := range remap {
				remap[i] = final[gi]
			}
		}
	}
	// The builders' tests of each merged test, in builder order: a list
	// through parts from first[g], ended by -1.
	type part struct{ b, t, next int32 }
	nparts := 0
	for _, b := range builders {
		nparts += len(b.tests)
	}
	parts := make([]part, 0, nparts)
	var first, last []int32
	if len(builders) > 0 {
		first, last = make([]int32, 0, len(builders[0].tests)), make([]int32, 0, len(builders[0].tests))
	}
	var cells []int // per merged test: its cells, when gathered
	// Failures by leg and signature, by merged test and run, gathered
	// only if splitLegs splits a test.
	testOf := make([][]int32, len(builders)) // per builder with such failures: its tests' merged test
	for bi, b := range builders {
		if len(b.legFails) > 0 {
			testOf[bi] = make([]int32, len(b.tests))
		}
	}
	fails := func() map[int32][]legFail {
		out := map[int32][]legFail{}
		for bi, b := range builders {
			for _, f := range b.legFails {
				hash := "" // one of the test's failures past maxSignatures
				if f.sig > 0 {
					hash = b.tests[f.test].Sigs[f.sig-1].Hash
				}
				g := testOf[bi][f.test]
				out[g] = append(out[g], legFail{run: remaps[bi][f.run], hash: hash})
			}
		}
		return out
	}
	merged := func(bi, i int, g int32) {
		if testOf[bi] != nil {
			testOf[bi][i] = g
		}
	}
	add := func(g int32, bi, i int) {
		k := int32(len(parts))
		parts = append(parts, part{int32(bi), int32(i), -1})
		if int(g) == len(first) {
			first, last = append(first, k), append(last, k)
			return
		}
		parts[last[g]].next, last[g] = k, k
	}
	if len(builders) == 1 {
		b := builders[0]
		for i := range b.tests {
			if n := b.count[i]; n > 0 {
				merged(0, i, int32(len(h.Tests)))
				add(int32(len(h.Tests)), 0, i)
				h.Tests = append(h.Tests, b.tests[i])
				cells = append(cells, int(n))
			}
		}
	} else if len(builders) > 1 {
		// The first builder's tests are merged tests in its order; a test
		// of another builder is found by its ID in the first's table, and
		// in at only when the first has no cells of it.
		b0 := builders[0]
		h.Tests, cells = make([]*Test, 0, len(b0.tests)), make([]int, 0, len(b0.tests))
		g0 := make([]int32, len(b0.tests))
		for i, t := range b0.tests {
			g0[i] = -1
			if n := int(b0.count[i]); n > 0 { // 0: made for a document whose cases all went to projects (qualify)
				g0[i] = int32(len(h.Tests))
				h.Tests = append(h.Tests, t)
				cells = append(cells, n)
				merged(0, i, g0[i])
				add(g0[i], 0, i)
			}
		}
		at := map[string]int32{}
		for bi := 1; bi < len(builders); bi++ {
			b := builders[bi]
			for i, t := range b.tests {
				n := int(b.count[i])
				if n == 0 {
					continue
				}
				g := int32(-1)
				if i0, ok := b0.testIdx[t.ID]; ok {
					g = g0[i0]
				}
				if g < 0 {
					var ok bool
					if g, ok = at[t.ID]; !ok {
						g = int32(len(h.Tests))
						at[t.ID] = g
						h.Tests = append(h.Tests, t)
						cells = append(cells, 0)
					}
				}
				merged(bi, i, g)
				add(g, bi, i)
				cells[g] += n
			}
		}
	}
	total := 0
	for _, n := range cells {
		total += n
	}
	slab := newCells(total)
	par.Parts(len(h.Tests), 256, func(lo, hi int) {
		var f *finisher
		var byRun []Cell // a cell's place by run, for dense tests
		if ordered {
			f = h.newFinisher(&finMu)
			defer f.flush()
		}
		off := 0
		for g := range lo {
			off += cells[g]
		}
		for g := lo; g < hi; g++ {
			head := parts[first[g]]
			t := builders[head.b].tests[head.t]
			out := slab[off : off : off+cells[g]]
			off += cells[g]
			ord := builders[head.b].order[head.t]
			// A test with cells in an eighth of the runs or more (most
			// tests) has them put in order of run by place, not sorted.
			dense := ordered && cells[g]*8 >= len(h.Runs)
			if dense && byRun == nil {
				byRun = make([]Cell, len(h.Runs))
				for r := range byRun {
					byRun[r].Run = -1
				}
			}
			filled := 0
			for k := first[g]; k >= 0; k = parts[k].next {
				pt := parts[k]
				b := builders[pt.b]
				var sigMap []uint16
				if k != first[g] {
					o := b.tests[pt.t]
					if len(o.Sigs) > 0 {
						sigMap = make([]uint16, len(o.Sigs)+1)
						for j, sg := range o.Sigs {
							sigMap[j+1] = addSig(t, sg)
						}
					}
					t.OtherFailures += o.OtherFailures
					if o.File != "" && (t.File == "" || placeBefore(b.order[pt.t], location{o.File, o.Line}, ord, location{t.File, t.Line})) {
						t.File, t.Line, ord = o.File, o.Line, b.order[pt.t]
					}
				}
				if dense {
					filled += b.scatterCells(byRun, pt.t, remaps[pt.b], sigMap, t.Sigs)
				} else {
					out = b.appendCells(out, pt.t, remaps[pt.b], sigMap)
				}
			}
			t.placed = ord
			switch {
			case dense:
				t.Cells = f.gatherDense(byRun, out, filled)
				sortSigs(t)
			case f != nil:
				t.Cells = out
				f.finish(t)
			default:
				t.Cells = out
			}
		}
	})
	if ordered {
		h.sortTests()
		return h
	}
	h.splitLegs(legs, fails)
	h.finalize()
	return h
}

// oneLegEach reports whether no two of legs are of one whole run.
func oneLegEach(legs []runLeg) bool {
	seen := make(map[string]struct{}, len(legs))
	for _, l := range legs {
		if _, ok := seen[l.base]; ok {
			return false
		}
		seen[l.base] = struct{}{}
	}
	return true
}
