package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/render"
	"github.com/flakegate/flakegate/pkg/score"
)

// The size of TestReportHeap's history: a carried history of
// report-tests × report-runs and report-new runs collected now. The
// issue's scale, 4.5M cells with a 7-day window and with a window of
// the whole history:
//
//	go test ./pkg/collect/ -run ReportHeap -v -report-tests 5000 -report-runs 800 -report-new 100
//	go test ./pkg/collect/ -run ReportHeap -v -report-tests 5000 -report-runs 800 -report-new 100 -report-lookback 400
var (
	reportTests    = flag.Int("report-tests", 0, "tests in TestReportHeap's history (default 500)")
	reportRuns     = flag.Int("report-runs", 0, "runs carried by TestReportHeap's previous report (default 200)")
	reportNew      = flag.Int("report-new", 0, "runs TestReportHeap collects from the fake GitHub (default 20)")
	reportLookback = flag.Int("report-lookback", 7, "TestReportHeap's lookback-days")
)

// reportNow is the report's time: the fake's clock.
var reportNow = t0.Add(24 * time.Hour)

// reportTestID names test i as a Java suite would.
func reportTestID(i int) (class, name string) {
	return fmt.Sprintf("com.example.module%d.SomeServiceTest", i/50), fmt.Sprintf("test_case_number_%d", i)
}

// carriedReport is what a weekly report carries: tests × runs with a cell
// in every place, runs of ci.yml on main every 8 hours (or closer, to fit
// 350 days) up to eight days before reportNow, one cell in fifty a
// failure with one of three signatures.
func carriedReport(tests, runs int) *history.History {
	step := min(8*time.Hour, 350*24*time.Hour/time.Duration(max(runs, 1)))
	end := reportNow.Add(-8 * 24 * time.Hour)
	h := &history.History{Runs: make([]history.Run, runs)}
	for r := range h.Runs {
		run := &h.Runs[r]
		run.CommitSHA = fmt.Sprintf("%040x", r*7919+1)
		run.RunID = strconv.Itoa(14_000_000_000 + r)
		run.Attempt = 1
		run.Time = end.Add(-time.Duration(runs-r) * step)
		run.Workflow, run.Branch, run.Event = "CI", "main", "push"
		run.WorkflowFile = "ci.yml"
	}
	for i := range tests {
		class, name := reportTestID(i)
		t := &history.Test{ID: class + "::" + name, Cells: make([]history.Cell, runs)}
		for s := range 3 {
			t.Sigs = append(t.Sigs, history.Sig{Hash: fmt.Sprintf("sha256:%064x", i*3+s), Message: "expected 200, got 503 from upstream"})
		}
		for r := range t.Cells {
			c := history.Cell{Run: int32(r), Pass: 1}
			if (r*31+i*17)%50 == 0 {
				c = history.Cell{Run: int32(r), Fail: 1, Sig: uint16(1 + (r+i)%3)}
				t.Sigs[c.Sig-1].Count++
			}
			t.Cells[r] = c
		}
		h.Tests = append(h.Tests, t)
	}
	return h
}

