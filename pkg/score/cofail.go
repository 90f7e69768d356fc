package score

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/internal/par"
)

// Event kinds.
const (
	// EventSuite: most of a suite (a classname) failed in one run.
	EventSuite = "suite"
	// EventCluster: tests that always fail together failed together.
	EventCluster = "cluster"
)

// eventAlpha is the chance, under independent failures at each test's own
// rate, below which a co-failure is one infrastructure event. The tail is
// exact for small groups (a Poisson-binomial) and a Chernoff bound for
// large ones, which can only overstate it.
const eventAlpha = 1e-3

// maxMembers bounds the names listed for a cluster.
const maxMembers = 20

// maxExactTail bounds the work of one exact tail, tests × failures.
const maxExactTail = 1 << 16

// InfraEvent is a co-failure excluded as one infrastructure event: in one
// run, a suite or a cluster of tests that always fail together failed far
// above its usual rate. Its failures are not counted per test.
type InfraEvent struct {
	RunID   string    `json:"run_id,omitempty"`
	Attempt int       `json:"run_attempt,omitempty"`
	Commit  string    `json:"commit_sha,omitempty"`
	Source  string    `json:"source"`
	Time    time.Time `json:"time,omitzero"`
	// Kind is EventSuite or EventCluster.
	Kind string `json:"kind"`
	// Group is the suite's classname, or the first member of a cluster.
	Group string `json:"group"`
	// Members lists a cluster's tests, the first maxMembers of them (Tests
	// counts them all); empty for a suite.
	Members []string `json:"members,omitempty"`
	// Tests counts the group's tests with a result in the run, Failed
	// those that failed every attempt (outside their own regression
	// blocks), and Expected the failures expected at the tests' usual
	// rates.
	Tests    int     `json:"tests"`
	Failed   int     `json:"failed"`
	Expected float64 `json:"expected"`
}

// InfraEvents is a list of events. It encodes as [] when nil, as the
// report's other lists do.
type InfraEvents []InfraEvent

// MarshalJSON writes the list, [] when nil.
func (e InfraEvents) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]InfraEvent(e))
}

// events is what detectEvents finds: each test's groups and the excluded
// group-runs.
type events struct {
	suite   []int32 // per test of the history
	cluster []int32 // per test, -1 when in no cluster
	hit     map[uint64]bool
	list    []found
	// runs lists each group's event runs (suites, then clusters), for
	// scoring to mark a test's excluded runs once instead of looking up
	// every cell.
	runs [][]int32
	// recurring are the suites whose events came again and again.
	recurring []RecurringGroup
}

type found struct {
	run int32
	ev  InfraEvent
}

func eventKey(group int32, run int32) uint64 { return uint64(uint32(group))<<32 | uint64(uint32(run)) }

// eventRuns returns the runs in which test ti's cells are part of an
// event: its suite's, and its cluster's.
func (ev *events) eventRuns(ti int) (suite, cluster []int32) {
	if len(ev.runs) == 0 {
		return nil, nil
	}
	suite = ev.runs[ev.suite[ti]]
	if g := ev.cluster[ti]; g >= 0 {
		cluster = ev.runs[g]
	}
	return suite, cluster
}

// suiteOf returns the suite part of a test id: the classname before "::".
func suiteOf(id string) string {
	if i := strings.Index(id, "::"); i >= 0 {
		return id[:i]
	}
	return id
}

// logTail bounds ln P(X >= f) for X a sum of independent Bernoulli trials
// with mean mu (Chernoff): -mu + f (1 + ln mu - ln f) when f > mu.
func logTail(mu float64, f int) float64 {
	x := float64(f)
	if x <= mu {
		return 0
	}
	return -mu + x*(1+math.Log(mu)-math.Log(x))
}

// exactTail is P(X >= f) for X the number of successes of independent
// trials with the given probabilities (Poisson-binomial), by dynamic
// programming over the counts 0..f, f standing for "f or more".
func exactTail(ps []float64, f int) float64 {
	if f <= 0 {
		return 1
	}
	d := make([]float64, f+1)
	d[0] = 1
	for _, p := range ps {
		d[f] += d[f-1] * p
		for k := f - 1; k >= 1; k-- {
			d[k] = d[k]*(1-p) + d[k-1]*p
		}
		d[0] *= 1 - p
	}
	return d[f]
}

