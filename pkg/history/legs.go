package history

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flakegate/flakegate/pkg/internal/par"
	"github.com/flakegate/flakegate/pkg/model"
)

// Legs. One workflow run often runs the suite more than once side by side:
// a matrix job uploads an artifact per leg (junit-ubuntu, junit-windows).
// A test that fails on Windows only is then broken in one leg, not flaky,
// so DESIGN.md makes the leg part of the test's identity, as the project
// is within one document (qualify). But a leg is not always a project: a
// rerun of the failed tests uploaded as an artifact of its own holds
// attempts of the same tests, and folding those into one cell is how a
// retry is seen.
//
// The Builder keeps a run's legs (Source.Leg) apart, as runs of their own,
// and splitLegs decides once every document is read:
//
//   - A leg reruns another when, in every run that has both, each test it
//     ran had failed in the other. A rerun holds nothing but the failures
//     of what it reruns; two legs side by side share tests that passed in
//     both. The rule is taken over the whole history, so that one run
//     where a leg failed throughout does not make the other leg its rerun.
//     A rerun counts as the leg it reruns.
//   - Two legs that, in every run that has both, held the same tests with
//     the same outcomes are one report uploaded twice (or a matrix whose
//     legs never differed, where telling them apart changes nothing): one
//     leg, named by the least.
//   - A test that passed or failed in two legs of one run (counting reruns
//     and repeats as their leg) is held by several projects: it becomes one test per
//     leg, model.ProjectTestID with the leg's name. Every other test keeps
//     its identity, and its legs' cells fold into one per run, attempts of
//     one test, as before.
//
// A leg is a directory: in an artifact, the artifact and the directory
// inside it ("junit-windows/reports"); on disk, the file's directory (where
// gh run download puts each artifact of a run). The files of one directory
// are one leg: a rerun file, a repeat of the suite, or a tox
// environment's file beside the first are attempts of one test, as they
// were before legs were told apart. A leg is named by the path elements
// that tell it apart from the others that hold the test.

// maxLegs bounds the legs of one run that each Builder tells apart: a
// matrix has at most 256 jobs. The documents of further legs it reads are
// one leg, overflowLeg, so that a crafted artifact of thousands of
// directories holding the same tests does not multiply their cells.
const maxLegs = 256

// overflowLeg is the leg of documents past maxLegs.
const overflowLeg = "(more legs)"

// maxRerunWork bounds the pairs of cells weighed to find reruns, and
// maxRerunPairs the pairs of legs that may be reruns or repeats: past
// them, no leg is taken for either, and every leg is a project.
const (
	maxRerunWork  = 1 << 24
	maxRerunPairs = 1 << 12
)

// runLeg is what the builder knew of one of its runs: the part of a whole
// run it is, and the key of that whole run.
type runLeg struct {
	leg, base string
}

// legFailed is one failure a builder read in a run that is a leg: its
// test, run and signature (1 + the index in the test's Sigs; 0 for one
// past maxSignatures), all the builder's.
type legFailed struct {
	test, run int32
	sig       uint16
}

// legFail is one failure of a test in a leg, as splitLegs reads it: the
// history's run and the signature's hash ("" past maxSignatures).
type legFail struct {
	run  int32
	hash string
}

