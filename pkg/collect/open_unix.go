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
// place after the walk cannot hang the read, and hands the descriptor to
// os.NewFile in blocking mode: a regular file gains nothing from the
// runtime's poller, and registering each of thousands of files with it is
// a system call apiece.
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
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: f, Err: err}
	}
	return os.NewFile(uintptr(fd), f), nil
}