// reportDoc is run k's JUnit document of the tests: one test in fifty
// fails, a different one in each run.
func reportDoc(tests, k int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<testsuite name="all" tests="%d" timestamp="2026-03-02T08:00:00">`+"\n", tests)
	for i := range tests {
		class, name := reportTestID(i)
		if (i*7+k*13)%50 == 0 {
			fmt.Fprintf(&b, `<testcase classname="%s" name="%s" time="0.012"><failure message="expected 200, got 503">expected 200, got 503 from upstream</failure></testcase>`+"\n", class, name)
		} else {
			fmt.Fprintf(&b, `<testcase classname="%s" name="%s" time="0.012"/>`+"\n", class, name)
		}
	}
	b.WriteString("</testsuite>\n")
	return []byte(b.String())
}

// reportShape is the history a report reads: a previous report carrying
// tests × runs, and fresh runs of ci.yml in the last six days.
type reportShape struct {
	tests, runs, fresh, lookbackDays int
	// change, when set, changes the carried history before it is
	// encoded; fresh are the runs the report reads.
	change func(h *history.History, fresh []ghfake.Run)
}

// reportSetup serves shape on a fake GitHub and returns the options
// ForReport reads it with.
func reportSetup(t testing.TB, shape reportShape) ReportOptions {
	s, repo := newFake(t)
	s.SetRateLimit(1_000_000, t0.Add(48*time.Hour))
	fresh := make([]ghfake.Run, shape.fresh)
	for i := range fresh {
		fresh[i] = repo.AddRun(ghfake.Run{Workflow: "ci.yml", HeadSHA: ghfake.SHA(fmt.Sprint("fresh", i)),
			CreatedAt: reportNow.Add(-time.Duration(shape.fresh-i) * 6 * 24 * time.Hour / time.Duration(shape.fresh))})
		zipped, err := ghfake.ZipFiles(map[string][]byte{"reports/TEST-all.xml": reportDoc(shape.tests, i)})
		if err != nil {
			t.Fatal(err)
		}
		repo.AddArtifact(ghfake.Artifact{RunID: fresh[i].ID, Name: "junit-ubuntu", Zip: zipped})
	}
	carried := carriedReport(shape.tests, shape.runs)
	if shape.change != nil {
		shape.change(carried, fresh)
	}
	var gz bytes.Buffer
	if err := history.Encode(&gz, carried); err != nil {
		t.Fatal(err)
	}
	carried = nil
	prev := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: reportNow.Add(-7 * 24 * time.Hour)})
	report, err := ghfake.ZipFiles(map[string][]byte{render.ReportJSONFile: []byte(`{}`), render.HistoryFile: gz.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	repo.AddArtifact(ghfake.Artifact{RunID: prev.ID, Name: "flakegate-report", Zip: report})
	self := repo.AddRun(ghfake.Run{Workflow: "flakegate.yml", Event: "schedule", CreatedAt: reportNow})
	return ReportOptions{
		Scope: Scope{Repo: testRepo, FullName: testRepo.String(), Workflows: []string{"ci.yml"}, Branch: "main",
			Since: reportNow.AddDate(0, 0, -shape.lookbackDays), MaxRuns: 1000, Match: matchJUnit, Self: self.ID, TempDir: t.TempDir()},
		Client:   newClient(t, s),
		Previous: PreviousOptions{Repo: testRepo, Workflow: "flakegate.yml", Branch: "main", ArtifactName: "flakegate-report", Self: self.ID},
		Now:      reportNow,
	}
}

// reportCost is what a report's collection, scoring and files held.
type reportCost struct {
	cells, window int // cells of the carried history and of the window
	flaky         int // tests the report flags
	// shared: the window's tests are the carried history's, not a copy.
	shared bool
	// Peaks of the heap's objects (live or not yet swept) less the heap
	// before, while ForReport ran, while scoring ran, and while the files
	// were written, ev and the report still held as the action holds them.
	collect, score, files uint64
	live                  uint64 // held after, ev, report and files alive
	digest                [2][32]byte
}

// phasePeak samples the heap's objects every millisecond and keeps the
// highest value of each phase; next starts the next phase.
type phasePeak struct {
	phase atomic.Int32
	peaks [3]atomic.Uint64
	done  chan struct{}
	wait  chan struct{}
}

func startPhasePeak() *phasePeak {
	p := &phasePeak{done: make(chan struct{}), wait: make(chan struct{})}
	go func() {
		defer close(p.wait)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v, ph := s[0].Value.Uint64(), &p.peaks[p.phase.Load()]; v > ph.Load() {
				ph.Store(v)
			}
			select {
			case <-p.done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return p
}

func (p *phasePeak) next() {
	// The phase's end is sampled here too: the sampler may not have run
	// since its last allocation.
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	ph := &p.peaks[p.phase.Load()]
	if v := s[0].Value.Uint64(); v > ph.Load() {
		ph.Store(v)
	}
	p.phase.Add(1)
}

// measureReport runs what a report run does with its evidence: ForReport,
// scoring the window, and the report's files with the carried history.
func measureReport(t testing.TB, o ReportOptions) reportCost {
	runtime.GC()
	runtime.GC() // json's pooled buffers, from encoding the carried history, go at the second
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	p := startPhasePeak()
	ev, err := ForReport(context.Background(), o, &noteLog{})
	if err != nil {
		t.Fatal(err)
	}
	p.next()
	opts := score.Defaults()
	opts.Now = o.Now
	rep, err := score.Score(ev.Window, opts)
	if err != nil {
		t.Fatal(err)
	}
	p.next()
	files, err := render.ReportFiles(rep, ev.Full, "")
	if err != nil {
		t.Fatal(err)
	}
	close(p.done)
	<-p.wait
	p.next()
	runtime.GC()
	runtime.GC() // and those of this report's
	metrics.Read(s)
	c := reportCost{cells: ev.Full.Cells(), window: ev.Window.Cells(), flaky: rep.FlakyCount,
		shared: len(ev.Window.Tests) > 0 && len(ev.Full.Tests) > 0 && ev.Window.Tests[0] == ev.Full.Tests[0],
		digest: [2][32]byte{sha256.Sum256(files[render.ReportJSONFile]), sha256.Sum256(files[render.HistoryFile])}}
	c.live = s[0].Value.Uint64() - min(base, s[0].Value.Uint64())
	for i, v := range []*uint64{&c.collect, &c.score, &c.files} {
		*v = p.peaks[i].Load() - min(base, p.peaks[i].Load())
	}
	runtime.KeepAlive(ev)
	runtime.KeepAlive(rep)
	runtime.KeepAlive(files)
	return c
}

// TestReportHeap measures the heap a report's collection holds for its
// history, per cell of the history it carries: the previous report's,
// the runs read now, the carried history and the window.
func TestReportHeap(t *testing.T) {
	tests, runs, fresh := *reportTests, *reportRuns, *reportNew
	if tests <= 0 {
		tests = 500
	}
	if runs <= 0 {
		runs = 200
	}
	if fresh <= 0 {
		fresh = 20
	}
	o := reportSetup(t, reportShape{tests: tests, runs: runs, fresh: fresh, lookbackDays: *reportLookback})
	c := measureReport(t, o)
	if want := tests * (runs + fresh); c.cells != want {
		t.Fatalf("carried %d cells, want %d", c.cells, want)
	}
	per := func(v uint64) float64 { return float64(v) / float64(c.cells) }
	t.Logf("%d tests × (%d carried + %d new runs) = %d cells, %d in the window (lookback %d days)", tests, runs, fresh, c.cells, c.window, *reportLookback)
	t.Logf("peak heap: collect %.1f MiB (%.1f B/cell), score %.1f MiB (%.1f B/cell), files %.1f MiB (%.1f B/cell); held after %.1f MiB (%.1f B/cell)",
		float64(c.collect)/(1<<20), per(c.collect), float64(c.score)/(1<<20), per(c.score), float64(c.files)/(1<<20), per(c.files), float64(c.live)/(1<<20), per(c.live))
	t.Logf("report.json sha256 %x, %s sha256 %x", c.digest[0][:8], render.HistoryFile, c.digest[1][:8])
}

// TestReportUnchanged pins the bytes of report.json and the carried
// history of reports over a carried history and runs read now: a window
// of part of the runs (some of another workflow's, one carried run read
// again in full), of every run, with a carried run of no time, and over
// the cap of cells carried. The digests are those of the reports before
// the carried history's memory was cut (issue #12); a change to what a
// report writes changes them, and must say why. A window of every run
// shares the carried history's tests, which FilterRuns would copy
// unchanged; the third case's carried history is Stamped's copy.
func TestReportUnchanged(t *testing.T) {
	nightly := func(h *history.History, _ []ghfake.Run) {
		for r := range h.Runs {
			if r%5 == 0 {
				h.Runs[r].WorkflowFile = "nightly.yml"
			}
		}
	}
	reread := func(h *history.History, fresh []ghfake.Run) {
		r := &h.Runs[len(h.Runs)-1]
		r.CommitSHA, r.RunID, r.Partial = fresh[0].HeadSHA, fmt.Sprint(fresh[0].ID), true
	}
	for _, tc := range []struct {
		name         string
		shape        reportShape
		carriedCells int  // 0: the default
		shared       bool // the window is the carried history's runs and tests
		report, hist string
	}{
		{name: "part of the runs in the window", shape: reportShape{tests: 60, runs: 120, fresh: 12, lookbackDays: 30,
			change: func(h *history.History, fresh []ghfake.Run) { nightly(h, fresh); reread(h, fresh) }},
			report: "1bd2e8d3c6d4d9cc46945792f55d9e120298490c84f36f52286d0ed972d8b791",
			hist:   "9878007a946b6b47ab43b062c97013a34c2f50ccf383bc89596b99682963a4f2"},
		{name: "every run in the window", shape: reportShape{tests: 60, runs: 120, fresh: 12, lookbackDays: 400, change: reread}, shared: true,
			report: "891c93f36bb70af92af41990ad5ae9adbb5f9ab55c06c42e9eda2a0dd0176293",
			hist:   "a10cb60e4d819127e48f31e9f44deb1ff852fa38576179b730255be8bd5650df"},
		{name: "a carried run of no time", shape: reportShape{tests: 60, runs: 120, fresh: 12, lookbackDays: 400,
			change: func(h *history.History, _ []ghfake.Run) { h.Runs[3].Time = time.Time{} }},
			report: "11e575c124226d278530e31ff32df3704856d90856d7f32db43bccce7a2dd188",
			hist:   "c23519ab97bcca9b7aca90e6cb4aa5e05e1346cba168bb8140a679843eac45fc"},
		{name: "over the cap", shape: reportShape{tests: 60, runs: 120, fresh: 12, lookbackDays: 60, change: nightly}, carriedCells: 60 * 100,
			report: "231057bf12e5ac30199b1f0a7851d48ae7b7bde7e69fdb7617e228b169704555",
			hist:   "ca45d34fbf96c61b5e30b691a432344160572dbdc9cbd3299b02054716e81177"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.carriedCells > 0 {
				defer func(n int) { carriedCells = n }(carriedCells)
				carriedCells = tc.carriedCells
			}
			c := measureReport(t, reportSetup(t, tc.shape))
			t.Logf("%d cells carried, %d in the window, %d tests flagged", c.cells, c.window, c.flaky)
			if c.shared != tc.shared {
				t.Errorf("the window shares the carried history's tests: %v, want %v", c.shared, tc.shared)
			}
			if got := fmt.Sprintf("%x", c.digest[0]); got != tc.report {
				t.Errorf("report.json sha256 %s, want %s", got, tc.report)
			}
			if got := fmt.Sprintf("%x", c.digest[1]); got != tc.hist {
				t.Errorf("%s sha256 %s, want %s", render.HistoryFile, got, tc.hist)
			}
		})
	}
}
