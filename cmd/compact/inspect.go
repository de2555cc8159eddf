package main

import (
	"context"
	"errors"
)

// runInspect is built by its own issue; until then it says so.
func runInspect(_ context.Context, _ *env, _ []string) error {
	return errors.New("inspect: not built yet")
}
