//go:build unix

package collect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// openRegular opens f and checks, on the open file, that it is still a
// regular file. It opens without blocking, so a FIFO put in the file's
// place after the walk cannot hang the open. A regular file ignores
// O_NONBLOCK, so the flag is left set.
//
// The file is read with plain system calls rather than through *os.File:
// a history in Surefire's layout is thousands of small files, and each
// call saved is a few microseconds per file. Opening, checking and
// reading a file whose size fstat gave costs four calls (open, fstat,
// read, close) where *os.File, made blocking again, costs eight.
func openRegular(f string) (io.ReadCloser, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(f, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: f, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, fmt.Errorf("%s: not a regular file", f)
	}
	left := st.Size
	if left == 0 {
		left = -1 // empty, or a size the kernel does not report
	}
	return &fdFile{fd: fd, name: f, left: left, size: st.Size}, nil
}

// fdFile reads a regular file by its descriptor.
type fdFile struct {
	fd   int
	name string
	// left is what remains of the size fstat reported. Once it is read,
	// the next Read says io.EOF without asking the kernel: a file is read
	// as it was when opened, and bytes appended after that may be left
	// out. -1 when fstat reported no size (an empty file, or one the
	// kernel makes as it is read): it is read until the kernel says it
	// ended.
	left int64
	size int64 // as fstat reported it
}

// Size is the file's size when it was opened, which the reader sizes its
// tables by.
func (r *fdFile) Size() int64 { return r.size }

func (r *fdFile) Read(p []byte) (int, error) {
	if r.fd < 0 {
		return 0, os.ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.left == 0 {
		return 0, io.EOF
	}
	if r.left > 0 && int64(len(p)) > r.left {
		p = p[:r.left]
	}
	for {
		n, err := syscall.Read(r.fd, p)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: r.name, Err: err}
		}
		if n == 0 {
			return 0, io.EOF
		}
		if r.left > 0 {
			r.left = max(r.left-int64(n), 0)
		}
		return n, nil
	}
}

func (r *fdFile) Close() error {
	if r.fd < 0 {
		return os.ErrClosed
	}
	err := syscall.Close(r.fd)
	r.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: r.name, Err: err}
	}
	return nil
}

// fileID is what tells one file from another here, its device and inode.
func fileID(fi os.FileInfo) ([2]uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	// Dev and Ino are of other types on some systems.
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true
}
