//go:build !unix

package matrix

import (
	"errors"
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
