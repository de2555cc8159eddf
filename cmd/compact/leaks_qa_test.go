package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-2: a store URL's password reaches stderr when the store cannot be
// opened or is malformed (issue 17, leak 5).
func TestQAStorePasswordNotInErrors(t *testing.T) {
	const pw = "RedisPw55zzQA"
	for _, args := range [][]string{
		{"checkpoint", "list", "--store", "redis://:" + pw + "@127.0.0.1:1/0"},
		{"checkpoint", "verify", "--store", "redis://user:" + pw + "@127.0.0.1:1/0"},
		{"checkpoint", "list", "--store", "redis://user:" + pw + "@127.0.0.1:1/notanumber"},
		{"checkpoint", "list", "--store", "redis://user:" + pw + "@[::1:1/0"},
	} {
		code, stdout, stderr := runCmd(t, "", nil, args...)
		if strings.Contains(stdout+stderr, pw) {
			t.Errorf("%v: exit %d, the password is printed: %s", args, code, stderr)
		}
	}
}

// QA-20: a secret in a tool call kept verbatim (the tail) is masked in the
// checkpoint's arguments but stored whole in the call's "target" tag, so a
// redacted (default) checkpoint holds it and `checkpoint show --json`
// prints it.
func TestQACheckpointStoresNoSecretInToolTarget(t *testing.T) {
	const tok = "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"
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	planted := false
	for i := len(lines) - 1; i >= 0 && !planted; i-- {
		var rec map[string]any
		if json.Unmarshal([]byte(lines[i]), &rec) != nil {
			continue
		}
		msg, _ := rec["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, b := range content {
			blk, _ := b.(map[string]any)
			if blk["type"] == "tool_use" && blk["name"] == "Bash" {
				blk["input"] = map[string]any{"command": `curl -s -H "Authorization: Bearer ` + tok + `" https://api.github.com/user`}
				out, _ := json.Marshal(rec)
				lines[i] = string(out) + "\n"
				planted = true
				break
			}
		}
	}
	if !planted {
		t.Fatal("no Bash call to plant in")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "ck")
	code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--checkpoint", store, "--session", "t1", in, "-o", filepath.Join(dir, "out.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	log, err := os.ReadFile(filepath.Join(store, "t1", "log"))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(log), tok); i >= 0 {
		t.Errorf("the redacted checkpoint log holds the token: …%s…", log[max(0, i-60):i+10])
	}
	_, stdout, _ := runCmd(t, "", nil, "checkpoint", "show", "--store", store, "--json", "t1")
	if strings.Contains(stdout, tok) {
		t.Errorf("checkpoint show --json prints the token")
	}
}
