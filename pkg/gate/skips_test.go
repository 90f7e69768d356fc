package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/model"
)

// TestRuntimeSkipOnBothSides: a test skipped at run time (pytest.skip on a
// missing service, a non-strict xfail that failed, an assumption) on base
// too is not newly skipped when head happens to skip it in every run: as
// often as the base's skips make likely, it passes, and the test count
// counts it on head as collected. A test base never skipped, skipped in
// every head run, still blocks (the audit: a quarantined xfail test
// blocked 3 of 8 clean patches, undeclarably).
func TestRuntimeSkipOnBothSides(t *testing.T) {
	ok := TestInput{Name: "c::ok", Base: Tally{5, 0}, Head: runs("PPPPP")}
	for _, tc := range []struct {
		name     string
		test     TestInput
		verdict  Verdict
		decision Decision
	}{
		{"skipped in 3 of 5 base runs", TestInput{Name: "c::svc", Base: Tally{2, 0}, BaseSkipped: 3, HeadSkipped: 5}, VerdictPass, Pass},
		{"xfail: skipped in 4 of 5 base runs, failing", TestInput{Name: "c::xf", Base: Tally{1, 0}, BaseSkipped: 4, HeadSkipped: 5}, VerdictPass, Pass},
		{"skipped in 1 of 20 base runs", TestInput{Name: "c::rare", Base: Tally{19, 0}, BaseSkipped: 1, HeadSkipped: 5}, VerdictBlock, Block},
		{"never skipped on base", TestInput{Name: "c::new", Base: Tally{5, 0}, HeadSkipped: 5}, VerdictBlock, Block},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(Input{Tests: []TestInput{ok, tc.test}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got TestResult
			for _, tr := range res.Tests {
				if tr.Name == tc.test.Name {
					got = tr
				}
			}
			if res.Verdict != tc.verdict || got.Decision != tc.decision || len(res.Properties) > 0 {
				t.Errorf("verdict %s, %s %s (%s), properties %v; want %s, %s", res.Verdict, got.Name, got.Decision, got.Reason, res.Properties, tc.verdict, tc.decision)
			}
		})
	}
}

