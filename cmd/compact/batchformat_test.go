package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-43 (batch part): a transcript detection cannot decide (its first MiB
// is one string) is read with --format, as the main command reads it; an
// unknown or read-only format is a usage error.
func TestBatchFormat(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{
		"a_note":   strings.Repeat("word ", 240000), // before the messages: the sniff window ends in it
		"messages": []map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "long.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	status := func(args ...string) string {
		t.Helper()
		rep := filepath.Join(dir, "report.json")
		code, _, stderr := runCmd(t, "", nil, append([]string{"batch", in, "--out", filepath.Join(dir, "out"), "--report", rep,
			"--summarizer", "fallback", "--quiet"}, args...)...)
		if code != exitOK && code != exitFailure {
			t.Fatalf("batch %v: exit %d: %s", args, code, stderr)
		}
		var r struct {
			Files []fileResult `json:"files"`
		}
		b, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &r); err != nil || len(r.Files) != 1 {
			t.Fatalf("report: %v, %d files", err, len(r.Files))
		}
		return string(r.Files[0].Status) + " " + r.Files[0].Format
	}
	if got := status(); strings.HasPrefix(got, "unchanged") {
		t.Fatalf("detected without --format (%s): the test needs an undecidable file", got)
	}
	if got := status("--format", "openai"); got != "unchanged openai" {
		t.Errorf("with --format openai: %s, want unchanged openai", got)
	}
	for _, bad := range []string{"nope", "openai-responses"} {
		code, _, stderr := runCmd(t, "", nil, "batch", in, "--out", filepath.Join(dir, "out2"), "--format", bad)
		if code != exitUsage || !strings.Contains(stderr, "--format") {
			t.Errorf("--format %s: exit %d, %q; want %d", bad, code, stderr, exitUsage)
		}
	}
}