// lnChoose is ln C(n, k).
func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// detectEvents finds co-failures that are one infrastructure event rather
// than failures of each test.
//
// Failures inside a regression block (an episode of more than MaxEpisode
// failing commits) are the test's own and never count towards an event. Of
// the rest, in each run:
//   - a suite whose failures are improbable under independent failures at
//     its tests' usual rates (tail below eventAlpha) failed as one; a test's
//     usual rate is measured on the runs in which no other test of its
//     suite failed with it;
//   - tests whose failures fall on exactly the same runs form a cluster when
//     chance would make that improbable ((k-1) ln C(runs, m) >= ln
//     1/eventAlpha for k tests failing m times), and each of those runs is an
//     event of the cluster.
func detectEvents(h *history.History, infra []bool, runCommit []int32, nCommits int, o Options) *events {
	ev := &events{suite: make([]int32, len(h.Tests)), cluster: make([]int32, len(h.Tests)), hit: map[uint64]bool{}}
	suiteIdx := map[string]int32{}
	var suiteNames []string
	for i, t := range h.Tests {
		s := suiteOf(t.ID)
		k, ok := suiteIdx[s]
		if !ok {
			k = int32(len(suiteNames))
			suiteIdx[s] = k
			suiteNames = append(suiteNames, s)
		}
		ev.suite[i] = k
		ev.cluster[i] = -1
	}

	// Each test's countable failures: failed every attempt of the run, and
	// not inside one of its regression blocks.
	present := make([]int, len(h.Tests))
	fails := make([][]int32, len(h.Tests))
	// Tests are independent: split them across the cores, each part with
	// its own scratch state.
	par.Parts(len(h.Tests), 256, func(lo, hi int) {
		countable(h, infra, runCommit, nCommits, o, present, fails, lo, hi)
	})

	// Suites: candidates are suite-runs with at least two failures.
	type tally struct {
		n, f  int
		mu    float64
		rates []float64 // of the tests present, for an exact tail
	}
	cand := map[uint64]*tally{}
	for ti := range h.Tests {
		for _, r := range fails[ti] {
			k := eventKey(ev.suite[ti], r)
			if cand[k] == nil {
				cand[k] = &tally{}
			}
			cand[k].f++
		}
	}
	for k, c := range cand {
		if c.f < 2 {
			delete(cand, k)
		}
	}
	// The passes below look up every cell: a dense suite × run table
	// answers them without hashing when it is small enough.
	find := func(suite, run int32) *tally { return cand[eventKey(suite, run)] }
	if runs, cells := len(h.Runs), len(suiteNames)*len(h.Runs); len(cand) > 0 && cells <= 1<<22 {
		dense := make([]*tally, cells)
		for k, c := range cand {
			dense[int(k>>32)*runs+int(uint32(k))] = c
		}
		find = func(suite, run int32) *tally { return dense[int(suite)*runs+int(run)] }
	}
	if len(cand) > 0 { // else there is nothing to count: every suite failed alone
		for ti, t := range h.Tests {
			for _, c := range t.Cells {
				if tl := find(ev.suite[ti], c.Run); tl != nil && !infra[c.Run] && c.Pass+c.Fail > 0 && runCommit[c.Run] >= 0 {
					tl.n++
				}
			}
		}
		// A test's usual rate is measured on the runs where its suite did not
		// co-fail (left-out candidates), so that outages cannot raise the rate
		// they are judged against.
		rates := make([]float64, len(h.Tests))
		for ti, t := range h.Tests {
			n, f := 0, 0
			for _, c := range t.Cells {
				if infra[c.Run] || c.Pass+c.Fail == 0 || runCommit[c.Run] < 0 || find(ev.suite[ti], c.Run) != nil {
					continue
				}
				n++
			}
			for _, r := range fails[ti] {
				if find(ev.suite[ti], r) == nil {
					f++
				}
			}
			rates[ti] = math.Max(float64(f), 0.5) / float64(n+1)
		}
		for ti, t := range h.Tests {
			for _, c := range t.Cells {
				if tl := find(ev.suite[ti], c.Run); tl != nil && !infra[c.Run] && c.Pass+c.Fail > 0 && runCommit[c.Run] >= 0 {
					tl.mu += rates[ti]
					if tl.n*tl.f <= maxExactTail {
						tl.rates = append(tl.rates, rates[ti])
					}
				}
			}
		}
	}
	lnAlpha := math.Log(eventAlpha)
	for k, c := range cand {
		lt := logTail(c.mu, c.f)
		if c.n*c.f <= maxExactTail && lt > lnAlpha {
			lt = math.Log(exactTail(c.rates, c.f))
		}
		if lt <= lnAlpha {
			ev.hit[k] = true
		}
	}
	for k, c := range cand {
		if ev.hit[k] {
			ev.list = append(ev.list, event(h, int32(uint32(k)), EventSuite, suiteNames[k>>32], nil, c.n, c.f, c.mu))
		}
	}
	ev.recurring = ev.recurringSuites(h, infra, runCommit, suiteNames)

	// Clusters: tests whose remaining failures fall on the same runs.
	byHash := map[uint64][]int{}
	rest := make([][]int32, len(h.Tests))
	for ti := range h.Tests {
		for _, r := range fails[ti] {
			if !ev.hit[eventKey(ev.suite[ti], r)] {
				rest[ti] = append(rest[ti], r)
			}
		}
		if len(rest[ti]) < 2 {
			continue
		}
		hs := fnv.New64a()
		for _, r := range rest[ti] {
			hs.Write([]byte{byte(r), byte(r >> 8), byte(r >> 16), byte(r >> 24)})
		}
		byHash[hs.Sum64()] = append(byHash[hs.Sum64()], ti)
	}
	var clusters [][]int
	for _, tis := range byHash {
		for len(tis) > 1 {
			first := tis[0]
			var same, other []int
			for _, ti := range tis {
				if slices.Equal(rest[ti], rest[first]) {
					same = append(same, ti)
				} else {
					other = append(other, ti)
				}
			}
			tis = other
			if len(same) < 2 {
				continue
			}
			runs := present[first]
			for _, ti := range same {
				runs = min(runs, present[ti])
			}
			if float64(len(same)-1)*lnChoose(runs, len(rest[first])) >= -lnAlpha {
				clusters = append(clusters, same)
			}
		}
	}
	slices.SortFunc(clusters, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })
	base := int32(len(suiteNames))
	for ci, members := range clusters {
		g := base + int32(ci)
		names := make([]string, len(members))
		mu := 0.0
		for i, ti := range members {
			ev.cluster[ti] = g
			names[i] = h.Tests[ti].ID
			mu += float64(len(rest[ti])) / float64(present[ti])
		}
		for _, r := range rest[members[0]] {
			ev.hit[eventKey(g, r)] = true
			ev.list = append(ev.list, event(h, r, EventCluster, names[0], names[:min(len(names), maxMembers)], len(members), len(members), mu))
		}
	}
	if len(ev.hit) > 0 {
		ev.runs = make([][]int32, int(base)+len(clusters))
		for k := range ev.hit {
			g := k >> 32
			ev.runs[g] = append(ev.runs[g], int32(uint32(k)))
		}
	}
	// In run order, then by kind and group.
	slices.SortFunc(ev.list, func(a, b found) int {
		if c := cmp.Compare(a.run, b.run); c != 0 {
			return c
		}
		if c := cmp.Compare(b.ev.Kind, a.ev.Kind); c != 0 {
			return c
		}
		return cmp.Compare(a.ev.Group, b.ev.Group)
	})
	return ev
}

