//go:build !unix

package history

import "time"

func cpuTime() time.Duration { return 0 }
