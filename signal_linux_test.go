package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair: the controller and the terminal.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock, n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("ptsname: %v", e)
	}
	tty, err = os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(int(n))), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	go io.Copy(io.Discard, ptmx) // the terminal's output must not fill up
	return ptmx, tty
}

// TestTestTouchingTheTerminal: flakegate matrix started from a terminal, on
// a test that sets the terminal's modes (as an interactive test runner or
// `stty` does). The command ran in a background process group of that
// terminal, where the kernel stops such a process (SIGTTOU): the run froze
// for good. In a session of its own the test gets an error and the run ends.
func TestTestTouchingTheTerminal(t *testing.T) {
	_, tty := openPTY(t)
	cmd, _, _ := startMatrix(t, "stty -echo < /dev/tty; exit 0", func(cmd *exec.Cmd) {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("flakegate matrix still runs after 20 s: the test command is stopped by the terminal")
	}
}
