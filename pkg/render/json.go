package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/flakegate/flakegate/pkg/history"
	"github.com/flakegate/flakegate/pkg/score"
)

// JSON writes the report as indented JSON, with the seed's field names
// first and flakegate's after them (the struct tags of score.Report), and a
// final newline. Lists are never null: a report built by hand with nil
// slices writes [] as score.Score does. <, > and & in strings are written as
// \u escapes, so the JSON is safe to embed in HTML.
func JSON(w io.Writer, r *score.Report) error {
	if r == nil {
		return fmt.Errorf("json report: %w", errNilReport)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(withLists(r)); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// withLists returns a shallow copy of r whose nil slices are empty.
func withLists(r *score.Report) *score.Report {
	c := *r
	c.Tests = make([]score.Test, len(r.Tests))
	for i, t := range r.Tests {
		t.CommitsWhereFlaky = nonNil(t.CommitsWhereFlaky)
		t.ErrorMessages = nonNil(t.ErrorMessages)
		t.Evidence = nonNil(t.Evidence)
		t.Signatures = nonNil(t.Signatures)
		c.Tests[i] = t
	}
	c.SkippedFiles = nonNil[history.Skipped](c.SkippedFiles)
	c.Commits = nonNil(c.Commits)
	c.InfraRuns = nonNil(c.InfraRuns)
	return &c
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