// A suite that co-failed as one event in at least recurMin runs and in at
// least recurShare of the runs it ran in fails so again and again: a flaky
// class fixture (a setUpClass that fails a third of the time) or a flaky
// service its tests share. Its events stay events (a service shared by
// several suites, a short regression of the whole class, would otherwise
// flag every test), but the report names the suite (Report.RecurringEvents):
// before, a class whose tests all failed together in 12 of 40 runs read as
// "No flaky tests", each test 0 of 20 commits (a report audit).
const (
	recurMin   = 3
	recurShare = 0.2
)

// RecurringGroup is a suite whose co-failures, each left out as an
// infrastructure event, came again and again.
type RecurringGroup struct {
	Group  string `json:"group"`  // the suite's classname
	Events int    `json:"events"` // runs in which it failed as one
	Runs   int    `json:"runs"`   // runs it ran in
}

// recurringSuites lists the suites whose events recur, of the suite events
// in ev.hit (before any cluster's are added), by name.
func (ev *events) recurringSuites(h *history.History, infra []bool, runCommit []int32, names []string) []RecurringGroup {
	hits := map[int32]int{}
	for k := range ev.hit {
		hits[int32(k>>32)]++
	}
	ran := map[int32][]bool{} // by suite with recurMin events or more: the runs it ran in
	for g, n := range hits {
		if n >= recurMin {
			ran[g] = make([]bool, len(h.Runs))
		}
	}
	if len(ran) == 0 {
		return nil
	}
	for ti, t := range h.Tests {
		seen := ran[ev.suite[ti]]
		if seen == nil {
			continue
		}
		for _, c := range t.Cells {
			if !infra[c.Run] && c.Pass+c.Fail > 0 && runCommit[c.Run] >= 0 {
				seen[c.Run] = true
			}
		}
	}
	var out []RecurringGroup
	for g, seen := range ran {
		runs := 0
		for _, s := range seen {
			if s {
				runs++
			}
		}
		if float64(hits[g]) >= recurShare*float64(runs) {
			out = append(out, RecurringGroup{Group: names[g], Events: hits[g], Runs: runs})
		}
	}
	slices.SortFunc(out, func(a, b RecurringGroup) int {
		return cmp.Or(cmp.Compare(b.Events, a.Events), cmp.Compare(a.Group, b.Group))
	})
	return out
}

