package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/pkg/score"
)

// csvHeader lists the CSV columns: the seed's first, then flakegate's.
var csvHeader = []string{
	// seed
	"name", "score", "commits", "flaky_commits", "is_flaky", "commits_where_flaky", "error_messages",
	// flakegate
	"score_low", "score_high", "failure_rate", "failure_low", "failure_high", "evidence", "top_signature", "file", "line",
	"flake_score", "rank_score", "runs", "attempts", "failures",
	// the ranking: rows are in the order of flake_rate_low
	"flake_rate", "flake_rate_low", "flake_rate_high", "too_few_commits",
	// CODEOWNERS, when read
	"owners",
}

// CSV writes a header and one row per test, every test in rank order
// (flagged tests first, then by flake_rate_low). Lists
// are joined: commits with ";", error messages with " | ", evidence kinds
// and owners with ";". Rates are rounded to 4 places. A cell that a spreadsheet would
// read as a formula (starting with = + - @, a tab or a carriage return, also
// after leading spaces or in full-width form) gets a leading apostrophe, as
// OWASP advises against CSV injection.
func CSV(w io.Writer, r *score.Report) error {
	if r == nil {
		return fmt.Errorf("csv report: %w", errNilReport)
	}
	cw := csv.NewWriter(w) // buffered; the first write error sticks
	row := make([]string, len(csvHeader))
	_ = cw.Write(csvHeader)
	for i := range r.Tests {
		t := &r.Tests[i]
		sig := ""
		if s, ok := topSignature(t); ok {
			sig = shortSig(s.Hash)
		}
		line := ""
		if t.Line != 0 {
			line = strconv.Itoa(t.Line)
		}
		row = append(row[:0],
			t.Name, rate(t.Score), strconv.Itoa(t.Commits), strconv.Itoa(t.FlakyCommits), strconv.FormatBool(t.IsFlaky),
			strings.Join(t.CommitsWhereFlaky, ";"), strings.Join(t.ErrorMessages, " | "),
			rate(t.ScoreInterval.Low), rate(t.ScoreInterval.High), rate(t.FailureRate),
			rate(t.FailureInterval.Low), rate(t.FailureInterval.High), strings.Join(t.Evidence, ";"), sig, t.File, line,
			rate(t.FlakeScore), rate(t.RankScore), strconv.Itoa(t.Runs), strconv.Itoa(t.Attempts), strconv.Itoa(t.Failures),
			rate(t.FlakeRate), rate(t.FlakeRateInterval.Low), rate(t.FlakeRateInterval.High), strconv.FormatBool(t.TooFewCommits),
			strings.Join(t.Owners, ";"),
		)
		for j := range row {
			row[j] = neutralizeFormula(row[j])
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("csv report: %w", err)
	}
	return nil
}

// rate formats a rate rounded to 4 places, without trailing zeros.
func rate(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64)
}

// neutralizeFormula prefixes an apostrophe to a cell that a spreadsheet
// would evaluate (OWASP, "CSV Injection").
func neutralizeFormula(s string) string {
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return s
	}
	switch t[0] {
	case '=', '+', '-', '@', '\t', '\r', '\n':
		return "'" + s
	}
	for _, p := range []string{"＝", "＋", "－", "＠"} { // full-width forms some spreadsheets fold
		if strings.HasPrefix(t, p) {
			return "'" + s
		}
	}
	return s
}
