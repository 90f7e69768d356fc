package render

import (
	"bytes"
	"fmt"
	"io"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/score"
)

// The files of a report artifact and of a gate's report-dir.
const (
	ReportJSONFile  = "report.json"
	HistoryFile     = "history.json.gz"
	GateJSONFile    = "gate.json"
	GateMarkdownMD  = "gate.md"
	reportMarkdown  = "report.md"
	reportHTMLFile  = "report.html"
	reportCSVFile   = "report.csv"
	defaultRepTitle = "flakegate report"
)

// ReportFiles renders a report's files: report.json, .csv, .html and .md,
// and, when full is not nil, the history the next report carries
// (history.json.gz). ai is the AI root-cause section (explain's Markdown),
// added to the Markdown and HTML reports when not empty.
func ReportFiles(rep *score.Report, full *history.History, ai string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for name, f := range map[string]func(io.Writer, *score.Report) error{
		ReportJSONFile: JSON, reportCSVFile: CSV,
		reportHTMLFile: func(w io.Writer, r *score.Report) error { return HTMLWith(w, r, HTMLOptions{AI: ai}) },
	} {
		var b bytes.Buffer
		if err := f(&b, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files[name] = b.Bytes()
	}
	var md bytes.Buffer
	if err := Markdown(&md, rep, MarkdownOptions{Title: defaultRepTitle}); err != nil {
		return nil, err
	}
	if ai != "" {
		md.WriteString("\n" + ai + "\n")
	}
	files[reportMarkdown] = md.Bytes()
	if full != nil {
		var hb bytes.Buffer
		if err := history.Encode(&hb, full); err != nil {
			return nil, err
		}
		files[HistoryFile] = hb.Bytes()
	}
	return files, nil
}

// GateFiles renders the gate's files: gate.json and the full gate.md.
func GateFiles(res gate.Result, meta GateMeta) (map[string][]byte, error) {
	var js bytes.Buffer
	if err := GateJSON(&js, &res); err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := GateMarkdown(&md, res, meta, 0); err != nil {
		return nil, err
	}
	return map[string][]byte{GateJSONFile: js.Bytes(), GateMarkdownMD: md.Bytes()}, nil
}
