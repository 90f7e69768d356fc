package history

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/model"
)

// loadRuns reads one JUnit document per run.
func loadRuns(t *testing.T, runs []model.Run, docs []string) *History {
	t.Helper()
	var srcs []Source
	for i := range runs {
		doc := docs[i]
		srcs = append(srcs, Source{Name: runs[i].RunID + ".xml", Run: &runs[i],
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(doc))), nil }})
	}
	h, err := Load(context.Background(), srcs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const (
	passDoc = `<testsuite name="s"><testcase classname="c" name="t"/></testsuite>`
	failDoc = `<testsuite name="s"><testcase classname="c" name="t"><failure message="boom"/></testcase></testsuite>`
)

// TestReplaceRereadRun: a run read again after a re-run replaces every
// attempt of it the older history holds, and its failure is counted once,
// in the cells and in the signature; Combine keeps both attempts.
func TestReplaceRereadRun(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	run := func(id string, attempt int, h int) model.Run {
		return model.Run{CommitSHA: "sha" + id, RunID: id, Attempt: attempt, Time: t0.Add(time.Duration(h) * time.Hour)}
	}
	older := loadRuns(t, []model.Run{run("1", 1, 0), run("2", 1, 1), run("3", 1, 2)}, []string{passDoc, failDoc, passDoc})
	// Run 2 re-run: its attempt-1 document, naming no attempt, is now
	// filed under attempt 2.
	newer := loadRuns(t, []model.Run{run("2", 2, 1)}, []string{failDoc})

	got := Replace(older, newer, time.Time{})
	want := loadRuns(t, []model.Run{run("1", 1, 0), run("2", 2, 1), run("3", 1, 2)}, []string{passDoc, failDoc, passDoc})
	if diff := cmp.Diff(want, got, historyCmp); diff != "" {
		t.Errorf("Replace (-want +got):\n%s", diff)
	}

	doubled, _ := Combine(older, newer, time.Time{})
	if len(doubled.Runs) != 4 {
		t.Errorf("Combine: %d runs, want 4 (it joins by run key, attempts apart)", len(doubled.Runs))
	}
}

// TestFilterCountsKeptFailures: a signature counts the failures of the
// runs kept, not of those filtered out.
func TestFilterCountsKeptFailures(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var runs []model.Run
	for i, id := range []string{"1", "2", "3"} {
		runs = append(runs, model.Run{CommitSHA: "sha" + id, RunID: id, Attempt: 1, Time: t0.Add(time.Duration(i) * 24 * time.Hour)})
	}
	h := loadRuns(t, runs, []string{failDoc, failDoc, passDoc})
	got, _ := Combine(h, nil, t0.Add(24*time.Hour))
	want := loadRuns(t, runs[1:], []string{failDoc, passDoc})
	// The signature's sample stays the earliest read, of a run now left
	// out: its message is one of the signature's all the same.
	if diff := cmp.Diff(want, got, historyCmp, cmpopts.IgnoreFields(Sig{}, "first")); diff != "" {
		t.Errorf("Combine since day 2 (-want +got):\n%s", diff)
	}
	if n := got.Tests[0].Sigs[0].Count; n != 1 {
		t.Errorf("signature count %d, want 1", n)
	}
	// Every failing run dropped: no signature is left.
	got = Filter(h, func(r model.Run) bool { return r.RunID == "3" })
	if len(got.Tests) != 1 || len(got.Tests[0].Sigs) != 0 {
		t.Errorf("only the passing run kept: test %+v, want no signature", got.Tests)
	}
}

// TestCarryOrigin: a run's workflow and whether it was read in part are
// carried; a partial run is not among the Keys, so it is read again; a
// file written before these were carried reads as complete runs of no
// recorded workflow.
func TestCarryOrigin(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	h := loadRuns(t, []model.Run{{CommitSHA: "a", RunID: "1", Attempt: 1, Time: t0}, {CommitSHA: "b", RunID: "2", Attempt: 1, Time: t0.Add(time.Hour)}},
		[]string{passDoc, failDoc})
	h.Runs[0].WorkflowFile, h.Runs[0].WorkflowID = "ci.yml", 42
	h.Runs[1].WorkflowID, h.Runs[1].Partial = 43, true
	got := roundTrip(t, h)
	if diff := cmp.Diff(h, got, historyCmp); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"a|1#1": true}, got.Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}

	old := `{"version":1,"runs":[{"c":"a","r":"1","a":1,"t":"2026-11-01T00:00:00Z","w":"CI"}],"tests":[{"id":"c::t","c":[0,1,0,0,0]}]}`
	oh, err := Decode(bytes.NewReader(gzipped(old)))
	if err != nil {
		t.Fatal(err)
	}
	if r := oh.Runs[0]; r.WorkflowFile != "" || r.WorkflowID != 0 || r.Partial {
		t.Errorf("an older file's run: %+v, want no workflow file or id, not partial", r)
	}
	if !oh.Keys()["a|1#1"] {
		t.Errorf("an older file's run is not among the Keys")
	}
}
