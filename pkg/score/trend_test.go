package score

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompareLegs: the first report that tells a matrix's legs apart
// names "c::n" anew, per leg. A test flagged before is then compared part
// by part: a flagged part is not new, and the test is resolved only when
// no part is flagged (here it failed on Windows only: broken, not flaky).
func TestCompareLegs(t *testing.T) {
	prev := &Report{FlakyCount: 2, MinCommits: 5, Tests: []Test{
		{Name: "paths", IsFlaky: true, FlakeScore: 1},
		{Name: "race", IsFlaky: true, FlakeScore: 0.3},
	}}
	cur := &Report{FlakyCount: 2, MinCommits: 5, Tests: []Test{
		{Name: "paths [junit-ubuntu]", Commits: 9},
		{Name: "paths [junit-windows]", FlakeScore: 0, Commits: 9},
		{Name: "race [junit-ubuntu]", IsFlaky: true, FlakeScore: 0.31, Commits: 9},
		{Name: "race [junit-windows]", IsFlaky: true, FlakeScore: 0.5, Commits: 9},
	}}
	got := Compare(prev, cur)
	want := &Trend{
		New:        []TrendEntry{},
		Resolved:   []TrendEntry{{Name: "paths", Before: 1, Seen: true, Commits: 9}},
		Unclear:    []TrendEntry{},
		Worsened:   []TrendEntry{{Name: "race [junit-windows]", Before: 0.3, After: 0.5, Seen: true, Commits: 9}},
		Improved:   []TrendEntry{},
		FlakyDelta: 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
}

func TestCompare(t *testing.T) {
	prev := &Report{FlakyCount: 3, MinCommits: 5, Tests: []Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.2},
		{Name: "b", IsFlaky: true, FlakeScore: 0.3},
		{Name: "c", IsFlaky: true, FlakeScore: 0.5},
		{Name: "gone", IsFlaky: true, FlakeScore: 0.4}, // not run now: not resolved either
		{Name: "d", FlakeScore: 0.01},
		{Name: "few", IsFlaky: true, FlakeScore: 0.4},
	}}
	cur := &Report{FlakyCount: 3, MinCommits: 5, Tests: []Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.21, Commits: 9}, // unchanged within minDelta
		{Name: "b", IsFlaky: true, FlakeScore: 0.5, Commits: 9},  // worse
		{Name: "c", FlakeScore: 0.02, Commits: 9},                // resolved
		{Name: "d", IsFlaky: true, FlakeScore: 0.3, Commits: 9},  // new
		{Name: "e", IsFlaky: true, FlakeScore: 0.1, Commits: 9},  // new, not seen before
		{Name: "few", FlakeScore: 0.67, Commits: 3},              // 2 of 3 commits flaky: too few to tell, not resolved
	}}
	got := Compare(prev, cur)
	want := &Trend{
		New:        []TrendEntry{{Name: "d", Before: 0.01, After: 0.3, Seen: true, Commits: 9}, {Name: "e", After: 0.1, Seen: true, Commits: 9}},
		Resolved:   []TrendEntry{{Name: "c", Before: 0.5, After: 0.02, Seen: true, Commits: 9}},
		Unclear:    []TrendEntry{{Name: "gone", Before: 0.4}, {Name: "few", Before: 0.4, After: 0.67, Seen: true, Commits: 3}},
		Worsened:   []TrendEntry{{Name: "b", Before: 0.3, After: 0.5, Seen: true, Commits: 9}},
		Improved:   []TrendEntry{},
		FlakyDelta: 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	if Compare(nil, cur) != nil {
		t.Error("Compare(nil, cur) != nil")
	}
}

// TestCompareByFlakeRate: the trend compares the flake rate, which the
// report ranks by and shows; a test whose rate rose while its flake score
// fell was listed as better, beside its climb in the ranking (a report
// audit). A previous report without the rate is read by its score.
func TestCompareByFlakeRate(t *testing.T) {
	prev := &Report{MinCommits: 5, Tests: []Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.3, FlakeRate: 0.3, RateCommits: 20},
		{Name: "old", IsFlaky: true, FlakeScore: 0.3}, // a report from before flake_rate
	}}
	cur := &Report{MinCommits: 5, Tests: []Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.2, FlakeRate: 0.5, RateCommits: 20, Commits: 20},
		{Name: "old", IsFlaky: true, FlakeScore: 0.1, FlakeRate: 0.1, RateCommits: 20, Commits: 20},
	}}
	got := Compare(prev, cur)
	if len(got.Worsened) != 1 || got.Worsened[0].Name != "a" || got.Worsened[0].Before != 0.3 || got.Worsened[0].After != 0.5 {
		t.Errorf("worsened %+v, want a from 0.3 to 0.5", got.Worsened)
	}
	if len(got.Improved) != 1 || got.Improved[0].Name != "old" {
		t.Errorf("improved %+v, want old", got.Improved)
	}
}
