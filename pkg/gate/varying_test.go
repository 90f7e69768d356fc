package gate

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// TestVaryingNames: a test whose name holds something that changes from
// run to run (a random seed, a Java hash code in a parameterized test's
// display name, a UUID) has a new name in every run. A head failure of such
// a flaky test was a "new failing test", a block on a clean patch (the
// quirks audit: 3 of 3 trials of a property test failing 25% of runs with
// its seed in its id). Names that differ only in such a part, one of them
// in each run, and varying within a side, are compared as one test.
func TestVaryingNames(t *testing.T) {
	tc := func(name string, fail bool) string {
		if fail {
			return `<testcase classname="c" name="` + name + `"><failure message="falsified"/></testcase>`
		}
		return `<testcase classname="c" name="` + name + `"/>`
	}
	type side struct {
		name  func(run int) string // the varying test's name in run (0-based); "" for none
		fails func(run int) bool
	}
	docs := func(s side, extra func(run int) string) []string {
		var out []string
		for i := range 5 {
			cases := []string{tc("a", false), tc("b", false)}
			if n := s.name(i); n != "" {
				cases = append(cases, tc(n, s.fails(i)))
			}
			if extra != nil {
				cases = append(cases, extra(i))
			}
			out = append(out, suite(cases...))
		}
		return out
	}
	seed := func(from int) func(int) string {
		return func(i int) string { return fmt.Sprintf("prop[seed=%d]", from+7919*i) }
	}
	hashes := []string{"6ee12bac", "1b6d3586", "4554617c", "74a14482", "1540e19d", "677327b6", "14ae5a5", "7f31245a", "568db2f2", "378bf509"}
	hash := func(from int) func(int) string {
		return func(i int) string { return "testTotal(Money)[1] Money@" + hashes[from+i] }
	}
	uuid := func(from int) func(int) string {
		return func(i int) string {
			return fmt.Sprintf("order %08x-1c2d-4e5f-8a9b-%012x is shipped", 0x9b3e0000+from+i, 0xabc000+from*i)
		}
	}
	fixed := func(n string) func(int) string { return func(int) string { return n } }
	at := func(runs ...int) func(int) bool {
		return func(i int) bool {
			for _, r := range runs {
				if r == i+1 {
					return true
				}
			}
			return false
		}
	}
	always := func(int) bool { return true }
	for _, c := range []struct {
		name       string
		base, head side
		extra      func(run int) string // on both sides
		want       Verdict
		compared   string // the name the varying test is compared under, "" when not folded
	}{
		{"seeded flake, clean", side{seed(1000), at(2)}, side{seed(5000), at(3)}, nil, VerdictPass, "c::prop[seed=…]"},
		{"hash code flake, clean", side{hash(0), at(4)}, side{hash(5), at(1)}, nil, VerdictPass, "c::testTotal(Money)[1] Money@…"},
		{"uuid flake, clean", side{uuid(0), at(1)}, side{uuid(9), at(5)}, nil, VerdictPass, "c::order … is shipped"},
		{"seeded test broken by the patch", side{seed(1000), at()}, side{seed(5000), always}, nil, VerdictBlock, "c::prop[seed=…]"},
		{"hash code test made flaky", side{hash(0), at()}, side{hash(5), at(1, 2, 4)}, nil, VerdictBlock, "c::testTotal(Money)[1] Money@…"},
		// A fixed seed on base, random ones on head: still one test.
		{"seed made random, clean", side{fixed("prop[seed=1234]"), at()}, side{seed(5000), at()}, nil, VerdictPass, "c::prop[seed=…]"},
		// A number in a stable name that a patch changes is a rename, not a
		// varying name: removed and new, as before.
		{"renamed", side{fixed("test_issue_12345"), at()}, side{fixed("test_issue_67890"), at()}, nil, VerdictBlock, ""},
		// Two such names in one run are two tests: nothing is folded, so
		// the new name's failure is a new failing test, as before.
		{"two in a run", side{seed(1000), at()}, side{seed(5000), at(2)},
			func(i int) string { return tc(fmt.Sprintf("prop[seed=%d]", 90000+i), false) }, VerdictBlock, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, h := load(t, "base", docs(c.base, c.extra)...), load(t, "head", docs(c.head, c.extra)...)
			in := Input{Tests: Join(b, h, nil), Collected: CollectedCounts(b, h, model.DefaultInfra), PRBody: "", Labels: nil}
			res, err := Evaluate(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.want {
				t.Errorf("verdict %s, want %s\n%s", res.Verdict, c.want, strings.Join(res.Reasons, "\n"))
			}
			var names []string
			for _, tr := range res.Tests {
				names = append(names, tr.Name)
			}
			folded := false
			for _, n := range names {
				folded = folded || n == c.compared
			}
			if c.compared != "" && (!folded || len(names) != 3) {
				t.Errorf("tests %q: want c::a, c::b and %q", names, c.compared)
			}
			if c.compared == "" && strings.Contains(strings.Join(names, " "), "…") {
				t.Errorf("tests %q: nothing should be folded", names)
			}
		})
	}
}

