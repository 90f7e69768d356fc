package history

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/model"
)

// legDoc is a document of the tests named in pass and fail (classname c).
func legDoc(pass, fail string) string {
	var b strings.Builder
	b.WriteString(`<testsuite name="s">`)
	for _, n := range strings.Fields(pass) {
		fmt.Fprintf(&b, `<testcase classname="c" name="%s"/>`, n)
	}
	for _, n := range strings.Fields(fail) {
		fmt.Fprintf(&b, `<testcase classname="c" name="%s"><failure message="boom %s"/></testcase>`, n, n)
	}
	b.WriteString(`</testsuite>`)
	return b.String()
}

// legSource is a document of run id on its own commit, from leg.
func legSource(run int, leg, pass, fail string) Source {
	src := stringSource(fmt.Sprintf("run %d / %s", run, leg), legDoc(pass, fail))
	src.Leg = leg
	src.Run = &model.Run{CommitSHA: fmt.Sprintf("%040x", run), RunID: fmt.Sprint(run), Attempt: 1}
	return src
}

// outcomes lists each test's cells as "P", "F", "PF" (both), per run.
func outcomes(h *History) map[string]string {
	out := map[string]string{}
	for _, t := range h.Tests {
		var s []string
		for _, c := range t.Cells {
			o := fmt.Sprintf("%d:", c.Run)
			if c.Pass > 0 {
				o += strings.Repeat("P", int(c.Pass))
			}
			if c.Fail > 0 {
				o += strings.Repeat("F", int(c.Fail))
			}
			if c.Skip > 0 {
				o += strings.Repeat("S", int(c.Skip))
			}
			s = append(s, o)
		}
		out[t.ID] = strings.Join(s, " ")
	}
	return out
}

// checkLegs wants srcs to read to the tests in want (see outcomes),
// whatever the number of workers.
func checkLegs(t *testing.T, srcs []Source, want map[string]string) {
	t.Helper()
	if d := cmp.Diff(want, loadLegs(t, srcs)); d != "" {
		t.Errorf("tests (-want +got):\n%s", d)
	}
}

