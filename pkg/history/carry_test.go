package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/synth"
)

func synthHistory(t *testing.T, commits int, seed uint64) *History {
	t.Helper()
	spec := synth.Spec{Commits: commits, RunsPerCommit: 2, Tests: 40, Seed: seed, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Behaviors: map[int]synth.Behavior{1: {Kind: synth.Flaky, P: 0.4}, 2: {Kind: synth.Retried, P: 0.5}}}
	h, err := Load(context.Background(), memSources(t, spec), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var historyCmp = cmp.Options{cmp.AllowUnexported(Sig{}, order{}, Test{}), cmpopts.IgnoreFields(History{}, "Totals", "Skipped"), cmpopts.EquateEmpty()}

// roundTrip is h written by Encode and read back by Decode. Encode's
// bytes are checked against encodeWhole's.
func roundTrip(t testing.TB, h *History) *History {
	t.Helper()
	var buf, whole bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	if err := encodeWhole(&whole, h); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), whole.Bytes()) {
		t.Fatalf("Encode wrote %d bytes, not the %d of the whole value encoded at once", buf.Len(), whole.Len())
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// encodeWhole is Encode as it was before it streamed (issue #12): the
// carried value of every test built first, then encoded at once. Encode
// must write its bytes.
func encodeWhole(w io.Writer, h *History) error {
	c := carried{Version: FormatVersion, Runs: make([]carriedRun, len(h.Runs)), Tests: make([]carriedTest, len(h.Tests))}
	for i, r := range h.Runs {
		c.Runs[i] = carriedRun{Commit: r.CommitSHA, RunID: r.RunID, Attempt: r.Attempt, Time: r.Time,
			Workflow: r.Workflow, Branch: r.Branch, Event: r.Event, Source: r.Source,
			WorkflowFile: r.WorkflowFile, WorkflowID: r.WorkflowID, Partial: r.Partial}
	}
	for i, t := range h.Tests {
		ct := carriedTest{ID: t.ID, File: t.File, Line: t.Line, PlacedAt: t.placed.time, PlacedKey: t.placed.key, Other: t.OtherFailures,
			Cells: make(cellNumbers, 0, 5*len(t.Cells))}
		for _, cl := range t.Cells {
			ct.Cells = append(ct.Cells, cl.Run, int32(cl.Pass), int32(cl.Fail), int32(cl.Skip), int32(cl.Sig))
		}
		for _, s := range t.Sigs {
			ct.Sigs = append(ct.Sigs, carriedSig{Hash: s.Hash, Count: s.Count, Message: s.Message, Time: s.first.time, Key: s.first.key})
		}
		c.Tests[i] = ct
	}
	zw := gzip.NewWriter(w)
	if err := json.NewEncoder(zw).Encode(&c); err != nil {
		return err
	}
	return zw.Close()
}

// TestEncodeStreams: Encode, which writes a test at a time, writes the
// bytes of the whole value encoded at once, for histories of one test and
// of many (JSON of megabytes, over many of gzip's windows), with names and
// messages that JSON escapes, a test with no cells, and none at all.
func TestEncodeStreams(t *testing.T) {
	odd := denseHistory(3, 4)
	odd.Runs[0].Source = "run <1> & \"two\"\n\u2028 \xff"
	odd.Runs[1].Time = time.Time{}
	odd.Runs[2].Partial, odd.Runs[2].WorkflowID, odd.Runs[2].WorkflowFile = true, 7, "ci.yml"
	odd.Tests[0].ID, odd.Tests[0].File, odd.Tests[0].Line = "a<b>::c&d \xfe\u2029", "tests/<x>.py", 12
	odd.Tests[0].placed = order{time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)), key: "k&"}
	odd.Tests[1].Sigs[0].Message, odd.Tests[1].Sigs[0].first = "<html>\t\x00", order{time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), key: "r"}
	odd.Tests[1].OtherFailures = 3
	odd.Tests[2].Cells = nil
	for _, tc := range []struct {
		name string
		h    *History
	}{
		{"empty", &History{}},
		{"runs and no tests", &History{Runs: denseHistory(1, 3).Runs}},
		{"a first test with no cells", &History{Runs: denseHistory(1, 3).Runs, Tests: []*Test{{ID: "k::t"}, {ID: "k::u", Cells: []Cell{{Run: 1, Pass: 1}}}}}},
		{"odd strings", odd},
		{"one test", denseHistory(1, 5)},
		{"dense, 200 × 600", denseHistory(200, 600)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want bytes.Buffer
			if err := Encode(&got, tc.h); err != nil {
				t.Fatal(err)
			}
			if err := encodeWhole(&want, tc.h); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("Encode wrote %d bytes, not the %d of the whole value encoded at once", got.Len(), want.Len())
			}
		})
	}
}

