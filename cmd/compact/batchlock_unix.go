//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// batchLockName is the lock file a batch holds in its output directory
// (beside its default checkpoint store) while it runs, so that two batches never write one --out at once (each
// would take the other's temporary files for debris of a killed run).
const batchLockName = ".compact/batch.lock"

// lockBatchOutput takes the output directory's lock. When another batch
// holds it, it fails with exit code 2 naming that batch's process, or with
// wait, says so once on notify and waits until it is free or ctx ends.
func lockBatchOutput(ctx context.Context, out string, wait bool, notify func(string)) (unlock func(), err error) {
	path := filepath.Join(out, batchLockName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("batch: lock %s: %w", path, err)
	}
	told := false
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 250*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("batch: lock %s: %w", path, err)
		}
		holder := "another process"
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				holder = "process " + strconv.Itoa(pid)
			}
		}
		if !wait {
			f.Close()
			return nil, &exitErr{code: exitUsage, err: fmt.Errorf("batch: another compact batch (%s) is writing to %s; wait for it to end, or run with --wait", holder, out)}
		}
		if !told {
			notify(fmt.Sprintf("compact batch: waiting for the batch writing to %s (%s) to end", out, holder))
			told = true
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("batch: waiting for %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
	// Who holds it, for the message of a batch that finds it taken.
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
