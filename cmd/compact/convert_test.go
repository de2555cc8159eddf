package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

const anthropicRequest = `{"model":"claude","max_tokens":100,"system":"be brief","messages":[
{"role":"user","content":"list files"},
{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"ls","input":{}},{"type":"tool_use","id":"t2","name":"pwd","input":{}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.go"},{"type":"tool_result","tool_use_id":"t2","content":"/src"}]}
]}`

func TestConvertStdinToOpenAI(t *testing.T) {
	code, out, errs := execCLI(t, anthropicRequest, "convert", "--to", "openai", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tr, err := format.Read(strings.NewReader(out), "out", "")
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range tr.Messages {
		roles = append(roles, string(m.Role))
	}
	if tr.Format != "openai" || strings.Join(roles, ",") != "system,user,assistant,tool,tool" || len(tr.Orphans()) != 0 {
		t.Errorf("got %s %v orphans %v:\n%s", tr.Format, roles, tr.Orphans(), out)
	}
}

func TestConvertOutputFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "req.json")
	os.WriteFile(in, []byte(anthropicRequest), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	if code, _, errs := execCLI(t, "", "convert", in, "--to", "openai-jsonl", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 5 {
		t.Errorf("%d lines, want 5:\n%s", n, data)
	}
	// A failed conversion leaves the existing output alone and no temporary file.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"role":"user","content":`), 0o644)
	if code, _, errs := execCLI(t, "", "convert", "--to", "openai", "-o", out, bad); code != 2 || !strings.Contains(errs, "bad.json") {
		t.Errorf("bad input: exit %d, %s", code, errs)
	}
	if again, _ := os.ReadFile(out); string(again) != string(data) {
		t.Error("the output was changed by a failed run")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("leftover files: %v", entries)
	}
}

func TestConvertFrom(t *testing.T) {
	in := `[{"role":"user","content":"hi"}]`
	code, out, errs := execCLI(t, in, "convert", "--from", "anthropic", "--to", "anthropic")
	if code != 0 || !strings.Contains(out, `{"role":"user","content":"hi"}`) {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
}

func TestConvertUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"convert"}, "--to is required"},
		{[]string{"convert", "--to", "openai-responses"}, "cannot write"},
		{[]string{"convert", "--to", "nope"}, "cannot write"},
		{[]string{"convert", "--to", "openai", "--from", "nope"}, `unknown --from format "nope"`},
		{[]string{"convert", "--to", "openai", "a", "b"}, "expected one FILE"},
		{[]string{"convert", "--to", "openai", "/no/such/file"}, "no such file"},
	}
	for _, c := range cases {
		code, _, errs := execCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 with %q", c.args, code, errs, c.want)
		}
	}
	if code, _, errs := execCLI(t, "garbage", "convert", "--to", "openai"); code != 2 || !strings.Contains(errs, "unrecognised transcript format") {
		t.Errorf("garbage: exit %d, %s", code, errs)
	}
}

func TestConvertHelp(t *testing.T) {
	code, _, errs := execCLI(t, "", "convert", "--help")
	if code != 0 || !strings.Contains(errs, "Examples:") || !strings.Contains(errs, "openai-jsonl") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
}

// TestConvertCorpus: "compact convert --to openai" turns every corpus
// transcript into OpenAI Chat JSON that reads back with its tool pairs
// intact; the other writers succeed too.
func TestConvertCorpus(t *testing.T) {
	for _, path := range corpusTranscripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in := readTranscriptFile(t, path)
			code, out, errs := execCLI(t, "", "convert", "--to", "openai", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			f, err := format.Detect([]byte(out))
			if err != nil || f.Name != format.OpenAIChat {
				t.Fatalf("output detected as %v (%v)", f.Name, err)
			}
			tr, err := format.Read(strings.NewReader(out), "out", format.OpenAIChat)
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Orphans()) == 0 && len(tr.Orphans()) != 0 {
				t.Errorf("orphans after conversion: %v", tr.Orphans())
			}
			if len(tr.Orphans()) != len(in.Orphans()) {
				t.Errorf("%d orphans, the input has %d", len(tr.Orphans()), len(in.Orphans()))
			}
			a, b := 0, 0
			for _, m := range in.Messages {
				a += len(m.ToolCalls())
			}
			for _, m := range tr.Messages {
				b += len(m.ToolCalls())
			}
			if a != b {
				t.Errorf("%d calls, the input has %d", b, a)
			}
			for _, to := range []string{"openai-jsonl", "anthropic"} {
				if code, out, errs := execCLI(t, "", "convert", "--to", to, path); code != 0 {
					t.Errorf("--to %s: exit %d: %s", to, code, errs)
				} else if _, err := format.Read(strings.NewReader(out), "out", format.Name(to)); err != nil {
					t.Errorf("--to %s: %v", to, err)
				}
			}
		})
	}
}
