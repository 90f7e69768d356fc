package score

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/synth"
)

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// TestWilsonSeedNumbers pins the upper bounds quoted in the method.
func TestWilsonSeedNumbers(t *testing.T) {
	tests := []struct {
		k, n      int
		low, high float64
	}{
		{1, 5, 0.036, 0.624},  // seed: 0.62
		{1, 20, 0.009, 0.236}, // seed: 0.24
		{2, 5, 0.118, 0.769},  // seed: 0.77
		{2, 20, 0.028, 0.301}, // seed: 0.30
		{0, 5, 0, 0.434},
		{5, 5, 0.566, 1},
		{0, 0, 0, 1},
	}
	for _, tc := range tests {
		got := Wilson(tc.k, tc.n)
		if round3(got.Low) != tc.low || round3(got.High) != tc.high {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.3f, %.3f]", tc.k, tc.n, got.Low, got.High, tc.low, tc.high)
		}
	}
}

func TestWilsonMonotone(t *testing.T) {
	for n := 1; n <= 60; n++ {
		prev := Wilson(0, n)
		for k := 1; k <= n; k++ {
			w := Wilson(k, n)
			if w.Low < prev.Low || w.High < prev.High || w.Low > float64(k)/float64(n) || w.High < float64(k)/float64(n) {
				t.Fatalf("Wilson(%d, %d) = %+v not monotone or not around the rate", k, n, w)
			}
			prev = w
		}
	}
}

