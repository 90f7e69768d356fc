package collect

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/model"
	"github.com/flakegate/flakegate/pkg/score"
)

func runsOf(runs ...history.Run) *history.History { return &history.History{Runs: runs} }

func hrun(sha, id string, tests, failed int) history.Run {
	return history.Run{Run: model.Run{CommitSHA: sha, RunID: id}, Tests: tests, Failed: failed, FailedAttempt: failed}
}

// TestGateHistory: the gate's base-branch history leaves out the head's
// commits, the base side's own runs and infrastructure failures, each
// counted in a note; a history with none of them is returned as it is.
func TestGateHistory(t *testing.T) {
	base := runsOf(hrun("b", "1", 10, 0))
	head := runsOf(hrun("h", "2", 10, 1))
	h := runsOf(hrun("m", "3", 10, 0), hrun("h", "4", 10, 2), hrun("b", "1", 10, 0), hrun("m", "5", 10, 9), hrun("m", "6", 3, 3))
	got, notes := GateHistory(h, base, head, score.Defaults())
	var ids []string
	for _, r := range got.Runs {
		ids = append(ids, r.RunID)
	}
	if strings.Join(ids, ",") != "3,6" {
		t.Errorf("kept runs %v, want 3 and 6 (a run of 3 tests is too small to be an outage)", ids)
	}
	want := []string{"1 runs of the head's commits", "1 runs the base side holds too", "1 runs in which more than 50% of the tests failed"}
	for i, w := range want {
		if i >= len(notes) || !strings.Contains(notes[i], w) {
			t.Errorf("notes %q, want %q", notes, want)
			break
		}
	}
	clean := runsOf(hrun("m", "3", 10, 0))
	if got, notes := GateHistory(clean, base, head, score.Defaults()); got != clean || notes != nil {
		t.Errorf("a clean history was copied or noted: %v", notes)
	}
}

// TestGateHistoryJoinedParts: history read from the files that the base
// side joined into one run (JoinParts) holds each file as a run: those
// runs are the base side's, left out as it holds them too.
func TestGateHistoryJoinedParts(t *testing.T) {
	joined := hrun("b", "", 20, 0)
	joined.Source, joined.Parts = "base/rep-1", []string{"base/rep-1/shard-1.xml", "base/rep-1/shard-2.xml"}
	part := func(src string) history.Run {
		r := hrun("b", "", 10, 0)
		r.Source = src
		return r
	}
	h := runsOf(part("base/rep-1/shard-1.xml"), part("base/rep-1/shard-2.xml"), part("main/run-1.xml"))
	got, notes := GateHistory(h, runsOf(joined), nil, score.Defaults())
	if len(got.Runs) != 1 || got.Runs[0].Source != "main/run-1.xml" || len(notes) != 1 || !strings.Contains(notes[0], "2 runs the base side holds too") {
		t.Errorf("kept %+v, notes %q; want main/run-1.xml alone, the base side's 2 parts left out", got.Runs, notes)
	}
}
