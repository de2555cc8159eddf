//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time (user and system, all threads) the process
// has used.
func Process() time.Duration { return rusage(syscall.RUSAGE_SELF) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
