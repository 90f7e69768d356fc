//go:build !unix

package collect

import (
	"fmt"
	"io"
	"os"
)

// openRegular opens f and checks, on the open file, that it is still a
// regular file.
func openRegular(f string) (io.ReadCloser, error) {
	fh, err := os.Open(f)
	if err != nil {
		return nil, err
	}
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s: not a regular file", f)
	}
	return fh, nil
}
