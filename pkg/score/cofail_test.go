package score

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/synth"
)

// TestWilsonRateNumbers pins the flake-rate bounds of the README's sample
// and two more, to 3 decimals.
func TestWilsonRateNumbers(t *testing.T) {
	tests := []struct {
		k, n      int
		low, high float64
	}{
		{13, 30, 0.274, 0.608},
		{12, 30, 0.246, 0.577},
		{11, 30, 0.219, 0.545},
		{3, 100, 0.010, 0.085},
		{50, 100, 0.404, 0.596},
		{1, 3, 0.061, 0.792},
	}
	for _, tc := range tests {
		got := Wilson(tc.k, tc.n)
		if round3(got.Low) != tc.low || round3(got.High) != tc.high {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.3f, %.3f]", tc.k, tc.n, got.Low, got.High, tc.low, tc.high)
		}
	}
}

// TestExactTail checks the Poisson-binomial tail against enumeration of
// every outcome, and pins two values.
func TestExactTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(10)
		ps := make([]float64, n)
		for i := range ps {
			ps[i] = rng.Float64()
		}
		f := rng.IntN(n + 2)
		want := 0.0
		for mask := 0; mask < 1<<n; mask++ {
			pr, k := 1.0, 0
			for i, p := range ps {
				if mask&(1<<i) != 0 {
					pr *= p
					k++
				} else {
					pr *= 1 - p
				}
			}
			if k >= f {
				want += pr
			}
		}
		if got := exactTail(ps, f); math.Abs(got-want) > 1e-12 {
			t.Fatalf("exactTail(%v, %d) = %g, want %g", ps, f, got, want)
		}
		// The Chernoff bound is never below the exact tail.
		mu := 0.0
		for _, p := range ps {
			mu += p
		}
		if f > 0 && logTail(mu, f) < math.Log(exactTail(ps, f))-1e-9 {
			t.Fatalf("logTail(%g, %d) = %g below the exact %g", mu, f, logTail(mu, f), math.Log(exactTail(ps, f)))
		}
	}
	if got := exactTail([]float64{0.005, 0.005, 0.005}, 3); math.Abs(got-1.25e-7) > 1e-15 {
		t.Errorf("three stable tests all failing: %g, want 1.25e-7", got)
	}
	if got := exactTail([]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 7); math.Abs(got-1e-7) > 1e-15 {
		t.Errorf("P(Bin(7, 0.1) >= 7) = %g, want 1e-7", got)
	}
	if got := round3(logTail(0.14, 7)); got != -20.524 {
		t.Errorf("logTail(0.14, 7) = %v, want -20.524", got)
	}
	if got := round3(logTail(0.015, 3)); got != -12.91 {
		t.Errorf("logTail(0.015, 3) = %v, want -12.910", got)
	}
}

// TestRegressionCommits: a long episode is a regression block when the
// test's own rate makes it improbable.
func TestRegressionCommits(t *testing.T) {
	tests := []struct {
		name                  string
		long                  []int
		failed, commits, want int
	}{
		{"no long episode", nil, 10, 100, 0},
		{"broken for 40 of 100", []int{40}, 40, 100, 40},
		{"a stable test's run of 4", []int{4}, 4, 100, 4},
		{"a p = 0.5 flake's run of 5", []int{5}, 50, 100, 0},
		{"a p = 0.3 flake's run of 4 and a block of 12", []int{4, 12}, 40, 100, 12},
		{"a p = 0.05 flake's run of 4", []int{4}, 8, 100, 4},
	}
	for _, tc := range tests {
		if got := regressionCommits(tc.long, tc.failed, tc.commits); got != tc.want {
			t.Errorf("%s: regressionCommits(%v, %d, %d) = %d, want %d", tc.name, tc.long, tc.failed, tc.commits, got, tc.want)
		}
	}
}

