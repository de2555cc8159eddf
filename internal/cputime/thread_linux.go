//go:build linux

package cputime

import (
	"syscall"
	"time"
)

// Thread returns the CPU time the calling OS thread has used; a benchmark
// locks its goroutine to its thread (runtime.LockOSThread) to measure
// itself alone.
func Thread() time.Duration { return rusage(syscall.RUSAGE_THREAD) }
