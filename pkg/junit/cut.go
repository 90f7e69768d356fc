package junit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A value longer than its cap is cut on a UTF-8 boundary and marked at the
// end, so that whoever reads it sees that it was cut and by how much.
//
// A cut name (classname, name, suite name, file) ends in
// "…[cut N bytes, sha256:0123456789abcdef]", N being the bytes left out, and
// the whole, mark included, fits in MaxNameBytes. The digest of the whole
// value keeps apart two long names that share their first MaxNameBytes
// bytes, and the same long name is cut the same way in every file, so it
// stays one test.
//
// A cut message, failure type or property value ends in "…[cut N bytes]",
// after the first bytes that fit its cap.
const (
	cutOpen  = "…[cut "
	cutClose = " bytes]"
	// nameMarkRoom is the room kept for a name's mark: "…[cut ", up to 20
	// digits, " bytes, sha256:", 16 hex digits and "]".
	nameMarkRoom = len(cutOpen) + 20 + len(" bytes, sha256:") + 16 + 1
)

// appendCutName appends b cut to MaxNameBytes with its mark. b is longer
// than MaxNameBytes.
func appendCutName(dst, b []byte) []byte {
	n := runeStart(b, MaxNameBytes-nameMarkRoom)
	sum := sha256.Sum256(b)
	dst = append(dst, b[:n]...)
	dst = append(dst, cutOpen...)
	dst = strconv.AppendInt(dst, int64(len(b)-n), 10)
	dst = append(dst, " bytes, sha256:"...)
	dst = hex.AppendEncode(dst, sum[:8])
	return append(dst, ']')
}

// cutText returns b as text: whole when it fits in limit bytes, otherwise
// its first bytes up to limit and a mark.
func cutText(b []byte, limit int) string {
	if len(b) <= limit {
		return text(b)
	}
	return text(appendCut(make([]byte, 0, limit+len(cutOpen)+20+len(cutClose)), b, limit))
}

// appendCut appends b, or when it is longer than limit, its first bytes up
// to limit and a mark.
func appendCut(dst, b []byte, limit int) []byte {
	if len(b) <= limit {
		return append(dst, b...)
	}
	n := runeStart(b, limit)
	return appendMark(append(dst, b[:n]...), len(b)-n)
}

// markCut ends text that keep stopped taking, cut bytes short: it drops a
// UTF-8 sequence left incomplete at the end and appends the mark.
func markCut(b []byte, cut int) []byte {
	i := len(b) - 1
	for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(b[i:]) {
		cut += len(b) - i
		b = b[:i]
	}
	return appendMark(b, cut)
}

func appendMark(dst []byte, cut int) []byte {
	dst = append(dst, cutOpen...)
	dst = strconv.AppendInt(dst, int64(cut), 10)
	return append(dst, cutClose...)
}

// runeStart returns the largest n <= max that does not split a UTF-8
// sequence in b.
func runeStart(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for k := 0; k < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(b[n]); k++ {
		n--
	}
	return n
}

// Uncut returns a message, failure type or property value without the
// mark of a cut, if it has one. Failure signatures hash what is left, so
// two failures that differ only past the cap, in their length, still share
// a signature.
func Uncut(s string) string {
	if !strings.HasSuffix(s, cutClose) {
		return s
	}
	i := strings.LastIndex(s, cutOpen)
	if i < 0 || i+len(cutOpen) >= len(s)-len(cutClose) {
		return s
	}
	for _, c := range s[i+len(cutOpen) : len(s)-len(cutClose)] {
		if c < '0' || c > '9' {
			return s
		}
	}
	return s[:i]
}