// TestIntermittentRule: single-run timelines, one letter per commit.
func TestIntermittentRule(t *testing.T) {
	tests := []struct {
		timeline string
		flaky    bool
		failed   int // failed commits kept for the rate
		commits  int // commits kept
	}{
		{"PFPPFPPPFPPPPPPPPPPP", true, 3, 20},                       // three recovered blips, 15% whatever the threshold
		{"PFPPPPPPPPPPPPPFPPPF", true, 3, 20},                       // two recovered, the third censored
		{"PFPPPPPPPPPPPPPFPPPP", false, 2, 20},                      // two blips: a test with two short regressions looks the same
		{"PPPPPPPPPPPPPPPFFFFF", false, 0, 15},                      // broken at the end
		{"PPPPPFFFFFFFFFPPPPPP", false, 0, 11},                      // broken, then fixed
		{"PPPFFFPPPPPPPPPPFFPP", false, 5, 20},                      // two short regressions
		{"PFPPFPPFFFFFFFFFFFFF", false, 2, 7},                       // two blips, then broken: censored but long
		{"FPFPFPPPPPPPPPPPPPPP", true, 3, 20},                       // from the first commit
		{"PPPPPPPPPPPPPPPPPPPP", false, 0, 20},                      // stable
		{"FFPFFPFFPFPPPPPPPPPPP", true, 7, 21},                      // a high-rate start
		{"PPPPFPPPPFPPPPF" + strings.Repeat("P", 85), true, 3, 100}, // 3% over 100: below the 0.1 floor, flagged
	}
	for _, tc := range tests {
		var docs []string
		for c, o := range tc.timeline {
			docs = append(docs, doc(fmt.Sprintf("c%03d", c), c+1, map[string][]string{"t": {string(o)}, "u": {"P"}}))
		}
		rep, err := Score(load(t, docs), Defaults())
		if err != nil {
			t.Fatal(err)
		}
		got := find(t, rep, "c::t")
		if got.IsFlaky != tc.flaky || got.FailedCommits != tc.failed || got.RateCommits != tc.commits {
			t.Errorf("%s: is_flaky %v failed %d/%d evidence %v, want %v %d/%d", tc.timeline, got.IsFlaky, got.FailedCommits, got.RateCommits, got.Evidence, tc.flaky, tc.failed, tc.commits)
		}
		if iv := Wilson(got.FailedCommits, got.RateCommits); got.FlakeRateInterval != iv {
			t.Errorf("%s: interval %+v, want %+v", tc.timeline, got.FlakeRateInterval, iv)
		}
	}
}

// TestPartialOutages: a 7-test suite hit by partial outages (45% of the
// suites, under the whole-run rule) is one infrastructure event per run,
// not seven flaky tests, and a real flake in the same suite is still found.
func TestPartialOutages(t *testing.T) {
	spec := synth.Spec{Commits: 60, RunsPerCommit: 1, Tests: 407, Seed: 5, SuiteSizes: []int{7, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40},
		Start:     time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]synth.Behavior{3: {Kind: synth.Flaky, P: 0.3}}}
	for k := 0; k < 10; k++ {
		spec.Outages = append(spec.Outages, synth.Outage{Run: 3 + 6*k, Suites: 0.45})
	}
	rep := synthReport(t, spec, Defaults())
	whole := map[string]bool{}
	for _, r := range rep.InfraRuns {
		whole[r.RunID] = true // the few outages that hit more than half the tests
	}
	hits := 0
	for i, o := range spec.Outages {
		if spec.OutageSuites(i)[0] && !whole[fmt.Sprint(1001+o.Run)] {
			hits++
		}
	}
	if hits < 3 || len(whole) > 3 {
		t.Fatalf("the 7-test suite is hit by %d partial outages, %d were whole; the test needs 3 or more partial", hits, len(whole))
	}
	small := 0
	for _, e := range rep.InfraEvents {
		if e.Kind == EventSuite && e.Group == "tests.test_suite_000" {
			small++
		}
	}
	if small != hits {
		t.Errorf("events of the 7-test suite: %d, want %d: %+v", small, hits, rep.InfraEvents)
	}
	for _, x := range rep.Tests {
		want := x.Name == "tests.test_suite_000::test_case_0003"
		if x.IsFlaky != want {
			t.Errorf("%s: is_flaky %v, want %v (timeline %s)", x.Name, x.IsFlaky, want, x.Timeline)
		}
	}
	flake := find(t, rep, "tests.test_suite_000::test_case_0003")
	if flake.InfraFailures == 0 || flake.FlakeRateInterval.Low <= 0 {
		t.Errorf("flake: infra failures %d, rate %+v", flake.InfraFailures, flake.FlakeRateInterval)
	}
}

// TestClusterAcrossSuites: two tests of different suites that fail on
// exactly the same four commits are one cluster, each of those runs is one
// event, and the event's expected failures count the runs each member was
// present in.
func TestClusterAcrossSuites(t *testing.T) {
	blocks := [][2]int{{3, 4}, {10, 11}, {17, 18}, {25, 26}}
	spec := synth.Spec{Commits: 30, RunsPerCommit: 1, Tests: 20, Seed: 9, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]synth.Behavior{
			1: {Kind: synth.Regression, From: blocks[0][0], To: blocks[0][1], Blocks: blocks[1:]},
			2: {Kind: synth.Regression, From: blocks[0][0], To: blocks[0][1], Blocks: blocks[1:]},
			3: {Kind: synth.Flaky, P: 0.3},
		},
		Names: map[int][2]string{1: {"tests.db", "test_a"}, 2: {"tests.cache", "test_b"}}}
	rep := synthReport(t, spec, Defaults())
	if len(rep.InfraEvents) != len(blocks) {
		t.Fatalf("events = %+v, want %d", rep.InfraEvents, len(blocks))
	}
	for _, e := range rep.InfraEvents {
		if e.Kind != EventCluster || strings.Join(e.Members, ",") != "tests.cache::test_b,tests.db::test_a" || e.Failed != 2 {
			t.Errorf("event %+v", e)
		}
		// Each member failed 4 of the 30 runs it was present in: 2 × 4/30
		// failures expected at their usual rates.
		if e.Expected != 0.267 {
			t.Errorf("event expected %v failures, want 0.267 (2 × 4/30)", e.Expected)
		}
	}
	for _, name := range []string{"tests.db::test_a", "tests.cache::test_b"} {
		if x := find(t, rep, name); x.IsFlaky || x.InfraFailures != len(blocks) {
			t.Errorf("%s: is_flaky %v, infra failures %d", name, x.IsFlaky, x.InfraFailures)
		}
	}
	if !find(t, rep, "tests.test_module_00::test_case_0003").IsFlaky {
		t.Error("the flake beside the cluster is not flagged")
	}
}

