// Package pieces is a reader for tests of huge inputs: the document is made
// piece by piece as it is read, so the test never holds it.
package pieces

import "io"

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
