package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// execCLI runs one command line against buffers.
func execCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// chatWithEverything has a tool pair, an orphan call at the end and a
// compact handoff.
func chatWithEverything(t *testing.T) string {
	h := compact.Handoff{Goal: "ship the release", TaskSnapshot: "fix the build"}.Message()
	msgs := []map[string]any{
		{"role": "system", "content": "be brief"},
		{"role": "user", "content": h.Text()},
		{"role": "user", "content": "list files"},
		{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "ls", "arguments": "{}"}}}},
		{"role": "tool", "tool_call_id": "c1", "content": "a.go"},
		{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "cat", "arguments": "{}"}}}},
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInspectText(t *testing.T) {
	in := chatWithEverything(t)
	code, out, errs := execCLI(t, in, "inspect")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"file          <stdin>",
		"format        openai (OpenAI Chat Completions messages",
		"size          " + thousands(int64(len(in))) + " bytes",
		"messages      6: system 1, user 2, assistant 2, tool 1",
		"tool calls    2 in 2 turns, 1 results",
		`orphans       1: #5 call without result "c2"`,
		"handoffs      1: #1 (compact handoff)",
		"markers       none",
		"records       none",
	} {
		if !strings.Contains(out, want+"\n") && !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectJSON(t *testing.T) {
	in := chatWithEverything(t)
	code, out, errs := execCLI(t, in, "inspect", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"format", "messages", "roles", "tool_calls", "tool_results", "orphans", "handoffs", "markers", "bytes", "records"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	var rep inspectReport
	json.Unmarshal([]byte(out), &rep)
	if rep.Format != "openai" || rep.Messages != 6 || rep.Roles["user"] != 2 || rep.ToolCalls != 2 || rep.ToolResults != 1 ||
		rep.Bytes != int64(len(in)) || len(rep.Orphans) != 1 || rep.Orphans[0].CallID != "c2" ||
		len(rep.Handoffs) != 1 || rep.Handoffs[0].Kind != "compact" {
		t.Errorf("report %+v", rep)
	}
}

func TestInspectFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chat.json")
	os.WriteFile(path, []byte(`[{"role":"user","content":"hi"}]`), 0o644)
	cases := []struct {
		args []string
		code int
		want string // in stdout, or stderr when code != 0
	}{
		{[]string{"inspect", path, "--json"}, 0, `"format": "openai"`},
		{[]string{"inspect", "--format", "anthropic", path}, 0, "format        anthropic"},
		{[]string{"inspect", "--format", "nope", path}, 2, "unrecognised transcript format"},
		{[]string{"inspect", filepath.Join(dir, "missing.json")}, 2, "no such file"},
		{[]string{"inspect", dir}, 2, "is a directory"},
		{[]string{"inspect", path, path}, 2, "expected one FILE"},
		{[]string{"inspect", "--bogus"}, 2, "flag provided but not defined"},
	}
	for _, c := range cases {
		code, out, errs := execCLI(t, "", c.args...)
		got := out
		if c.code != 0 {
			got = errs
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d with %q", c.args, code, got, c.code, c.want)
		}
	}
}

func TestInspectBadInput(t *testing.T) {
	for _, in := range []string{"", "\x00\x01 garbage", `[{"role":"user","content":42}]`, `[{"role":"user"`} {
		code, _, errs := execCLI(t, in, "inspect")
		if code != 2 || !strings.Contains(errs, "<stdin>") {
			t.Errorf("inspect %q: exit %d, stderr %q; want 2 naming <stdin>", in, code, errs)
		}
	}
}

func TestInspectHelp(t *testing.T) {
	code, _, errs := execCLI(t, "", "inspect", "--help")
	if code != 0 || !strings.Contains(errs, "Examples:") || !strings.Contains(errs, "--json") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
}

// TestInspectCorpus: inspect's summary of every corpus transcript agrees
// with the transcript read directly.
func TestInspectCorpus(t *testing.T) {
	for _, path := range corpusTranscripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := readTranscriptFile(t, path)
			code, out, errs := execCLI(t, "", "inspect", "--json", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var rep inspectReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(path)
			roles, calls, results, handoffs := 0, 0, 0, 0
			for _, m := range tr.Messages {
				calls += len(m.ToolCalls())
				results += len(m.ResultIDs())
				if m.Summary || compact.IsHandoffText(m.Text()) {
					handoffs++
				}
			}
			for _, n := range rep.Roles {
				roles += n
			}
			markers := 0
			for _, r := range tr.Records {
				if r.Marker {
					markers++
				}
			}
			if rep.Format != tr.Format || rep.Messages != len(tr.Messages) || roles != rep.Messages ||
				rep.ToolCalls != calls || rep.ToolResults != results || len(rep.Orphans) != len(tr.Orphans()) ||
				len(rep.Handoffs) != handoffs || len(rep.Markers) != markers || rep.Records != len(tr.Records) ||
				rep.Bytes != st.Size() {
				t.Errorf("report %+v disagrees with the transcript (%d messages, %d calls, %d results, %d orphans, %d handoffs, %d markers, %d records, %d bytes)",
					rep, len(tr.Messages), calls, results, len(tr.Orphans()), handoffs, markers, len(tr.Records), st.Size())
			}
			if code, out, _ := execCLI(t, "", "inspect", path); code != 0 || !strings.Contains(out, "format        "+tr.Format) {
				t.Errorf("text output: exit %d\n%s", code, out)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
