//go:build !linux

package tokens

import "time"

// threadCPU is not measured outside Linux; the CPU metrics are skipped.
func threadCPU() time.Duration { return 0 }
