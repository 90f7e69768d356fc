package gate

import (
	"context"
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
	var srcs []history.Source
	for i, doc := range docs {
		r := runs[i]
		srcs = append(srcs, history.Source{
			Name: r.CommitSHA + "-" + r.RunID,
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
