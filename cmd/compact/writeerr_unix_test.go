//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// QA-39.1: a write that fails (here the file size limit, as a full disk
// would) names the output the user asked for, not its temporary file,
// whether it fails mid-write or at the last flush; nothing is left behind.
func TestWriteErrorNamesTheOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := buildCompact(t)
	in, err := filepath.Abs("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		// 288 KB: fails in the middle of the write.
		{"convert", []string{"convert", "--to", "claude-code", in, "-o"}},
		// ~40 KB: fails at the last flush.
		{"compact", []string{"--force", "--summarizer", "fallback", in, "-o"}},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "ul.jsonl")
		// ulimit -f counts 1024-byte blocks in bash, 512 in dash: 16 is
		// at most 16 KiB either way.
		cmd := batchCommand("/bin/sh", nil, append([]string{"-c", `ulimit -f 16 && exec "$0" "$@"`, bin}, append(c.args, out)...)...)
		msg, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
			t.Fatalf("%s: %v, want exit %d: %s", c.name, err, exitFailure, msg)
		}
		if s := string(msg); !strings.Contains(s, "write "+out+": file too large") || strings.Contains(s, ".tmp-") {
			t.Errorf("%s: the error does not name the output (or names the temporary file): %q", c.name, s)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: left behind: %v", c.name, entries)
		}
	}
}