// splitLegs turns runs that are legs of one run back into that run, giving
// tests held by several of its legs one identity per leg. legs is per run
// of h, and fails gives each test's failures by leg and signature. It
// runs before finalize: cells are not yet sorted or folded.
func (h *History) splitLegs(legs []runLeg, fails func() map[int32][]legFail) {
	baseIdx := make(map[string]int32, len(legs))
	remap := make([]int32, len(h.Runs))
	var runs []Run
	var legsOf [][]int32 // per whole run: its legs, as indexes into h.Runs
	for i, l := range legs {
		bi, ok := baseIdx[l.base]
		if !ok {
			bi = int32(len(runs))
			baseIdx[l.base] = bi
			runs = append(runs, Run{Run: h.Runs[i].Run})
			legsOf = append(legsOf, nil)
		} else {
			joinRun(&runs[bi].Run, h.Runs[i].Run)
		}
		remap[i] = bi
		legsOf[bi] = append(legsOf[bi], int32(i))
	}
	if len(runs) == len(h.Runs) {
		return // one leg per run: nothing to tell apart
	}
	// Tests held by two legs of one run, and how many tests each leg held
	// and ran.
	// A leg's documents may have been read by several builders, so a test
	// may have more than one cell in a leg until finalize folds them.
	ran := make([]int32, len(h.Runs))   // per leg: tests that passed or failed in it
	held := make([]int32, len(h.Runs))  // per leg: tests in it, skipped or not
	ranBy := make([]int32, len(h.Runs)) // per leg: 1 + the last test counted in it
	heldBy := make([]int32, len(h.Runs))
	stamp := make([]int32, len(runs)) // per whole run: 1 + the last test seen in it
	legAt := make([]int32, len(runs))
	var candidates []int
	// Each leg's fingerprint: a sum over its cells, linear in their
	// attempts, so that a leg's cells read by several builders add up to
	// what one cell of theirs would: two legs held the same tests with the
	// same outcomes when their counts and fingerprints are equal.
	fp := make([]uint64, len(h.Runs))
	for ti, t := range h.Tests {
		two := false
		kp, kf, ks := testKeys(ti)
		for _, c := range t.Cells {
			fp[c.Run] += kp*uint64(c.Pass) + kf*uint64(c.Fail) + ks*uint64(c.Skip)
			if heldBy[c.Run] != int32(ti)+1 {
				heldBy[c.Run] = int32(ti) + 1
				held[c.Run]++
			}
			if c.Pass+c.Fail > 0 && ranBy[c.Run] != int32(ti)+1 {
				ranBy[c.Run] = int32(ti) + 1
				ran[c.Run]++
			}
			bi := remap[c.Run]
			if stamp[bi] == int32(ti)+1 && legAt[bi] != c.Run {
				two = true
			}
			stamp[bi], legAt[bi] = int32(ti)+1, c.Run
		}
		if two {
			candidates = append(candidates, ti)
		}
	}
	if len(candidates) > 0 {
		names := legNames(legs, legsOf)
		project, ok := projects(remap, len(runs), h.Tests, candidates, ran, held, fp, names, legsOf)
		if !ok {
			h.Legs.SearchStopped = true
		}
		h.splitTests(remap, len(runs), candidates, names, project, fails)
	}
	for _, t := range h.Tests {
		for i := range t.Cells {
			t.Cells[i].Run = remap[t.Cells[i].Run]
		}
	}
	h.Runs = runs
}

// legNames names each leg by its path, less the directories that name
// its run: when the legs of each run of several lie in a directory of that
// run (runs/7/junit-ubuntu, runs/8/junit-ubuntu), the same number of
// leading elements differs from run to run, and every leg loses them.
// Elements every run shares (an artifact holding each leg's directory)
// stay; a test's project names drop them (projectNames).
func legNames(legs []runLeg, legsOf [][]int32) []string {
	parts := make([][]string, len(legs))
	for i, l := range legs {
		parts[i] = strings.Split(l.leg, "/")
	}
	cut, lead, varies := -1, "", false
	for _, ls := range legsOf {
		if len(ls) < 2 {
			continue
		}
		n := commonLead(parts, ls)
		l := strings.Join(parts[ls[0]][:n], "/")
		switch {
		case cut < 0:
			cut, lead = n, l
		case n != cut:
			cut = 0 // runs disagree: no run directory to drop
		case l != lead:
			varies = true
		}
	}
	names := make([]string, len(legs))
	for i, p := range parts {
		if varies && cut > 0 && len(p) > cut {
			p = p[cut:]
		}
		names[i] = strings.Join(p, "/")
	}
	return names
}

// commonLead counts the leading elements that the paths at idx share,
// keeping at least the last element of each.
func commonLead(parts [][]string, idx []int32) int {
	first := parts[idx[0]]
	n := len(first) - 1
	for _, i := range idx[1:] {
		p := parts[i]
		n = min(n, len(p)-1)
		for k := range n {
			if p[k] != first[k] {
				n = k
				break
			}
		}
	}
	return max(n, 0)
}

// projectNames shortens one test's project names to what tells them
// apart: the path elements they do not all share.
func projectNames(names []string) []string {
	if len(names) < 2 {
		return names
	}
	parts := make([][]string, len(names))
	for i, n := range names {
		parts[i] = strings.Split(n, "/")
	}
	lead, trail := len(parts[0]), len(parts[0])
	for _, p := range parts[1:] {
		lead, trail = min(lead, len(p)), min(trail, len(p))
		for k := range lead {
			if p[k] != parts[0][k] {
				lead = k
				break
			}
		}
		for k := range trail {
			if p[len(p)-1-k] != parts[0][len(parts[0])-1-k] {
				trail = k
				break
			}
		}
	}
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, p := range parts {
		from := min(lead, len(p)-1)
		to := max(from+1, len(p)-trail)
		out[i] = strings.Join(p[from:to], "/")
		if seen[out[i]] {
			return names // shortened alike: keep them whole
		}
		seen[out[i]] = true
	}
	return out
}

