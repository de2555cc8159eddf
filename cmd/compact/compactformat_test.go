package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-43: the main command takes --format NAME as inspect, convert, count
// and check do: the input is read as that format, not detected.
func TestCompactCommandFormatFlag(t *testing.T) {
	var msgs []map[string]string
	for i := range 30 {
		msgs = append(msgs, map[string]string{"role": "user", "content": strings.Repeat("step ", 200) + string(rune('a'+i%26))},
			map[string]string{"role": "assistant", "content": strings.Repeat("done ", 200)})
	}
	b, _ := json.Marshal(msgs)
	in := string(b)
	dir := t.TempDir()
	for _, as := range []string{"", "anthropic"} {
		out, rep := filepath.Join(dir, "out"+as+".json"), filepath.Join(dir, "rep"+as+".json")
		args := []string{"--force", "--summarizer", "fallback", "-o", out, "--report", rep, "-"}
		if as != "" {
			args = append([]string{"--format", as}, args...)
		}
		code, _, stderr := runCmd(t, in, nil, args...)
		if code != exitOK {
			t.Fatalf("--format %q: exit %d: %s", as, code, stderr)
		}
		want := format.OpenAIChat // detected: plain messages are OpenAI Chat
		if as != "" {
			want = format.Name(as)
		}
		if r := readReport(t, rep); r.Format != string(want) {
			t.Errorf("--format %q: the report says %s, want %s", as, r.Format, want)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := format.ReadWith(bytes.NewReader(raw), out, want, format.ReadOptions{}); err != nil {
			t.Errorf("--format %q: the output does not read as %s: %v", as, want, err)
		}
	}
	code, stdout, stderr := runCmd(t, in, nil, "--format", "nope", "--force", "-")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, `unrecognised transcript format "nope"`) {
		t.Fatalf("--format nope: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
