package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-39.3: --checkpoint-plain without a checkpoint to save is a usage
// error, not a flag that silently does nothing.
func TestCheckpointPlainNeedsASession(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--checkpoint-plain",
		"../../testdata/sessions/claudecode_invoicer.jsonl", "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "--checkpoint-plain goes with --session") {
		t.Errorf("exit %d, %q; want %d naming --session", code, stderr, exitUsage)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("refused, but the output was written")
	}
}