// TestVaryingNamesHistory: base-branch history under names that vary is
// the folded test's history too, so a seeded flake that fails a quarter of
// its runs there is known as one when head fails it twice in five; a
// history whose runs hold two of the names keeps them apart.
func TestVaryingNamesHistory(t *testing.T) {
	tc := func(name string, fail bool) string {
		if fail {
			return `<testcase classname="c" name="` + name + `"><failure message="falsified"/></testcase>`
		}
		return `<testcase classname="c" name="` + name + `"/>`
	}
	var base, head, hist, histTwice []string
	for i := range 5 {
		base = append(base, suite(tc("a", false), tc(fmt.Sprintf("prop[seed=%d]", 1000+i), false)))
		head = append(head, suite(tc("a", false), tc(fmt.Sprintf("prop[seed=%d]", 2000+i), i >= 2)))
	}
	for i := range 40 {
		hist = append(hist, suite(tc("a", false), tc(fmt.Sprintf("prop[seed=%d]", 3000+i), i%4 == 0)))
		histTwice = append(histTwice, suite(tc("a", false), tc(fmt.Sprintf("prop[seed=%d]", 3000+i), i%4 == 0), tc(fmt.Sprintf("prop[seed=%d]", 5000+i), false)))
	}
	b, h := load(t, "base", base...), load(t, "head", head...)
	for _, c := range []struct {
		name    string
		hist    []string
		runs    int
		verdict Verdict
	}{
		{"history under varying names", hist, 40, VerdictPass},
		// Without the history, 3 of 5 head runs against 0 of 5 base runs
		// are a new flake or a rare old one: undecided, more runs or
		// history wanted. The history is what tells the flake.
		{"two names in each history run", histTwice, 0, VerdictInconclusive},
		{"no history", nil, 0, VerdictInconclusive},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hh *history.History
			if c.hist != nil {
				hh = load(t, "hist", c.hist...)
			}
			tests := Join(b, h, hh)
			var prop TestInput
			for _, ti := range tests {
				if ti.Name == "c::prop[seed=…]" {
					prop = ti
				}
			}
			if prop.History.Runs != c.runs || prop.VaryingNames != 10 {
				t.Fatalf("c::prop[seed=…]: %+v; want %d history runs, 10 names", prop, c.runs)
			}
			res, err := Evaluate(Input{Tests: tests}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.verdict {
				t.Errorf("verdict %s, want %s\n%s", res.Verdict, c.verdict, strings.Join(res.Reasons, "\n"))
			}
		})
	}
}

