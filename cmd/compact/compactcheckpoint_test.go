package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

// secretChat is chat(n) with a live-looking OpenAI key in the head, which
// the compaction keeps verbatim.
func secretChat(n int) (string, string) {
	const key = "sk-proj-Q7rT2vW9xZ4bN6mK8pL3sD5fG1hJ0aEyUiOcVnBqRwStXzYe"
	return strings.Replace(chat(n), "Fix the flaky test in pkg/cache.",
		"Fix the flaky test in pkg/cache. OPENAI_API_KEY="+key, 1), key
}

func TestCompactCommandSavesCheckpoint(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	in, key := secretChat(40)
	rep := filepath.Join(dir, "report.json")
	code, stdout, stderr := runCmd(t, in, nil, "--force", "--checkpoint", store, "--session", "job-7", "--report", rep, "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, key) {
		t.Fatal("the output lost the head's text: kept messages must be verbatim")
	}
	r := readReport(t, rep)
	if r.Checkpoint == "" {
		t.Fatal("the report does not name the checkpoint")
	}

	s, err := checkpoint.NewFileStore(store, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Latest(context.Background(), "job-7")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != r.Checkpoint || len(c.Compactions) != 1 || c.Compactions[0].Method != compact.MethodFallback {
		t.Fatalf("checkpoint %s with %d compactions, want %s with the fallback record", c.ID, len(c.Compactions), r.Checkpoint)
	}
	var handoffs int
	for _, m := range c.Transcript.Messages {
		if compact.IsHandoffText(m.Text()) {
			handoffs++
		}
	}
	if handoffs != 1 {
		t.Fatalf("the stored transcript holds %d handoffs, want 1", handoffs)
	}
	// Redacting is the default: no byte of the store holds the key.
	assertNoSecretInDir(t, store, key)

	// A second run compacts again and chains onto the first checkpoint.
	code, _, stderr = runCmd(t, in, nil, "--force", "--checkpoint", store, "--session", "job-7", "-")
	if code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	hist, err := s.History(context.Background(), "job-7")
	if err != nil || len(hist) != 2 {
		t.Fatalf("history: %d checkpoints, %v; want 2", len(hist), err)
	}
}

func TestCompactCommandCheckpointPlain(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	in, key := secretChat(40)
	code, _, stderr := runCmd(t, in, map[string]string{"COMPACT_CHECKPOINT_STORE": store},
		"--force", "--session", "plain-1", "--checkpoint-plain", "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := checkpoint.NewFileStore(store, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Latest(context.Background(), "plain-1")
	if err != nil {
		t.Fatal(err)
	}
	var kept bool
	for _, m := range c.Transcript.Messages {
		kept = kept || strings.Contains(m.Text(), key)
	}
	if !kept {
		t.Fatal("--checkpoint-plain stored a redacted transcript")
	}
}

func TestCompactCommandCheckpointUsage(t *testing.T) {
	in, _ := secretChat(4)
	for _, args := range [][]string{
		{"--checkpoint", t.TempDir(), "-"},                     // no session
		{"--checkpoint", t.TempDir(), "--session", "a/b", "-"}, // not a session ID
	} {
		if code, _, stderr := runCmd(t, in, nil, append([]string{"--force"}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
}

func assertNoSecretInDir(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
