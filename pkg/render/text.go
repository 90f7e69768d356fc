package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate/pkg/score"
)

// Text writes the report as the seed's CLI prints it: a header, then one
// line per flaky test in rank order with its score, name and flaky commits
// over commits ("0.300  tests.x::test_y  3/10"), followed by the kinds of
// evidence, then a footer with what was left out. Plain text, no colour;
// names are put on one line with control characters removed, so a test name
// cannot move the cursor or recolour a terminal.
func Text(w io.Writer, r *score.Report) error {
	if r == nil {
		return fmt.Errorf("text report: %w", errNilReport)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "flakegate: %s of %s analysed (threshold %.2f, min %d commits); %s, %s, %s parsed\n",
		plural(r.FlakyCount, "flaky test", "flaky tests"), plural(r.TestsAnalyzed, "test", "tests"),
		r.Threshold, r.MinCommits, plural(len(r.Commits), "commit", "commits"), plural(r.Runs, "run", "runs"),
		plural(r.ResultsParsed, "result", "results"))
	n := 0
	for i := range r.Tests {
		t := &r.Tests[i]
		if !t.IsFlaky {
			continue
		}
		n++
		fmt.Fprintf(&b, "%.3f  %s  %d/%d", t.Score, plain(t.Name), t.FlakyCommits, t.Commits)
		if len(t.Evidence) > 0 {
			b.WriteString("  ")
			b.WriteString(plain(strings.Join(t.Evidence, ",")))
		}
		if t.IntermittentCommits > 0 {
			fmt.Fprintf(&b, " (flake score %.3f)", t.FlakeScore)
		}
		b.WriteByte('\n')
	}
	if n == 0 {
		b.WriteString("no flaky tests\n")
	}
	fmt.Fprintf(&b, "%s skipped, %s excluded as infrastructure failures\n",
		plural(len(r.SkippedFiles), "input file", "input files"), plural(len(r.InfraRuns), "run", "runs"))
	for _, s := range r.SkippedFiles {
		fmt.Fprintf(&b, "  skipped %s: %s\n", plain(Truncate(s.Path, 300)), plain(Truncate(s.Error, 300)))
	}
	if r.ResultsWithoutCommit > 0 {
		fmt.Fprintf(&b, "warning: %s came from runs with no commit SHA and were not scored\n",
			plural(r.ResultsWithoutCommit, "result", "results"))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("text report: %w", err)
	}
	return nil
}
