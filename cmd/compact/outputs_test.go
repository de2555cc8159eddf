package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Several outputs of one run are all or nothing: --handoff naming a
// directory fails the run before anything is written, and -o keeps what it
// held.
func TestOutputsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	out, rep := filepath.Join(dir, "out.json"), filepath.Join(dir, "r.json")
	if err := os.WriteFile(out, []byte("previous output"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, chat(40), nil, "--force", "--summarizer", "fallback", "-o", out, "--report", rep, "--handoff", dir, "-")
	if code == exitOK || !strings.Contains(stderr, "is a directory") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "previous output" {
		t.Fatalf("-o was replaced though the run failed: %.80q", b)
	}
	if _, err := os.Stat(rep); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--report written though the run failed: %v", err)
	}
	// A missing directory for one output fails the run the same way.
	code, _, stderr = runCmd(t, chat(40), nil, "--force", "-o", out, "--handoff", filepath.Join(dir, "no", "such", "h.md"), "-")
	if code == exitOK || !strings.Contains(stderr, "h.md") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "previous output" {
		t.Fatal("-o was replaced though --handoff could not be written")
	}
	// Two outputs naming one file are refused.
	code, _, stderr = runCmd(t, chat(40), nil, "--force", "-o", out, "--report", out, "-")
	if code != exitUsage || !strings.Contains(stderr, "name the same file") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertNoTemps(t, dir)
}

// A write that fails after others succeeded leaves every output as it
// was and no temporary file behind.
func TestOutputSetCommitFailure(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	os.WriteFile(a, []byte("old a"), 0o644)
	var o outputSet
	o.add(nil, "-o", a, writeString("new a"))
	o.add(nil, "-o", b, func(io.Writer) error { return errors.New("the summarizer broke mid-write") })
	o.add(nil, "-o", c, writeString("new c"))
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if err := o.commit(); err == nil || !strings.Contains(err.Error(), "mid-write") {
		t.Fatalf("commit: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Fatalf("a = %q", got)
	}
	for _, p := range []string{b, c} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists: %v", p, err)
		}
	}
	assertNoTemps(t, dir)
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}