// TestCollectedCounts: the test-count property counts, per run, the tests
// with results (a test's legs once), and compares the sides' medians
// (CollectedCounts). Names that change from run to run (a hash code in a
// parameterized test's display name) are one test in each run: the
// distinct names rose and fell by chance, and "collected tests drop from 14
// on base to 12 on head" blocked a clean patch (the audit). A deletion or a
// new skip of such a test is one fewer in every head run, and a crashed
// base run lowers its own count only (the review: 8f08a32's count let all
// three pass). With no runs (Collected nil) the distinct names count.
func TestCollectedCounts(t *testing.T) {
	tc := func(name string) string { return `<testcase classname="c" name="` + name + `"/>` }
	skip := func(name string) string { return `<testcase classname="c" name="` + name + `"><skipped/></testcase>` }
	hashes := []string{"6ee12bac", "6ee12bac", "6ee12bac", "1b6d3586", "6ee12bac"}
	var hashBase, hashHead, seedBase, seedHead, seedSkip, crashBase, crashHead, missBase, missHead []string
	for i := range 5 {
		hashBase = append(hashBase, suite(tc("a"), tc("p[Money@"+hashes[i]+"]")))
		hashHead = append(hashHead, suite(tc("a"), tc("p[Money@"+hashes[(i+3)%5]+"]")))
		seedBase = append(seedBase, suite(tc("a"), tc("b"), tc(fmt.Sprintf("prop[seed=%d]", 1000+i))))
		seedHead = append(seedHead, suite(tc("a"), tc("b")))
		seedSkip = append(seedSkip, suite(tc("a"), tc("b"), skip(fmt.Sprintf("prop[seed=%d]", 2000+i))))
		crashHead = append(crashHead, suite(tc("run"), tc("a"), tc("b")))
		missHead = append(missHead, suite(tc("a"), skip("b")))
		if i == 0 {
			crashBase = append(crashBase, suite(tc("run"))) // crashed before its report
			missBase = append(missBase, suite(tc("a")))
			continue
		}
		crashBase = append(crashBase, suite(tc("run"), tc("a"), tc("b"), tc("c")))
		missBase = append(missBase, suite(tc("a"), tc("b")))
	}
	for _, c := range []struct {
		name       string
		base, head []string
		want       Verdict
	}{
		{"hash codes in names, clean", hashBase, hashHead, VerdictPass},
		{"seeded test deleted", seedBase, seedHead, VerdictBlock},
		{"seeded test newly skipped", seedBase, seedSkip, VerdictBlock},
		{"deleted, a base run crashed", crashBase, crashHead, VerdictBlock},
		{"newly skipped, missing from a base run", missBase, missHead, VerdictBlock},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, h := load(t, "base", c.base...), load(t, "head", c.head...)
			res, err := Evaluate(Input{Tests: Join(b, h, nil), Collected: CollectedCounts(b, h, model.DefaultInfra)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.want {
				t.Errorf("verdict %s, want %s\n%s", res.Verdict, c.want, strings.Join(res.Reasons, "\n"))
			}
			if c.want == VerdictPass {
				return
			}
			res, _ = Evaluate(Input{Tests: Join(b, h, nil)}, Options{}) // no runs: the distinct names
			if res.Verdict != c.want {
				t.Errorf("without the runs: verdict %s, want %s\n%s", res.Verdict, c.want, strings.Join(res.Reasons, "\n"))
			}
		})
	}
	// A matrix's legs told apart on base only (c::b failed on one leg) are
	// one test a run on both sides, not twice as many on base.
	doc := func(bFails bool) string {
		if bFails {
			return suite(tc("a"), `<testcase classname="c" name="b"><failure message="flake"/></testcase>`)
		}
		return suite(tc("a"), tc("b"))
	}
	var br, hr []model.Run
	var bl, bd, hl, hd []string
	for i := range 5 {
		b := model.Run{CommitSHA: "base", RunID: fmt.Sprint(1 + i)}
		h := model.Run{CommitSHA: "head", RunID: fmt.Sprint(100 + i)}
		br, bl, bd = append(br, b, b), append(bl, "junit-linux", "junit-windows"), append(bd, doc(false), doc(i == 2))
		hr, hl, hd = append(hr, h, h), append(hl, "junit-linux", "junit-windows"), append(hd, doc(false), doc(false))
	}
	b, h := loadLegs(t, br, bl, bd), loadLegs(t, hr, hl, hd)
	if got := CollectedCounts(b, h, model.DefaultInfra); got == nil || got.Base != got.Head {
		t.Errorf("legs told apart on base only: counts %+v, want equal", got)
	}
}

