//go:build !unix

package checkpoint

import (
	"context"
	"errors"
)

// lockFile is unsupported here: FileStore needs flock to keep processes
// from interleaving their writes.
func lockFile(ctx context.Context, path string) (func(), bool, error) {
	return nil, false, errors.New("checkpoint: FileStore needs flock, which this platform lacks")
}

func lockShared(ctx context.Context, path string) (func(), error) {
	return nil, errors.New("checkpoint: FileStore needs flock, which this platform lacks")
}