func TestValidate(t *testing.T) {
	o := Defaults()
	o.Threshold = 1.5
	o.MinCommits = 0
	err := o.Validate()
	for _, want := range []string{"threshold must be between 0 and 1", "min_commits must be at least 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
	}
	o = Defaults()
	o.Threshold = math.NaN()
	if o.Validate() == nil {
		t.Error("NaN threshold accepted")
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

// doc writes one run's JUnit document.
func doc(commit string, run int, cases map[string][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<testsuite name="s" timestamp="2026-11-01T%02d:00:00"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`, run%24, commit, run)
	for name, outs := range cases {
		for _, o := range outs {
			if o == "F" {
				fmt.Fprintf(&b, `<testcase classname="c" name="%s"><failure message="boom"/></testcase>`, name)
			} else {
				fmt.Fprintf(&b, `<testcase classname="c" name="%s"/>`, name)
			}
		}
	}
	b.WriteString(`</testsuite>`)
	return b.String()
}

func load(t testing.TB, docs []string) *history.History {
	t.Helper()
	var srcs []history.Source
	for i, d := range docs {
		srcs = append(srcs, history.Source{Name: fmt.Sprintf("r%03d.xml", i), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(d)), nil
		}})
	}
	h, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func find(t testing.TB, r *Report, name string) Test {
	t.Helper()
	for _, x := range r.Tests {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("test %q not in report", name)
	return Test{}
}

// TestSeedExample: 10 commits, 3 of them mixed, gives 0.3.
func TestSeedExample(t *testing.T) {
	var docs []string
	run := 0
	for c := 0; c < 10; c++ {
		sha := fmt.Sprintf("c%02d", c)
		run++
		docs = append(docs, doc(sha, run, map[string][]string{"t": {"P"}}))
		if c < 3 {
			run++
			docs = append(docs, doc(sha, run, map[string][]string{"t": {"F"}}))
		}
	}
	rep, err := Score(load(t, docs), Defaults())
	if err != nil {
		t.Fatal(err)
	}
	got := find(t, rep, "c::t")
	if got.Score != 0.3 || got.Commits != 10 || got.FlakyCommits != 3 || !got.IsFlaky {
		t.Errorf("got score %v commits %d flaky %d is_flaky %v", got.Score, got.Commits, got.FlakyCommits, got.IsFlaky)
	}
	if diff := cmp.Diff([]string{"c00", "c01", "c02"}, got.CommitsWhereFlaky); diff != "" {
		t.Errorf("commits_where_flaky (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{EvidenceSameCommit}, got.Evidence); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"boom"}, got.ErrorMessages); diff != "" {
		t.Errorf("error_messages (-want +got):\n%s", diff)
	}
	if rep.FlakyCount != 1 || rep.TestsAnalyzed != 1 || rep.FlakyRate != 1 || rep.ResultsParsed != 13 {
		t.Errorf("report counts: %+v", rep)
	}
}

// TestRankByEvidence: one flaky commit of one never outranks 30 of 100.
func TestRankByEvidence(t *testing.T) {
	var docs []string
	run := 0
	for c := 0; c < 100; c++ {
		sha := fmt.Sprintf("c%03d", c)
		cases := map[string][]string{"many": {"P"}}
		if c < 30 {
			cases["many"] = []string{"F", "P"} // retried inside the run
		}
		if c == 99 {
			cases["once"] = []string{"F", "P"}
		}
		run++
		docs = append(docs, doc(sha, run, cases))
	}
	o := Defaults()
	o.MinCommits = 1
	rep, err := Score(load(t, docs), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tests[0].Name != "c::many" || rep.Tests[1].Name != "c::once" {
		t.Fatalf("rank = %s, %s; want many before once", rep.Tests[0].Name, rep.Tests[1].Name)
	}
	once := find(t, rep, "c::once")
	if once.Score != 1 || !once.IsFlaky || once.RankScore >= rep.Tests[0].RankScore {
		t.Errorf("once: %+v", once)
	}
	if diff := cmp.Diff([]string{EvidenceRetry}, once.Evidence); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
}

func synthReport(t testing.TB, spec synth.Spec, o Options) *Report {
	t.Helper()
	var srcs []history.Source
	err := spec.Generate(func(r synth.Run) (io.Writer, func() error, error) {
		var buf bytes.Buffer
		srcs = append(srcs, history.Source{Name: fmt.Sprintf("run-%d-%d.xml", r.ID, r.Attempt), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
		}})
		return &buf, func() error { return nil }, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Score(h, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSingleRunHistory: one run per commit, where the seed's score finds
// nothing. Intermittent failures are flagged; a test broken from a commit
// on and regressions fixed one to three commits later are not.
func TestSingleRunHistory(t *testing.T) {
	spec := synth.Spec{Commits: 40, RunsPerCommit: 1, Tests: 20, Seed: 7, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]synth.Behavior{
			1: {Kind: synth.Flaky, P: 0.3},
			2: {Kind: synth.Broken, From: 25},
			3: {Kind: synth.Regression, From: 10, To: 11},
			4: {Kind: synth.Regression, From: 10, To: 13},
			5: {Kind: synth.Regression, From: 5, To: 7},
		}}
	rep := synthReport(t, spec, Defaults())
	flaky := find(t, rep, "tests.test_module_00::test_case_0001")
	if !flaky.IsFlaky || flaky.Score != 0 || !containsStr(flaky.Evidence, EvidenceIntermittent) {
		t.Errorf("flaky test: is_flaky=%v score=%v evidence=%v timeline=%s", flaky.IsFlaky, flaky.Score, flaky.Evidence, flaky.Timeline)
	}
	for _, i := range []int{2, 3, 4, 5} {
		x := find(t, rep, fmt.Sprintf("tests.test_module_00::test_case_%04d", i))
		if x.IsFlaky || len(x.Evidence) > 0 {
			t.Errorf("test %d flagged: evidence=%v timeline=%s", i, x.Evidence, x.Timeline)
		}
	}
	if rep.FlakyCount != 1 {
		t.Errorf("flaky_count = %d, want 1", rep.FlakyCount)
	}
	if got := find(t, rep, "tests.test_module_00::test_case_0002").Timeline; got != strings.Repeat("P", 25)+strings.Repeat("F", 15) {
		t.Errorf("broken timeline = %s", got)
	}
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestInfraRunsExcluded: a run where most tests fail is reported apart and
// does not make every test look flaky.
func TestInfraRunsExcluded(t *testing.T) {
	spec := synth.Spec{Commits: 10, RunsPerCommit: 2, Tests: 30, Seed: 3, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		InfraRuns: []int{5}}
	rep := synthReport(t, spec, Defaults())
	if len(rep.InfraRuns) != 1 || rep.InfraRuns[0].Failed < 20 {
		t.Fatalf("infra runs = %+v", rep.InfraRuns)
	}
	if rep.FlakyCount != 0 {
		t.Errorf("flaky_count = %d with an outage, want 0", rep.FlakyCount)
	}
	for _, x := range rep.Tests {
		if x.Failures != 0 || len(x.Signatures) != 0 {
			t.Fatalf("%s kept outage failures: %+v", x.Name, x)
		}
	}
	// With whole-run exclusion off, the outage is still found suite by
	// suite, as co-failure events.
	o := Defaults()
	o.InfraThreshold = 1 // never exclude a whole run
	rep = synthReport(t, spec, o)
	if len(rep.InfraRuns) != 0 || len(rep.InfraEvents) != 1 || rep.InfraEvents[0].Kind != EventSuite || rep.FlakyCount != 0 {
		t.Errorf("with whole-run exclusion off: infra=%d events=%+v flaky=%d", len(rep.InfraRuns), rep.InfraEvents, rep.FlakyCount)
	}
}

// TestDetectionRates is a seeded Monte-Carlo check of the single-run
// detector: flakes failing 20–50% of the time over 40 commits are found,
// and broken tests and short regressions are never flagged.
func TestDetectionRates(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte-Carlo")
	}
	const trials = 200
	found, falseFlags, negatives := 0, 0, 0
	for seed := uint64(1); seed <= trials; seed++ {
		spec := synth.Spec{Commits: 40, RunsPerCommit: 1, Tests: 6, Seed: seed, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			Behaviors: map[int]synth.Behavior{
				0: {Kind: synth.Flaky, P: 0.2 + 0.3*float64(seed%4)/3},
				1: {Kind: synth.Broken, From: int(5 + seed%30)},
				2: {Kind: synth.Regression, From: int(3 + seed%30), To: int(3+seed%30) + int(1+seed%3)},
				3: {Kind: synth.Regression, From: int(2 + seed%20), To: int(2+seed%20) + int(1+seed%3)},
			}}
		rep := synthReport(t, spec, Defaults())
		if find(t, rep, "tests.test_module_00::test_case_0000").IsFlaky {
			found++
		}
		for _, i := range []int{1, 2, 3, 4, 5} {
			negatives++
			if find(t, rep, fmt.Sprintf("tests.test_module_00::test_case_%04d", i)).IsFlaky {
				falseFlags++
			}
		}
	}
	t.Logf("flakes found %d/%d; false flags %d/%d", found, trials, falseFlags, negatives)
	if float64(found)/trials < 0.95 {
		t.Errorf("found %d/%d flakes, want >= 95%%", found, trials)
	}
	if falseFlags != 0 {
		t.Errorf("%d false flags on broken, regressed or stable tests", falseFlags)
	}
}

// TestGather checks the in-place rearrangement Score ranks with against
// a copy through a second slice, for every permutation of up to six
// elements and for random ones.
func TestGather(t *testing.T) {
	check := func(src []int32) {
		t.Helper()
		ts := make([]string, len(src))
		for i := range ts {
			ts[i] = fmt.Sprint("t", i)
		}
		want := make([]string, len(src))
		for j, i := range src {
			want[j] = ts[i]
		}
		gather(ts, slices.Clone(src))
		if diff := cmp.Diff(want, ts); diff != "" {
			t.Fatalf("gather by %v (-want +got):\n%s", src, diff)
		}
	}
	var perms func(p []int32, k int)
	perms = func(p []int32, k int) {
		if k == len(p) {
			check(p)
			return
		}
		for i := k; i < len(p); i++ {
			p[k], p[i] = p[i], p[k]
			perms(p, k+1)
			p[k], p[i] = p[i], p[k]
		}
	}
	for n := range 7 {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32(i)
		}
		perms(p, 0)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		src := make([]int32, 1+rng.IntN(3000))
		for i, v := range rng.Perm(len(src)) {
			src[i] = int32(v)
		}
		check(src)
	}
}

// TestSeedFieldPins pins the seed's field rules that no other test holds:
// a score equal to the threshold flags (score >= threshold); flaky_rate is
// rounded to 4 places; commits_where_flaky is sorted, not in time order;
// error_messages are de-duplicated, in order of first appearance.
func TestSeedFieldPins(t *testing.T) {
	failing := func(commit string, run int, msg string) string {
		return fmt.Sprintf(`<testsuite name="s" timestamp="2026-11-01T%02d:00:00"><properties><property name="commit_sha" value="%s"/><property name="run_id" value="%d"/></properties>`+
			`<testcase classname="c" name="t"><failure message=%q/></testcase><testcase classname="c" name="u"/><testcase classname="c" name="v"/></testsuite>`, run%24, commit, run, msg)
	}
	var docs []string
	run := 0
	// Ten commits, the first in time named "zz", the second "aa": each
	// passes once; "zz" and "aa" also fail once, with messages that are
	// not one signature.
	commits := []string{"zz", "aa", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	for i, c := range commits {
		run++
		docs = append(docs, doc(c, run, map[string][]string{"t": {"P"}, "u": {"P"}, "v": {"P"}}))
		if i < 2 {
			run++
			docs = append(docs, failing(c, run, []string{"first message", "second message"}[i]))
		}
	}
	// The first message again, on a later commit that passes no run.
	run++
	docs = append(docs, failing("c9", run, "first message"))
	h := load(t, docs)
	opts := Defaults()
	opts.Threshold = 0.3 // 3 mixed commits of 10
	rep, err := Score(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := find(t, rep, "c::t")
	if got.Score != 0.3 || !got.IsFlaky {
		t.Errorf("score %v, is_flaky %v: a score equal to the threshold flags", got.Score, got.IsFlaky)
	}
	if diff := cmp.Diff([]string{"aa", "c9", "zz"}, got.CommitsWhereFlaky); diff != "" {
		t.Errorf("commits_where_flaky, sorted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"first message", "second message"}, got.ErrorMessages); diff != "" {
		t.Errorf("error_messages, de-duplicated in order of first appearance (-want +got):\n%s", diff)
	}
	if rep.FlakyRate != 0.3333 {
		t.Errorf("flaky_rate %v, want 1/3 rounded to 4 places, 0.3333", rep.FlakyRate)
	}
	opts.Threshold = 0.31
	if rep, _ := Score(h, opts); find(t, rep, "c::t").IsFlaky {
		t.Error("flagged below the threshold")
	}
}

// TestVaryingNamesScored: the seed example with the seed in the test's
// name, a new one every run. Each name was seen once, so the flaky test
// was never scored as one: 13 tests of one result each, none flaky. Its
// names, one in each run, are one test under "c::t[seed=…]": 0.3, flagged,
// and the report names the fold. A stable name beside it stays its own.
func TestVaryingNamesScored(t *testing.T) {
	var docs []string
	run := 0
	for c := 0; c < 10; c++ {
		sha := fmt.Sprintf("c%02d", c)
		run++
		docs = append(docs, doc(sha, run, map[string][]string{fmt.Sprintf("t[seed=%d]", 1000+run*37): {"P"}, "stable_2026": {"P"}}))
		if c < 3 {
			run++
			docs = append(docs, doc(sha, run, map[string][]string{fmt.Sprintf("t[seed=%d]", 1000+run*37): {"F"}, "stable_2026": {"P"}}))
		}
	}
	rep, err := Score(load(t, docs), Defaults())
	if err != nil {
		t.Fatal(err)
	}
	got := find(t, rep, "c::t[seed=…]")
	if got.Score != 0.3 || got.Commits != 10 || got.FlakyCommits != 3 || !got.IsFlaky {
		t.Errorf("got score %v commits %d flaky %d is_flaky %v", got.Score, got.Commits, got.FlakyCommits, got.IsFlaky)
	}
	find(t, rep, "c::stable_2026")
	if diff := cmp.Diff([]VaryingName{{Test: "c::t[seed=…]", Names: 13}}, rep.VaryingNames); diff != "" || rep.TestsAnalyzed != 2 || rep.FlakyCount != 1 {
		t.Errorf("tests %d, flaky %d; varying names (-want +got):\n%s", rep.TestsAnalyzed, rep.FlakyCount, diff)
	}
}

// TestRetryOnlyIsNotSameCommit: two runs of one commit that each failed
// and passed on a retry are retry evidence alone; same-commit needs a run
// that failed beside one that passed throughout, or one that failed every
// attempt beside a pass (a report audit: both were said).
func TestRetryOnlyIsNotSameCommit(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs [][]string // per run of the one commit, the attempts
		want []string
	}{
		{"retries in both runs", [][]string{{"F", "P"}, {"F", "P"}}, []string{EvidenceRetry}},
		{"a retry and a clean run", [][]string{{"F", "P"}, {"P"}}, []string{EvidenceSameCommit, EvidenceRetry}},
		{"a failed run and a retry", [][]string{{"F", "F"}, {"F", "P"}}, []string{EvidenceSameCommit, EvidenceRetry}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var docs []string
			run := 0
			for c := range 5 {
				sha := fmt.Sprintf("c%02d", c)
				for _, attempts := range tc.runs {
					run++
					if c > 0 {
						attempts = []string{"P"}
					}
					docs = append(docs, doc(sha, run, map[string][]string{"t": attempts}))
				}
			}
			rep, err := Score(load(t, docs), Defaults())
			if err != nil {
				t.Fatal(err)
			}
			got := find(t, rep, "c::t")
			if diff := cmp.Diff(tc.want, got.Evidence); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutageFixedByRetry: a run in which every test failed its first
// attempt and passed its retry (a database not ready) is an outage, left
// out; before, every test of the suite was flagged flaky on retry evidence
// (a report audit).
func TestOutageFixedByRetry(t *testing.T) {
	var docs []string
	for c := range 10 {
		cases := map[string][]string{}
		for i := range 20 {
			cases[fmt.Sprintf("t%02d", i)] = []string{"P"}
			if c == 3 || c == 7 {
				cases[fmt.Sprintf("t%02d", i)] = []string{"F", "P"}
			}
		}
		docs = append(docs, doc(fmt.Sprintf("c%02d", c), c+1, cases))
	}
	rep, err := Score(load(t, docs), Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.InfraRuns) != 2 || rep.FlakyCount != 0 {
		t.Errorf("%d outage runs, %d flaky tests; want 2 and 0", len(rep.InfraRuns), rep.FlakyCount)
	}
	if len(rep.InfraRuns) > 0 && rep.InfraRuns[0].Failed != 20 {
		t.Errorf("outage run: %+v, want 20 tests that failed an attempt", rep.InfraRuns[0])
	}
}
