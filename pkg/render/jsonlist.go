package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// testsKey is the tests list of an indented document with no tests. JSON
// strings escape line breaks, so this occurs once, at the top level.
var testsKey = []byte("\n  \"tests\": []")

// writeWithTests writes shell, a report whose "tests" list is empty, as
// json.MarshalIndent(…, "", "  ") does with a final newline, and tests in
// place of that empty list, each as appendTest writes it (indented as an
// element of a top-level list). name names a test in an error.
//
// The tests are encoded in chunks on every core while the chunks already
// encoded are written in order, and the shell is encoded meanwhile: a
// chunk waits for a buffer that a written chunk frees, so at most
// 2 × GOMAXPROCS chunks are held however long the list.
func writeWithTests[T any](w io.Writer, shell any, tests []T, appendTest func([]byte, *T) ([]byte, error), name func(*T) string) error {
	const chunk = 256
	chunks := (len(tests) + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	slots := make([]slot, min(2*workers, chunks))
	for i := range slots {
		slots[i] = slot{ready: make(chan struct{}, 1), free: make(chan struct{}, 1)}
		slots[i].free <- struct{}{}
	}
	var next atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				select {
				case <-stop:
					return
				default:
				}
				if c >= chunks {
					return
				}
				s := &slots[c%len(slots)]
				select {
				case <-s.free:
				case <-stop:
					return
				}
				s.buf, s.err = s.buf[:0], nil
				if s.buf == nil {
					s.buf = make([]byte, 0, chunk<<10) // about a kilobyte a test
				}
				for k := c * chunk; k < min(len(tests), (c+1)*chunk); k++ {
					var err error
					s.buf = append(s.buf, "\n    "...)
					if s.buf, err = appendTest(s.buf, &tests[k]); err != nil {
						s.err = fmt.Errorf("test %q: %w", name(&tests[k]), err)
						break
					}
					if k < len(tests)-1 {
						s.buf = append(s.buf, ',')
					}
				}
				s.ready <- struct{}{}
			}
		})
	}
	err := writeInOrder(w, shell, slots, chunks)
	close(stop)
	wg.Wait()
	return err
}

// slot is a buffer of writeWithTests: a chunk is encoded into it once it
// is free and written once it is ready.
type slot struct {
	buf         []byte
	err         error
	ready, free chan struct{}
}

// writeInOrder writes shell with the chunks encoded into slots in place of
// its empty tests list, chunk c from slot c mod len(slots), freeing each
// slot once written.
func writeInOrder(w io.Writer, shell any, slots []slot, chunks int) error {
	doc, err := json.MarshalIndent(shell, "", "  ")
	if err != nil {
		return err
	}
	doc = escapeInvisible(doc)
	bw := bufio.NewWriterSize(w, 64<<10)
	if chunks == 0 {
		bw.Write(doc)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	i := bytes.Index(doc, testsKey)
	if i < 0 {
		return fmt.Errorf("no tests key in the encoded document") // the type lost its tests field
	}
	bw.Write(doc[:i+len(testsKey)-1]) // up to and including '['
	for c := range chunks {
		s := &slots[c%len(slots)]
		<-s.ready
		if s.err != nil {
			return s.err
		}
		bw.Write(s.buf)
		s.free <- struct{}{}
	}
	bw.WriteString("\n  ]")
	bw.Write(doc[i+len(testsKey):])
	bw.WriteByte('\n')
	return bw.Flush() // a bufio.Writer keeps the first write error
}
