package main

import (
	"context"
	"errors"
)

// runCompact is built by its own issue; until then it says so.
func runCompact(_ context.Context, _ *env, _ []string) error {
	return errors.New("compact: not built yet")
}
