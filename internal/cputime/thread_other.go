//go:build !linux

package cputime

import "time"

// Thread is measured on Linux only: elsewhere it returns 0.
func Thread() time.Duration { return 0 }
