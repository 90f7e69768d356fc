package score

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	prev := &Report{FlakyCount: 3, Tests: []Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.2},
		{Name: "b", IsFlaky: true, FlakeScore: 0.3},
		{Name: "c", IsFlaky: true, FlakeScore: 0.5},
		{Name: "gone", IsFlaky: true, FlakeScore: 0.4},
		{Name: "d", FlakeScore: 0.01},
	}}
	cur := &Report{FlakyCount: 3, Tests: []Test{
		{Name: "a", IsFlaky: true, FlakeScore: 0.21}, // unchanged within minDelta
		{Name: "b", IsFlaky: true, FlakeScore: 0.5},  // worse
		{Name: "c", FlakeScore: 0.02},                // resolved
		{Name: "d", IsFlaky: true, FlakeScore: 0.3},  // new
		{Name: "e", IsFlaky: true, FlakeScore: 0.1},  // new, not seen before
	}}
	got := Compare(prev, cur)
	want := &Trend{
		New:        []TrendEntry{{Name: "d", Before: 0.01, After: 0.3, Seen: true}, {Name: "e", After: 0.1, Seen: true}},
		Resolved:   []TrendEntry{{Name: "c", Before: 0.5, After: 0.02, Seen: true}, {Name: "gone", Before: 0.4}},
		Worsened:   []TrendEntry{{Name: "b", Before: 0.3, After: 0.5, Seen: true}},
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
