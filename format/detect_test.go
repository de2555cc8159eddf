package format

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// corpusFormats says which format each corpus file is in.
var corpusFormats = map[string]Name{
	"claudecode_agentcmd_full-session-five.jsonl":                                           ClaudeCode,
	"claudecode_agentcmd_full-session-four.jsonl":                                           ClaudeCode,
	"claudecode_agentcmd_full-session-two.jsonl":                                            ClaudeCode,
	"claudecode_agentcmd_full-session.jsonl":                                                ClaudeCode,
	"claudecode_agenthistory_session_with_compaction.synthetic.jsonl":                       ClaudeCode,
	"claudecode_cclog_edge_cases.jsonl":                                                     ClaudeCode,
	"claudecode_cclog_representative_messages.jsonl":                                        ClaudeCode,
	"claudecode_cclog_todowrite_examples.jsonl":                                             ClaudeCode,
	"claudecode_simonw_sample_session.json":                                                 ClaudeCode,
	"codex_agentcmd_rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl": Codex,
	"codex_agentcmd_rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl": Codex,
	"codex_agentcmd_rollout-2025-09-25T09-49-46-01998190-fba6-7f40-9309-dc4e48c5844a.jsonl": Codex,
	"codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl": Codex,
	"codex_agenthistory_session_with_compaction.synthetic.jsonl":                            Codex,
	"gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json":                                GeminiCLI,
	"gemini_agentcmd_session-2025-10-29T10-36-453aa339.json":                                GeminiCLI,
	"minisweagent_deepseek_chat_test_1-100_django__django-11099.traj.json":                  MiniSWEAgent,
	"minisweagent_deepseek_chat_test_1-100_django__django-13265.traj.json":                  MiniSWEAgent,
	"minisweagent_deepseek_reasoner_dev_sqlfluff__sqlfluff-1733.traj.json":                  MiniSWEAgent,
	// A bare array of {role, content}: nothing tells it from OpenAI Chat,
	// and OpenAI Chat reads it exactly.
	"minisweagent_github_issue.traj.json":                                 OpenAIChat,
	"openhands_multi_swe_bench_output.jsonl":                              OpenHands,
	"openhands_resolver_mock_output.jsonl":                                OpenHands,
	"openhands_traj_basic.json":                                           OpenHands,
	"openhands_traj_basic_gui_mode.json":                                  OpenHands,
	"sweagent_ctf_crypto_katy.traj":                                       SWEAgent,
	"sweagent_ctf_web_i_got_id_demo.traj":                                 SWEAgent,
	"sweagent_gpt4_pydicom-1458.traj":                                     SWEAgent,
	"sweagent_gpt4_test-repo-i1.traj":                                     SWEAgent,
	"sweagent_marshmallow-1867_function_calling.traj":                     SWEAgent,
	"sweagent_marshmallow-1867_function_calling_replace_from_source.traj": SWEAgent,
}

// corpusFiles returns the transcripts of the shared corpus, checking the
// table covers every one of them.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	files := corpus.List(t, corpus.Transcripts)
	var out []string
	for _, f := range files {
		if _, ok := corpusFormats[filepath.Base(f)]; !ok {
			t.Errorf("%s: not in corpusFormats; add its expected format", filepath.Base(f))
		}
		out = append(out, f)
	}
	return out
}

// requireFormat fails the test when the reader of name is not registered:
// every format a test names has a reader, so a missing one is a defect, not
// a reason to skip.
func requireFormat(t *testing.T, name Name) {
	t.Helper()
	if _, ok := Lookup(name); !ok {
		t.Fatalf("the %s reader is not registered", name)
	}
}

func TestDetectCorpus(t *testing.T) {
	for _, file := range corpusFiles(t) {
		want := corpusFormats[filepath.Base(file)]
		t.Run(filepath.Base(file), func(t *testing.T) {
			requireFormat(t, want)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			head := data[:min(len(data), SniffSize)]
			f, err := Detect(head)
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != want {
				t.Errorf("detected %s, want %s (scores: %s)", f.Name, want, scores(head))
			}
		})
	}
}

// scores lists every format's Sniff score, for failure messages.
func scores(head []byte) string {
	var b strings.Builder
	for _, f := range Formats() {
		if f.Sniff != nil {
			if s := f.Sniff(head); s > 0 {
				fmt.Fprintf(&b, "%s=%d ", f.Name, s)
			}
		}
	}
	return b.String()
}