// TestVaryingNameDeletedNotGoneFromBase: the patch deletes a property test
// whose seed is in its id. Its base runs (CI runs of the base commit) fold
// into one test, in every base run and in no head run: removed. The
// base-branch history since the base commit still runs it, under seeds of
// its own; but one history run (a nightly that runs it with two seeds)
// holds two of its names, so the history is not folded, and its names are
// not the folded name: leftBaseBranch read the test as dropped by the
// base branch (GoneFromBase) and the deletion passed.
func TestVaryingNameDeletedNotGoneFromBase(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	doc := func(seeds ...int) string {
		cases := []string{`<testcase classname="c" name="a"/>`, `<testcase classname="c" name="b"/>`}
		for _, s := range seeds {
			cases = append(cases, fmt.Sprintf(`<testcase classname="c" name="prop[seed=%d]"/>`, s))
		}
		return suite(cases...)
	}
	run := func(sha string, id int, at time.Time, workflow, event string) model.Run {
		return model.Run{CommitSHA: sha, RunID: strconv.Itoa(id), Time: at, Workflow: workflow, Event: event, Branch: "main"}
	}
	var br, hr, mr []model.Run
	var bd, hd, md []string
	for i := range 3 {
		br, bd = append(br, run("base", 1+i, t0.Add(time.Duration(i)*time.Minute), "ci.yml", "push")), append(bd, doc(1000+7919*i))
		hr, hd = append(hr, run("head", 100+i, t0.Add(time.Duration(48+i)*time.Hour), "ci.yml", "pull_request")), append(hd, doc())
		mr, md = append(mr, run(fmt.Sprintf("main%d", i), 10+i, t0.Add(time.Duration(1+i)*time.Hour), "ci.yml", "push")), append(md, doc(3000+7919*i))
	}
	for _, tc := range []struct {
		name string
		hist *history.History
	}{
		{"history folded", loadRuns(t, mr, md)},
		{"a history run holds two of the names", loadRuns(t, append(mr, run("main-nightly", 50, t0.Add(-time.Hour), "nightly.yml", "schedule")),
			append(md, doc(9001, 9002)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, h := loadRuns(t, br, bd), loadRuns(t, hr, hd)
			res, err := Evaluate(Input{Tests: Join(b, h, tc.hist), Collected: CollectedCounts(b, h, model.DefaultInfra)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := testNamed(t, res, "c::prop[seed=…]"); res.Verdict != VerdictBlock || got.Bucket != Removed {
				t.Errorf("verdict %s, c::prop[seed=…] %q; want block, %q: the base branch still runs it\n%s", res.Verdict, got.Bucket, Removed, strings.Join(res.Reasons, "\n"))
			}
		})
	}
}

// TestVaryingTimestamp: a name holding a timestamp made at collection
// (pytest's id of str(datetime.now()), JUnit 5's display name of a
// LocalDateTime.now()), which the fold's comment names among the names
// that vary, had only its year folded: "…-12-03 09:15:42.…" differs in
// every run, nothing was folded, and a head failure of such a flaky test
// was a new failing test, blocking a clean pull request.
func TestVaryingTimestamp(t *testing.T) {
	tc := func(name string, fail bool) string {
		if fail {
			return `<testcase classname="c" name="` + name + `"><failure message="late"/></testcase>`
		}
		return `<testcase classname="c" name="` + name + `"/>`
	}
	t0 := time.Date(2026, 12, 3, 9, 15, 42, 0, time.UTC)
	var base, head, hist []string
	for i := range 5 {
		at := func(side int) string {
			return t0.Add(time.Duration(side*600+i*97) * time.Second).Format("2006-01-02 15:04:05.000000")
		}
		base = append(base, suite(tc("a", false), tc("report["+at(0)+"]", i == 2)))
		head = append(head, suite(tc("a", false), tc("report["+at(1)+"]", i == 4)))
	}
	for i := range 40 {
		at := t0.Add(-time.Duration(i+1) * time.Hour).Format("2006-01-02 15:04:05.000000")
		hist = append(hist, suite(tc("a", false), tc("report["+at+"]", i%5 == 0)))
	}
	b, h, hh := load(t, "base", base...), load(t, "head", head...), load(t, "hist", hist...)
	res, err := Evaluate(Input{Tests: Join(b, h, hh), Collected: CollectedCounts(b, h, model.DefaultInfra)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictPass || len(res.Tests) != 2 {
		var names []string
		for _, tr := range res.Tests {
			names = append(names, tr.Name)
		}
		t.Errorf("verdict %s, tests %q; want pass, c::a and c::report[…]\n%s", res.Verdict, names, strings.Join(res.Reasons, "\n"))
	}
}

// TestVaryingNamesOneRunASide: with one run a side (the CI runs of the
// base and head commits), each side holds one name of a seeded test, and
// the seeded test was "removed" and new: a block on a clean pull request.
// The base-branch history, whose runs hold one of its names each, shows
// the name varies. A history that holds one name only, or two in a run,
// shows nothing: the rename blocks as before.
func TestVaryingNamesOneRunASide(t *testing.T) {
	tc := func(name string) string { return `<testcase classname="c" name="` + name + `"/>` }
	hist := func(perRun int) *history.History {
		var docs []string
		for i := range 20 {
			cases := []string{tc("a")}
			for k := range perRun {
				cases = append(cases, tc(fmt.Sprintf("prop[seed=%d]", 3000+100*i+k)))
			}
			docs = append(docs, suite(cases...))
		}
		return load(t, "hist", docs...)
	}
	fixed := load(t, "hist", suite(tc("a"), tc("prop[seed=1234]")), suite(tc("a"), tc("prop[seed=1234]")))
	for _, c := range []struct {
		name string
		hist *history.History
		want Verdict
	}{
		{"history of varying names", hist(1), VerdictPass},
		{"no history", nil, VerdictBlock},
		{"history of the base name only", fixed, VerdictBlock},
		{"history runs hold two", hist(2), VerdictBlock},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := load(t, "base", suite(tc("a"), tc("prop[seed=1234]")))
			h := load(t, "head", suite(tc("a"), tc("prop[seed=5678]")))
			res, err := Evaluate(Input{Tests: Join(b, h, c.hist), Collected: CollectedCounts(b, h, model.DefaultInfra)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.want {
				t.Errorf("verdict %s, want %s\n%s", res.Verdict, c.want, strings.Join(res.Reasons, "\n"))
			}
		})
	}
}
