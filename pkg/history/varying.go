package history

import "strings"

// Names that vary from run to run. Some tests have a new name in every
// run: a property test's random seed in its id (test_prop[seed=8812]), a
// parameterized test's display name with a Java hash code
// (testTotal(Money)[1] Money@6ee12bac), a UUID or a timestamp made at
// collection. VaryingKey writes what varies as "…", so that the names of
// one such test share a key; the gate (pkg/gate, varying.go) and
// FoldVarying decide when names that share a key are one test.

// VaryingKey is id with what may vary between runs written "…", and
// whether it holds any: a UUID, a date and time (2026-12-03T09:15:42Z,
// 2026-12-03 09:15:42.123, 2026-12-03) or a time of day (09:15:42) as
// one, a Java identity hash code after "@"
// ("@…"), a hexadecimal address ("0x…"), a word of eight or more
// lower-case hexadecimal digits with a digit in it, a run of four or more
// digits. Test names are many, so it scans by hand.
func VaryingKey(id string) (string, bool) {
	var b []byte // nil until something varies
	last := 0    // id[last:i] is not copied to b yet
	put := func(i, end int, with string) int {
		if b == nil {
			b = make([]byte, 0, len(id))
		}
		b = append(append(b, id[last:i]...), with...)
		last = end
		return end
	}
	for i := 0; i < len(id); {
		c := id[i]
		switch {
		case isUUID(id[i:]):
			i = put(i, i+36, "…")
		case c >= '0' && c <= '9' && (i == 0 || id[i-1] < '0' || id[i-1] > '9') && timeAt(id[i:]) > 0:
			i = put(i, i+timeAt(id[i:]), "…")
		case c == '@':
			n := hexRun(id[i+1:], false)
			if end := i + 1 + n; n >= 1 && n <= 8 && !isWord(id, end) {
				i = put(i, end, "@…")
				continue
			}
			i++
		case c == '0' && i+1 < len(id) && (id[i+1] == 'x' || id[i+1] == 'X'):
			if n := hexRun(id[i+2:], true); n >= 4 {
				i = put(i, i+2+n, "0x…")
				continue
			}
			i++
		case isHex(c, false) && !isWord(id, i-1):
			n := hexRun(id[i:], false)
			if end := i + n; n >= 8 && !isWord(id, end) && strings.ContainsAny(id[i:end], "0123456789") {
				i = put(i, end, "…")
				continue
			}
			if c >= '0' && c <= '9' {
				if d := digitRun(id[i:]); d >= 4 {
					i = put(i, i+d, "…")
					continue
				}
			}
			i++
		case c >= '0' && c <= '9':
			if d := digitRun(id[i:]); d >= 4 {
				i = put(i, i+d, "…")
				continue
			}
			i++
		default:
			i++
		}
	}
	if b == nil {
		return id, false
	}
	return string(append(b, id[last:]...)), true
}

// isHex says whether c is a hexadecimal digit, lower case only unless upper.
func isHex(c byte, upper bool) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || upper && c >= 'A' && c <= 'F'
}

// hexRun is the length of s's leading run of hexadecimal digits.
func hexRun(s string, upper bool) int {
	n := 0
	for n < len(s) && isHex(s[n], upper) {
		n++
	}
	return n
}

// timeAt is the length of the date, with its time and zone if any, or
// the time of day with seconds, that s starts with, or 0: yyyy-mm-dd, then
// [T or space]hh:mm[:ss[.fraction]] and Z, ±hh:mm or ±hhmm; or
// hh:mm:ss[.fraction]. One followed by a digit is none.
func timeAt(s string) int {
	digits := func(at, n int) bool {
		return at+n <= len(s) && digitRun(s[at:at+n]) == n
	}
	// clock is the length of the time of day at s[at:], 0 when none;
	// seconds says it needs them.
	clock := func(at int, seconds bool) int {
		if !digits(at, 2) || at+2 >= len(s) || s[at+2] != ':' || !digits(at+3, 2) {
			return 0
		}
		n := at + 5
		if n+2 < len(s) && s[n] == ':' && digits(n+1, 2) {
			n += 3
			if n+1 < len(s) && (s[n] == '.' || s[n] == ',') && digits(n+1, 1) {
				n += 1 + digitRun(s[n+1:])
			}
		} else if seconds {
			return 0
		}
		return n - at
	}
	n := 0
	switch {
	case digits(0, 4) && len(s) > 4 && s[4] == '-' && digits(5, 2) && len(s) > 7 && s[7] == '-' && digits(8, 2):
		n = 10
		if n < len(s) && (s[n] == 'T' || s[n] == ' ') {
			if c := clock(n+1, false); c > 0 {
				n += 1 + c
				switch {
				case n < len(s) && s[n] == 'Z':
					n++
				case n < len(s) && (s[n] == '+' || s[n] == '-') && digits(n+1, 2):
					if n+3 < len(s) && s[n+3] == ':' && digits(n+4, 2) {
						n += 6
					} else if digits(n+3, 2) {
						n += 5
					}
				}
			}
		}
	default:
		n = clock(0, true)
	}
	if n == 0 || n < len(s) && s[n] >= '0' && s[n] <= '9' {
		return 0
	}
	return n
}

// digitRun is the length of s's leading run of decimal digits.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// isWord says whether s[i] is a word character (a letter, a digit, "_");
// false outside s.
func isWord(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isUUID says whether s starts with a UUID: 8-4-4-4-12 hexadecimal digits.
func isUUID(s string) bool {
	if len(s) < 36 {
		return false
	}
	for i := range 36 {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i], true) {
				return false
			}
		}
	}
	return true
}

// FoldVarying is h with the names of each test whose name varies from run
// to run made one test (Fold) under their key (VaryingKey), for the report:
// names that share a key, two or more of them, each in at most half of h's
// runs, and no run of h holding two of them (two in one run are two
// tests). It returns how many names each folded key holds, nil and h itself
// when none. Tests in more than half of the runs are not looked at, nor
// folded, so a suite of stable names costs a comparison a test.
func FoldVarying(h *History) (*History, map[string]int) {
	type family struct {
		ids   []string
		twice bool
		runs  map[int32]bool
	}
	var fams map[string]*family
	for _, t := range h.Tests {
		if 2*len(t.Cells) > len(h.Runs) {
			continue
		}
		key, ok := VaryingKey(t.ID)
		if !ok {
			continue
		}
		if fams == nil {
			fams = map[string]*family{}
		}
		f := fams[key]
		if f == nil {
			f = &family{runs: map[int32]bool{}}
			fams[key] = f
		}
		f.ids = append(f.ids, t.ID)
		for _, c := range t.Cells {
			f.twice = f.twice || f.runs[c.Run]
			f.runs[c.Run] = true
		}
	}
	var folded map[string]int
	to := map[string]string{} // the names folded, to their key
	for key, f := range fams {
		if f.twice || len(f.ids) < 2 {
			continue
		}
		if folded == nil {
			folded = map[string]int{}
		}
		folded[key] = len(f.ids)
		for _, id := range f.ids {
			to[id] = key
		}
	}
	if folded == nil {
		return h, nil
	}
	return Fold(h, func(id string) (string, bool) {
		key, ok := to[id]
		return key, ok
	}), folded
}
