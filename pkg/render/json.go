package render

import (
	"fmt"
	"io"
	"math"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/score"
)

// JSON writes the report as indented JSON, with the seed's field names
// first and flakegate's after them (the struct tags of score.Report), and a
// final newline. Lists are never null: a report built by hand with nil
// slices writes [] as score.Score does. <, > and & in strings are written as
// \u escapes, so the JSON is safe to embed in HTML.
//
// The output is what json.Encoder with a two-space indent writes, but tests
// are encoded one at a time, so memory does not grow with the report.
func JSON(w io.Writer, r *score.Report) error {
	if r == nil {
		return fmt.Errorf("json report: %w", errNilReport)
	}
	if err := writeJSON(w, r); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// writeJSON writes r with its nil lists as empty ones, each test's as it
// is written: a copy of the report's tests would be the largest
// allocation of the report.
func writeJSON(w io.Writer, r *score.Report) error {
	shell := *r
	shell.Tests = []score.Test{}
	shell.SkippedFiles = nonNil[history.Skipped](shell.SkippedFiles)
	shell.Commits = nonNil(shell.Commits)
	shell.InfraRuns = nonNil(shell.InfraRuns)
	return writeWithTests(w, &shell, r.Tests, func(b []byte, t *score.Test) ([]byte, error) {
		if err := checkFloats(t); err != nil {
			return b, err
		}
		c := *t
		testLists(&c)
		return appendTest(b, &c), nil
	}, func(t *score.Test) string { return t.Name })
}

// checkFloats refuses what encoding/json refuses: NaN and infinities.
func checkFloats(t *score.Test) error {
	for _, f := range []float64{t.Score, t.FailureRate, t.FlakeScore, t.RankScore,
		t.ScoreInterval.Low, t.ScoreInterval.High, t.FailureInterval.Low, t.FailureInterval.High} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("json: unsupported value: %v", f)
		}
	}
	return nil
}

// testLists makes t's nil lists empty.
func testLists(t *score.Test) {
	t.CommitsWhereFlaky = nonNil(t.CommitsWhereFlaky)
	t.ErrorMessages = nonNil(t.ErrorMessages)
	t.Evidence = nonNil(t.Evidence)
	t.Signatures = nonNil(t.Signatures)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
