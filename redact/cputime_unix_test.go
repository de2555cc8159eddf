//go:build unix

package redact

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used. The machine the
// benchmarks run on is shared; wall-clock MB/s drops when other jobs run,
// CPU-time MB/s (reported as cpu-MB/s) does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
