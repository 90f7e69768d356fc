package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
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
// encoded are written in order, and the shell is encoded meanwhile. Chunk
// c is encoded into slot c mod len(slots), and is handed to a worker only
// once chunk c − len(slots) has been written from that slot, so at most
// 2 × GOMAXPROCS chunks are held however long the list, and a slot never
// holds any chunk but the one the writer waits for there. (Workers that
// took chunk numbers themselves and then waited for the slot to be free
// could take it out of turn: a worker preempted between the two let the
// one holding the chunk after it take the slot, and the report came out
// with its tests out of order; seen under load in
// TestGateJSONMatchesEncodingJSON.)
func writeWithTests[T any](w io.Writer, shell any, tests []T, appendTest func([]byte, *T) ([]byte, error), name func(*T) string) error {
	const chunk = 256
	chunks := (len(tests) + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	slots := make([]slot, min(2*workers, chunks))
	for i := range slots {
		slots[i] = slot{ready: make(chan struct{}, 1)}
	}
	// jobs holds the chunks handed out and not yet taken: at most one a
	// slot.
	jobs := make(chan int, len(slots))
	for c := range slots {
		jobs <- c
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				var c int
				select {
				case c = <-jobs:
				case <-stop:
					return
				}
				s := &slots[c%len(slots)]
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
	err := writeInOrder(w, shell, slots, chunks, func(next int) { jobs <- next })
	close(stop)
	wg.Wait()
	return err
}

// slot is a buffer of writeWithTests: a chunk is encoded into it, then
// written once it is ready.
type slot struct {
	buf   []byte
	err   error
	ready chan struct{}
}

// writeInOrder writes shell with the chunks encoded into slots in place of
// its empty tests list, chunk c from slot c mod len(slots); once a slot is
// written, hand gives out the chunk due in it next.
func writeInOrder(w io.Writer, shell any, slots []slot, chunks int, hand func(next int)) error {
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
		if next := c + len(slots); next < chunks {
			hand(next)
		}
	}
	bw.WriteString("\n  ]")
	bw.Write(doc[i+len(testsKey):])
	bw.WriteByte('\n')
	return bw.Flush() // a bufio.Writer keeps the first write error
}
