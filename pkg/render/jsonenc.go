package render

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flakegate/flakegate/pkg/score"
)

// appendTest appends t as json.MarshalIndent(t, "    ", "  ") writes it,
// without reflection: the tests list is most of a report, and this is
// several times faster. TestAppendTestMatchesEncodingJSON keeps the two
// byte-for-byte equal.
func appendTest(b []byte, t *score.Test) []byte {
	const in1, in2, in3 = "\n      ", "\n        ", "\n          "
	b = append(b, '{')
	b = appendKey(b, in1, "name")
	b = appendString(b, t.Name)
	b = appendKey(b, ","+in1, "score")
	b = appendFloat(b, t.Score)
	b = appendKey(b, ","+in1, "commits")
	b = strconv.AppendInt(b, int64(t.Commits), 10)
	b = appendKey(b, ","+in1, "flaky_commits")
	b = strconv.AppendInt(b, int64(t.FlakyCommits), 10)
	b = appendKey(b, ","+in1, "is_flaky")
	b = strconv.AppendBool(b, t.IsFlaky)
	b = appendKey(b, ","+in1, "commits_where_flaky")
	b = appendStrings(b, t.CommitsWhereFlaky, in1, in2)
	b = appendKey(b, ","+in1, "error_messages")
	b = appendStrings(b, t.ErrorMessages, in1, in2)
	b = appendKey(b, ","+in1, "score_interval")
	b = appendInterval(b, t.ScoreInterval, in1, in2)
	b = appendKey(b, ","+in1, "runs")
	b = strconv.AppendInt(b, int64(t.Runs), 10)
	b = appendKey(b, ","+in1, "attempts")
	b = strconv.AppendInt(b, int64(t.Attempts), 10)
	b = appendKey(b, ","+in1, "failures")
	b = strconv.AppendInt(b, int64(t.Failures), 10)
	b = appendKey(b, ","+in1, "failure_rate")
	b = appendFloat(b, t.FailureRate)
	b = appendKey(b, ","+in1, "failure_rate_interval")
	b = appendInterval(b, t.FailureInterval, in1, in2)
	b = appendKey(b, ","+in1, "evidence")
	b = appendStrings(b, t.Evidence, in1, in2)
	b = appendKey(b, ","+in1, "failure_episodes")
	b = strconv.AppendInt(b, int64(t.Episodes), 10)
	b = appendKey(b, ","+in1, "intermittent_commits")
	b = strconv.AppendInt(b, int64(t.IntermittentCommits), 10)
	b = appendKey(b, ","+in1, "flake_score")
	b = appendFloat(b, t.FlakeScore)
	b = appendKey(b, ","+in1, "rank_score")
	b = appendFloat(b, t.RankScore)
	b = appendKey(b, ","+in1, "flake_rate")
	b = appendFloat(b, t.FlakeRate)
	b = appendKey(b, ","+in1, "flake_rate_interval")
	b = appendInterval(b, t.FlakeRateInterval, in1, in2)
	b = appendKey(b, ","+in1, "failed_commits")
	b = strconv.AppendInt(b, int64(t.FailedCommits), 10)
	b = appendKey(b, ","+in1, "rate_commits")
	b = strconv.AppendInt(b, int64(t.RateCommits), 10)
	b = appendKey(b, ","+in1, "regression_commits")
	b = strconv.AppendInt(b, int64(t.RegressionCommits), 10)
	b = appendKey(b, ","+in1, "infra_failures")
	b = strconv.AppendInt(b, int64(t.InfraFailures), 10)
	b = appendKey(b, ","+in1, "signatures")
	if t.Signatures == nil {
		b = append(b, "null"...)
	} else if len(t.Signatures) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i, s := range t.Signatures {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, in2...)
			b = append(b, '{')
			b = appendKey(b, in3, "hash")
			b = appendString(b, s.Hash)
			b = appendKey(b, ","+in3, "runs")
			b = strconv.AppendInt(b, int64(s.Runs), 10)
			b = appendKey(b, ","+in3, "failures")
			b = strconv.AppendInt(b, int64(s.Failures), 10)
			b = appendKey(b, ","+in3, "message")
			b = appendString(b, s.Message)
			b = append(b, in2...)
			b = append(b, '}')
		}
		b = append(b, in1...)
		b = append(b, ']')
	}
	if t.File != "" {
		b = appendKey(b, ","+in1, "file")
		b = appendString(b, t.File)
	}
	if t.Line != 0 {
		b = appendKey(b, ","+in1, "line")
		b = strconv.AppendInt(b, int64(t.Line), 10)
	}
	if len(t.Owners) > 0 {
		b = appendKey(b, ","+in1, "owners")
		b = appendStrings(b, t.Owners, in1, in2)
	}
	if t.Timeline != "" {
		b = appendKey(b, ","+in1, "timeline")
		b = appendString(b, t.Timeline)
	}
	if t.TooFewCommits {
		b = appendKey(b, ","+in1, "too_few_commits")
		b = append(b, "true"...)
	}
	b = append(b, "\n    }"...)
	return b
}

func appendKey(b []byte, lead, key string) []byte {
	b = append(b, lead...)
	b = append(b, '"')
	b = append(b, key...)
	return append(b, `": `...)
}

func appendInterval(b []byte, iv score.Interval, in, inner string) []byte {
	b = append(b, '{')
	b = appendKey(b, inner, "low")
	b = appendFloat(b, iv.Low)
	b = appendKey(b, ","+inner, "high")
	b = appendFloat(b, iv.High)
	b = append(b, in...)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string, in, inner string) []byte {
	switch {
	case ss == nil:
		return append(b, "null"...)
	case len(ss) == 0:
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, inner...)
		b = appendString(b, s)
	}
	b = append(b, in...)
	return append(b, ']')
}

// escapeInvisible writes, in JSON text j, each invisible character that
// encoding/json leaves as it is (DEL, the C1 controls, formatting
// characters such as bidirectional overrides, but the zero-width space the
// renderers put after @) as a \uXXXX escape: the same string, but text a
// terminal shows as it is, so the CLI's output guard, which drops them,
// changes nothing in JSON on standard output. Such characters only occur
// inside strings, where the escape means them. j is returned when it has
// none.
func escapeInvisible(j []byte) []byte {
	i := 0
	for i < len(j) && j[i] < utf8.RuneSelf && j[i] != 0x7f {
		i++
	}
	if i == len(j) {
		return j
	}
	out := append([]byte(nil), j[:i]...)
	for i < len(j) {
		r, n := utf8.DecodeRune(j[i:])
		if Invisible(r) {
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else {
			out = append(out, j[i:i+n]...)
		}
		i += n
	}
	return out
}

// Invisible reports whether r, not an ASCII control below space, is a
// character a terminal should not be sent: DEL, the C1 controls and the
// formatting and other default-ignorable characters (hidden), but the
// zero-width space the renderers put after @. The CLI's output guard
// drops them; JSON escapes them (escapeInvisible).
func Invisible(r rune) bool {
	return r == 0x7f || r >= utf8.RuneSelf && r != '\u200b' && (unicode.IsControl(r) || hidden(r))
}

// appendFloat formats f as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-9, not e-09.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString quotes s as encoding/json does, with HTML escaping, and
// invisible characters escaped (escapeInvisible). Plain printable ASCII is
// copied; anything else goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, escapeInvisible(q)...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
