//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// QA-29 (regression): a writer that holds a session's lock and does not finish (stopped
// with Ctrl-Z or SIGSTOP in the middle of a save, an fdatasync hanging on
// a network filesystem) blocks every reader of the store forever, without
// a word: `compact checkpoint list` (every session, not only that one),
// show, verify and the next save wait silently until killed. Here the test
// holds s1's lock itself.
func TestListNotBlockedByAStuckWriter(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "ck")
	for _, s := range []string{"s1", "s2"} {
		if code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--checkpoint", store, "--session", s,
			"../../testdata/sessions/claudecode_invoicer.jsonl", "-o", filepath.Join(dir, s+".jsonl")); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	f, err := os.OpenFile(filepath.Join(store, "s1", "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCmd(t, "", nil, "checkpoint", "list", "--store", store)
		done <- result{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		if !strings.Contains(r.stdout, "s2") {
			t.Errorf("list beside a stuck writer: exit %d, s2 not listed: %s%s", r.code, r.stdout, r.stderr)
		}
		if r.code != 0 || !regexpLine(r.stdout, `^s1\s+BUSY\s+0\s+\?\s+-\s+\(a writer holds its lock`) {
			t.Errorf("list beside a stuck writer: exit %d, s1 not shown busy:\n%s%s", r.code, r.stdout, r.stderr)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("checkpoint list still waiting after 5 s for s1's lock, silently (s2 is not locked)")
	}
}