// legPair is an ordered pair of legs of one run: does the first rerun the
// second?
type legPair struct{ r, a int32 }

// legView groups one test's cells by the whole run of their leg, and
// folds the cells of one leg (read by several builders) into one: in time
// linear in the cells, with scratch indexed by leg and by whole run that
// serves every test in turn.
type legView struct {
	remap          []int32 // per leg: its whole run
	legSeen        []int32 // per leg: the test (stamp) it was last seen for
	pass, fail     []int32 // per leg: the test's attempts in it
	next           []int32 // per leg: the next leg of its whole run, -1 at the end
	runSeen, first []int32 // per whole run: stamp, and its first leg
	legs           []int32 // per whole run: how many legs hold the test
	runs           []int32 // whole runs the test is in, in order met
	stamp          int32
}

func newLegView(remap []int32, wholeRuns int) *legView {
	n := len(remap)
	return &legView{remap: remap, legSeen: make([]int32, n), pass: make([]int32, n), fail: make([]int32, n), next: make([]int32, n),
		runSeen: make([]int32, wholeRuns), first: make([]int32, wholeRuns), legs: make([]int32, wholeRuns)}
}

// load takes a test's cells.
func (v *legView) load(cells []Cell) {
	v.stamp++
	v.runs = v.runs[:0]
	for _, c := range cells {
		l := c.Run
		if v.legSeen[l] != v.stamp {
			v.legSeen[l], v.pass[l], v.fail[l] = v.stamp, 0, 0
			b := v.remap[l]
			if v.runSeen[b] != v.stamp {
				v.runSeen[b], v.first[b], v.legs[b] = v.stamp, -1, 0
				v.runs = append(v.runs, b)
			}
			v.next[l], v.first[b] = v.first[b], l
			v.legs[b]++
		}
		v.pass[l] += int32(c.Pass)
		v.fail[l] += int32(c.Fail)
	}
}

// ran reports whether the test passed or failed in leg l.
func (v *legView) ran(l int32) bool { return v.pass[l]+v.fail[l] > 0 }

// testKeys are three random-looking numbers for test ti, by which a leg's
// fingerprint weighs the test's passes, failures and skips: splitmix64's
// finalizer, a bijection, of 3ti+1, 3ti+2 and 3ti+3, so that no two keys of
// a history are alike.
func testKeys(ti int) (uint64, uint64, uint64) {
	mix := func(z uint64) uint64 {
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		return z ^ z>>31
	}
	x := 3 * uint64(ti)
	return mix(x + 1), mix(x + 2), mix(x + 3)
}

