package main

import (
	"context"
	"errors"
)

// runRedact is built by its own issue; until then it says so.
func runRedact(_ context.Context, _ *env, _ []string) error {
	return errors.New("redact: not built yet")
}