// gzipped is s compressed as Encode compresses.
func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestCarryRoundTrip(t *testing.T) {
	h := synthHistory(t, 12, 5)
	if diff := cmp.Diff(h, roundTrip(t, h), historyCmp); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestCombineTakesOnlyNewRuns(t *testing.T) {
	full := synthHistory(t, 12, 9)
	// Split the same history: older has commits 0-7, newer 5-11.
	older, newer := filterRuns(full, 0, 16), filterRuns(full, 10, 24)
	got, err := Combine(older, newer, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, got, historyCmp, cmpopts.IgnoreFields(Sig{}, "Count")); diff != "" {
		t.Errorf("combined (-want +got):\n%s", diff)
	}
	// Pruning by time drops the old runs.
	since := full.Runs[10].Time
	pruned, _ := Combine(older, newer, since)
	if len(pruned.Runs) != 14 {
		t.Errorf("pruned runs = %d, want 14", len(pruned.Runs))
	}
	if keys := newer.Keys(); len(keys) != 14 {
		t.Errorf("keys = %d", len(keys))
	}
}

// filterRuns keeps runs [from, to) of h, as a history that saw only those.
func filterRuns(h *History, from, to int) *History {
	out := &History{Runs: append([]Run(nil), h.Runs[from:to]...)}
	for _, t := range h.Tests {
		nt := &Test{ID: t.ID, File: t.File, Line: t.Line, placed: t.placed, Sigs: append([]Sig(nil), t.Sigs...)}
		for _, c := range t.Cells {
			if int(c.Run) >= from && int(c.Run) < to {
				c.Run -= int32(from)
				nt.Cells = append(nt.Cells, c)
			}
		}
		out.Tests = append(out.Tests, nt)
	}
	return out
}

func TestDecodeRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		in   []byte
		want string
	}{
		"not gzip":        {[]byte("{}"), "not gzip"},
		"bad json":        {gzipped("{"), "carried history"},
		"version":         {gzipped(`{"version":7}`), "version 7"},
		"bad cell":        {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[5,1,0,0,0]}]}`), "out of range"},
		"not fives":       {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,1]}]}`), "fives"},
		"bad sig ix":      {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,1,0,0,3]}]}`), "out of range"},
		"run after":       {gzipped(`{"tests":[{"id":"x","c":[1,1,0,0,0]}],"runs":[{}],"version":1}`), "out of range"},
		"negative":        {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,-1,0,0,0]}]}`), "out of range"},
		"fraction":        {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,1.5,0,0,0]}]}`), "not a 32-bit integer"},
		"exponent":        {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,1e3,0,0,0]}]}`), "not a 32-bit integer"},
		"string":          {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,"1",0,0,0]}]}`), "not a 32-bit integer"},
		"too big":         {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,2147483648,0,0,0]}]}`), "not a 32-bit integer"},
		"far too big":     {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,99999999999999999999999,0,0,0]}]}`), "not a 32-bit integer"},
		"far too small":   {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,-99999999999,0,0,0]}]}`), "not a 32-bit integer"},
		"cells obj":       {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":{}}]}`), "not an array"},
		"tests obj":       {gzipped(`{"version":1,"runs":[{}],"tests":{}}`), "not an array"},
		"not object":      {gzipped(`[1]`), "not an object"},
		"version 2 first": {gzipped(`{"version":2,"runs":{"new":"shape"}}`), "version 2"},
		"no version":      {gzipped(`{"runs":[]}`), "version 0"},
		"cut":             {gzipped(`{"version":1,"runs":[{}],"tests":[{"id":"x","c":[0,1`), "unexpected EOF"},
		"bad gzip":        {gzipped(`{"version":1,"runs":[],"tests":[]}`)[:20], "carried history"},
	} {
		_, err := Decode(bytes.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
		// Only a higher version is a newer flakegate's, which the report
		// refuses to replace; the rest are unreadable.
		var ve *VersionError
		if newer := errors.As(err, &ve) && ve.Newer(); newer != (name == "version" || name == "version 2 first") {
			t.Errorf("%s: %v: newer version %v", name, err, newer)
		}
	}
}

// TestStamped: runs with no time get the time given, in order among the
// others again with their counts; h is not changed. Before, such runs were
// carried for good (Combine keeps a run with no time whatever since).
func TestStamped(t *testing.T) {
	h := synthHistory(t, 4, 3)
	before := roundTrip(t, h)
	if Stamped(h, time.Now()) != h {
		t.Error("a history with every run timed is not returned as it is")
	}
	for i := range h.Runs[:3] {
		h.Runs[i].Time = time.Time{}
	}
	untimed := roundTrip(t, h)
	at := h.Runs[len(h.Runs)-1].Time.Add(time.Hour)
	got := Stamped(untimed, at)
	if diff := cmp.Diff(roundTrip(t, h), untimed, historyCmp); diff != "" {
		t.Errorf("Stamped changed its input (-want +got):\n%s", diff)
	}
	if len(got.Runs) != len(before.Runs) {
		t.Fatalf("%d runs, want %d", len(got.Runs), len(before.Runs))
	}
	for i, r := range got.Runs {
		if r.Time.IsZero() || i > 0 && runLess(&got.Runs[i-1], &r) > 0 {
			t.Errorf("run %d (%s) at %v: not stamped, or out of order", i, RunKey(r.Run), r.Time)
		}
	}
	for i, r := range got.Runs[len(got.Runs)-3:] {
		if !r.Time.Equal(at) {
			t.Errorf("the stamped runs are not last: run %d at %v", i, r.Time)
		}
	}
	// The counts of each run are as they were.
	counts := map[string][3]int{}
	for _, r := range before.Runs {
		counts[RunKey(r.Run)] = [3]int{r.Tests, r.Failed, r.Repeated}
	}
	for _, r := range got.Runs {
		if c := counts[RunKey(r.Run)]; c != [3]int{r.Tests, r.Failed, r.Repeated} {
			t.Errorf("run %s counts %d/%d/%d, want %v", RunKey(r.Run), r.Tests, r.Failed, r.Repeated, c)
		}
	}
	// Carried a year on, they leave the history as the runs before them.
	if later := Replace(got, nil, at.Add(time.Minute)); len(later.Runs) != 0 {
		t.Errorf("after the stamp, %d runs kept, want 0", len(later.Runs))
	}
}

