package signature

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestFastRulesMatchRegexps compares each hand-written rule with the
// regular expression it stands for, on generated text rich in what the
// rules look for, and checks the cheap tests never miss a match.
func TestFastRulesMatchRegexps(t *testing.T) {
	pieces := []string{"5", "12", "3.25", "0.5", ".", "..", " ", "  ", "\t", "\n", "s", "S", "ms", "MS", "us", "µs", "μs", "Μs", "ns",
		"sec", "secs", "SECONDS", "second", "seconds", "millisecond", "milliseconds", "minute", "minutes", "mins", "x", "_", "a",
		"é", "ſ", "/tmp/", "/var/folders/", "/var/tmp/", "/private", "/private/tmp/", "/var/", "abc", ":", "'", "\"", ")", ",", "]",
		"-", "2026-11-30", "10:00:01", "2026-11-30T10:00:01Z", "1:2:3", "99:99:99", "1234-56-78", "@", "0x1f", "timed out after "}
	rng := rand.New(rand.NewPCG(uint64(len(pieces)), 2))
	var fastTmp, fastDur, clock, date *regexp.Regexp
	for _, r := range rules {
		switch r.repl {
		case "<tmp>":
			if r.fast != nil {
				fastTmp = regexp.MustCompile(r.expr)
			}
		case "<dur>":
			fastDur = regexp.MustCompile(r.expr)
		case "<time>":
			if strings.HasPrefix(r.expr, `\b\d{4}`) {
				date = regexp.MustCompile(r.expr)
			} else {
				clock = regexp.MustCompile(r.expr)
			}
		}
	}
	for i := 0; i < 300000; i++ {
		var b strings.Builder
		for n := rng.IntN(8); n >= 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := replaceDurations(s), fastDur.ReplaceAllString(s, "<dur>"); got != want {
			t.Fatalf("durations in %q: got %q, regexp %q", s, got, want)
		}
		if got, want := replaceTmp(s), fastTmp.ReplaceAllString(s, "<tmp>"); got != want {
			t.Fatalf("temp paths in %q: got %q, regexp %q", s, got, want)
		}
		if clock.MatchString(s) && !hasClock(s) {
			t.Fatalf("hasClock misses %q", s)
		}
		if date.MatchString(s) && !hasDate(s) {
			t.Fatalf("hasDate misses %q", s)
		}
	}
}
