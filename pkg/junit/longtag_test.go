package junit

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLongTagSmallReads: a huge tag arriving a byte at a time is scanned
// twice at most (once to find that it is incomplete, once whole), not again
// after every byte, which would be quadratic.
func TestLongTagSmallReads(t *testing.T) {
	doc := `<testsuite><testcase name="` + strings.Repeat("x", 200<<10) + `"/></testsuite>`
	r := NewReader()
	n := 0
	if _, err := r.Parse("long", iotest.OneByteReader(bytes.NewReader([]byte(doc))), func(*Case) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("got %d cases, %v", n, err)
	}
	// <testsuite> and <testcase>, each scanned at most twice.
	if r.scans > 4 {
		t.Errorf("%d start-tag scans for 2 tags", r.scans)
	}
}
