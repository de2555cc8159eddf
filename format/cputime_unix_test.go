//go:build unix

package format

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used, so
// benchmarks can report it beside wall time on a machine shared with other
// work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
