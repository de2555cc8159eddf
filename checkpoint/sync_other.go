//go:build !linux

package checkpoint

import "os"

// syncData flushes f to stable storage.
func syncData(f *os.File) error { return f.Sync() }
