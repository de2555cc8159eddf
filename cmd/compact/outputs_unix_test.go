//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// -o keeps a replaced file's mode; a new file gets 0666 less the umask.
func TestOutputModes(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	private := filepath.Join(dir, "private.json")
	os.WriteFile(private, []byte("x"), 0o600)
	os.Chmod(private, 0o600)
	fresh := filepath.Join(dir, "fresh.json")
	for _, p := range []string{private, fresh} {
		if code, _, stderr := runCmd(t, chat(40), nil, "--force", "--summarizer", "fallback", "-o", p, "-"); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	mode := func(p string) os.FileMode {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	if m := mode(private); m != 0o600 {
		t.Errorf("a replaced 0600 file became %o", m)
	}
	if m := mode(fresh); m != 0o644 {
		t.Errorf("a new file under umask 022 is %o, want 644", m)
	}
	syscall.Umask(0o077)
	strict := filepath.Join(dir, "strict.json")
	if code, _, stderr := runCmd(t, chat(40), nil, "--force", "--summarizer", "fallback", "-o", strict, "-"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if m := mode(strict); m != 0o600 {
		t.Errorf("a new file under umask 077 is %o, want 600", m)
	}
}