// projects finds the legs that count as another (see the package
// comment on legs) and returns, per leg name, the name of the project it
// counts for: that of the leg it reruns or repeats, or its own. It
// reports false, with no legs taken for reruns or repeats, when the
// search stopped at its bounds.
//   - A rerun: in every run that has both legs, each test it ran had
//     failed in the other.
//   - A repeat: in every run that has both, the two legs held the same
//     tests with the same outcomes (equal counts and fingerprints, fp), as
//     one report uploaded twice does, or a matrix whose legs never
//     differed, where telling them apart would change nothing.
func projects(remap []int32, wholeRuns int, tests []*Test, candidates []int, ran, held []int32, fp []uint64, names []string, legsOf [][]int32) (map[string]string, bool) {
	// For each ordered pair of legs of one run: the tests that ran in the
	// first and failed in the second. Counted on every core.
	failedIn := map[legPair]int32{}
	var mu sync.Mutex
	var work atomic.Int64
	par.Parts(len(candidates), 64, func(lo, hi int) {
		v := newLegView(remap, wholeRuns)
		mine := map[legPair]int32{}
		for _, ti := range candidates[lo:hi] {
			v.load(tests[ti].Cells)
			for _, b := range v.runs {
				if v.legs[b] < 2 {
					continue
				}
				for a := v.first[b]; a >= 0; a = v.next[a] {
					if v.fail[a] == 0 {
						continue
					}
					for r := v.first[b]; r >= 0; r = v.next[r] {
						if r != a && v.ran(r) {
							mine[legPair{r, a}]++
						}
					}
					if work.Add(int64(v.legs[b])) > maxRerunWork {
						return
					}
				}
			}
		}
		mu.Lock()
		for p, n := range mine {
			failedIn[p] += n
		}
		mu.Unlock()
	})
	if work.Load() > maxRerunWork {
		return nil, false
	}
	type namePair struct{ r, a string }
	rerun, repeat := map[namePair]bool{}, map[namePair]bool{}
	for p := range failedIn {
		if np := (namePair{names[p.r], names[p.a]}); np.r != np.a {
			rerun[np] = true
		}
	}
	// Pairs alike in some run may be repeats.
	alike := func(r, a int32) bool { return held[r] == held[a] && fp[r] == fp[a] }
	for _, ls := range legsOf {
		for i, r := range ls {
			for _, a := range ls[i+1:] {
				if alike(r, a) && names[r] != names[a] {
					repeat[namePair{min(names[r], names[a]), max(names[r], names[a])}] = true
				}
			}
			if len(repeat) > maxRerunPairs {
				return nil, false
			}
		}
	}
	if len(rerun) > maxRerunPairs {
		return nil, false
	}
	// A pair of names is a rerun (or a repeat) when every run that has
	// both agrees.
	legOf := map[string]int32{}
	for _, ls := range legsOf {
		if len(ls) < 2 {
			continue
		}
		clear(legOf)
		for _, l := range ls {
			legOf[names[l]] = l
		}
		for np, ok := range rerun {
			r, hasR := legOf[np.r]
			a, hasA := legOf[np.a]
			if ok && hasR && hasA && (ran[r] == 0 || failedIn[legPair{r, a}] != ran[r]) {
				rerun[np] = false
			}
		}
		for np, ok := range repeat {
			r, hasR := legOf[np.r]
			a, hasA := legOf[np.a]
			if ok && hasR && hasA && !alike(r, a) {
				repeat[np] = false
			}
		}
	}
	// Repeats are one leg, named by the least of them.
	root := map[string]string{}
	var find func(n string) string
	find = func(n string) string {
		p, ok := root[n]
		if !ok || p == n {
			return n
		}
		q := find(p)
		root[n] = q
		return q
	}
	for np, ok := range repeat {
		if ok {
			x, y := find(np.r), find(np.a)
			if x != y {
				root[max(x, y)] = min(x, y)
			}
		}
	}
	of := map[string]string{}
	for np, ok := range rerun {
		if ok {
			if cur, set := of[np.r]; !set || np.a < cur {
				of[np.r] = np.a
			}
		}
	}
	// Follow chains (a rerun of a rerun) to their first leg; legs that
	// rerun each other (all failed in both) count as the least of them.
	project := map[string]string{}
	done := map[string]bool{}
	for _, n := range names {
		if done[n] {
			continue
		}
		done[n] = true
		if _, ok := of[n]; !ok {
			if p := find(n); p != n {
				project[n] = p
			}
			continue // most legs rerun nothing
		}
		p, seen := n, map[string]bool{n: true}
		for {
			q, ok := of[p]
			if !ok || seen[q] {
				if ok && q < p {
					p = q
				}
				break
			}
			seen[q], p = true, q
		}
		if p = find(p); p != n {
			project[n] = p
		}
	}
	return project, true
}

// splitTests gives each candidate held by two projects in one run one test
// per project.
func (h *History) splitTests(remap []int32, wholeRuns int, candidates []int, names []string, project map[string]string, fails func() map[int32][]legFail) {
	// Each leg's project, as a number, and its name.
	var projName []string
	projOf := make([]int32, len(names))
	byName := map[string]int32{}
	for l, n := range names {
		if p, ok := project[n]; ok {
			n = p
		}
		id, ok := byName[n]
		if !ok {
			id = int32(len(projName))
			byName[n] = id
			projName = append(projName, n)
		}
		projOf[l] = id
	}
	var ids map[string]*Test // every test by ID, once a test is split
	failsOf := fails()
	// Each candidate's parts, split on every core.
	parts := make([][]*Test, len(candidates))
	par.Parts(len(candidates), 64, func(lo, hi int) {
		v := newLegView(remap, wholeRuns)
		sp := &splitter{projOf: projOf, projName: projName, at: make([]int32, len(projName))}
		for k := lo; k < hi; k++ {
			t := h.Tests[candidates[k]]
			v.load(t.Cells)
			if heldByTwo(v, projOf) {
				parts[k] = sp.split(t, failsOf[int32(candidates[k])])
			}
		}
	})
	gone := map[int]bool{}
	var added []*Test
	for k, ti := range candidates {
		if parts[k] == nil {
			continue
		}
		t := h.Tests[ti]
		if ids == nil {
			ids = make(map[string]*Test, len(h.Tests))
			for _, o := range h.Tests {
				ids[o.ID] = o
			}
		}
		gone[ti] = true
		delete(ids, t.ID)
		for _, s := range parts[k] {
			if o, ok := ids[s.ID]; ok {
				absorb(o, s) // a test of that name already: the same test
				continue
			}
			ids[s.ID] = s
			added = append(added, s)
		}
	}
	if len(gone) == 0 {
		return
	}
	kept := h.Tests[:0]
	for i, t := range h.Tests {
		if !gone[i] {
			kept = append(kept, t)
		}
	}
	h.Tests = append(kept, added...)
}

