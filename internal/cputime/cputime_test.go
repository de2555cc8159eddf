package cputime

import (
	"runtime"
	"testing"
)

// TestCPUTimeAdvances: spinning for a while shows up in both counters where
// the platform measures them, and neither goes backwards.
func TestCPUTimeAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0, t0 := Process(), Thread()
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i ^ (x >> 3)
	}
	_ = x
	p1, t1 := Process(), Thread()
	if p1 < p0 || t1 < t0 {
		t.Fatalf("went backwards: process %v -> %v, thread %v -> %v", p0, p1, t0, t1)
	}
	if runtime.GOOS == "linux" && (p1 == p0 || t1 == t0) {
		t.Fatalf("no CPU time counted on linux: process %v -> %v, thread %v -> %v", p0, p1, t0, t1)
	}
}
