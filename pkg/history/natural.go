package history

import (
	"cmp"
	"strings"
)

// naturalCompare orders names as people number files: runs of ASCII
// digits compare by their value, so head-2.xml comes before head-10.xml,
// and everything else byte by byte. A value is compared by its digits
// without leading zeros, by length and then digit by digit, so a run of
// any length compares exactly. Names equal that way (head-01 and head-1)
// compare byte by byte, so the order is total: no two names tie.
func naturalCompare(a, b string) int {
	// The names of one history's runs mostly share a long prefix (a
	// directory, "head-"): skip it, then step back to the start of the
	// run of digits it ends in, if any, where both names are at the same
	// place.
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return 0
	}
	for i > 0 && isDigit(a[i-1]) {
		i--
	}
	j := i
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if !isDigit(ca) || !isDigit(cb) {
			if ca != cb {
				return cmp.Compare(ca, cb)
			}
			i++
			j++
			continue
		}
		// Two runs of digits: skip their leading zeros, then the longer
		// value is the greater, and values as long compare as text.
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		si, sj := i, j
		for i < len(a) && isDigit(a[i]) {
			i++
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		if c := cmp.Compare(i-si, j-sj); c != 0 {
			return c
		}
		if c := strings.Compare(a[si:i], b[sj:j]); c != 0 {
			return c
		}
	}
	// One name is a prefix of the other, as numbered: the shorter first.
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// keyCompare orders the keys of runs (order.key: the commit, "|" and
// model.Run.Key). Two runs of one commit that have no run id are keyed by
// "src:" and their sources, which compare as runLess orders the runs, by
// naturalCompare; every other pair compares byte by byte. Keys of one
// commit's runs without an id share a prefix, so they are together in
// byte order and reordering them among themselves keeps the order total.
func keyCompare(a, b string) int {
	if a == b {
		return 0 // most often: one run's key, the same string
	}
	const src = "|src:"
	if i := strings.IndexByte(a, '|'); i >= 0 && strings.HasPrefix(a[i:], src) {
		if p := a[:i+len(src)]; strings.HasPrefix(b, p) {
			return naturalCompare(a[len(p):], b[len(p):])
		}
	}
	return strings.Compare(a, b)
}
