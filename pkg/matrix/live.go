package matrix

import "sync"

// live holds the process groups of the test commands running now, by the
// leader's pid, for KillRunning.
var live sync.Map

// track records a running command's process group until done is called.
func track(pid int) (done func()) {
	live.Store(pid, struct{}{})
	return func() { live.Delete(pid) }
}

// KillRunning kills, at once, the process groups of the test commands that
// Run started and that are still running. It is for a process about to
// exit without the cleanup that cancelling Run's context does (a second
// interrupt): the test commands run in their own sessions, so the signal
// that ends flakegate does not reach them, and they would run on.
func KillRunning() {
	live.Range(func(pid, _ any) bool {
		killGroup(pid.(int))
		return true
	})
}
