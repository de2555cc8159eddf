package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

func redactRun(t *testing.T, stdin string, environ map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return environ[k] }}
	code := run(context.Background(), e, append([]string{"redact"}, args...))
	return code, out.String(), errb.String()
}

// Fake, format-correct secrets (valid GitHub checksum, random bodies).
const (
	ghToken  = "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"
	awsKeyID = "AKIAZ7QW3ER5TY2UI4OP"
	awsSec   = "LI5vb+0x1P6kRP827zIVIIsFKMkgIlGK9TJ+QiqG"
)

func TestRedactCommand(t *testing.T) {
	tests := []struct {
		name     string
		stdin    string
		args     []string
		environ  map[string]string
		code     int
		gone     []string // must not appear in stdout
		kept     []string // must appear in stdout
		stderrIn []string
	}{
		{name: "env text", stdin: "GITHUB_TOKEN=" + ghToken + "\nHOME=/home/dev\n",
			gone: []string{ghToken}, kept: []string{"GITHUB_TOKEN=[REDACTED:github-token#1]\n", "HOME=/home/dev\n"}},
		{name: "no secret: byte-identical", stdin: "commit 3f2a9c1e\nuuid 6b1f6e8a-3c1d-4e2b-9a7f-0c5d4e3b2a19\n",
			kept: []string{"commit 3f2a9c1e\nuuid 6b1f6e8a-3c1d-4e2b-9a7f-0c5d4e3b2a19\n"}},
		{name: "report", stdin: "x\naws_access_key_id = " + awsKeyID + "\naws_secret_access_key = " + awsSec + "\n", args: []string{"--report"},
			gone: []string{awsKeyID, awsSec}, stderrIn: []string{"<stdin>:2:21: aws-access-key-id (20 bytes)", "<stdin>:3:25: aws-secret-access-key (40 bytes)", "2 secret(s) masked"}},
		{name: "report json", stdin: "token: " + ghToken, args: []string{"--report", "--json"},
			stderrIn: []string{`{"file":"<stdin>","rule":"github-token","line":1,"column":8,"start":7,"end":47}`}},
		{name: "mask-env", stdin: "connecting with hunter2-corp-pw\n", args: []string{"--mask-env", "DB_PASS, NOPE"},
			environ: map[string]string{"DB_PASS": "hunter2-corp-pw"}, gone: []string{"hunter2-corp-pw"}, kept: []string{"[REDACTED:value#1]"}},
		{name: "as text keeps JSON-looking input as text", stdin: `{"k": "` + ghToken + `"}`, args: []string{"--as", "text"},
			gone: []string{ghToken}},
		{name: "as json rejects text", stdin: "not json", args: []string{"--as", "json"}, code: exitUsage, stderrIn: []string{"not JSON"}},
		{name: "bad --as", args: []string{"--as", "yaml"}, code: exitUsage},
		{name: "missing file", args: []string{"/nonexistent/x.jsonl"}, code: exitUsage},
		{name: "two files", args: []string{"a", "b"}, code: exitUsage},
		{name: "list rules", args: []string{"--list-rules"}, kept: []string{"github-token", "secret-assignment", "private-key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := redactRun(t, tt.stdin, tt.environ, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			for _, s := range tt.gone {
				if strings.Contains(out, s) {
					t.Errorf("stdout still holds %q:\n%s", s, out)
				}
			}
			for _, s := range tt.kept {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.stderrIn {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
		})
	}
}

// TestRedactKeepsJSONL injects secrets into a real Claude Code session and
// checks that the output is still the same transcript: valid JSONL, the
// same lines, readable by the format package, and without the secrets.
func TestRedactKeepsJSONL(t *testing.T) {
	raw, err := os.ReadFile(corpusPath(t, "claudecode_agentcmd_full-session-four.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	// A tool result that printed a .env file, with escaped newlines and quotes.
	inject, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_01Xyz", "content": "$ cat .env\nGITHUB_TOKEN=" + ghToken +
			"\nAWS_SECRET_ACCESS_KEY=\"" + awsSec + "\"\nPORT=8080\n"}}}})
	mid := len(lines) / 2
	lines = append(lines[:mid], append([]string{string(inject)}, lines[mid:]...)...)
	in := strings.Join(lines, "\n") + "\n"

	dir := t.TempDir()
	inPath := filepath.Join(dir, "session.jsonl")
	outPath := filepath.Join(dir, "clean.jsonl")
	if err := os.WriteFile(inPath, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := redactRun(t, "", nil, inPath, "-o", outPath, "--report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{ghToken, awsSec} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("output still holds %s", s)
		}
	}
	outLines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(outLines) != len(lines) {
		t.Fatalf("%d lines out, %d in", len(outLines), len(lines))
	}
	changed := 0
	for i := range lines {
		if !json.Valid([]byte(outLines[i])) {
			t.Fatalf("line %d is not JSON: %.200s", i+1, outLines[i])
		}
		if outLines[i] != lines[i] {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d lines changed, want only the injected one", changed)
	}
	if _, err := format.Read(bytes.NewReader(out), outPath, ""); err != nil {
		t.Errorf("redacted transcript no longer reads: %v", err)
	}
	if !strings.Contains(errOut, "2 secret(s) masked") {
		t.Errorf("report: %s", errOut)
	}
}

func TestRedactCustomRules(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.toml")
	if err := os.WriteFile(rules, []byte(`
[[rules]]
id = "acme-key"
description = "ACME internal key"
regex = '''acme_(?:live|test)_([a-z0-9]{24})'''
secretGroup = 1
keywords = ["acme_"]

[allowlist]
stopwords = ["deadbeef"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := redactRun(t, "key acme_live_q8w2xz0pl4vr7nt1yb6ck3mh and acme_test_deadbeefdeadbeefdeadbeef\n", nil, "--rules", rules)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "key acme_live_[REDACTED:acme-key#1] and acme_test_deadbeefdeadbeefdeadbeef\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}

	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[[rules]]\nid = \"x\"\nregex = \"(\"\n"), 0o644)
	if code, _, errOut := redactRun(t, "x", nil, "--rules", bad); code != exitUsage || !strings.Contains(errOut, `rule "x"`) {
		t.Errorf("bad rule: exit %d, stderr %q", code, errOut)
	}
	unknown := filepath.Join(dir, "unknown.toml")
	os.WriteFile(unknown, []byte("[[rules]]\nid = \"x\"\nregex = \"x\"\nkeyword = [\"x\"]\n"), 0o644)
	if code, _, errOut := redactRun(t, "x", nil, "--rules", unknown); code != exitUsage || !strings.Contains(errOut, "keyword") {
		t.Errorf("unknown field: exit %d, stderr %q", code, errOut)
	}
}

// TestRedactOutputAtomic checks that a failed run leaves an existing -o
// file alone.
func TestRedactOutputAtomic(t *testing.T) {
	dir := t.TempDir()
	outPath := filepath.Join(dir, "out.txt")
	os.WriteFile(outPath, []byte("previous"), 0o644)
	if code, _, _ := redactRun(t, "x", nil, "-o", outPath, "/nonexistent"); code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(outPath); string(b) != "previous" {
		t.Errorf("output file changed to %q", b)
	}
	if code, _, _ := redactRun(t, "token: "+ghToken+"\n", nil, "-o", outPath); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(outPath); string(b) != "token: [REDACTED:github-token#1]\n" {
		t.Errorf("output %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
