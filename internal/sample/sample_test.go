package sample_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/sample"
	"github.com/compactkit/compact/redact"
)

var update = flag.Bool("update", false, "rewrite the sample sessions in testdata/sessions")

// sessionsDir is where the checked-in samples live, from this package.
const sessionsDir = "../../testdata/sessions"

// TestCheckedIn: testdata/sessions holds exactly what the generator writes
// with the default seed (go test ./internal/sample -update rewrites it).
func TestCheckedIn(t *testing.T) {
	files := sample.Files(sample.DefaultSeed)
	if *update {
		if err := os.MkdirAll(sessionsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(sessionsDir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
		got, err := os.ReadFile(filepath.Join(sessionsDir, f.Name))
		if err != nil {
			t.Fatalf("%v (run go test ./internal/sample -update)", err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s differs from what the generator writes (run go test ./internal/sample -update and review the diff)", f.Name)
		}
	}
	entries, err := os.ReadDir(sessionsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("%s/%s is not written by the generator", sessionsDir, e.Name())
		}
	}
}

// TestSessions reads every rendering of a few seeds with the format
// package: each is detected as its format, has at least 150 messages, tool
// calls with all their results (no orphan), failed results, edits, and the
// session's secrets, which the redactor removes.
func TestSessions(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{sample.DefaultSeed, 2, 3, 42} {
		s := sample.Generate(seed)
		for _, f := range sample.Files(seed) {
			t.Run(f.Name+"/seed"+itoa(seed), func(t *testing.T) {
				fm, err := format.Detect(f.Data[:min(len(f.Data), format.SniffSize)])
				if err != nil || string(fm.Name) != f.Format {
					t.Fatalf("detected %v (%v), want %s", fm.Name, err, f.Format)
				}
				tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
				if err != nil {
					t.Fatal(err)
				}
				if n := len(tr.Messages); n < 150 {
					t.Errorf("%d messages, want at least 150", n)
				}
				if o := tr.Orphans(); len(o) > 0 {
					t.Errorf("orphans: %v", o)
				}
				calls, failed := 0, 0
				for _, m := range tr.Messages {
					for _, p := range m.Parts {
						if p.ToolCall != nil {
							calls++
						}
						if p.IsError {
							failed++
						}
					}
				}
				if calls < 60 {
					t.Errorf("%d tool calls, want at least 60", calls)
				}
				// Claude Code and Anthropic mark failed results (is_error);
				// Codex and OpenAI say it only in the output's text.
				if (f.Format == "claude-code" || f.Format == "anthropic") && failed < 5 {
					t.Errorf("%d failed tool results, want at least 5", failed)
				}
				text := string(f.Data)
				for _, secret := range s.Secrets {
					if !strings.Contains(text, secret) {
						t.Errorf("the secret %q is not in the session", secret)
					}
					out, _ := r.RedactBytes(f.Data)
					if bytes.Contains(out, []byte(secret)) {
						t.Errorf("the redactor leaves %q", secret)
					}
				}
				for _, want := range []string{"test_round_half_up", "Decimal", "ROUND_HALF_UP", "pip install", "docs.python.org", "half-up, per line item"} {
					if !strings.Contains(text, want) {
						t.Errorf("no %q in the session", want)
					}
				}
			})
		}
	}
}

// TestSeedsDiffer: other seeds write other sessions; one seed always the
// same bytes.
func TestSeedsDiffer(t *testing.T) {
	a, b, again := sample.Files(1), sample.Files(2), sample.Files(1)
	for i := range a {
		if bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s: seeds 1 and 2 write the same bytes", a[i].Name)
		}
		if !bytes.Equal(a[i].Data, again[i].Data) {
			t.Errorf("%s: seed 1 writes different bytes on a second run", a[i].Name)
		}
	}
}

// TestSmall: the checked-in samples stay well under a megabyte in all.
func TestSmall(t *testing.T) {
	total := 0
	for _, f := range sample.Files(sample.DefaultSeed) {
		total += len(f.Data)
	}
	if total > 720<<10 {
		t.Errorf("%d bytes in all, want at most 720 KiB", total)
	}
	t.Logf("%d bytes in all", total)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