// Events returns the events found, in run order.
func (ev *events) Events() InfraEvents {
	out := make(InfraEvents, len(ev.list))
	for i, f := range ev.list {
		out[i] = f.ev
	}
	return out
}

func event(h *history.History, run int32, kind, group string, members []string, n, f int, mu float64) found {
	r := h.Runs[run]
	return found{run, InfraEvent{RunID: r.RunID, Attempt: r.Attempt, Commit: r.CommitSHA, Source: r.Source, Time: r.Time,
		Kind: kind, Group: group, Members: members, Tests: n, Failed: f, Expected: math.Round(mu*1000) / 1000}}
}

// countable finds, for tests lo to hi, how many runs each was present in
// and its countable failures: runs it failed every attempt of, outside
// its regression blocks (failures in more than MaxEpisode commits in a
// row).
func countable(h *history.History, infra []bool, runCommit []int32, nCommits int, o Options, present []int, fails [][]int32, lo, hi int) {
	state := make([]int8, nCommits) // 0 none, 1 passed, 2 failed only, 3 both
	var touched []int32
	long := make([]bool, nCommits)
	// With no infrastructure run and a commit for every run, a test that
	// never failed every attempt of a run is only counted.
	plain := !slices.Contains(infra, true) && !slices.ContainsFunc(runCommit, func(c int32) bool { return c < 0 })
	for ti := lo; ti < hi; ti++ {
		t := h.Tests[ti]
		if plain {
			n, failed := 0, false
			for _, c := range t.Cells {
				if c.Pass+c.Fail > 0 {
					n++
					failed = failed || c.Pass == 0
				}
			}
			if !failed {
				present[ti] = n
				continue
			}
		}
		touched = touched[:0]
		n, failed := 0, false
		for _, c := range t.Cells {
			ci := runCommit[c.Run]
			if infra[c.Run] || c.Pass+c.Fail == 0 || ci < 0 {
				continue
			}
			n++
			if state[ci] == 0 {
				touched = append(touched, ci)
			}
			if c.Fail > 0 && c.Pass == 0 {
				state[ci] |= 2
				failed = true
			} else {
				state[ci] |= 1
			}
		}
		present[ti] = n
		if !failed {
			// Most tests never fail a run: no blocks, no failures.
			for _, ci := range touched {
				state[ci] = 0
			}
			continue
		}
		slices.Sort(touched)
		for i := 0; i < len(touched); {
			if state[touched[i]] != 2 {
				i++
				continue
			}
			j := i
			for j < len(touched) && state[touched[j]] == 2 {
				j++
			}
			if j-i > o.MaxEpisode {
				for _, ci := range touched[i:j] {
					long[ci] = true
				}
			}
			i = j
		}
		for _, c := range t.Cells {
			ci := runCommit[c.Run]
			if infra[c.Run] || ci < 0 || !(c.Fail > 0 && c.Pass == 0) || long[ci] {
				continue
			}
			fails[ti] = append(fails[ti], c.Run)
		}
		for _, ci := range touched {
			state[ci], long[ci] = 0, false
		}
	}
}
