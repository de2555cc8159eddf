//go:build unix

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := flock(ctx, f, path, unix.LOCK_EX); err != nil {
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
// wait for a writer's batch to be durable before they read it. The lock
// file is opened read-only (flock needs no more), created only when
// missing; where it can be neither opened nor created (a read-only medium,
// a store another user owns) the reader goes on without it: no writer of
// this store can be waited for there, and a batch cut short reads as a
// torn tail, never as committed.
func lockShared(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	}
	if errors.Is(err, unix.EROFS) || errors.Is(err, fs.ErrPermission) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := flock(ctx, f, path, unix.LOCK_SH); err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// flock takes the lock how on f, waiting until it is free or ctx is done;
// on failure f is closed.
func flock(ctx context.Context, f *os.File, path string, how int) error {
	fd := int(f.Fd())
	wait := 20 * time.Microsecond
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return fmt.Errorf("lock %s: %w", path, err)
		}
		// Polling rather than a blocking flock keeps the wait cancellable.
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, 2*time.Millisecond)
	}
	return nil
}
