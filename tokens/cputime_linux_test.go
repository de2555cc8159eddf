//go:build linux

package tokens

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used. Benchmarks
// lock their goroutine to its thread and report throughput per CPU second
// next to wall-clock MB/s: on a machine shared with other work, the CPU
// figure is the one that does not depend on how busy the neighbours are.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