// TestCountWithRuntimeSkipsAndCrashes: the audit's Go suite (real
// gotestsum runs): 30 tests and one skipped at run time now and then
// (t.Skip, 30% of runs), and a panic that takes 5 tests from a run. Base:
// the skip in run 2, so 31 tests with results in 4 runs (median 31). Head:
// the skip in runs 1, 3 and 4, the panic in runs 2 and 5, so its best run
// had 30: "collected tests drop from 31 on base to 30 on head", a block on
// a clean PR (2 of 38 in the audit). A test base skipped at run time counts
// in the runs that skipped it; one base never skipped, skipped in every
// head run, is still one fewer on head.
func TestCountWithRuntimeSkipsAndCrashes(t *testing.T) {
	doc := func(skip, panicked bool, newSkip bool) string {
		var cases []string
		for i := range 30 {
			switch {
			case panicked && i >= 25:
				continue // killed by the panic before they ran
			case newSkip && i == 0:
				cases = append(cases, `<testcase classname="pkg" name="TestA00"><skipped/></testcase>`)
				continue
			}
			cases = append(cases, fmt.Sprintf(`<testcase classname="pkg" name="TestA%02d"/>`, i))
		}
		if skip {
			cases = append(cases, `<testcase classname="pkg" name="TestService"><skipped message="no service"/></testcase>`)
		} else {
			cases = append(cases, `<testcase classname="pkg" name="TestService"/>`)
		}
		return suite(cases...)
	}
	var base, head, headNewSkip []string
	for i := range 5 {
		base = append(base, doc(i == 1, false, false))
		head = append(head, doc(i == 0 || i == 2 || i == 3, i == 1 || i == 4, false))
		headNewSkip = append(headNewSkip, doc(false, false, true))
	}
	b := load(t, "base", base...)
	for _, c := range []struct {
		name string
		head []string
		want Verdict
	}{
		{"run-time skips and crashes", head, VerdictInconclusive}, // the panicked runs lack 5 tests: evidence missing
		{"a new skip", headNewSkip, VerdictBlock},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := load(t, "head", c.head...)
			res, err := Evaluate(Input{Tests: Join(b, h, nil), Collected: CollectedCounts(b, h, model.DefaultInfra)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			drop := strings.Contains(strings.Join(res.Reasons, "\n"), "collected tests drop")
			if res.Verdict != c.want || drop != (c.want == VerdictBlock) {
				t.Errorf("verdict %s (count drop said: %v), want %s\n%s", res.Verdict, drop, c.want, strings.Join(res.Reasons, "\n"))
			}
		})
	}
}

// TestCountWithVaryingSkippedName: a test whose name varies by run (a seed
// in it) and that is skipped at run time now and then (a property test on a
// service that is sometimes missing) counts in the runs that skipped it on
// both sides, as one with a stable name does. Base's skips counted it under
// base's names only; head skipped it under names base never had, and its
// other runs lost a test to a crash: "collected tests drop" by one, a block
// on a clean PR.
func TestCountWithVaryingSkippedName(t *testing.T) {
	doc := func(seed int, skip, crashed bool) string {
		cases := []string{passA}
		if !crashed {
			cases = append(cases, passB)
		}
		if skip {
			cases = append(cases, fmt.Sprintf(`<testcase classname="c" name="prop[seed=%d]"><skipped message="no service"/></testcase>`, seed))
		} else {
			cases = append(cases, fmt.Sprintf(`<testcase classname="c" name="prop[seed=%d]"/>`, seed))
		}
		return suite(cases...)
	}
	var base, head []string
	for i := range 5 {
		base = append(base, doc(1000+17*i, i == 0, false))
		head = append(head, doc(5000+31*i, i < 2, i >= 2))
	}
	b, h := load(t, "base", base...), load(t, "head", head...)
	if got := CollectedCounts(b, h, model.DefaultInfra); got == nil || got.Base != 3 || got.Head != 3 {
		t.Errorf("counts %+v, want 3 and 3: the varying-named test skipped now and then is one test in the runs that skipped it, on both sides", got)
	}
}

// TestCountDeletedAlwaysSkipped: a test base skipped in every run (a
// t.Skip("see #123") left behind) was never a collected test with results,
// and the per-test check passes its deletion ("not run"); the count, which
// a421e84 made count skips, dropped by one and blocked the clean-up.
func TestCountDeletedAlwaysSkipped(t *testing.T) {
	skipC := `<testcase classname="c" name="c"><skipped message="see #123"/></testcase>`
	var base, head []string
	for range 5 {
		base = append(base, suite(passA, passB, skipC))
		head = append(head, suite(passA, passB))
	}
	b, h := load(t, "base", base...), load(t, "head", head...)
	res, err := Evaluate(Input{Tests: Join(b, h, nil), Collected: CollectedCounts(b, h, model.DefaultInfra)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == VerdictBlock {
		t.Errorf("deleting a test skipped in every base run blocks: %s", strings.Join(res.Reasons, "\n"))
	}
}