// TestConvertCorpusToOpenAI: every corpus transcript converts to OpenAI
// Chat JSON that reads back with its tool pairs intact: the same calls, and
// no orphan the input did not have.
func TestConvertCorpusToOpenAI(t *testing.T) {
	for _, file := range corpusFiles(t) {
		want := corpusFormats[filepath.Base(file)]
		t.Run(filepath.Base(file), func(t *testing.T) {
			requireFormat(t, want)
			in := readFile(t, file)
			for _, to := range writers {
				out := checkConversion(t, in, to)
				if to == OpenAIChat {
					back := readAs(t, out, OpenAIChat)
					if len(in.Orphans()) == 0 && len(back.Orphans()) > 0 {
						t.Errorf("orphans after conversion: %v", back.Orphans())
					}
					if f, err := Detect(out); err != nil || f.Name != OpenAIChat {
						t.Errorf("the output is detected as %v (%v), want openai", f.Name, err)
					}
				}
			}
		})
	}
}

// Detection picks the specific format over the generic one.
func TestDetectShapes(t *testing.T) {
	cases := []struct {
		name, input string
		want        Name
	}{
		{"plain chat array", `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`, OpenAIChat},
		{"chat with system", `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`, OpenAIChat},
		{"chat request", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, OpenAIChat},
		{"empty array", `[]`, OpenAIChat},
		{"chat JSONL", "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n", OpenAIChatJSONL},
		{"one-line chat JSONL", `{"role":"user","content":"hi"}`, OpenAIChatJSONL},
		{"anthropic blocks", `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]}]`, Anthropic},
		{"anthropic request", `{"model":"claude","max_tokens":10,"system":"be brief","messages":[{"role":"user","content":"hi"}]}`, Anthropic},
		{"anthropic response", `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}`, Anthropic},
		{"responses items", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call","call_id":"c","name":"x","arguments":"{}"}]`, OpenAIResponses},
		{"responses request", `{"model":"gpt-5","input":"hi"}`, OpenAIResponses},
		{"responses request items", `{"model":"gpt-5","input":[{"role":"user","content":"hi"}]}`, OpenAIResponses},
		{"responses object", `{"id":"resp_1","object":"response","output":[]}`, OpenAIResponses},
		{"responses JSONL", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"ok\"}\n", OpenAIResponses},
		{"BOM", "\xEF\xBB\xBF" + `[{"role":"user","content":"hi"}]`, OpenAIChat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Detect([]byte(c.input))
			if err != nil || f.Name != c.want {
				t.Fatalf("Detect = %v, %v; want %s (scores: %s)", f.Name, err, c.want, scores([]byte(c.input)))
			}
			if _, err := Read(strings.NewReader(c.input), c.name, ""); err != nil {
				t.Fatalf("Read: %v", err)
			}
		})
	}
}

// Detection must not claim what is not one of its formats.
func TestDetectRejects(t *testing.T) {
	for _, in := range []string{
		`{"foo": 1}`,
		`"just a string"`,
		`42`,
		"hello world\nthis is text\n",
		"\x00\x01\x02\xff\xfe binary",
		`[1, 2, 3]`,
		`[{"id": 1, "action": "run"}]`,
	} {
		f, err := Detect([]byte(in))
		if err == nil {
			// Another helper's format may legitimately claim some JSON;
			// none of the API formats may.
			if f.Name == OpenAIChat || f.Name == OpenAIChatJSONL || f.Name == Anthropic || f.Name == OpenAIResponses {
				t.Errorf("Detect(%q) = %s, want no API format", in, f.Name)
			}
			continue
		}
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), string(OpenAIChat)) {
			t.Errorf("Detect(%q) error %v should wrap ErrUnknownFormat and list the formats tried", in, err)
		}
	}
}

