package matrix

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// live holds the process groups of the test commands running now, by the
// leader's pid, for KillRunning.
var live sync.Map

// track records a running command's process group until done is called.
func track(pid int) (done func()) {
	live.Store(pid, struct{}{})
	return func() { live.Delete(pid) }
}

// spawning is held while a test command starts and until it is tracked,
// and by reapOrphans while it looks: another Run's command, just started,
// is not an orphan.
var spawning sync.Mutex

// roots holds the work directories of the Runs going on now (their
// worktrees) and the repository each belongs to, for KillRunning.
var roots sync.Map

// trackRoot records a Run's work directory until done is called.
func trackRoot(root, repo string) (done func()) {
	roots.Store(root, repo)
	return func() { roots.Delete(root) }
}

// KillRunning kills, at once, the process groups of the test commands that
// Run started and that are still running. It is for a process about to
// exit without the cleanup that cancelling Run's context does (a second
// interrupt): the test commands run in their own sessions, so the signal
// that ends flakegate does not reach them, and they would run on. It
// returns the commands that remove the worktrees left behind, which git
// lists until they are removed and pruned, for the caller to print.
func KillRunning() (cleanup []string) {
	live.Range(func(pid, _ any) bool {
		killGroup(pid.(int))
		return true
	})
	reapOrphans(0, true)
	roots.Range(func(root, repo any) bool {
		cleanup = append(cleanup, fmt.Sprintf("rm -rf %s && git -C %s worktree prune", shellQuote(root.(string)), shellQuote(repo.(string))))
		return true
	})
	sort.Strings(cleanup)
	return cleanup
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
