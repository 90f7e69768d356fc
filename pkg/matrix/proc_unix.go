//go:build unix

package matrix

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own, so that the
// whole tree it spawns can be signalled at once.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

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