// Bad input gets an *Error naming the file, where, and what was expected.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		as    Name
		input string
		want  []string // fragments of the error message
	}{
		{"empty", "", "", []string{"bad.json", "empty input"}},
		{"blank", "", " \n\t\n", []string{"empty input"}},
		{"empty, format given", OpenAIChat, "", []string{"empty input", "expected an array of chat messages"}},
		{"garbage", "", "\x00\x01\x02\xff garbage", []string{"unrecognised transcript format", "tried", "openai"}},
		{"unknown format name", "nope", "[]", []string{"unrecognised transcript format", `"nope"`}},
		{"wrong shape", OpenAIChat, `"hello"`, []string{`expected an array of chat messages or an object with "messages", got a string`}},
		{"array of numbers", OpenAIChat, `[1, 2]`, []string{"byte 1", "expected a chat message object, got a number"}},
		{"no role", OpenAIChat, `[{"content": "hi"}]`, []string{`with a "role"`}},
		{"bad content", OpenAIChat, `[{"role":"user","content":"ok"}, {"role":"user","content":5}]`, []string{"byte 33", "content: expected a string or an array of parts, got a number"}},
		{"bad role type", OpenAIChat, `[{"role": 7}]`, []string{`field "role" has a number`}},
		{"messages not a list", OpenAIChat, `{"messages": "x"}`, []string{`field "messages": expected an array of chat messages, got a string`}},
		{"single message", OpenAIChat, `{"role":"user","content":"hi"}`, []string{"single message object", "openai-jsonl"}},
		{"truncated", OpenAIChat, `[{"role":"user","content":"hi"},{"role":"assis`, []string{"truncated JSON", "byte"}},
		{"truncated after element", OpenAIChat, `[{"role":"user","content":"hi"}`, []string{"truncated JSON"}},
		{"syntax error", OpenAIChat, `[{"role":"user",,}]`, []string{"invalid JSON", "byte 16"}},
		{"trailing data", OpenAIChat, `[] []`, []string{"unexpected data after the JSON document"}},
		{"jsonl bad line", OpenAIChatJSONL, "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\n", []string{"bad.json:2:", "invalid JSON, expected a chat message object"}},
		{"jsonl not an object", OpenAIChatJSONL, "{\"role\":\"user\",\"content\":\"hi\"}\n\n[1]\n", []string{"bad.json:3:", "got an array"}},
		{"anthropic bad block", Anthropic, `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":5}]}]`, []string{"tool_result content: expected a string or an array of blocks, got a number"}},
		{"anthropic block without type", Anthropic, `[{"role":"user","content":[{"text":"hi"}]}]`, []string{`content[0]: content block without a "type"`}},
		{"anthropic bad system", Anthropic, `{"system": 5, "messages": []}`, []string{`field "system": expected a string or an array of text blocks, got a number`}},
		{"anthropic no messages", Anthropic, `{"model": "x"}`, []string{`expected an object with "messages"`}},
		{"responses no type", OpenAIResponses, `[{"call_id": "x"}]`, []string{`with a "type" or "role"`}},
		{"responses bad line", OpenAIResponses, "{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\"}\n{\"type\":\"message\",\"role\":\"user\",\"content\":\"b\"}\n{oops}\n", []string{"bad.json:3:", "invalid JSON"}},
		{"responses bad object", OpenAIResponses, `{"foo": 1}`, []string{`without "input", "output" or an item "type"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.input), "bad.json", c.as)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var fe *Error
			if !errors.As(err, &fe) && !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("error %T is neither an *Error nor ErrUnknownFormat", err)
			}
		})
	}
}

// A JSONL line longer than any buffer is read whole.
func TestLongJSONLLine(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	in := `{"role":"system","content":"s"}` + "\n" + `{"role":"user","content":"` + long + `"}` + "\n"
	tr, err := Read(strings.NewReader(in), "long.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != string(OpenAIChatJSONL) || len(tr.Messages) != 2 || tr.Messages[1].Text() != long {
		t.Fatalf("got %s with %d messages", tr.Format, len(tr.Messages))
	}
}

// A first line longer than the detection head is still detected.
func TestDetectHugeFirstLine(t *testing.T) {
	in := `{"role":"user","content":"` + strings.Repeat("y", SniffSize+10) + `"}` + "\n" + `{"role":"assistant","content":"ok"}` + "\n"
	tr, err := Read(strings.NewReader(in), "huge.jsonl", "")
	if err != nil || tr.Format != string(OpenAIChatJSONL) || len(tr.Messages) != 2 {
		t.Fatalf("Read: %v, %s, %d messages", err, tr.Format, len(tr.Messages))
	}
}

// Empty conversations are not errors once the input is a document.
func TestEmptyConversations(t *testing.T) {
	for _, c := range []struct {
		as    Name
		input string
	}{
		{OpenAIChat, "[]"},
		{OpenAIChat, `{"messages": []}`},
		{OpenAIChatJSONL, ""},
		{Anthropic, `{"messages": []}`},
		{OpenAIResponses, `{"output": []}`},
	} {
		tr, err := Read(strings.NewReader(c.input), "empty", c.as)
		if err != nil || len(tr.Messages) != 0 {
			t.Errorf("%s %q: %v, %d messages", c.as, c.input, err, len(tr.Messages))
		}
	}
}

// The Format field is set even for an explicit override.
func TestReadOverride(t *testing.T) {
	in := `[{"role":"user","content":"hi"}]`
	tr, err := Read(strings.NewReader(in), "x", Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != string(Anthropic) || tr.Messages[0].Source.Format != string(Anthropic) {
		t.Errorf("format %q / %q, want anthropic", tr.Format, tr.Messages[0].Source.Format)
	}
	var b bytes.Buffer
	if err := Write(&b, tr, Anthropic); err != nil || !bytes.Contains(b.Bytes(), []byte(`{"role":"user","content":"hi"}`)) {
		t.Errorf("Write: %v\n%s", err, b.String())
	}
}
