// Package pieces is a reader for tests of huge inputs: the document is made
// piece by piece as it is read, so the test never holds it.
package pieces

import (
	"fmt"
	"io"
	"strings"
)

// Reader reads the pieces Next(0), Next(1), … until Next says there are no
// more. N counts the pieces handed out.
type Reader struct {
	Next func(i int) (string, bool)
	N    int
	cur  string
}

// Read implements io.Reader.
func (p *Reader) Read(b []byte) (int, error) {
	for p.cur == "" {
		s, ok := p.Next(p.N)
		if !ok {
			return 0, io.EOF
		}
		p.N++
		p.cur = s
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// LongNames is one <testsuite> of n testcases of class "c" whose names are
// size bytes long and differ only in their last four: the case for a
// name cap.
func LongNames(n, size int) *Reader {
	long := strings.Repeat("x", size-4)
	return &Reader{Next: func(i int) (string, bool) {
		switch {
		case i == 0:
			return `<testsuite name="s">`, true
		case i <= 4*n:
			return [...]string{`"/>`, `<testcase classname="c" name="`, long, fmt.Sprintf("%04d", (i-1)/4)}[i%4], true
		case i == 4*n+1:
			return `</testsuite>`, true
		}
		return "", false
	}}
}