// TestCombineNil: a missing history on either side counts as empty. The
// gate combines the last report's carried history with base-branch runs
// that may not exist (it once failed with "combine: no history").
func TestCombineNil(t *testing.T) {
	h := synthHistory(t, 6, 3)
	since := h.Runs[4].Time
	for _, tc := range []struct {
		name          string
		older, newer  *History
		since         time.Time
		wantRuns      int
		wantSameTests bool
	}{
		{name: "newer nil", older: h, wantRuns: len(h.Runs), wantSameTests: true},
		{name: "older nil", newer: h, wantRuns: len(h.Runs), wantSameTests: true},
		{name: "newer nil, pruned", older: h, since: since, wantRuns: len(h.Runs) - 4},
		{name: "older nil, pruned", newer: h, since: since, wantRuns: len(h.Runs) - 4},
		{name: "both nil", wantRuns: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Combine(tc.older, tc.newer, tc.since)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("Combine returned nil")
			}
			if len(got.Runs) != tc.wantRuns {
				t.Errorf("runs = %d, want %d", len(got.Runs), tc.wantRuns)
			}
			if tc.wantSameTests {
				if diff := cmp.Diff(h, got, historyCmp); diff != "" {
					t.Errorf("combined with nil (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestFilter(t *testing.T) {
	h := synthHistory(t, 6, 4)
	drop := h.Runs[0].CommitSHA
	got := Filter(h, func(r model.Run) bool { return r.CommitSHA != drop })
	if n := len(h.Runs) - len(got.Runs); n != 2 { // two runs per commit
		t.Errorf("dropped %d runs, want the 2 of commit %s", n, drop)
	}
	for _, r := range got.Runs {
		if r.CommitSHA == drop {
			t.Errorf("run %s of the dropped commit kept", r.RunID)
		}
	}
	for _, tt := range got.Tests {
		for _, c := range tt.Cells {
			if int(c.Run) >= len(got.Runs) {
				t.Fatalf("test %s: cell points at run %d of %d", tt.ID, c.Run, len(got.Runs))
			}
		}
	}
	if len(h.Runs) != 12 {
		t.Errorf("Filter changed its input: %d runs", len(h.Runs))
	}
	if empty := Filter(nil, func(model.Run) bool { return true }); empty == nil || len(empty.Runs) != 0 {
		t.Errorf("Filter(nil) = %+v", empty)
	}
}

// TestCombineKeepsTheEarlierPlace: a test that moved keeps, in a combined
// history, the place a history read at once gives it (Test.File): that of
// the carried, earlier runs, also from a carried file written before
// places were carried.
func TestCombineKeepsTheEarlierPlace(t *testing.T) {
	doc := func(day int, line int) Source {
		return stringSource(fmt.Sprintf("d%d.xml", day), fmt.Sprintf(`<testsuite name="s" timestamp="2026-11-%02dT00:00:00">`+
			`<properties><property name="commit_sha" value="c%d"/></properties><testcase classname="k" name="t" file="k.py" line="%d"/></testsuite>`, day, day, line))
	}
	load := func(srcs ...Source) *History {
		h, err := Load(context.Background(), srcs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	older, newer := load(doc(1, 4), doc(2, 4)), load(doc(5, 3))
	carried := roundTrip(t, older)
	unplaced, err := Decode(bytes.NewReader(gzipped(`{"version":1,"runs":[{"c":"c1","t":"2026-11-01T00:00:00Z"}],"tests":[{"id":"k::t","f":"k.py","l":4,"c":[0,1,0,0,0]}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*History{"carried": carried, "carried before places were": unplaced} {
		h, err := Combine(o, newer, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s:%d", h.Tests[0].File, h.Tests[0].Line); got != "k.py:4" {
			t.Errorf("%s: combined place %s, want k.py:4 (read at once: %s:%d)", name, got, load(doc(1, 4), doc(2, 4), doc(5, 3)).Tests[0].File, load(doc(1, 4), doc(2, 4), doc(5, 3)).Tests[0].Line)
		}
	}
}
