package main

import (
	"context"
	"errors"
)

// runBatch is built by its own issue; until then it says so.
func runBatch(_ context.Context, _ *env, _ []string) error {
	return errors.New("batch: not built yet")
}
