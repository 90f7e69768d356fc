//go:build unix

package matrix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a session of its own, and so in a
// process group of its own, so that the whole tree it spawns can be
// signalled at once. A session, not only a group: a group that is not the
// terminal's foreground one is stopped (SIGTTIN, SIGTTOU) when a test reads
// from /dev/tty or sets the terminal's modes, and the run froze; in a
// session with no controlling terminal such a test gets an error instead,
// and the run ends. Output still goes to flakegate's stdout and stderr.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// killGroup ends process group pid at once (SIGKILL).
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// signalGroup sends sig to the command's process group. A group with no
// process left is not an error.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// terminate asks the command's process group to stop (SIGTERM); kill ends
// it (SIGKILL).
func terminate(cmd *exec.Cmd) error { return signalGroup(cmd, syscall.SIGTERM) }
func kill(cmd *exec.Cmd) error      { return signalGroup(cmd, syscall.SIGKILL) }

// exitText says how the command ended, for the run's test case: "exited
// with status 2", "was killed by signal 9 (killed)", or, for a status a
// shell gives a child killed by a signal, "exited with status 139 (128+11:
// …)".
func exitText(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	code := ps.ExitCode()
	s := fmt.Sprintf("exited with status %d", code)
	if n := code - 128; n > 0 && n <= 64 {
		s += fmt.Sprintf(" (128+%d: how a shell reports a process killed by signal %d, %v)", n, n, syscall.Signal(n))
	}
	return s
}
