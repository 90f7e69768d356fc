package collect

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/render"
)

// reportZip is a report artifact of the files given, in order.
func reportZip(t *testing.T, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// carriedHistory is a history of one test in one run, as Encode writes it.
func carriedHistory(t *testing.T) string {
	t.Helper()
	h, err := history.Load(context.Background(), []history.Source{{Name: "a.xml", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(`<testsuite name="s"><testcase classname="k" name="t"/></testsuite>`)), nil
	}}}, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := history.Encode(&b, h); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReadReportArtifact: a history that cannot be read leaves the report
// read, with the history's error apart, so that the trend and the flaky
// tests it names are kept; a report.json that cannot be read leaves the
// history read (before, it failed the artifact, and the history was lost
// with the trend); only an artifact with no report.json is not a report.
func TestReadReportArtifact(t *testing.T) {
	const report = `{"source":"sentinel"}`
	good := carriedHistory(t)
	for _, tc := range []struct {
		name        string
		files       [][2]string
		wantErr     string // of ReadReportArtifact
		wantHistErr string // of HistoryErr
		wantRepErr  string // of ReportErr
		wantHistory bool
	}{
		{name: "both", files: [][2]string{{render.ReportJSONFile, report}, {render.HistoryFile, good}}, wantHistory: true},
		{name: "history first", files: [][2]string{{render.HistoryFile, good}, {render.ReportJSONFile, report}}, wantHistory: true},
		{name: "no history", files: [][2]string{{render.ReportJSONFile, report}}},
		{name: "history not gzip", files: [][2]string{{render.ReportJSONFile, report}, {render.HistoryFile, "{}"}}, wantHistErr: "carried history: not gzip"},
		{name: "history cut", files: [][2]string{{render.ReportJSONFile, report}, {render.HistoryFile, good[:len(good)/2]}}, wantHistErr: "carried history: unexpected EOF"},
		{name: "history of another version", files: [][2]string{{render.ReportJSONFile, report}, {render.HistoryFile, gzipString(`{"version":9}`)}}, wantHistErr: "carried history: version 9"},
		{name: "history cut, no report", files: [][2]string{{render.HistoryFile, good[:len(good)/2]}}, wantErr: errNoReport.Error()},
		{name: "bad report", files: [][2]string{{render.ReportJSONFile, "{"}, {render.HistoryFile, good}}, wantRepErr: render.ReportJSONFile + ": unexpected EOF", wantHistory: true},
		{name: "report of another shape", files: [][2]string{{render.ReportJSONFile, `{"threshold":{}}`}, {render.HistoryFile, good}}, wantRepErr: render.ReportJSONFile + ": json: cannot unmarshal", wantHistory: true},
		{name: "bad report, history cut", files: [][2]string{{render.ReportJSONFile, "{"}, {render.HistoryFile, good[:len(good)/2]}}, wantRepErr: "unexpected EOF", wantHistErr: "carried history: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReadReportArtifact(reportZip(t, tc.files...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantRepErr != "":
				if p.Report != nil || p.ReportErr == nil || !strings.Contains(p.ReportErr.Error(), tc.wantRepErr) {
					t.Errorf("report = %+v, ReportErr = %v, want none and %q", p.Report, p.ReportErr, tc.wantRepErr)
				}
			case p.Report == nil || p.Report.Source != "sentinel" || p.ReportErr != nil:
				t.Errorf("report = %+v (%v), want the artifact's", p.Report, p.ReportErr)
			}
			if (p.History != nil) != tc.wantHistory {
				t.Errorf("history = %v, want one: %v", p.History, tc.wantHistory)
			}
			if tc.wantHistErr == "" && p.HistoryErr != nil || tc.wantHistErr != "" && (p.HistoryErr == nil || !strings.Contains(p.HistoryErr.Error(), tc.wantHistErr)) {
				t.Errorf("HistoryErr = %v, want %q", p.HistoryErr, tc.wantHistErr)
			}
			if p.History != nil && len(p.History.Runs) != 1 {
				t.Errorf("history holds %d runs, want 1", len(p.History.Runs))
			}
		})
	}
	t.Run("history over the bound", func(t *testing.T) {
		if testing.Short() {
			t.Skip("reads 257 MiB")
		}
		// A history followed by spaces past Decode's 256 MiB, stored
		// gzipped (256 KB): the decoder streams through them.
		var gz bytes.Buffer
		w, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
		w.Write([]byte(`{"version":1,"runs":[],"tests":[]}`))
		spaces := bytes.Repeat([]byte(" "), 1<<20)
		for range 257 {
			w.Write(spaces)
		}
		w.Close()
		p, err := ReadReportArtifact(reportZip(t, [2]string{render.ReportJSONFile, report}, [2]string{render.HistoryFile, gz.String()}))
		if err != nil || p.Report == nil || p.History != nil {
			t.Fatalf("err = %v, report %v, history %v", err, p.Report, p.History)
		}
		if want := "carried history: larger than 268435456 bytes (256 MiB)"; p.HistoryErr == nil || !strings.Contains(p.HistoryErr.Error(), want) {
			t.Errorf("HistoryErr = %v, want %q", p.HistoryErr, want)
		}
	})
	if _, err := ReadReportArtifact([]byte("not a zip")); err == nil || errors.Is(err, errNoReport) {
		t.Errorf("not a zip: err = %v", err)
	}
}

func gzipString(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}
