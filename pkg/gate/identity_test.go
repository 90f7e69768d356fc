package gate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/history"
)

// TestSameIdentities: a test told apart by leg on base and not on head is
// one test on both sides, its legs' attempts added run by run with their
// signatures; a test told apart by the same legs on both sides, and a test
// on one side only, are left alone; the inputs are not changed.
func TestSameIdentities(t *testing.T) {
	base := &history.History{Runs: make([]history.Run, 2), Tests: []*history.Test{
		{ID: "a::gone", Cells: []history.Cell{{Run: 0, Pass: 1}}},
		{ID: "a::x", Cells: []history.Cell{{Run: 0, Pass: 1}, {Run: 1, Pass: 1}}},
		{ID: "a::y [junit-ubuntu]", File: "y.py", Cells: []history.Cell{{Run: 0, Pass: 1}, {Run: 1, Fail: 1, Sig: 1}},
			Sigs: []history.Sig{{Hash: "sha256:u", Count: 1}}},
		{ID: "a::y [junit-windows]", Cells: []history.Cell{{Run: 0, Fail: 1, Sig: 2}, {Run: 1, Fail: 1, Sig: 1}},
			Sigs: []history.Sig{{Hash: "sha256:u", Count: 1}, {Hash: "sha256:w", Count: 1}}},
		{ID: "a::z [chromium]", Cells: []history.Cell{{Run: 0, Pass: 1}}},
		{ID: "a::z [firefox]", Cells: []history.Cell{{Run: 0, Pass: 1}}},
	}}
	head := &history.History{Runs: make([]history.Run, 1), Tests: []*history.Test{
		{ID: "a::x", Cells: []history.Cell{{Run: 0, Pass: 1}}},
		{ID: "a::y", Cells: []history.Cell{{Run: 0, Pass: 2}}},
		{ID: "a::z [chromium]", Cells: []history.Cell{{Run: 0, Pass: 1}}},
		{ID: "a::z [firefox]", Cells: []history.Cell{{Run: 0, Pass: 1}}},
	}}
	before := cmp.Diff(nil, base, cmpopts.IgnoreUnexported(history.Test{}, history.Sig{}, history.Run{}))
	b, h, folded := sameIdentities(base, head)
	if diff := cmp.Diff(map[string]bool{"a::y": true}, folded); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	want := []*history.Test{
		base.Tests[0], base.Tests[1],
		{ID: "a::y", File: "y.py", Cells: []history.Cell{{Run: 0, Pass: 1, Fail: 1, Sig: 2}, {Run: 1, Fail: 2, Sig: 1}},
			Sigs: []history.Sig{{Hash: "sha256:u", Count: 2}, {Hash: "sha256:w", Count: 1}}},
		base.Tests[4], base.Tests[5],
	}
	if diff := cmp.Diff(want, b.Tests, cmpopts.IgnoreUnexported(history.Test{}, history.Sig{})); diff != "" {
		t.Errorf("base tests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(head.Tests, h.Tests, cmpopts.IgnoreUnexported(history.Test{}, history.Sig{})); diff != "" {
		t.Errorf("head tests (-want +got):\n%s", diff)
	}
	if after := cmp.Diff(nil, base, cmpopts.IgnoreUnexported(history.Test{}, history.Sig{}, history.Run{})); after != before {
		t.Error("the base history was changed")
	}
	// Through the join: a::y failed in both base runs (a leg each time),
	// passed on head, with no test removed or added.
	tests := Join(base, head, nil)
	for _, ti := range tests {
		if ti.Name == "a::y" && (ti.Base != Tally{Runs: 2, Failures: 2} || !ti.AcrossLegs || len(ti.Head) != 1) {
			t.Errorf("a::y: %+v", ti)
		}
		if ti.Name != "a::y" && ti.AcrossLegs {
			t.Errorf("%s compared across legs", ti.Name)
		}
	}
}
