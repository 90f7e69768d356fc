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
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s: not a regular file", f)
	}
	return sizedFile{fh, fi.Size()}, nil
}

// sizedFile is a file that tells its size when opened, which the reader
// sizes its tables by.
type sizedFile struct {
	*os.File
	size int64
}

func (f sizedFile) Size() int64 { return f.size }

// fileID is what tells one file from another; not known here.
func fileID(os.FileInfo) ([2]uint64, bool) { return [2]uint64{}, false }
