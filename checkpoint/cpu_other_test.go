//go:build !unix

package checkpoint_test

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
