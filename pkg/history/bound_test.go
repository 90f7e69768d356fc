package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flakegate/flakegate/pkg/model"
)

// sizedHistory is a history whose runs, oldest first, hold the given
// numbers of cells. Test k has a cell in every run with more than k cells;
// it fails in run 0 with signature "old" and in the last run with "new".
func sizedHistory(perRun ...int) *History {
	h := &History{Skipped: []Skipped{{Path: "x.xml", Error: "not JUnit"}}, Legs: LegBounds{FoldedRuns: 1}}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	most := 0
	for r, n := range perRun {
		h.Runs = append(h.Runs, Run{Run: model.Run{CommitSHA: fmt.Sprintf("c%d", r), RunID: fmt.Sprint(100 + r), Time: start.Add(time.Duration(r) * time.Hour)}})
		most = max(most, n)
	}
	for k := range most {
		t := &Test{ID: fmt.Sprintf("k::t%d", k), Sigs: []Sig{{Hash: "sha256:old", Count: 1, Message: "old"}, {Hash: "sha256:new", Count: 1, Message: "new"}}}
		for r, n := range perRun {
			if n <= k {
				continue
			}
			c := Cell{Run: int32(r), Pass: 1}
			switch r {
			case 0:
				c = Cell{Run: int32(r), Fail: 1, Sig: 1}
			case len(perRun) - 1:
				c = Cell{Run: int32(r), Fail: 1, Pass: 1, Sig: 2}
			}
			t.Cells = append(t.Cells, c)
		}
		// Counts as many failures as the test's cells have.
		t.Sigs[0].Count = int(t.Cells[0].Fail)
		t.Sigs[1].Count = int(t.Cells[len(t.Cells)-1].Fail)
		if t.Sigs[0].Count == 0 {
			t.Sigs = t.Sigs[1:]
			for i := range t.Cells {
				if t.Cells[i].Sig > 0 {
					t.Cells[i].Sig--
				}
			}
		}
		h.Tests = append(h.Tests, t)
	}
	h.finalize()
	return h
}

func runIDs(h *History) []string {
	var ids []string
	for _, r := range h.Runs {
		ids = append(ids, r.RunID)
	}
	return ids
}

// TestBound: the newest runs whose cells fit are kept, whole, and no
// older run after the first that does not fit.
func TestBound(t *testing.T) {
	per := []int{3, 1, 4, 1, 5, 2} // 16 cells
	for _, tc := range []struct {
		name     string
		max      int
		wantRuns []string
	}{
		{name: "all fit", max: 16, wantRuns: []string{"100", "101", "102", "103", "104", "105"}},
		{name: "far under", max: 1000, wantRuns: []string{"100", "101", "102", "103", "104", "105"}},
		{name: "oldest dropped", max: 15, wantRuns: []string{"101", "102", "103", "104", "105"}},
		{name: "exactly", max: 13, wantRuns: []string{"101", "102", "103", "104", "105"}},
		{name: "one short", max: 12, wantRuns: []string{"102", "103", "104", "105"}},
		{name: "two newest", max: 7, wantRuns: []string{"104", "105"}},
		// Run 103 (1 cell) would fit after 105, but 104 does not: the
		// runs kept are the newest, never a gap.
		{name: "no gap", max: 6, wantRuns: []string{"105"}},
		{name: "newest too large", max: 1, wantRuns: nil},
		{name: "zero", max: 0, wantRuns: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sizedHistory(per...)
			got, dropped := Bound(h, tc.max)
			if diff := cmp.Diff(tc.wantRuns, runIDs(got)); diff != "" {
				t.Errorf("runs kept (-want +got):\n%s", diff)
			}
			if dropped != len(per)-len(tc.wantRuns) {
				t.Errorf("dropped = %d, want %d", dropped, len(per)-len(tc.wantRuns))
			}
			if got.Cells() > tc.max {
				t.Errorf("cells = %d, over %d", got.Cells(), tc.max)
			}
			if dropped == 0 && got != h {
				t.Error("nothing dropped, but h was copied")
			}
			if len(h.Runs) != len(per) || h.Cells() != 16 {
				t.Errorf("Bound changed h: %d runs, %d cells", len(h.Runs), h.Cells())
			}
			// What is kept is what FilterRuns keeps of the same runs.
			keep := map[string]bool{}
			for _, id := range tc.wantRuns {
				keep[id] = true
			}
			want := FilterRuns(h, func(r Run) bool { return keep[r.RunID] })
			if diff := cmp.Diff(want, got, historyCmp); diff != "" {
				t.Errorf("bounded (-FilterRuns +Bound):\n%s", diff)
			}
			if diff := cmp.Diff(h.Skipped, got.Skipped); diff != "" || got.Legs != h.Legs {
				t.Errorf("skipped inputs and leg bounds not kept: %+v %+v", got.Skipped, got.Legs)
			}
			for _, r := range got.Runs {
				for _, o := range h.Runs {
					if o.RunID == r.RunID && (o.Tests != r.Tests || o.Failed != r.Failed || o.Repeated != r.Repeated) {
						t.Errorf("run %s: counts %d/%d/%d, were %d/%d/%d", r.RunID, r.Tests, r.Failed, r.Repeated, o.Tests, o.Failed, o.Repeated)
					}
				}
			}
		})
	}
}

