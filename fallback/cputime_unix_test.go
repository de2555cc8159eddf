//go:build unix

package fallback_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, all threads. The
// machine the benchmarks run on is shared, so wall time per op overstates
// what one Build costs; cpu-ms/op is what it costs one core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
