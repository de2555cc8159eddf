//go:build !unix

package main

import (
	"context"
	"os"
)

// batchLockName is the lock file a batch holds in its output directory.
const batchLockName = ".compact/batch.lock"

// lockBatchOutput cannot lock here (no flock): two batches on one --out are
// the user's to avoid.
func lockBatchOutput(ctx context.Context, out string, wait bool, notify func(string)) (func(), error) {
	return func() {}, os.MkdirAll(out, 0o755)
}
