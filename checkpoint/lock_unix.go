//go:build unix

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock on path, creating the file if needed,
// waiting until it is free or ctx is done. It reports whether the file it
// locked is still the one at path (a Delete may have moved the directory
// away while it waited). Locks are per open file, so goroutines of one
// process exclude each other too.
func lockFile(ctx context.Context, path string) (unlock func(), current bool, err error) {
	f, err := flock(ctx, path, unix.LOCK_EX)
	if err != nil {
		return nil, false, err
	}
	fd := int(f.Fd())
	unlock = func() { f.Close() } // closing the last descriptor drops the lock
	var held, now unix.Stat_t
	if unix.Fstat(fd, &held) != nil || unix.Stat(path, &now) != nil {
		return unlock, false, nil
	}
	return unlock, held.Dev == now.Dev && held.Ino == now.Ino, nil
}

// lockShared takes a shared flock on path, as readers do, so that they
// wait for a writer's batch to be durable before they read it.
func lockShared(ctx context.Context, path string) (unlock func(), err error) {
	f, err := flock(ctx, path, unix.LOCK_SH)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

func flock(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	wait := 20 * time.Microsecond
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Polling rather than a blocking flock keeps the wait cancellable.
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, 2*time.Millisecond)
	}
	return f, nil
}
