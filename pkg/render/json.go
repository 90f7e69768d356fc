package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"

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
	if err := writeJSON(w, withLists(r)); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// testsKey is the tests list of an indented report with no tests. JSON
// strings escape line breaks, so this occurs once, at the top level.
var testsKey = []byte("\n  \"tests\": []")

func writeJSON(w io.Writer, r *score.Report) error {
	tests := r.Tests
	shell := *r
	shell.Tests = []score.Test{}
	doc, err := json.MarshalIndent(&shell, "", "  ")
	if err != nil {
		return err
	}
	i := bytes.Index(doc, testsKey)
	if i < 0 {
		return fmt.Errorf("no tests key in the encoded report") // score.Report lost its tests field
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(tests) == 0 {
		bw.Write(doc)
	} else {
		bw.Write(doc[:i+len(testsKey)-1]) // up to and including '['
		// Encode the tests in chunks on every core, and write the chunks in
		// order as they are ready.
		const chunk = 256
		n := (len(tests) + chunk - 1) / chunk
		out := make([]chan []byte, n)
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		errs := make([]error, n)
		for c := range n {
			out[c] = make(chan []byte, 1)
			go func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				buf := make([]byte, 0, chunk*1024)
				for k := c * chunk; k < min(len(tests), (c+1)*chunk); k++ {
					if err := checkFloats(&tests[k]); err != nil {
						errs[c] = fmt.Errorf("test %q: %w", tests[k].Name, err)
						break
					}
					buf = append(buf, "\n    "...)
					buf = appendTest(buf, &tests[k])
					if k < len(tests)-1 {
						buf = append(buf, ',')
					}
				}
				out[c] <- buf
			}()
		}
		for c := range n {
			b := <-out[c]
			if errs[c] != nil {
				for _, ch := range out[c+1:] {
					<-ch
				}
				return errs[c]
			}
			bw.Write(b)
		}
		bw.WriteString("\n  ]")
		bw.Write(doc[i+len(testsKey):])
	}
	bw.WriteByte('\n')
	return bw.Flush() // a bufio.Writer keeps the first write error
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
