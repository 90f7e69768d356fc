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
// share its session and are left alone, as are the running commands of
// other Runs. It returns how many it killed.
func reapOrphans() int {
	spawning.Lock()
	defer spawning.Unlock()
	self, sid := os.Getpid(), mySession()
	killed := 0
	for range 20 {
		found := 0
		for _, p := range children(self) {
			if p.sid == sid {
				continue
			}
			if _, running := live.Load(p.sid); running {
				continue
			}
			found++
			if !p.zombie {
				killed++
				_ = syscall.Kill(-p.sid, syscall.SIGKILL) // its session's group, when it leads one
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, 0, nil)
		}
		if found == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond) // what they started comes to us in turn
	}
	return killed
}

type procInfo struct {
	pid, sid int
	zombie   bool
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
		sid, _ := strconv.Atoi(string(f[3]))
		if pp == ppid {
			out = append(out, procInfo{pid: pid, sid: sid, zombie: string(f[0]) == "Z"})
		}
	}
	return out
}

// mySession is this process's session id.
func mySession() int {
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	return int(sid)
}
