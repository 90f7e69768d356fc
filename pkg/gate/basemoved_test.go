package gate

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
)

// loadRuns loads one document per run, each with the run's properties.
func loadRuns(t *testing.T, runs []model.Run, docs []string) *history.History {
	t.Helper()
	return loadLegs(t, runs, make([]string, len(docs)), docs)
}

// TestRemovedOnTheBaseBranch: a pull request's base.sha is the base
// branch's tip when it was opened, and goes stale. The base side read
// from that commit's CI runs holds test_gone; the base branch dropped it
// since (none of its later runs of the same workflow and event hold it),
// and the head, which took the branch in, lacks it too. That removal is
// the branch's, not the patch's: no block, no test-count drop, no red test
// removed. Later runs of another workflow, earlier runs, and later runs
// that collected too little to say (a crash) are no such evidence.
func TestRemovedOnTheBaseBranch(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	doc := func(gone string) string {
		cases := []string{`<testcase classname="c" name="a"/>`, `<testcase classname="c" name="b"/>`}
		switch gone {
		case "pass":
			cases = append(cases, `<testcase classname="c" name="gone"/>`)
		case "fail":
			cases = append(cases, `<testcase classname="c" name="gone"><failure message="red"/></testcase>`)
		}
		return suite(cases...)
	}
	run := func(sha string, id int, at time.Time, workflow string) model.Run {
		return model.Run{CommitSHA: sha, RunID: strconv.Itoa(id), Time: at, Workflow: workflow, Event: "push", Branch: "main"}
	}
	base := func(gone string) *history.History {
		return loadRuns(t, []model.Run{run("base", 1, t0, "ci.yml")}, []string{doc(gone)})
	}
	var headRuns []model.Run
	var headDocs []string
	for i := range 3 {
		r := run("head", 100+i, t0.Add(time.Duration(48+i)*time.Hour), "ci.yml")
		r.Event = "pull_request"
		headRuns, headDocs = append(headRuns, r), append(headDocs, doc(""))
	}
	head := loadRuns(t, headRuns, headDocs)
	hist := func(from time.Duration, workflow, d string) *history.History {
		var runs []model.Run
		var docs []string
		for i := range 6 {
			runs = append(runs, run("main"+strconv.Itoa(i), 10+i, t0.Add(from+time.Duration(i)*time.Hour), workflow))
			docs = append(docs, d)
		}
		return loadRuns(t, runs, docs)
	}
	crashed := suite(`<testcase classname="c" name="a"/>`)
	// Local files (gate --history) name no workflow: no evidence.
	local := loadRuns(t, []model.Run{run("base", 1, t0, "")}, []string{doc("pass")})
	if res, _ := Evaluate(Input{Tests: Join(local, head, hist(time.Hour, "", doc("")))}, Options{}); res.Verdict != VerdictBlock {
		t.Errorf("local files: verdict %s, want block\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
	}
	for _, tc := range []struct {
		name    string
		base    string
		hist    *history.History
		verdict Verdict
		bucket  Bucket
	}{
		{"dropped on main since", "pass", hist(time.Hour, "ci.yml", doc("")), VerdictPass, GoneFromBase},
		{"red, dropped on main since", "fail", hist(time.Hour, "ci.yml", doc("")), VerdictPass, GoneFromBase},
		{"still on main", "pass", hist(time.Hour, "ci.yml", doc("pass")), VerdictBlock, Removed},
		{"only earlier runs lack it", "pass", hist(-12*time.Hour, "ci.yml", doc("")), VerdictBlock, Removed},
		{"later runs of another workflow", "pass", hist(time.Hour, "nightly.yml", doc("")), VerdictBlock, Removed},
		{"later runs that crashed", "pass", hist(time.Hour, "ci.yml", crashed), VerdictBlock, Removed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(Input{Tests: Join(base(tc.base), head, tc.hist)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got TestResult
			for _, tr := range res.Tests {
				if tr.Name == "c::gone" {
					got = tr
				}
			}
			if res.Verdict != tc.verdict || got.Bucket != tc.bucket {
				t.Errorf("verdict %s, c::gone %q; want %s, %q\n%s\nviolations %v", res.Verdict, got.Bucket, tc.verdict, tc.bucket, strings.Join(res.Reasons, "\n"), res.Properties)
			}
		})
	}
}

// TestDeletedIsNotRemovedOnTheBaseBranch: the patch deletes a test, and
// main never did; the base branch's later runs lack it for other reasons,
// which are no evidence that the branch dropped it (the review's cases,
// each with two later runs of two commits). The deletion blocks.
func TestDeletedIsNotRemovedOnTheBaseBranch(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	cases := func(front, back int, gone bool) string {
		var cs []string
		for i := range front {
			cs = append(cs, fmt.Sprintf(`<testcase classname="front" name="f%02d"/>`, i))
		}
		for i := range back {
			cs = append(cs, fmt.Sprintf(`<testcase classname="back" name="b%02d"/>`, i))
		}
		if gone {
			cs = append(cs, `<testcase classname="back" name="gone"/>`)
		}
		return suite(cs...)
	}
	run := func(sha string, id int, at time.Time) model.Run {
		return model.Run{CommitSHA: sha, RunID: strconv.Itoa(id), Time: at, Workflow: "ci.yml", Event: "push", Branch: "main"}
	}
	base := loadRuns(t, []model.Run{run("base", 1, t0)}, []string{cases(6, 4, true)})
	base.Runs[0].WorkflowID = 111
	var hr []model.Run
	var hd []string
	for i := range 5 {
		r := run("head", 100+i, t0.Add(time.Duration(4+i)*time.Hour))
		r.Event, r.Branch = "pull_request", "feature"
		hr, hd = append(hr, r), append(hd, cases(6, 4, false)) // the patch deletes back::gone
	}
	head := loadRuns(t, hr, hd)
	later := func(doc string, edit func(*model.Run, *history.Run)) *history.History {
		rs := []model.Run{run("main1", 10, t0.Add(time.Hour)), run("main2", 11, t0.Add(2*time.Hour))}
		for i := range rs {
			edit(&rs[i], nil)
		}
		h := loadRuns(t, rs, []string{doc, doc})
		for i := range h.Runs {
			h.Runs[i].WorkflowID = 111
			edit(nil, &h.Runs[i])
		}
		return h
	}
	none := func(*model.Run, *history.Run) {}
	for _, tc := range []struct {
		name string
		hist *history.History
	}{
		// main's later pushes touched only the frontend: a job-level paths
		// filter skipped the backend job (or it failed to build).
		{"later runs without the backend job", later(cases(6, 0, false), none)},
		{"later runs read in part", later(cases(6, 4, false), func(_ *model.Run, r *history.Run) {
			if r != nil {
				r.Partial = true
			}
		})},
		{"later runs of another workflow of the same name", later(cases(6, 4, false), func(_ *model.Run, r *history.Run) {
			if r != nil {
				r.WorkflowID = 222
			}
		})},
		// Re-runs of older main commits, which never had the test, start
		// after the base run.
		{"re-runs of older commits", later(cases(6, 4, false), func(m *model.Run, _ *history.Run) {
			if m != nil {
				m.Attempt = 2
			}
		})},
		{"one later commit", loadRuns(t, []model.Run{run("main1", 10, t0.Add(time.Hour)), run("main1", 11, t0.Add(2*time.Hour))}, []string{cases(6, 4, false), cases(6, 4, false)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(Input{Tests: Join(base, head, tc.hist)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got TestResult
			for _, tr := range res.Tests {
				if tr.Name == "back::gone" {
					got = tr
				}
			}
			if res.Verdict != VerdictBlock || got.Bucket != Removed {
				t.Errorf("verdict %s, back::gone %q (%s); want block, %q\n%s", res.Verdict, got.Bucket, got.Reason, Removed, strings.Join(res.Reasons, "\n"))
			}
		})
	}
	// The control: two later first attempts of the backend workflow, read
	// whole, that ran the backend's other tests and not back::gone.
	res, err := Evaluate(Input{Tests: Join(base, head, later(cases(6, 4, false), none))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictPass {
		t.Errorf("verdict %s, want pass: main dropped back::gone\n%s", res.Verdict, strings.Join(res.Reasons, "\n"))
	}
}

// loadLegs loads, per run, one document per leg.
func loadLegs(t *testing.T, runs []model.Run, legs []string, docs []string) *history.History {
	t.Helper()
	var srcs []history.Source
	for i, doc := range docs {
		r := runs[i]
		srcs = append(srcs, history.Source{
			Name: r.CommitSHA + "-" + r.RunID + "-" + legs[i],
			Leg:  legs[i],
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil },
			Run:  &r,
		})
	}
	h, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil || len(h.Skipped) > 0 {
		t.Fatalf("load: %v %+v", err, h.Skipped)
	}
	return h
}

// TestRemovedOnTheBaseBranchAcrossLegs: a two-leg matrix; the patch deletes
// c::gone, which main's later runs still run. The sides tell the legs apart
// differently (c::b failed once on windows in the base runs, so base names
// c::gone [junit-linux]; main's legs agree, c::gone; or the artifacts are
// named by run, junit-linux-<id>): the names are compared without their
// legs, and the deletion blocks (the review: it passed).
func TestRemovedOnTheBaseBranchAcrossLegs(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	doc := func(gone, bFails bool) string {
		cs := []string{`<testcase classname="c" name="a"/>`}
		if bFails {
			cs = append(cs, `<testcase classname="c" name="b"><failure message="flake"/></testcase>`)
		} else {
			cs = append(cs, `<testcase classname="c" name="b"/>`)
		}
		if gone {
			cs = append(cs, `<testcase classname="c" name="gone"/>`)
		}
		return suite(cs...)
	}
	run := func(sha string, id int, at time.Time, ev string) model.Run {
		return model.Run{CommitSHA: sha, RunID: strconv.Itoa(id), Time: at, Workflow: "ci.yml", Event: ev, Branch: "main"}
	}
	for _, numbered := range []bool{false, true} {
		leg := func(os string, id int) string {
			if numbered {
				return fmt.Sprintf("junit-%s-%d", os, id)
			}
			return "junit-" + os
		}
		side := func(sha string, first int, at time.Time, ev string, n int, gone func(i int) bool, bFails func(i int) bool) *history.History {
			var rs []model.Run
			var ls, ds []string
			for i := range n {
				r := run(sha+strconv.Itoa(i), first+i, at.Add(time.Duration(i)*time.Minute), ev)
				if sha == "base" || sha == "head" {
					r.CommitSHA = sha
				}
				rs, ls, ds = append(rs, r, r), append(ls, leg("linux", first+i), leg("windows", first+i)), append(ds, doc(gone(i), false), doc(gone(i), bFails(i)))
			}
			return loadLegs(t, rs, ls, ds)
		}
		yes, no := func(int) bool { return true }, func(int) bool { return false }
		base := side("base", 1, t0, "push", 3, yes, func(i int) bool { return i == 1 })
		head := side("head", 100, t0.Add(48*time.Hour), "pull_request", 3, no, no)
		hist := side("main", 10, t0.Add(time.Hour), "push", 2, yes, no)
		res, err := Evaluate(Input{Tests: Join(base, head, hist)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != VerdictBlock {
			t.Errorf("legs numbered %t: verdict %s, want block (main's later runs still ran c::gone)\n%s", numbered, res.Verdict, strings.Join(res.Reasons, "\n"))
		}
	}
}
