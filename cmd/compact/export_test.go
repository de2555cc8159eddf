package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-30 (regression): a checkpoint holds the compacted transcript, but no command gives
// it back as a file the agent can resume from: `checkpoint show --json`
// prints compact's internal JSON ({"format","messages","records"}), and
// `resume` prints only what runs next. A user whose -o file is gone (or who
// wants the checkpoint before the last) must write Go.
func TestCheckpointTranscriptExport(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "ck")
	out := filepath.Join(dir, "out.jsonl")
	if code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--checkpoint", store, "--session", "s1",
		"../../testdata/sessions/claudecode_invoicer.jsonl", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	exported := filepath.Join(dir, "export.jsonl")
	code, _, stderr := runCmd(t, "", nil, "checkpoint", "show", "--store", store, "--transcript", "-o", exported, "s1")
	if code != 0 {
		t.Fatalf("checkpoint show --transcript -o FILE: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(out)
	got, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	_, a, _ := runCmd(t, "", nil, "inspect", out)
	_, b, _ := runCmd(t, "", nil, "inspect", exported)
	if !strings.Contains(b, "claude-code") || summaryLines(a) != summaryLines(b) {
		t.Errorf("the exported transcript differs from the compacted output (%d vs %d bytes):\n%s\n---\n%s", len(got), len(want), a, b)
	}
}

// summaryLines keeps inspect's format, messages and tool-call lines (the
// size differs: the checkpoint is redacted).
func summaryLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "format") || strings.HasPrefix(l, "messages") || strings.HasPrefix(l, "tool calls") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestCheckpointTranscriptExportForms: to stdout, to another format, an
// earlier checkpoint by ID, and the usage errors.
func TestCheckpointTranscriptExportForms(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "ck")
	in := filepath.Join(dir, "chat.json")
	os.WriteFile(in, []byte(chat(40)), 0o600)
	if code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--checkpoint", store, "--session", "s1",
		in, "-o", filepath.Join(dir, "out.json")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(t, "", nil, "checkpoint", "show", "--store", store, "--transcript", "s1")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(stdout), "[") || !strings.Contains(stdout, "<<<compact:handoff>>>") {
		t.Fatalf("show --transcript to stdout: exit %d\n%s%s", code, stdout, stderr)
	}
	conv := filepath.Join(dir, "conv.jsonl")
	code, _, stderr = runCmd(t, "", nil, "checkpoint", "show", "--store", store, "--transcript", "--to", "openai-jsonl", "-o", conv, "s1")
	_, insp, _ := runCmd(t, "", nil, "inspect", conv)
	if code != 0 || !strings.Contains(insp, "openai-jsonl") {
		t.Errorf("show --transcript --to: exit %d %s\n%s", code, stderr, insp)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", conv, "s1"}, "go with --transcript"},
		{[]string{"--transcript", "--json", "s1"}, "drop --json"},
		{[]string{"--transcript", "--to", "nosuch", "s1"}, "cannot write"},
	} {
		code, out, errOut := runCmd(t, "", nil, append([]string{"checkpoint", "show", "--store", store}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d\n%s%s", c.args, code, out, errOut)
		}
	}
}
