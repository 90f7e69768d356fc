package history

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flakegate/flakegate/pkg/model"
)

// TestJoinRuns: the files of two repetitions, two shards each, that state
// no run (four runs as read), joined by repetition, are the history the
// same files make when each repetition's files state one run id: the
// same cells, signatures and per-run counts, the earliest time of a
// part, and the directory as the run's source. A test in two parts of one
// run (b, in rep-2) is one cell of both attempts. The history given is
// not changed.
func TestJoinRuns(t *testing.T) {
	docs := [][2]string{
		{"rep-1/shard-1.xml", `<testsuite name="s" timestamp="2026-11-01T10:05:00"><testcase classname="k" name="a"/><testcase classname="k" name="b"><failure message="boom"/></testcase></testsuite>`},
		{"rep-1/shard-2.xml", `<testsuite name="s" timestamp="2026-11-01T10:00:00"><testcase classname="k" name="c"/><testcase classname="k" name="d"><skipped/></testcase></testsuite>`},
		{"rep-2/shard-1.xml", `<testsuite name="s" timestamp="2026-11-01T11:00:00"><testcase classname="k" name="a"/><testcase classname="k" name="b"><failure message="bang"/></testcase></testsuite>`},
		{"rep-2/shard-2.xml", `<testsuite name="s" timestamp="2026-11-01T11:01:00"><testcase classname="k" name="c"><failure message="x"/></testcase><testcase classname="k" name="b"/></testsuite>`},
	}
	read := func(runIDs bool) *History {
		var srcs []Source
		for i, d := range docs {
			s := stringSource(d[0], d[1])
			if runIDs {
				s.Run = &model.Run{RunID: []string{"1", "1", "2", "2"}[i]}
			}
			srcs = append(srcs, s)
		}
		h, err := Load(context.Background(), srcs, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	parts, stated := read(false), read(true)
	if len(parts.Runs) != 4 {
		t.Fatalf("%d runs read, want 4 (one a file)", len(parts.Runs))
	}
	var groups []RunGroup
	for _, dir := range []string{"rep-1", "rep-2"} {
		g := RunGroup{Source: dir}
		for i, r := range parts.Runs {
			if r.Source[:5] == dir {
				g.Runs = append(g.Runs, i)
			}
		}
		groups = append(groups, g)
	}
	var before, after bytes.Buffer
	if err := Encode(&before, parts); err != nil {
		t.Fatal(err)
	}
	got := JoinRuns(parts, groups)
	if err := Encode(&after, parts); err != nil || !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Errorf("JoinRuns changed the history it was given (%v)", err)
	}

	type run struct {
		Source                  string
		Time                    time.Time
		Parts                   []string
		Tests, Failed, Repeated int
	}
	var runs []run
	for _, r := range got.Runs {
		runs = append(runs, run{r.Source, r.Time, r.Parts, r.Tests, r.Failed, r.Repeated})
	}
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	want := []run{
		{"rep-1", at("2026-11-01T10:00:00Z"), []string{"rep-1/shard-1.xml", "rep-1/shard-2.xml"}, 3, 1, 0},
		{"rep-2", at("2026-11-01T11:00:00Z"), []string{"rep-2/shard-1.xml", "rep-2/shard-2.xml"}, 3, 1, 1},
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(stated.Tests, got.Tests, cmp.AllowUnexported(Test{}, Sig{}, order{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".first" || p.Last().String() == ".placed" // run keys differ: "src:…" against run ids
	}, cmp.Ignore())); diff != "" {
		t.Errorf("tests, against the same files stating run ids (-want +got):\n%s", diff)
	}
}
