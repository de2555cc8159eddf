//go:build linux

package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

// QA-24 (regression): when the log's fdatasync fails (EIO: a failing disk, a network
// filesystem, a thin pool out of space), Save returns "sync log:
// input/output error" but leaves the batch in the log: the checkpoint the
// caller was told failed is Latest for every reader, and a retry of the
// same save with the same parent is ErrConflict. (After a failed fsync,
// Linux may already have dropped the dirty pages: the bytes readers now
// see may never reach the disk.) The fault is injected with strace.
func TestFailedSyncLeavesNoCheckpoint(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace to inject EIO into fdatasync")
	}
	dir := t.TempDir()
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := &checkpoint.Checkpoint{Session: "once", Task: "qa", Status: checkpoint.StatusRunning,
		Transcript: &compact.Transcript{Messages: []compact.Message{compact.UserMessage("step 1")}}}
	if err := s.Save(ctx, first, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(strace, "-f", "-o", filepath.Join(dir, "strace.out"), "-e", "trace=fdatasync", "-e", "inject=fdatasync:error=EIO", exe)
	cmd.Env = append(os.Environ(), writerModeEnv+"=once", writerDirEnv+"="+dir)
	cmd.Stdin = strings.NewReader("go\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("strace: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "error") {
		t.Skipf("the injected fault did not reach Save: %s", out)
	}
	s2, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	latest, err := s2.Latest(ctx, "once")
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != first.ID {
		t.Errorf("Save reported %q, yet its checkpoint %s is Latest (want %s, the last one that committed)",
			strings.TrimSpace(string(out)), latest.ID, first.ID)
	}
}

// TestFailedFirstSaveLeavesNoSession (QA-8.1): a session's first save that
// fails (here its sync) leaves no log behind, so the store has no session
// that verify would call a problem.
func TestFailedFirstSaveLeavesNoSession(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace to inject EIO into fdatasync")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(strace, "-f", "-o", filepath.Join(dir, "strace.out"), "-e", "trace=fdatasync", "-e", "inject=fdatasync:error=EIO", exe)
	cmd.Env = append(os.Environ(), writerModeEnv+"=first", writerDirEnv+"="+filepath.Join(dir, "store"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("strace: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "error") {
		t.Skipf("the injected fault did not reach Save: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "store", "fresh", "log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed first save left a log: %v", err)
	}
	s, err := checkpoint.NewFileStore(filepath.Join(dir, "store"), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, probs, err := checkpoint.Verify(ctx, s); err != nil || len(probs) != 0 {
		t.Errorf("Verify after a failed first save: %v %v", probs, err)
	}
	if _, err := checkpoint.Recover(ctx, s, "fresh"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Recover after a failed first save: %v, want ErrNotFound", err)
	}
}
