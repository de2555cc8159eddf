package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/sample"
)

// moduleRoot is the repository's root from this package's directory.
const moduleRoot = "../.."

// TestQuickStart runs the README's main-job command (the line of its
// Quick start that starts with "go run ./cmd/compact") on the checked-in
// sample session, and checks that it prints the line the README quotes
// (but for the time it took) and writes a Claude Code session that reads
// back with a compaction summary.
func TestQuickStart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "go run ./cmd/compact "); ok {
			args = strings.Fields(rest)
			break
		}
	}
	if args == nil {
		t.Fatal("README.md has no line starting with \"go run ./cmd/compact \"")
	}
	out := filepath.Join(t.TempDir(), "compacted.jsonl")
	for i, a := range args {
		switch {
		case i > 0 && args[i-1] == "-o":
			args[i] = out
		case strings.HasPrefix(a, "testdata/"):
			args[i] = filepath.Join(moduleRoot, a)
		}
	}
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	quoted := regexp.MustCompile("`(compact: [^`]*)`").FindSubmatch(readme)
	if quoted == nil {
		t.Fatal("README.md quotes no `compact: ...` line")
	}
	ms := regexp.MustCompile(`[0-9.]+(ms|µs|s)$`)
	got := strings.TrimSpace(stderr.String())
	if ms.ReplaceAllString(got, "TIME") != ms.ReplaceAllString(string(quoted[1]), "TIME") {
		t.Errorf("the command prints\n\t%s\nthe README says it prints\n\t%s", got, quoted[1])
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := format.Read(bytes.NewReader(data), out, "")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != string(format.ClaudeCode) {
		t.Errorf("wrote %s, want a Claude Code session", tr.Format)
	}
	summaries := 0
	for _, m := range tr.Messages {
		if m.Summary {
			summaries++
		}
	}
	if summaries != 1 {
		t.Errorf("%d compaction summaries in the output, want 1", summaries)
	}
}

// TestSampleSessionsCLI runs compact, compact redact and compact inspect
// on every checked-in sample session: each compacts offline into a
// transcript of its own format, and redact masks the secrets the session
// printed.
func TestSampleSessionsCLI(t *testing.T) {
	s := sample.Generate(sample.DefaultSeed)
	for _, f := range sample.Files(sample.DefaultSeed) {
		t.Run(f.Name, func(t *testing.T) {
			path := filepath.Join(moduleRoot, "testdata", "sessions", f.Name)
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			out := filepath.Join(dir, "compacted"+filepath.Ext(f.Name))
			if code := run(context.Background(), e, []string{"--summarizer", "fallback", "--force", path, "-o", out}); code != 0 {
				t.Fatalf("compact: exit %d: %s", code, stderr.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := format.Read(bytes.NewReader(data), out, "")
			if err != nil || tr.Format != f.Format {
				t.Fatalf("compacted output reads as %q (%v), want %s", tr.Format, err, f.Format)
			}

			clean := filepath.Join(dir, "clean"+filepath.Ext(f.Name))
			code, _, errOut := redactRun(t, "", nil, path, "-o", clean)
			if code != 0 {
				t.Fatalf("redact: exit %d: %s", code, errOut)
			}
			data, err = os.ReadFile(clean)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range s.Secrets {
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("redact left %q", secret)
				}
			}
			if _, err := format.Read(bytes.NewReader(data), clean, ""); err != nil {
				t.Errorf("redacted session does not read: %v", err)
			}
		})
	}
}
