package matrix

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// adopt makes this process the subreaper of the processes it starts: a
// process a test command starts in a session of its own (setsid, Python's
// start_new_session=True), which the kill of the command's group does not
// reach, comes to this process when its parent ends, instead of to init,
// and reapOrphans can end it. It ran on into the next runs (a server
// holding its port, a writer holding its files) otherwise.
var adopt = sync.OnceFunc(func() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
})

// reapOrphans kills and reaps the processes this process adopted that are
// in a session of their own which no running test command leads: what a
// test command left behind. Children this process started itself (git)
// share its session and are left alone. group is the process group of the
// command that just ended, which its kill reached: its members, still
// dying, are reaped but not counted (0 for none). While another Run's
// command runs, an orphan may be what it started and still uses (a server
// it daemonized): then nothing is killed, only the dead reaped, unless all
// is set (the process is about to exit). It returns how many it killed.
// It never waits on a process that has not died: one that cannot be killed
// (another user's, one stuck in the kernel) is left, not waited for with
// spawning held, which KillRunning takes too.
func reapOrphans(group int, all bool) int {
	spawning.Lock()
	defer spawning.Unlock()
	self, sid := os.Getpid(), mySession()
	others := false
	live.Range(func(any, any) bool { others = true; return false })
	killed := 0
	signalled := map[int]bool{}
	for range 50 {
		found := 0
		for _, p := range children(self) {
			if p.sid == sid {
				continue
			}
			if _, running := live.Load(p.sid); running {
				continue
			}
			if p.zombie {
				var ws syscall.WaitStatus
				if pid, _ := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil); pid == p.pid {
					delete(signalled, p.pid)
					found++ // what it started comes to us in turn
				}
				continue
			}
			if others && !all && p.pgid != group {
				continue
			}
			found++
			if signalled[p.pid] {
				continue
			}
			signalled[p.pid] = true
			if p.pgid != group || group == 0 {
				killed++
			}
			_ = syscall.Kill(-p.sid, syscall.SIGKILL) // its session's group, when it leads one
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		if found == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return killed
}

type procInfo struct {
	pid, pgid, sid int
	zombie         bool
}

// children lists the processes whose parent is ppid, from /proc.
func children(ppid int) []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []procInfo
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold spaces and
		// parentheses, so the fields start after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 4 {
			continue
		}
		pp, _ := strconv.Atoi(string(f[1]))
		pgid, _ := strconv.Atoi(string(f[2]))
		sid, _ := strconv.Atoi(string(f[3]))
		if pp == ppid {
			out = append(out, procInfo{pid: pid, pgid: pgid, sid: sid, zombie: string(f[0]) == "Z"})
		}
	}
	return out
}

// mySession is this process's session id.
func mySession() int {
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	return int(sid)
}