// heldByTwo reports whether the test v holds passed or failed under two
// projects in one run.
func heldByTwo(v *legView, projOf []int32) bool {
	for _, b := range v.runs {
		if v.legs[b] < 2 {
			continue
		}
		p := int32(-1)
		for l := v.first[b]; l >= 0; l = v.next[l] {
			if !v.ran(l) {
				continue
			}
			if p >= 0 && projOf[l] != p {
				return true
			}
			p = projOf[l]
		}
	}
	return false
}

// splitter makes one test per project of a test's cells.
type splitter struct {
	projOf   []int32  // per leg
	projName []string // per project
	at       []int32  // per project: 1 + its index among the test's, for the test being split
	order    []int32  // the test's projects, in order met
}

// split makes one test per project of t's cells. Each keeps t's place and
// the signatures of its own failures (fails, t's by leg), with their
// sample messages.
func (sp *splitter) split(t *Test, fails []legFail) []*Test {
	for _, p := range sp.order {
		sp.at[p] = 0
	}
	sp.order = sp.order[:0]
	var cells [][]Cell
	for _, c := range t.Cells {
		p := sp.projOf[c.Run]
		if sp.at[p] == 0 {
			sp.order = append(sp.order, p)
			sp.at[p] = int32(len(sp.order))
			cells = append(cells, nil)
		}
		k := sp.at[p] - 1
		cells[k] = append(cells[k], c)
	}
	names := make([]string, len(sp.order))
	for k, p := range sp.order {
		names[k] = sp.projName[p]
	}
	display := projectNames(names)
	// Signatures in t's order, so that ties sort alike; what t counted
	// beyond maxSignatures, failures of no signature it kept.
	sigOf := make(map[string]int, len(t.Sigs))
	for k, sg := range t.Sigs {
		sigOf[sg.Hash] = k + 1
	}
	count := make([][]int, len(sp.order))
	other := make([]int, len(sp.order))
	for k := range count {
		count[k] = make([]int, len(t.Sigs)+1)
	}
	for _, f := range fails {
		k := sp.at[sp.projOf[f.run]] - 1
		if k < 0 {
			continue
		}
		if i, ok := sigOf[f.hash]; ok {
			count[k][i]++
		} else {
			other[k]++
		}
	}
	out := make([]*Test, len(sp.order))
	for k := range sp.order {
		s := &Test{ID: model.ProjectTestID(t.ID, display[k]), File: t.File, Line: t.Line, placed: t.placed, Cells: cells[k], OtherFailures: other[k]}
		idx := make([]uint16, len(t.Sigs)+1)
		for i, sg := range t.Sigs {
			if n := count[k][i+1]; n > 0 {
				sg.Count = n
				s.Sigs = append(s.Sigs, sg)
				idx[i+1] = uint16(len(s.Sigs))
			}
		}
		for i := range s.Cells {
			s.Cells[i].Sig = idx[s.Cells[i].Sig]
		}
		out[k] = s
	}
	return out
}

// absorb adds s's cells and signatures to t, a test of the same identity.
func absorb(t, s *Test) {
	idx := make([]uint16, len(s.Sigs)+1)
	for i, sg := range s.Sigs {
		idx[i+1] = addSig(t, sg)
	}
	for _, c := range s.Cells {
		c.Sig = idx[c.Sig]
		t.Cells = append(t.Cells, c)
	}
	t.OtherFailures += s.OtherFailures
}
