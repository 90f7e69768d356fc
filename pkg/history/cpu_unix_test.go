//go:build unix

package history

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system time so far: benchmarks report
// it per operation, as wall time on a shared machine says as much about
// the neighbours as about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