// TestBoundDropsWhatTheRunsHeld: a test seen only in dropped runs is
// dropped, and a signature seen only there goes with them.
func TestBoundDropsWhatTheRunsHeld(t *testing.T) {
	h := sizedHistory(4, 1, 2) // k::t2 and k::t3 are only in run 0
	got, dropped := Bound(h, 3)
	if dropped != 1 {
		t.Fatalf("dropped %d runs, want 1", dropped)
	}
	var ids []string
	for _, tt := range got.Tests {
		ids = append(ids, tt.ID)
		for _, s := range tt.Sigs {
			if s.Hash == "sha256:old" {
				t.Errorf("%s keeps the signature of the dropped run: %+v", tt.ID, tt.Sigs)
			}
		}
	}
	if diff := cmp.Diff([]string{"k::t0", "k::t1"}, ids); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
}

// TestBoundEveryCap: over the caps that matter, on a history of real documents, the
// runs kept are the newest that fit, whole, and come back from Encode and
// Decode as they are.
func TestBoundEveryCap(t *testing.T) {
	h := synthHistory(t, 8, 11)
	perRun := make([]int, len(h.Runs))
	for _, tt := range h.Tests {
		for _, c := range tt.Cells {
			perRun[c.Run]++
		}
	}
	// Every cap at and beside the cells of the newest runs, and between.
	caps := []int{0, 1, h.Cells() + 1}
	for from, n := len(perRun)-1, 0; from >= 0; from-- {
		n += perRun[from]
		caps = append(caps, n-1, n, n+1, n+perRun[max(from-1, 0)]/2)
	}
	tripped := map[int]bool{}
	for _, limit := range caps {
		got, dropped := Bound(h, limit)
		if diff := cmp.Diff(runIDs(h)[dropped:], runIDs(got), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("cap %d: runs kept are not the newest %d (-want +got):\n%s", limit, len(h.Runs)-dropped, diff)
		}
		kept := 0
		for _, n := range perRun[dropped:] {
			kept += n
		}
		if got.Cells() != kept {
			t.Errorf("cap %d: %d cells kept, the runs held %d: a run was split", limit, got.Cells(), kept)
		}
		if kept > limit || dropped > 0 && kept+perRun[dropped-1] <= limit {
			t.Errorf("cap %d: kept %d cells in %d runs; the next older run has %d", limit, kept, len(got.Runs), perRun[max(dropped-1, 0)])
		}
		if tripped[dropped] {
			continue
		}
		tripped[dropped] = true
		if diff := cmp.Diff(got, roundTrip(t, got), historyCmp); diff != "" {
			t.Fatalf("cap %d: round trip (-want +got):\n%s", limit, diff)
		}
	}
	if got, dropped := Bound(nil, 10); got == nil || len(got.Runs) != 0 || dropped != 0 {
		t.Errorf("Bound(nil) = %+v, %d", got, dropped)
	}
}

// TestDecodeOverTheBound: a history larger than Decode reads says so, at
// every place the bound cuts it, not "unexpected EOF"; one that fits is
// read.
func TestDecodeOverTheBound(t *testing.T) {
	h := synthHistory(t, 6, 2)
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	size := jsonSize(t, buf.Bytes())
	for _, limit := range []int64{1, 10, size / 3, size / 2, size - 2, size - 1} {
		_, err := decode(bytes.NewReader(buf.Bytes()), limit)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", limit)) {
			t.Errorf("bound %d of %d: err = %v, want larger than", limit, size, err)
		}
	}
	if got, err := decode(bytes.NewReader(buf.Bytes()), size); err != nil || len(got.Runs) != len(h.Runs) {
		t.Errorf("bound %d, the size: err = %v", size, err)
	}
}

