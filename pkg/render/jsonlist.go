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
// element of a top-level list). The tests are encoded in chunks on every
// core, a wave of chunks at a time, and each wave is written in order, so
// at most a wave is held however long the list. name names a test in an
// error.
func writeWithTests[T any](w io.Writer, shell any, tests []T, appendTest func([]byte, *T) ([]byte, error), name func(*T) string) error {
	doc, err := json.MarshalIndent(shell, "", "  ")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(tests) == 0 {
		bw.Write(doc)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	i := bytes.Index(doc, testsKey)
	if i < 0 {
		return fmt.Errorf("no tests key in the encoded document") // the type lost its tests field
	}
	bw.Write(doc[:i+len(testsKey)-1]) // up to and including '['
	const chunk = 256
	wave := 2 * runtime.GOMAXPROCS(0)
	bufs := make([][]byte, wave)
	errs := make([]error, wave)
	for start := 0; start < len(tests); start += wave * chunk {
		var wg sync.WaitGroup
		for c := range wave {
			lo := start + c*chunk
			if lo >= len(tests) {
				bufs[c] = bufs[c][:0]
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := bufs[c][:0]
				if buf == nil {
					buf = make([]byte, 0, chunk<<10) // about a kilobyte a test
				}
				errs[c] = nil
				for k := lo; k < min(len(tests), lo+chunk); k++ {
					var err error
					buf = append(buf, "\n    "...)
					if buf, err = appendTest(buf, &tests[k]); err != nil {
						errs[c] = fmt.Errorf("test %q: %w", name(&tests[k]), err)
						break
					}
					if k < len(tests)-1 {
						buf = append(buf, ',')
					}
				}
				bufs[c] = buf
			}()
		}
		wg.Wait()
		for c := range wave {
			if errs[c] != nil {
				return errs[c]
			}
			bw.Write(bufs[c])
		}
	}
	bw.WriteString("\n  ]")
	bw.Write(doc[i+len(testsKey):])
	bw.WriteByte('\n')
	return bw.Flush() // a bufio.Writer keeps the first write error
}
