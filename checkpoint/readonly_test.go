//go:build linux

package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// QA-22 (regression): a store on a read-only medium (a mounted backup, a snapshot) cannot
// be read at all: every reader opens DIR/SESSION/lock O_RDWR|O_CREATE for
// its shared lock, so Latest fails with EROFS, and `checkpoint verify`
// counts it as a damaged session and advises `checkpoint recover`.
// Needs root (mounts a tmpfs); skipped otherwise.
func TestReadOnlyStoreReadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	ids := growingSession(t, dir, 3)
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("remount read-only: %v", err)
	}
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Latest(context.Background(), "s1")
	if err != nil {
		t.Fatalf("Latest on a read-only store: %v", err)
	}
	if c.ID != ids[len(ids)-1] {
		t.Errorf("Latest = %s, want %s", c.ID, ids[len(ids)-1])
	}
	ctx := context.Background()
	if infos, err := s.List(ctx, checkpoint.Filter{}); err != nil || len(infos) != 1 {
		t.Errorf("List on a read-only store: %v %+v", err, infos)
	}
	if n, probs, err := checkpoint.Verify(ctx, s); err != nil || len(probs) != 0 || n != len(ids) {
		t.Errorf("Verify on a read-only store: %d checked, %v %v", n, probs, err)
	}
	if err := s.Save(ctx, c, c.ID); err == nil {
		t.Error("a save on a read-only store succeeded")
	}
}

// TestListShowsABusySession (QA-29): a session whose lock a writer holds
// is listed as busy after a bounded wait, the others as usual.
func TestListShowsABusySession(t *testing.T) {
	dir := t.TempDir()
	growingSession(t, dir, 2)
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := storetest.Sample("s2", 0)
	if err := s.Save(context.Background(), other, ""); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "s1", "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	fresh, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	defer fresh.Close()
	infos, err := fresh.List(context.Background(), checkpoint.Filter{})
	if err != nil || len(infos) != 2 {
		t.Fatalf("List beside a held lock: %v %+v", err, infos)
	}
	for _, in := range infos {
		if (in.Session == "s1") != in.Busy {
			t.Errorf("%+v", in)
		}
	}
}
