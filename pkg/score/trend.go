package score

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/pkg/model"
)

// minDelta is the smallest change in flake rate that counts as worse or
// better between two reports.
const minDelta = 0.05

// Trend compares a report with the previous one.
type Trend struct {
	PreviousAt time.Time    `json:"previous_generated_at"`
	New        []TrendEntry `json:"new"` // flagged now, not before
	// Resolved: flagged before, not now, on at least min_commits commits.
	// A test now told apart by project (a matrix's
	// legs: "c::n" became "c::n [junit-ubuntu]" and "c::n [junit-windows]")
	// is resolved when none of its parts is flagged; a part flagged now
	// is compared with the test it was.
	Resolved []TrendEntry `json:"resolved"`
	// Unclear: flagged before, not now, but on fewer than min_commits
	// commits in this window, or on none (Seen false: a quiet window, its
	// artifacts left out, or a test deleted or renamed): too few to call
	// it resolved. A report that read nothing resolves nothing.
	Unclear    []TrendEntry `json:"unclear"`
	Worsened   []TrendEntry `json:"worsened"` // flagged in both, flake rate up by minDelta or more
	Improved   []TrendEntry `json:"improved"` // flagged in both, flake rate down by minDelta or more
	FlakyDelta int          `json:"flaky_count_delta"`
	// RulesChanged says how the threshold or min_commits differ from the
	// previous report's, which flag or unflag tests by themselves; empty
	// when they are the same.
	RulesChanged string `json:"rules_changed,omitempty"`
}

// TrendEntry is one test's change.
type TrendEntry struct {
	Name   string  `json:"name"`
	Before float64 `json:"before"` // flake rate (rateOf) in the previous report; 0 when absent
	After  float64 `json:"after"`  // flake rate now; 0 when absent
	// Seen is false for a test that did not run in this window at all,
	// rather than one that stopped failing.
	Seen bool `json:"seen"`
	// Commits is the test's commits now.
	Commits int `json:"commits"`
}

// Compare returns the trend from prev to cur. A nil prev gives nil.
func Compare(prev, cur *Report) *Trend {
	if prev == nil {
		return nil
	}
	tr := &Trend{PreviousAt: prev.GeneratedAt, New: []TrendEntry{}, Resolved: []TrendEntry{}, Unclear: []TrendEntry{}, Worsened: []TrendEntry{}, Improved: []TrendEntry{},
		FlakyDelta: cur.FlakyCount - prev.FlakyCount}
	var changed []string
	if prev.Threshold != cur.Threshold {
		changed = append(changed, fmt.Sprintf("threshold %g, was %g", cur.Threshold, prev.Threshold))
	}
	if prev.MinCommits != cur.MinCommits {
		changed = append(changed, fmt.Sprintf("min_commits %d, was %d", cur.MinCommits, prev.MinCommits))
	}
	tr.RulesChanged = strings.Join(changed, "; ")
	before := map[string]Test{}
	for _, t := range prev.Tests {
		before[t.Name] = t
	}
	now := map[string]Test{}
	for _, t := range cur.Tests {
		now[t.Name] = t
	}
	// refined lists, by the name of a test the previous report had, the
	// tests that now name it with a project: "c::n [junit-windows]", once a
	// matrix's legs are told apart.
	refined := map[string][]Test{}
	for _, t := range cur.Tests {
		if p, ok := model.Unrefined(t.Name); ok {
			if _, had := before[p]; had {
				if _, still := now[p]; !still {
					refined[p] = append(refined[p], t)
				}
			}
		}
	}
	for _, t := range cur.Tests {
		b, had := before[t.Name]
		part := false // of a test the previous report named without a project
		if p, ok := model.Unrefined(t.Name); ok && !had && len(refined[p]) > 0 {
			b, had, part = before[p], true, true
		}
		e := TrendEntry{Name: t.Name, Before: rateOf(b), After: rateOf(t), Seen: true, Commits: t.Commits}
		switch {
		case t.IsFlaky && !(had && b.IsFlaky):
			tr.New = append(tr.New, e)
		case t.IsFlaky && rateOf(t)-rateOf(b) >= minDelta:
			tr.Worsened = append(tr.Worsened, e)
		case t.IsFlaky && rateOf(b)-rateOf(t) >= minDelta:
			tr.Improved = append(tr.Improved, e)
		case part:
			// Resolved or unclear as a whole, below.
		case !t.IsFlaky && had && b.IsFlaky && t.Commits < cur.MinCommits:
			tr.Unclear = append(tr.Unclear, e)
		case !t.IsFlaky && had && b.IsFlaky:
			tr.Resolved = append(tr.Resolved, e)
		}
	}
	for _, b := range prev.Tests {
		if _, ok := now[b.Name]; ok || !b.IsFlaky {
			continue
		}
		parts := refined[b.Name]
		if len(parts) == 0 {
			tr.Unclear = append(tr.Unclear, TrendEntry{Name: b.Name, Before: rateOf(b)})
			continue
		}
		// Told apart by project now: resolved when no part is flagged,
		// and then with the most flaky part's figures.
		e := TrendEntry{Name: b.Name, Before: rateOf(b), Seen: true}
		flagged := false
		for _, t := range parts {
			flagged = flagged || t.IsFlaky
			e.After, e.Commits = max(e.After, rateOf(t)), max(e.Commits, t.Commits)
		}
		switch {
		case flagged:
		case e.Commits < cur.MinCommits:
			tr.Unclear = append(tr.Unclear, e)
		default:
			tr.Resolved = append(tr.Resolved, e)
		}
	}
	byChange := func(a, b TrendEntry) int {
		if c := cmp.Compare(abs(b.After-b.Before), abs(a.After-a.Before)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	}
	for _, l := range [][]TrendEntry{tr.New, tr.Resolved, tr.Unclear, tr.Worsened, tr.Improved} {
		slices.SortFunc(l, byChange)
	}
	return tr
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// rateOf is the figure the trend compares: the flake rate, the one the
// report ranks by and shows first (the flake score went down while the
// rate, and the test's rank, went up: "Better" beside a climb). A report
// from before the flake rate has only the score.
func rateOf(t Test) float64 {
	if t.RateCommits == 0 && t.FlakeRate == 0 {
		return t.FlakeScore
	}
	return t.FlakeRate
}
