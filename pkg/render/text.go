package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate/pkg/score"
)

// Text writes the report as a plain table: a summary line, a header row,
// then one row per flaky test in rank order, and a footer with what was
// left out. Rows are ranked by their first column, low95, the Wilson 95%
// lower bound of the test's flake rate (the second column: failed commits
// over the commits kept once outages and regression blocks are removed, the
// third). The seed's score and flaky commits over commits follow, then the
// kinds of evidence and the name. Plain text, no colour; names are put on
// one line with control characters removed, so a test name cannot move the
// cursor or recolour a terminal.
func Text(w io.Writer, r *score.Report) error {
	if r == nil {
		return fmt.Errorf("text report: %w", errNilReport)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "flakegate: %s of %s analysed (threshold %.2f, min %s); %s, %s, %s parsed\n",
		plural(r.FlakyCount, "flaky test", "flaky tests"), plural(r.TestsAnalyzed, "test", "tests"),
		r.Threshold, plural(r.MinCommits, "commit", "commits"), plural(len(r.Commits), "commit", "commits"), plural(r.Runs, "run", "runs"),
		plural(r.ResultsParsed, "result", "results"))
	type row struct{ failed, flaky, evidence string }
	var rows []row
	var tests []*score.Test
	wFailed, wFlaky, wEvidence := len("failed"), len("flaky"), len("evidence")
	for i := range r.Tests {
		t := &r.Tests[i]
		if !t.IsFlaky {
			continue
		}
		rw := row{fmt.Sprintf("%d/%d", t.FailedCommits, t.RateCommits), fmt.Sprintf("%d/%d", t.FlakyCommits, t.Commits),
			plain(strings.Join(t.Evidence, ","))}
		wFailed, wFlaky, wEvidence = max(wFailed, len(rw.failed)), max(wFlaky, len(rw.flaky)), max(wEvidence, len(rw.evidence))
		rows = append(rows, rw)
		tests = append(tests, t)
	}
	if len(rows) == 0 {
		b.WriteString("no flaky tests\n")
	} else {
		fmt.Fprintf(&b, "%-5s  %-5s  %-*s  %-5s  %-*s  %-*s  %s\n", "low95", "rate", wFailed, "failed", "score", wFlaky, "flaky", wEvidence, "evidence", "test")
		for i, t := range tests {
			fmt.Fprintf(&b, "%.3f  %.3f  %-*s  %.3f  %-*s  %-*s  %s\n", t.FlakeRateInterval.Low, t.FlakeRate, wFailed, rows[i].failed,
				t.Score, wFlaky, rows[i].flaky, wEvidence, rows[i].evidence, plain(t.Name))
		}
		b.WriteString("ranked by low95, the 95% lower bound of rate: failed / commits, outages and regression blocks removed; score: the seed's\n")
	}
	fmt.Fprintf(&b, "%s skipped, %s and %s excluded as infrastructure failures\n",
		plural(len(r.SkippedFiles), "input file", "input files"), plural(len(r.InfraRuns), "run", "runs"),
		plural(len(r.InfraEvents), "co-failure", "co-failures"))
	for i, e := range r.InfraEvents {
		if i == maxTextEvents {
			fmt.Fprintf(&b, "  and %s more\n", plural(len(r.InfraEvents)-i, "co-failure", "co-failures"))
			break
		}
		fmt.Fprintf(&b, "  co-failure in run %s: %s %s, %d of %d tests failed (%.2f expected)\n",
			plain(Truncate(runName(e), 100)), e.Kind, plain(Truncate(e.Group, 200)), e.Failed, e.Tests, e.Expected)
	}
	for _, s := range r.SkippedFiles {
		fmt.Fprintf(&b, "  skipped %s: %s\n", plain(Truncate(s.Path, 300)), plain(Truncate(s.Error, 300)))
	}
	if r.ResultsWithoutCommit > 0 {
		fmt.Fprintf(&b, "warning: %s came from runs with no commit SHA and were not scored\n",
			plural(r.ResultsWithoutCommit, "result", "results"))
	}
	if s := unflaggedText(r, plain); s != "" {
		fmt.Fprintf(&b, "note: %s\n", s)
	}
	if s := recurringText(r, plain); s != "" {
		fmt.Fprintf(&b, "warning: %s\n", s)
	}
	if s := directorySplitText(r, plain); s != "" {
		fmt.Fprintf(&b, "warning: %s\n", s)
	}
	if s := repeatedText(r); s != "" {
		fmt.Fprintf(&b, "note: %s\n", s)
	}
	if s := varyingText(r); s != "" {
		fmt.Fprintf(&b, "note: %s\n", plain(s))
	}
	if s := LegBoundsNote(r); s != "" {
		fmt.Fprintf(&b, "warning: %s\n", s)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("text report: %w", err)
	}
	return nil
}

// maxTextEvents bounds the co-failures listed one by one.
const maxTextEvents = 5

// runName names an event's run: its id and attempt, or its source file.
func runName(e score.InfraEvent) string {
	switch {
	case e.RunID != "" && e.Attempt > 1:
		return fmt.Sprintf("%s attempt %d", e.RunID, e.Attempt)
	case e.RunID != "":
		return e.RunID
	}
	return e.Source
}
