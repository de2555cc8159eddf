//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStaleTempsRemoved is QA-14 item 1: the temporary files a killed
// `compact -o FILE` left beside FILE are removed by the next run on FILE,
// when older than a minute and held by no process; a run in progress
// (locked) and a fresh file keep theirs, and other outputs' are left.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	old := time.Now().Add(-2 * staleTempAge)
	mk := func(name string, at time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("half a transcript"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	killed := mk(".out.json.tmp-killed", old)
	fresh := mk(".out.json.tmp-fresh", time.Now())
	running := mk(".out.json.tmp-running", old)
	other := mk(".other.json.tmp-killed", old)
	// A process writing out.json at this moment holds its file's lock.
	f, err := os.Open(running)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	if code, _, stderr := runCmd(t, chat(40), nil, "--force", "-o", out, "-"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for p, want := range map[string]bool{killed: false, fresh: true, running: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".out.json.tmp-*"))
	if len(left) != 2 {
		t.Errorf("temporary files left: %v, want the fresh and the running one", left)
	}
}

// TestTempLockedUntilRenamed: the temporary file a run writes is locked
// from its creation until it replaces the output, so no other run takes
// it for debris while the run waits (on a slow stdout, say) to rename it.
func TestTempLockedUntilRenamed(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	var o outputSet
	var seen bool
	o.add(nil, "-o", out, func(w io.Writer) error { _, err := w.Write([]byte("{}")); return err })
	o.add(nil, "-o", "", func(w io.Writer) error {
		// Runs after every temporary file is written, before the renames.
		tmps, _ := filepath.Glob(filepath.Join(dir, ".out.json.tmp-*"))
		seen = len(tmps) == 1 && tempInUse(tmps[0])
		return nil
	})
	o.files[1].stdout = io.Discard
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if err := o.commit(); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatal("the temporary file was not locked while it waited for its rename")
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".out.json.tmp-*")); len(tmps) != 0 {
		t.Fatalf("left %v", tmps)
	}
}
