//go:build !unix

package matrix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Without Unix process groups only the command's own process is signalled;
// children it spawned may outlive it.

func ownGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) error { return kill(cmd) }

func kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// exitText says how the command ended, for the run's test case: "exited
// with status 2".
func exitText(ps *os.ProcessState) string {
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

// killGroup ends process pid at once.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
