package collect

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate/pkg/history"
)

// JoinParts reads as one run the files that a gate's side gives for one
// repetition, when its layout shows them to be parts of it: the shards
// of a suite (rep-1/shard-1/junit.xml … shard-4), or a runner's file per
// class (rep-1/TEST-<class>.xml). A file whose documents state no run id
// is read as a run of its own (model.Run.Key); the gate then took a shard
// in which most tests failed for an infrastructure failure, and every
// test for missing from the other shards' runs.
//
// The rule: the files under a directory that do not repeat each other are
// parts of one run, the run of the highest such directory above them (two
// files repeat each other when they share more than half of the tests of
// the smaller; a directory's files do when more than half of them repeat
// another under it), with a Bazel target's earlier attempts
// (test_attempts/attempt_N.xml) among its parts; a file whose own
// directory holds its tests twice is a run of its own, as before. Bazel's
// --runs_per_test is the exception: the files under run_N_of_K of every
// target are run N. Repetitions share their tests, so the
// files of one directory that share tests, results/head-1.xml …
// head-5.xml (the layout flakegate matrix writes), stay one run each, and
// results/head/rep-N/… is one run per rep-N. Only files of one commit,
// that state no run id, are joined, and only when they make two runs or
// more, or when alone is set: the other side's files make two runs or more
// (PartRuns), so a side of one repetition's shards is one run too. It
// returns the side and a note of what it joined ("" when nothing).
func JoinParts(input string, h *history.History, alone bool) (*history.History, string) {
	joined, files, least, most := groupParts(h)
	if len(joined) == 0 || len(joined) < 2 && !alone {
		// One group is the whole side, or nearly: one sharded
		// repetition, or K repetitions whose test ids are all random
		// (a property test's seed in its name), which share no test
		// either. Joining those would read every id as collected in
		// every base run, and absent on head as removed: unless the
		// other side shows the layout, a side of one group is read as
		// before, and Fragments warns.
		return h, ""
	}
	return joinGroups(input, h, joined, files, least, most)
}

// JoinSides joins the parts of the local sides of a gate (JoinParts; a
// side read from artifacts is left alone: local says which are local). A
// side of one repetition's parts is joined when the other side's files
// make two runs or more. It returns the sides, notes of what it joined,
// and warnings of files that look like parts of runs (Fragments).
func JoinSides(baseName, headName string, base, head *history.History, baseLocal, headLocal bool) (b, h *history.History, notes, warnings []string) {
	var nb, nh int
	if baseLocal {
		nb = PartRuns(base)
	}
	if headLocal {
		nh = PartRuns(head)
	}
	for _, side := range []struct {
		name  string
		h     **history.History
		local bool
		other int
	}{{baseName, &base, baseLocal, nh}, {headName, &head, headLocal, nb}} {
		if !side.local || *side.h == nil {
			continue
		}
		var joined string
		if *side.h, joined = JoinParts(side.name, *side.h, side.other >= 2); joined != "" {
			notes = append(notes, joined)
		}
		if w := Fragments(side.name, *side.h); w != "" {
			warnings = append(warnings, w)
		}
	}
	return base, head, notes, warnings
}

// maxPairWork bounds the pairs of files that groupParts weighs by the
// tests they share; past it, any shared test makes them repetitions.
var maxPairWork = 1 << 22

// PartRuns is how many runs JoinParts would make of files of h.
func PartRuns(h *history.History) int {
	joined, _, _, _ := groupParts(h)
	return len(joined)
}

