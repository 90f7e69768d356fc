//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHangUpCleansUp: a closed terminal or a dropped ssh session sends
// SIGHUP. flakegate matrix treats it as a cancel, as it does SIGINT and
// SIGTERM: the running test command (its own process group) is killed and
// the worktrees are removed, where the default action killed flakegate alone
// and left both behind.
func TestHangUpCleansUp(t *testing.T) {
	cmd, pid, repo := startMatrix(t, "sleep 30", nil)
	cmd.Process.Signal(syscall.SIGHUP)
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("flakegate was killed by %v: the hang-up was not handled (%v)", ws.Signal(), err)
	}
	// As a shell reports a command a signal ended: 128 + SIGHUP (it
	// exited 1, an error's code).
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGHUP) {
		t.Errorf("exit code %d, want %d", code, 128+int(syscall.SIGHUP))
	}
	alive := syscall.Kill(pid, 0) == nil
	if alive {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("the test command %d still runs after the hang-up", pid)
	}
	if list := gitIn(t, repo, "worktree", "list"); strings.Count(list, "\n") > 0 {
		t.Errorf("worktrees left behind:\n%s", list)
	}
}

// gitIn runs git in repo, with no user or system configuration.
func gitIn(t *testing.T, repo string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// startMatrix starts this binary's `flakegate matrix` in a fresh repository
// with script as the test command, and waits for the command to write its
// pid.
func startMatrix(t *testing.T, script string, setup func(*exec.Cmd)) (cmd *exec.Cmd, pid int, repo string) {
	t.Helper()
	dir := t.TempDir()
	repo, work := filepath.Join(dir, "repo"), filepath.Join(dir, "work")
	os.MkdirAll(repo, 0o755)
	os.MkdirAll(work, 0o755)
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", "a")
	pidFile := filepath.Join(dir, "pid")
	cmd = exec.Command(os.Args[0], "matrix", "--base", "HEAD", "-k", "1", "--junit", "junit.xml", "--results", filepath.Join(dir, "results"),
		"--", "sh", "-c", "echo $$ > "+pidFile+"; "+script)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "FLAKEGATE_TEST_RUN_MAIN=1", "TMPDIR="+work)
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 200 && pid == 0; i++ {
		time.Sleep(50 * time.Millisecond)
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the test command did not start")
	}
	return cmd, pid, repo
}

// TestSecondSignalKillsTheTests: a second Ctrl-C ends flakegate at once,
// before the test command's grace period is over. The test command runs in
// a session of its own, which the terminal's signal does not reach; it was
// left running, writing to the terminal after flakegate had gone.
func TestSecondSignalKillsTheTests(t *testing.T) {
	var stderr bytes.Buffer
	cmd, pid, repo := startMatrix(t, "trap '' TERM INT; sleep 60", func(c *exec.Cmd) { c.Stderr = &stderr })
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("flakegate still runs 5 s after the second interrupt")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d, want 130", code)
	}
	for i := 0; i < 40 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(50 * time.Millisecond) // the kernel reaps it: init is its parent now
	}
	if syscall.Kill(pid, 0) == nil {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("the test command %d still runs after flakegate ended", pid)
	}
	// The worktrees stay, listed by git until removed and pruned: the
	// command that does it is printed, and does it.
	_, clean, ok := strings.Cut(stderr.String(), "worktrees left; remove them with: ")
	clean, _, _ = strings.Cut(clean, "\n")
	if !ok || !strings.Contains(clean, "worktree prune") {
		t.Fatalf("no cleanup command on stderr:\n%s", stderr.String())
	}
	if out, err := exec.Command("sh", "-c", clean).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", clean, err, out)
	}
	if out := gitIn(t, repo, "worktree", "list"); strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("worktrees after the printed cleanup:\n%s", out)
	}
}
