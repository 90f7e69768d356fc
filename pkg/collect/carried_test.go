package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type noteLog struct{ notes []string }

func (l *noteLog) Infof(string, ...any)        {}
func (l *noteLog) Warningf(f string, a ...any) { l.notes = append(l.notes, fmt.Sprintf(f, a...)) }
func (l *noteLog) Noticef(f string, a ...any)  { l.notes = append(l.notes, fmt.Sprintf(f, a...)) }
func (l *noteLog) has(s string) bool           { return strings.Contains(strings.Join(l.notes, "\n"), s) }

// TestReportBoundsWhatItCarries: the history a report carries keeps its
// newest runs within the cap of results and says how many it left out; the
// window scored is all of the runs read.
func TestReportBoundsWhatItCarries(t *testing.T) {
	defer func(n int) { carriedCells = n }(carriedCells)
	carriedCells = 25 // 5 tests a run: 5 runs
	dir := t.TempDir()
	for i := range 8 {
		var b strings.Builder
		fmt.Fprintf(&b, `<testsuite name="s"><properties><property name="commit_sha" value="%040x"/><property name="run_id" value="%d"/></properties>`, i+1, i+1)
		for j := range 5 {
			fmt.Fprintf(&b, `<testcase classname="c" name="t%d"/>`, j)
		}
		b.WriteString("</testsuite>")
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("run-%d.xml", i)), []byte(b.String()), 0o644)
	}
	log := &noteLog{}
	ev, err := ForReport(context.Background(), ReportOptions{Results: []string{dir}, Now: time.Now()}, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Window.Runs) != 8 || len(ev.Full.Runs) != 5 {
		t.Errorf("window %d runs, carried %d; want 8 scored and the newest 5 carried", len(ev.Window.Runs), len(ev.Full.Runs))
	}
	if !log.has("carried history: the 3 oldest runs are left out, to keep it within 25 results") {
		t.Errorf("no notice: %q", log.notes)
	}
}