// groupParts finds the groups of two files or more that JoinParts joins,
// how many files they hold, and the fewest and most of one group.
func groupParts(h *history.History) (joined []history.RunGroup, files, least, most int) {
	if h == nil || len(h.Runs) < 2 {
		return nil, 0, 0, 0
	}
	d := newDirTree()
	dirOf := make([]int32, len(h.Runs))  // per run: its file's directory, -1 for a run with an id
	attempt := make([]bool, len(h.Runs)) // per run: a Bazel attempt file (legPath)
	// Bazel's --runs_per_test=K writes run N of every target under
	// <target>/run_N_of_K/: the files of run N are one run, whatever
	// their directories.
	type nth struct{ commit, run string }
	byNth := map[nth][]int{}
	var nths []nth
	for i, r := range h.Runs {
		dirOf[i] = -1
		if r.RunID == "" && r.Source != "" && r.Parts == nil {
			// A Bazel attempt (test_attempts/attempt_N.xml) is a part of
			// its target's run, beside test.xml: earlier attempts of the
			// same tests.
			p := filepath.ToSlash(r.Source)
			lp := legPath(p)
			attempt[i] = lp != p
			if n := bazelRun(lp); n != "" {
				k := nth{r.CommitSHA, n}
				if byNth[k] == nil {
					nths = append(nths, k)
				}
				byNth[k] = append(byNth[k], i)
				continue
			}
			dirOf[i] = d.intern(filepath.Dir(filepath.FromSlash(lp)))
		}
	}
	// Repetitions share their stable tests, whatever random ids they hold
	// beside them; parts of one run share a few at most, such as two specs
	// whose tests have the same titles.
	twice := repeatedDirs(h, d, dirOf, attempt)
	up := make([]bool, len(d.parent))
	for x := range twice {
		for y := int32(x); twice[x] && y >= 0 && !up[y]; y = d.parent[y] {
			up[y] = true
		}
	}
	type key struct {
		commit string
		top    int32
	}
	at := map[key]int{}
	var groups []history.RunGroup
	var low [][]int32 // per group: its files' directories
	for i, x := range dirOf {
		if x < 0 || up[x] {
			continue
		}
		top := x
		for d.parent[top] >= 0 && !up[d.parent[top]] {
			top = d.parent[top]
		}
		k := key{h.Runs[i].CommitSHA, top}
		g, ok := at[k]
		if !ok {
			g = len(groups)
			at[k] = g
			groups = append(groups, history.RunGroup{})
			low = append(low, nil)
		}
		groups[g].Runs = append(groups[g].Runs, i)
		low[g] = append(low[g], x)
	}
	least = len(h.Runs)
	for g := range groups {
		if n := len(groups[g].Runs); n > 1 {
			groups[g].Source = d.name[d.common(low[g])]
			joined = append(joined, groups[g])
			files += n
			least, most = min(least, n), max(most, n)
		}
	}
	for _, k := range nths {
		if runs := byNth[k]; len(runs) > 1 {
			dirs := make([]int32, len(runs))
			for j, i := range runs {
				dirs[j] = d.intern(filepath.Dir(h.Runs[i].Source))
			}
			joined = append(joined, history.RunGroup{Runs: runs, Source: filepath.Join(d.name[d.common(dirs)], path.Base(k.run))})
			files += len(runs)
			least, most = min(least, len(runs)), max(most, len(runs))
		}
	}
	return joined, files, least, most
}

// bazelRun is the run of a slash-separated path that Bazel's
// --runs_per_test writes each run of a target under: run_N_of_K, or
// shard_S_of_T_run_N_of_K for a sharded target, as a whole directory name;
// "" when there is none. The run is named with the bazel-testlogs
// directory above it, if any, so that the runs of several invocations
// (a repetition each) are not one another's.
func bazelRun(p string) string {
	els := strings.Split(path.Dir(p), "/")
	for j, el := range els {
		run := el
		if shard, rest, ok := strings.Cut(el, "_run_"); ok {
			s, t, ok := strings.Cut(strings.TrimPrefix(shard, "shard_"), "_of_")
			if !ok || !strings.HasPrefix(shard, "shard_") || !isDigits(s) || !isDigits(t) {
				continue
			}
			run = "run_" + rest
		}
		n, k, ok := strings.Cut(strings.TrimPrefix(run, "run_"), "_of_")
		if !ok || !strings.HasPrefix(run, "run_") || !isDigits(n) || !isDigits(k) {
			continue
		}
		root := ""
		for i := j - 1; i >= 0; i-- {
			if els[i] == "bazel-testlogs" {
				root = strings.Join(els[:i+1], "/") + "/"
				break
			}
		}
		return root + run
	}
	return ""
}