// TestInfraEventsJSON: the list is [] when empty, never null.
func TestInfraEventsJSON(t *testing.T) {
	b, err := json.Marshal(&Report{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"infra_events":[]`) {
		t.Errorf("nil events encode as %s", b)
	}
}

// TestEventRunsStayWithTheirSuite: scoring marks a test's event runs
// before its cells and clears them after, so an event of one suite must not
// excuse the failures of the next test scored, in another suite. A test of
// the second suite that fails every run keeps every failure of the runs in
// which only the first suite had an event.
func TestEventRunsStayWithTheirSuite(t *testing.T) {
	spec := synth.Spec{Commits: 40, RunsPerCommit: 1, Tests: 47, Seed: 21, SuiteSizes: []int{7, 40}, // seed 21: four outages hit the first suite alone
		Start:     time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]synth.Behavior{7: {Kind: synth.Broken}}}
	for k := 0; k < 6; k++ {
		spec.Outages = append(spec.Outages, synth.Outage{Run: 2 + 6*k, Suites: 0.5})
	}
	rep := synthReport(t, spec, Defaults())
	first, second := 0, 0
	for _, e := range rep.InfraEvents {
		switch {
		case e.Kind == EventSuite && e.Group == "tests.test_suite_000":
			first++
		case e.Group == "tests.test_suite_001" || slices.Contains(e.Members, "tests.test_suite_001::test_case_0007"):
			second++
		}
	}
	if first <= second {
		t.Fatalf("events: %d of the first suite, %d touching the broken test; the test needs runs where only the first suite had one: %+v", first, second, rep.InfraEvents)
	}
	broken := find(t, rep, "tests.test_suite_001::test_case_0007")
	if want := spec.Commits - len(rep.InfraRuns) - second; broken.Failures != want || broken.InfraFailures != len(rep.InfraRuns)+second {
		t.Errorf("broken test: %d failures and %d infrastructure failures, want %d and %d (events %+v)",
			broken.Failures, broken.InfraFailures, want, len(rep.InfraRuns)+second, rep.InfraEvents)
	}
}

// TestFlakyClassFixture: the k tests of one class fail together in 12 of
// 40 runs (a flaky setUpClass). Each co-failure is one infrastructure event
// (the same data as a flaky service its suite shares, or a short
// regression of the class: flagging them flagged every test of suites that
// shared a service, a review found), but the report names the suite, where
// before it said only "No flaky tests" (a report audit). A single
// co-failure is not named.
func TestFlakyClassFixture(t *testing.T) {
	for _, tc := range []struct {
		k, fixtureFails int
		named           bool
	}{{2, 12, true}, {4, 12, true}, {8, 12, true}, {4, 1, false}} {
		t.Run(fmt.Sprintf("k=%d,fails=%d", tc.k, tc.fixtureFails), func(t *testing.T) {
			var docs []string
			run := 0
			for c := range 20 {
				for r := range 2 {
					run++
					var b strings.Builder
					fmt.Fprintf(&b, `<testsuite name="s" timestamp="2026-11-01T%02d:%02d:00"><properties><property name="commit_sha" value="c%02d"/><property name="run_id" value="%d"/></properties>`, run/60, run%60, c, run)
					for i := range 30 {
						fmt.Fprintf(&b, `<testcase classname="tests.test_api.T%d" name="test_%d"/>`, i%5, i)
					}
					failing := r == 0 && c < tc.fixtureFails
					for i := range tc.k {
						if failing {
							fmt.Fprintf(&b, `<testcase classname="tests.test_db.TestDB" name="test_%d"><error message="setUpClass: connection reset"/></testcase>`, i)
						} else {
							fmt.Fprintf(&b, `<testcase classname="tests.test_db.TestDB" name="test_%d"/>`, i)
						}
					}
					b.WriteString(`</testsuite>`)
					docs = append(docs, b.String())
				}
			}
			rep, err := Score(load(t, docs), Defaults())
			if err != nil {
				t.Fatal(err)
			}
			want := []RecurringGroup(nil)
			if tc.named {
				want = []RecurringGroup{{Group: "tests.test_db.TestDB", Events: tc.fixtureFails, Runs: 40}}
			}
			if diff := cmp.Diff(want, rep.RecurringEvents); diff != "" {
				t.Errorf("recurring events (-want +got):\n%s", diff)
			}
		})
	}
}