// jsonSize is the size of gzipped JSON once decompressed.
func jsonSize(t *testing.T, gz []byte) int64 {
	n, err := io.Copy(io.Discard, newGunzip(t, gz))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDecodeReads: Decode reads the object whatever the order of its keys,
// with space anywhere, keys it does not know, and cells as JSON writes
// them.
func TestDecodeReads(t *testing.T) {
	for name, in := range map[string]string{
		"as written":    `{"version":1,"runs":[{"r":"1"},{"r":"2"}],"tests":[{"id":"x","c":[0,1,0,0,0,1,0,2,0,1],"g":[{"h":"sha256:a","n":2}]}]}`,
		"tests first":   `{"tests":[{"id":"x","c":[0,1,0,0,0,1,0,2,0,1],"g":[{"h":"sha256:a","n":2}]}],"runs":[{"r":"1"},{"r":"2"}],"version":1}`,
		"spaces":        " {\n \"version\" : 1 ,\"runs\":[ {\"r\":\"1\"} , {\"r\":\"2\"} ],\t\"tests\" : [ {\"id\":\"x\",\"c\": [ 0 , 1,0,0,0 ,1,0,2,0,1\n] ,\"g\":[{\"h\":\"sha256:a\",\"n\":2}]} ] } \n",
		"unknown keys":  `{"version":1,"later":{"a":[1,2]},"runs":[{"r":"1"},{"r":"2"}],"tests":[{"id":"x","c":[0,1,0,0,0,1,0,2,0,1],"g":[{"h":"sha256:a","n":2}],"z":null}]}`,
		"tests twice":   `{"version":1,"runs":[{"r":"1"},{"r":"2"}],"tests":[{"id":"y","c":[0,1,0,0,0]}],"tests":[{"id":"x","c":[0,1,0,0,0,1,0,2,0,1],"g":[{"h":"sha256:a","n":2}]}]}`,
		"no tests yet":  `{"version":1,"runs":[{"r":"1"},{"r":"2"}],"tests":null,"tests":[{"id":"x","c":[0,1,0,0,0,1,0,2,0,1],"g":[{"h":"sha256:a","n":2}]}]}`,
		"null cells ok": `{"version":1,"runs":[{"r":"1"},{"r":"2"}],"tests":[{"id":"e","c":null},{"id":"x","c":[0,1,0,0,0,1,0,2,0,1],"g":[{"h":"sha256:a","n":2}]}]}`,
	} {
		h, err := Decode(bytes.NewReader(gzipped(in)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := []Cell{{Run: 0, Pass: 1}, {Run: 1, Fail: 2, Sig: 1}}
		if len(h.Tests) != 1 || h.Tests[0].ID != "x" || len(h.Runs) != 2 {
			t.Errorf("%s: %d tests, %d runs", name, len(h.Tests), len(h.Runs))
		} else if diff := cmp.Diff(want, h.Tests[0].Cells); diff != "" {
			t.Errorf("%s: cells (-want +got):\n%s", name, diff)
		}
	}
}

// FuzzCellNumbers: cells are read by hand as json reads an []int32: the
// same numbers, and an error for the same values.
func FuzzCellNumbers(f *testing.F) {
	for _, s := range []string{`[0,1,0,0,0]`, ` [ 12 , -3,2147483647,-2147483648 ] `, `[]`, `null`, `[2147483648]`, `[1.0]`, `[1e2]`, `["1"]`, `{}`, `[-0]`, `[[1]]`, `[null]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var want []int32
		wantErr := json.Unmarshal(data, &want)
		var got cellNumbers
		gotErr := got.UnmarshalJSON(bytes.TrimSpace(data))
		if bytes.Contains(data, []byte("null")) {
			return // json leaves a null element as it was, where the cells refuse it
		}
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: json says %v, cellNumbers %v", data, wantErr, gotErr)
		}
		if wantErr == nil && !slices.Equal(want, []int32(got)) {
			t.Fatalf("%q: json reads %v, cellNumbers %v", data, want, got)
		}
	})
}
