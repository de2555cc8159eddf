package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 14, item 8: a raw NUL byte inside a string and a field nested
// 100,000 deep are named, with their byte offset and what is wrong, by
// every command that reads a transcript, and by redact --as json; batch
// reports the file as failed, not as "not a transcript".
func TestMalformedInputNamedByEveryCommand(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"nul.jsonl":  "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"a\x00b\"}}\n",
		"deep.jsonl": `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"x","x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}}\n",
		"nul.json":   "[{\"role\":\"user\",\"content\":\"a\x00b\"}]",
		"deep.json":  `[{"role":"user","content":"x","x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}]",
	}
	want := map[string]string{"nul.jsonl": `'\x00' in string literal`, "deep.jsonl": "exceeded max depth",
		"nul.json": `'\x00' in string literal`, "deep.json": "exceeded max depth"}
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"--summarizer", "fallback", path}, {"inspect", path}, {"convert", "--to", "openai", path},
			{"count", path}, {"check", path}, {"redact", "--as", "json", path},
		} {
			code, _, stderr := runCmd(t, "", nil, args...)
			if code != exitUsage || !strings.Contains(stderr, "byte ") || !strings.Contains(stderr, want[name]) {
				t.Errorf("%s %v: exit %d, stderr %q", name, args[:len(args)-1], code, stderr)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCmd(t, "", nil, "batch", "--summarizer", "fallback", "--out", out, "--quiet", dir)
	if code == exitOK || strings.Contains(stdout+stderr, "not a transcript") || !strings.Contains(stdout+stderr, "exceeded max depth") {
		t.Errorf("batch: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// Issue 14, items 6 and 7 at the command line: a wrong-typed field fails
// the command naming line and field, --skip-bad-lines reads past it with a
// warning; invalid UTF-8 is a warning naming where, --strict-utf8 an error.
func TestBadFieldsAndUTF8AtTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	typed := filepath.Join(dir, "typed.jsonl")
	os.WriteFile(typed, []byte(`{"type":"user","uuid":"u0","sessionId":"s","message":{"role":"user","content":"hi"}}
{"type":"user","uuid":"u1","parentUuid":"u0","sessionId":"s","message":{"role":"user","content":5}}
`), 0o644)
	code, _, stderr := runCmd(t, "", nil, "inspect", typed)
	if code != exitUsage || !strings.Contains(stderr, "typed.jsonl:2") || !strings.Contains(stderr, `"message.content"`) {
		t.Errorf("wrong type: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := runCmd(t, "", nil, "inspect", "--skip-bad-lines", typed)
	if code != exitOK || !strings.Contains(stderr, "typed.jsonl:2") || !strings.Contains(stderr, "warning: line skipped") || !strings.Contains(stdout, "skipped 1") {
		t.Errorf("skip: exit %d, %q\n%s", code, stderr, stdout)
	}
	bad := filepath.Join(dir, "utf8.jsonl")
	os.WriteFile(bad, []byte("{\"type\":\"user\",\"uuid\":\"u0\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}\n"), 0o644)
	code, _, stderr = runCmd(t, "", nil, "convert", "--to", "openai", bad)
	if code != exitOK || !strings.Contains(stderr, "utf8.jsonl:1") || !strings.Contains(stderr, "invalid UTF-8 at byte 83 of the line") {
		t.Errorf("utf-8: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "", nil, "convert", "--strict-utf8", "--to", "openai", bad)
	if code != exitUsage || !strings.Contains(stderr, "invalid UTF-8") {
		t.Errorf("strict: exit %d, %q", code, stderr)
	}
}

// QA-14 item 3: an OpenHands evaluation output of several instances is
// read as its first with a warning saying so and naming --instance, which
// picks another, in every command that reads.
func TestInstanceOfAnEvaluationOutput(t *testing.T) {
	line := func(id, ask string) string {
		return `{"instance_id":"` + id + `","history":[{"id":0,"source":"user","action":"message","args":{"content":"` + ask + `"}},{"id":1,"source":"agent","action":"message","args":{"content":"done"}}]}` + "\n"
	}
	path := filepath.Join(t.TempDir(), "output.jsonl")
	os.WriteFile(path, []byte(line("django-1", "fix one")+line("safety-misconfig", "fix two")), 0o644)
	for _, cmd := range [][]string{{"inspect"}, {"count"}, {"convert", "--to", "openai"}} {
		code, _, stderr := runCmd(t, "", nil, append(cmd, path)...)
		if code != exitOK || !strings.Contains(stderr, "read instance 1 of 2 (django-1)") || !strings.Contains(stderr, "--instance ID picks another") {
			t.Errorf("%v: exit %d, %q", cmd, code, stderr)
		}
	}
	code, stdout, stderr := runCmd(t, "", nil, "convert", "--to", "openai", "--instance", "safety-misconfig", path)
	if code != exitOK || !strings.Contains(stdout, "fix two") || strings.Contains(stdout, "fix one") || strings.Contains(stderr, "read instance") {
		t.Errorf("--instance: exit %d, %q\n%s", code, stderr, stdout)
	}
	code, _, stderr = runCmd(t, "", nil, "inspect", "--instance", "nope", path)
	if code == exitOK || !strings.Contains(stderr, "instance not found") {
		t.Errorf("unknown instance: exit %d, %q", code, stderr)
	}
}