// isDigits reports whether s is a number of decimal digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// repeatedDirs marks the directories whose files repeat each other (see
// JoinParts): the lowest above two files that share more than half of the
// smaller's tests, when more than half of the files under it do so, and
// then every directory above it. A Bazel attempt file holds its target's
// tests again by nature, and is not counted. Past maxPairWork pairs of
// files, any test held twice marks where its files meet.
func repeatedDirs(h *history.History, d *dirTree, dirOf []int32, attempt []bool) []bool {
	twice := make([]bool, len(d.parent))
	holdersOf := func(t *history.Test, into []int32) []int32 {
		into = into[:0]
		for _, c := range t.Cells {
			if dirOf[c.Run] >= 0 && !attempt[c.Run] {
				into = append(into, c.Run)
			}
		}
		return into
	}
	var holders []int32
	work := 0
	for _, t := range h.Tests {
		holders = holdersOf(t, holders)
		work += len(holders) * (len(holders) - 1) / 2
	}
	if work > maxPairWork {
		// Too many pairs to weigh: a test held twice marks where its
		// files meet, and the directories above.
		seen := make([]int32, len(d.parent))
		for k, t := range h.Tests {
			for _, r := range holdersOf(t, holders) {
				for x := dirOf[r]; x >= 0; x = d.parent[x] {
					if seen[x] == int32(k+1) {
						twice[x] = true
						break
					}
					seen[x] = int32(k + 1)
				}
			}
		}
		return twice
	}
	size := make([]int32, len(h.Runs))
	shared := map[[2]int32]int32{}
	for _, t := range h.Tests {
		holders = holdersOf(t, holders)
		for a, ra := range holders {
			size[ra]++
			for _, rb := range holders[a+1:] {
				shared[[2]int32{ra, rb}]++
			}
		}
	}
	// Where two files repeat each other, and how many files under each
	// directory do: a directory holds its tests twice when more than half
	// of its files repeat another under it. Two Cypress specs with the
	// same titles are two of a repetition's files; K repetitions are
	// every file of the directory above them.
	under := make([]int32, len(d.parent)) // files under each directory
	for i, x := range dirOf {
		for ; x >= 0 && !attempt[i]; x = d.parent[x] {
			under[x]++
		}
	}
	repeating := make([]map[int32]bool, len(d.parent))
	for p, n := range shared {
		if 2*n <= min(size[p[0]], size[p[1]]) {
			continue
		}
		for x := d.common([]int32{dirOf[p[0]], dirOf[p[1]]}); x >= 0; x = d.parent[x] {
			if repeating[x] == nil {
				repeating[x] = map[int32]bool{}
			}
			repeating[x][p[0]], repeating[x][p[1]] = true, true
		}
	}
	for x := range twice {
		twice[x] = 2*len(repeating[x]) > int(under[x])
	}
	return twice
}

// joinGroups joins the groups and says so.
func joinGroups(input string, h *history.History, joined []history.RunGroup, files, least, most int) (*history.History, string) {
	h = history.JoinRuns(h, joined)
	var dirs []string
	for _, r := range h.Runs {
		if r.Parts != nil {
			dirs = append(dirs, r.Source)
		}
	}
	runs := "one run"
	if len(joined) > 1 {
		runs = fmt.Sprintf("%d runs, %d files each", len(joined), least)
		if least != most {
			runs = fmt.Sprintf("%d runs, %d to %d files each", len(joined), least, most)
		}
	}
	return h, fmt.Sprintf("%s: %d files read as %s (%s): the files under each of these directories do not repeat each other, so they are parts of one run (shards, a file per class, Bazel's run_N_of_K); one run_id property on the files of each repetition says so explicitly",
		input, files, runs, listSome(dirs, 2))
}

// Fragments warns when no test ran in more than half of a side's runs:
// its files look like parts of fewer runs that could not be told apart
// (shards in one directory beside other repetitions' shards, matrix
// legs of different tests), and a part read as a run misleads the gate.
func Fragments(input string, h *history.History) string {
	if h == nil {
		return ""
	}
	most := 0
	for _, t := range h.Tests {
		most = max(most, len(t.Cells))
	}
	if len(h.Runs) < 2 || most == 0 || 2*most > len(h.Runs) {
		return ""
	}
	return fmt.Sprintf("%s: no test ran in more than %d of the %d runs read: they look like parts of fewer runs (shards, matrix legs, a file per class) that could not be told apart, and a part read as a run misleads the gate (an outage in one shard, tests missing from most runs); put the files of each repetition in a directory of their own, or give them one run_id property",
		input, most, len(h.Runs))
}

// listSome names the first n of names, and how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// dirTree interns directories and their parents, up to the root of
// their paths ("." or "/").
type dirTree struct {
	id     map[string]int32
	name   []string
	parent []int32 // -1 at a root
	depth  []int32
}

func newDirTree() *dirTree { return &dirTree{id: map[string]int32{}} }

func (d *dirTree) intern(dir string) int32 {
	if x, ok := d.id[dir]; ok {
		return x
	}
	p, depth := int32(-1), int32(0)
	if up := filepath.Dir(dir); up != dir {
		p = d.intern(up)
		depth = d.depth[p] + 1
	}
	x := int32(len(d.name))
	d.id[dir] = x
	d.name, d.parent, d.depth = append(d.name, dir), append(d.parent, p), append(d.depth, depth)
	return x
}

// common is the lowest directory above (or at) every one of xs, all
// below one root.
func (d *dirTree) common(xs []int32) int32 {
	c := xs[0]
	for _, x := range xs[1:] {
		for d.depth[x] > d.depth[c] {
			x = d.parent[x]
		}
		for d.depth[c] > d.depth[x] {
			c = d.parent[c]
		}
		for x != c && x >= 0 && c >= 0 {
			x, c = d.parent[x], d.parent[c]
		}
	}
	return c
}
