package gate

import (
	"strings"
	"testing"
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

// TestCountStableNames: names that change from run to run (a hash code in
// a parameterized test's display name, a seed in a pytest id) are counted
// by neither side's test count, which compares the tests each side
// collected in every run: the distinct names rose and fell by chance, and
// "collected tests drop from 14 on base to 12 on head" blocked a clean
// patch (the audit). A test gone from every head run still counts.
func TestCountStableNames(t *testing.T) {
	stable := TestInput{Name: "c::a", Base: Tally{5, 0}, Head: runs("PPPPP")}
	unstable := []TestInput{
		{Name: "c::p[Money@6ee12bac]", Base: Tally{3, 0}, BaseMissing: 2, Head: runs("PPPP"), HeadMissing: 1},
		{Name: "c::p[Money@1b6d3586]", Base: Tally{2, 0}, BaseMissing: 3},
		{Name: "c::p[Money@4554617c]", Base: Tally{1, 0}, BaseMissing: 4},
		{Name: "c::p[Money@74a14482]", Head: runs("P"), HeadMissing: 4},
	}
	res, err := Evaluate(Input{Tests: append([]TestInput{stable}, unstable...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictPass || len(res.Properties) > 0 {
		t.Errorf("verdict %s, properties %v; want a pass\n%s", res.Verdict, res.Properties, strings.Join(res.Reasons, "\n"))
	}
	gone := TestInput{Name: "c::b", Base: Tally{5, 0}}
	res, _ = Evaluate(Input{Tests: append([]TestInput{stable, gone}, unstable...), PRBody: "Test-Changes: remove c::b"}, Options{})
	if res.Verdict != VerdictPass {
		t.Errorf("declared removal: verdict %s", res.Verdict)
	}
	// A stable test missing from a head run (a crashed shard) is evidence
	// missing, not a drop in the count.
	crashed := TestInput{Name: "c::s", Base: Tally{5, 0}, Head: runs("PPPP"), HeadMissing: 1}
	res, _ = Evaluate(Input{Tests: append([]TestInput{stable, crashed}, unstable...)}, Options{})
	if len(res.Properties) > 0 {
		t.Errorf("a crashed head shard counts as a drop: %v", res.Properties)
	}
	res, _ = Evaluate(Input{Tests: append([]TestInput{stable, gone}, unstable...)}, Options{})
	if !strings.Contains(strings.Join(res.Reasons, "\n"), "test-count: collected tests drop from 2 on base to 1 on head") {
		t.Errorf("the removal is not counted:\n%s", strings.Join(res.Reasons, "\n"))
	}
}
