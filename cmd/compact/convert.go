package main

import (
	"context"
	"errors"
)

// runConvert is built by its own issue; until then it says so.
func runConvert(_ context.Context, _ *env, _ []string) error {
	return errors.New("convert: not built yet")
}
