//go:build !unix

package fallback_test

import "time"

// cpuTime is 0 where getrusage is not: benchmarks then report wall time only.
func cpuTime() time.Duration { return 0 }