func loadLegs(t *testing.T, srcs []Source) map[string]string {
	t.Helper()
	var first map[string]string
	for _, w := range []int{1, 2, 4} {
		h, err := Load(context.Background(), srcs, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got := outcomes(h)
		if first == nil {
			first = got
			continue
		}
		if d := cmp.Diff(first, got); d != "" {
			t.Fatalf("%d workers read another history (-1 worker +%d):\n%s", w, w, d)
		}
	}
	return first
}

// TestMatrixLegsAreProjects: a test that fails on one leg of a matrix
// and passes on the other, every run, is broken in that leg, not flaky:
// one test per leg, and the runs stay one per workflow run. A leg that
// failed throughout in one run (an outage) does not make the other its
// rerun.
func TestMatrixLegsAreProjects(t *testing.T) {
	var srcs []Source
	for run := 1; run <= 4; run++ {
		srcs = append(srcs, legSource(run, "junit-ubuntu", "A B", ""))
		if run == 3 {
			srcs = append(srcs, legSource(run, "junit-windows", "", "A B"))
			continue
		}
		srcs = append(srcs, legSource(run, "junit-windows", "A", "B"))
	}
	want := map[string]string{
		"c::A [junit-ubuntu]":  "0:P 1:P 2:P 3:P",
		"c::A [junit-windows]": "0:P 1:P 2:F 3:P",
		"c::B [junit-ubuntu]":  "0:P 1:P 2:P 3:P",
		"c::B [junit-windows]": "0:F 1:F 2:F 3:F",
	}
	checkLegs(t, srcs, want)
	h, _ := Load(context.Background(), srcs, Options{})
	if len(h.Runs) != 4 {
		t.Errorf("%d runs, want 4: legs are parts of one run", len(h.Runs))
	}
	for _, r := range h.Runs {
		if r.Tests != 4 || r.Repeated != 0 {
			t.Errorf("run %s: %d tests, %d repeated; want 4 and 0", r.RunID, r.Tests, r.Repeated)
		}
	}
}

// TestRerunFileIsAttempts: an artifact that reruns the failed tests of
// another of its run holds attempts of the same tests: the retry that
// passed folds into the failure's cell, where it is retry evidence. Per
// leg of a matrix too, with the legs still told apart.
func TestRerunFileIsAttempts(t *testing.T) {
	t.Run("one leg", func(t *testing.T) {
		var srcs []Source
		for run := 1; run <= 3; run++ {
			srcs = append(srcs, legSource(run, "junit", "A", "B C"))
			srcs = append(srcs, legSource(run, "junit-rerun", "B", "C"))
		}
		want := map[string]string{
			"c::A": "0:P 1:P 2:P",
			"c::B": "0:PF 1:PF 2:PF",
			"c::C": "0:FF 1:FF 2:FF",
		}
		checkLegs(t, srcs, want)
	})
	t.Run("per leg", func(t *testing.T) {
		var srcs []Source
		for run := 1; run <= 3; run++ {
			srcs = append(srcs, legSource(run, "junit-ubuntu", "A", "B"))
			srcs = append(srcs, legSource(run, "junit-ubuntu-rerun", "B", ""))
			srcs = append(srcs, legSource(run, "junit-windows", "A B", ""))
		}
		want := map[string]string{
			"c::A [junit-ubuntu]":  "0:P 1:P 2:P",
			"c::A [junit-windows]": "0:P 1:P 2:P",
			"c::B [junit-ubuntu]":  "0:PF 1:PF 2:PF",
			"c::B [junit-windows]": "0:P 1:P 2:P",
		}
		checkLegs(t, srcs, want)
	})
}

// TestLegsWithoutSharedTests: shards (each test in one leg of a run, and
// moving between shards across runs) keep every test's plain identity.
func TestLegsWithoutSharedTests(t *testing.T) {
	srcs := []Source{
		legSource(1, "shard-1", "A B", ""),
		legSource(1, "shard-2", "C", "D"),
		legSource(2, "shard-1", "A", "D"),
		legSource(2, "shard-2", "B C", ""),
	}
	want := map[string]string{
		"c::A": "0:P 1:P",
		"c::B": "0:P 1:P",
		"c::C": "0:P 1:P",
		"c::D": "0:F 1:F",
	}
	checkLegs(t, srcs, want)
}

// TestLegSignatures: each leg's test keeps the signatures of its own
// failures, with their counts.
func TestLegSignatures(t *testing.T) {
	srcs := []Source{
		legSource(1, "a", "P T", ""),
		legSource(1, "b", "P", "T"),
		legSource(2, "a", "P", "T"),
		legSource(2, "b", "P", "T"),
	}
	h, err := Load(context.Background(), srcs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, tt := range h.Tests {
		if !strings.HasPrefix(tt.ID, "c::T") {
			continue
		}
		for _, s := range tt.Sigs {
			got[tt.ID] += s.Count
			if s.Message != "boom T" {
				t.Errorf("%s: message %q", tt.ID, s.Message)
			}
		}
		for _, c := range tt.Cells {
			if c.Fail > 0 && c.Sig != 1 {
				t.Errorf("%s: cell %+v does not name its signature", tt.ID, c)
			}
		}
	}
	if d := cmp.Diff(map[string]int{"c::T [a]": 1, "c::T [b]": 2}, got); d != "" {
		t.Errorf("failures per signature (-want +got):\n%s", d)
	}
}

// TestManyLegsStayBounded: a crafted run of 2,000 directories, each with
// the same 20 tests, cannot make 2,000 cells of each test: a builder
// tells at most maxLegs legs of one run apart, and the rest are one.
func TestManyLegsStayBounded(t *testing.T) {
	var srcs []Source
	var names []string
	for k := range 20 {
		names = append(names, fmt.Sprintf("T%d", k))
	}
	for i := range 2000 {
		srcs = append(srcs, legSource(1, fmt.Sprintf("art/d%04d", i), strings.Join(names, " "), ""))
	}
	h, err := Load(context.Background(), srcs, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	cells := 0
	for _, x := range h.Tests {
		cells += len(x.Cells)
	}
	if want := 20 * (maxLegs + 1); len(h.Tests) != want || cells != want || len(h.Runs) != 1 {
		t.Errorf("%d tests, %d cells, %d runs; want %d, %d and 1", len(h.Tests), cells, len(h.Runs), want, want)
	}
	var over *Test
	for _, x := range h.Tests {
		if x.ID == "c::T0 ["+overflowLeg+"]" {
			over = x
		}
	}
	if over == nil || over.Cells[0].Pass != 2000-maxLegs {
		t.Errorf("the legs past %d are not one: %+v", maxLegs, over)
	}
	// Both bounds are said: the legs past maxLegs, and the search for
	// repeats, which the 257 legs alike stopped (32,896 pairs).
	if h.Legs != (LegBounds{FoldedRuns: 1, SearchStopped: true}) {
		t.Errorf("bounds %+v, want one folded run and the search stopped", h.Legs)
	}
	// Below both bounds nothing is said, and legs alike are one.
	h, err = Load(context.Background(), srcs[:50], Options{Workers: 1})
	if err != nil || h.Legs != (LegBounds{}) || len(h.Tests) != 20 {
		t.Errorf("50 legs: bounds %+v, %d tests, %v; want nothing said and 20 tests", h.Legs, len(h.Tests), err)
	}
}

// TestLegSearchBoundSaid: a run whose legs all fail one test makes every
// pair of its legs a possible rerun; past maxRerunPairs the search stops,
// every leg counts as a project of its own, and the history says so.
func TestLegSearchBoundSaid(t *testing.T) {
	load := func(legs int) *History {
		var srcs []Source
		for i := range legs {
			srcs = append(srcs, legSource(1, fmt.Sprintf("art/d%03d", i), "U", "T"))
		}
		h, err := Load(context.Background(), srcs, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// 100 legs make 9,900 ordered pairs, past maxRerunPairs.
	h := load(100)
	if !h.Legs.SearchStopped || h.Legs.FoldedRuns != 0 || len(h.Tests) != 200 {
		t.Errorf("100 legs: bounds %+v, %d tests; want the search stopped and 200 tests, one per leg", h.Legs, len(h.Tests))
	}
	// The report's window (Filter, Combine) keeps what the load said.
	if w := Filter(h, func(model.Run) bool { return true }); w.Legs != h.Legs {
		t.Errorf("filtered: bounds %+v, want %+v", w.Legs, h.Legs)
	}
	// Three legs that fail alike rerun each other: one project, nothing said.
	if h := load(3); h.Legs.SearchStopped || len(h.Tests) != 2 {
		t.Errorf("3 legs: bounds %+v, %d tests; want nothing said and 2 tests", h.Legs, len(h.Tests))
	}
}

// TestLegNames: a leg keeps its name from run to run, also in a run where
// it is the only leg: runs kept in directories of their own
// (runs/7/junit-py311, files that state their run) lose the run's
// directory, and a directory every run shares (one artifact holding each
// leg's directory) is left out of the test's names.
func TestLegNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		leg  func(run int, leg string) string
		want map[string]string
	}{
		{"run directories", func(run int, leg string) string { return fmt.Sprintf("/tmp/x/runs/%d/junit-%s", run, leg) },
			map[string]string{"c::A [junit-py311]": "0:P 1:P 2:P", "c::A [junit-py312]": "0:P 1:P", "c::B [junit-py311]": "0:P 1:P 2:P", "c::B [junit-py312]": "0:F 1:F"}},
		{"one artifact", func(run int, leg string) string { return "junit/" + leg + "/reports" },
			map[string]string{"c::A [py311]": "0:P 1:P 2:P", "c::A [py312]": "0:P 1:P", "c::B [py311]": "0:P 1:P 2:P", "c::B [py312]": "0:F 1:F"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srcs []Source
			for run := 1; run <= 3; run++ {
				srcs = append(srcs, legSource(run, tc.leg(run, "py311"), "A B", ""))
				if run < 3 {
					srcs = append(srcs, legSource(run, tc.leg(run, "py312"), "A", "B"))
				}
			}
			checkLegs(t, srcs, tc.want)
		})
	}
}

// TestRepeatedUploadIsOneLeg: one report uploaded as two artifacts (the
// same outcomes for every test in every run) is one leg, whose results
// are attempts as before: its tests are not listed twice. So is a matrix
// whose legs never differed, where telling them apart would change
// nothing; one run where they differ tells them apart.
func TestRepeatedUploadIsOneLeg(t *testing.T) {
	var srcs []Source
	for run := 1; run <= 3; run++ {
		fail := map[bool]string{true: "B"}[run == 2]
		pass := map[bool]string{true: "A", false: "A B"}[run == 2]
		srcs = append(srcs, legSource(run, "junit", pass, fail), legSource(run, "test-results", pass, fail))
	}
	checkLegs(t, srcs, map[string]string{
		"c::A": "0:PP 1:PP 2:PP",
		"c::B": "0:PP 1:FF 2:PP",
	})
	// The same, and a fourth run where B fails on one leg only.
	srcs = append(srcs, legSource(4, "junit", "A", "B"), legSource(4, "test-results", "A B", ""))
	checkLegs(t, srcs, map[string]string{
		"c::A [junit]":        "0:P 1:P 2:P 3:P",
		"c::A [test-results]": "0:P 1:P 2:P 3:P",
		"c::B [junit]":        "0:P 1:F 2:P 3:F",
		"c::B [test-results]": "0:P 1:F 2:P 3:P",
	})
}

// TestTestKeysDistinct: no two of a history's keys are alike (a first
// version drew them from overlapping streams, so that one test's failure
// weighed as much as the next test's pass, and FuzzReadInTurn found two
// legs of different outcomes with one fingerprint).
func TestTestKeysDistinct(t *testing.T) {
	seen := map[uint64]int{}
	for ti := range 100_000 {
		p, f, s := testKeys(ti)
		for _, k := range []uint64{p, f, s} {
			if o, dup := seen[k]; dup {
				t.Fatalf("test %d has a key of test %d", ti, o)
			}
			seen[k] = ti
		}
	}
}
