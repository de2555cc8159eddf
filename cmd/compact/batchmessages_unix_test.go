//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestBatchMessagesCountAndNameOnce (QA-8.4): a failed file is named once
// per line (its read error names it already, with the line or byte), and
// files turned down when found (a broken link, a FIFO) count in the
// progress lines as in the summary's total.
func TestBatchMessagesCountAndNameOnce(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeFiles(t, in, map[string]string{
		"a.json":    chat(40),
		"b.json":    chat(41),
		"nul.jsonl": "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\x00b\"}}\n",
		"x.md":      "# no",
	})
	if err := os.Symlink("nowhere", filepath.Join(in, "broken.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(in, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", out, "--progress-interval", "1ms"}, offline...)...)
	if code != exitFailure {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	nul := filepath.Join(in, "nul.jsonl")
	for _, text := range []string{stdout, stderr} {
		if strings.Contains(text, nul+": "+nul) {
			t.Errorf("the failed file is named twice:\n%s", text)
		}
	}
	if !strings.Contains(stderr, "compact batch: failed: "+nul+": byte 53: ") || !strings.Contains(stdout, "  "+nul+": byte 53: ") {
		t.Errorf("the failure line does not name the file once with its byte:\n%s\n%s", stderr, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := ""
	for _, l := range lines {
		if regexp.MustCompile(`^compact batch: \d+/\d+ files`).MatchString(l) {
			last = l
		}
	}
	if !strings.HasPrefix(lines[0], "compact batch: 6 files (") || !strings.HasPrefix(last, "compact batch: 6/6 files (2 compacted, 0 unchanged, 3 skipped, 1 failed)") {
		t.Errorf("progress: first %q, last %q", lines[0], last)
	}
	if !regexp.MustCompile(`(?m)^total\s+6\s`).MatchString(stdout) {
		t.Errorf("summary:\n%s", stdout)
	}
}
