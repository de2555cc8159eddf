package format

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/corpus"
)

// TestReadersTag: every reader tags what its agent writes: call kinds and
// targets by its table, failed results by the agent's failure convention,
// harness text by the shared markers.
func TestReadersTag(t *testing.T) {
	type want struct {
		kinds   string // the calls' kind:target, in order
		failed  int    // parts tagged Failed
		harness int    // parts tagged Harness
	}
	cases := []struct {
		name, src string
		as        Name
		want      want
	}{
		{"claude-code", `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":[{"type":"text","text":"fix the test"},{"type":"text","text":"<system-reminder>be careful</system-reminder>"}]}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./..."}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/w/a_test.go"}}]}}
{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"FAIL","is_error":true},{"type":"tool_result","tool_use_id":"t2","content":"package a"}]}}
{"type":"user","uuid":"c1","parentUuid":"r1","sessionId":"s","message":{"role":"user","content":"<command-name>/clear</command-name>"}}
`, ClaudeCode, want{"shell:go test ./... read:/w/a_test.go", 1, 2}},
		{"codex", `{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/w"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run the tests"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"go test ./...\"]}","call_id":"c1"}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"FAIL\\n\",\"metadata\":{\"exit_code\":1}}"}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rg -n Handler\"}","call_id":"c2"}}
{"timestamp":"t","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c2","exit_code":2}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"error: bad regex"}}
{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: a.go\n*** End Patch","call_id":"c3"}}
{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c3","output":"Success."}}
`, Codex, want{"shell:go test ./... search:Handler write:a.go", 2, 1}},
		{"mini-swe-agent", `{"trajectory_format":"mini-swe-agent-1","info":{},"messages":[
{"role":"system","content":"You are a helpful assistant."},
{"role":"user","content":"Fix the bug."},
{"role":"assistant","content":"THOUGHT: look\n\n` + "```bash\\ncat src/a.py\\n```" + `"},
{"role":"user","content":"<returncode>1</returncode>\n<output>\ncat: src/a.py: No such file\n</output>"}
]}`, MiniSWEAgent, want{"", 1, 1}},
		{"openai (an OpenHands log)", `[{"role":"user","content":"hi"},
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"make\"}"}}]},
{"role":"tool","tool_call_id":"c1","content":"make: *** Error 2\n[The command completed with exit code 2.]"}]`, OpenAIChat, want{"shell:make", 1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(c.src), c.name, c.as)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			failed, harness := 0, 0
			for _, m := range tr.Messages {
				for _, p := range m.Parts {
					if p.ToolCall != nil {
						kinds = append(kinds, string(p.ToolCall.Kind)+":"+p.ToolCall.Target)
					}
					if p.Failed {
						failed++
					}
					if p.Harness {
						harness++
					}
				}
			}
			got := want{strings.Join(kinds, " "), failed, harness}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestSWEAgentOpenFile: SWE-agent's edits work on the file its editor
// window has open; that file is their target.
func TestSWEAgentOpenFile(t *testing.T) {
	tr := compact.Transcript{Messages: []compact.Message{{Role: compact.RoleAssistant, Parts: []compact.Part{
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "1", Name: "open", Arguments: []byte(`{"path":"src/f.py"}`)}},
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "2", Name: "edit", Arguments: []byte(`{"search":"a","replace":"b"}`)}},
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "3", Name: "create", Arguments: []byte(`{"filename":"t.py"}`)}},
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "4", Name: "insert", Arguments: []byte(`{"text":"x"}`)}},
	}}}}
	tagTranscript(&tr, sweAgentTools, genericTools)
	var got []string
	for _, c := range tr.Messages[0].ToolCalls() {
		got = append(got, string(c.Kind)+":"+c.Target)
	}
	if g := strings.Join(got, " "); g != "read:src/f.py write:src/f.py write:t.py write:t.py" {
		t.Errorf("got %s", g)
	}
}

// TestCorpusTags: in every real transcript, every tool call is tagged,
// and each agent's failed results and harness text are found where its
// files have them.
func TestCorpusTags(t *testing.T) {
	failed := map[string]int{}
	harness := map[string]int{}
	calls, targeted := 0, 0
	for _, file := range corpus.AllTranscripts(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Read(bytes.NewReader(data), file, "")
		if err != nil {
			continue // files the readers cannot read yet are the reading tests' business
		}
		for _, m := range tr.Messages {
			for _, p := range m.Parts {
				if c := p.ToolCall; c != nil {
					calls++
					if c.Kind == "" {
						t.Errorf("%s: call %s (%s) has no kind", filepath.Base(file), c.ID, c.Name)
					}
					if c.Target != "" {
						targeted++
					}
				}
				if p.Failed {
					failed[tr.Format]++
				}
				if p.Harness {
					harness[tr.Format]++
				}
			}
		}
	}
	for _, f := range []Name{ClaudeCode, Codex, GeminiCLI, MiniSWEAgent, OpenHands} {
		if failed[string(f)] == 0 {
			t.Errorf("no failed result found in the %s files", f)
		}
	}
	for _, f := range []Name{ClaudeCode, Codex} {
		if harness[string(f)] == 0 {
			t.Errorf("no harness text found in the %s files", f)
		}
	}
	// Most calls name what they work on; plans, todo updates and the like
	// need not.
	if calls == 0 || targeted*100 < calls*90 {
		t.Errorf("%d of %d calls have a target, want at least 90%%", targeted, calls)
	}
	t.Logf("%d calls, %d with a target; failed %v; harness %v", calls, targeted, failed, harness)
}

// TestOpenHandsEditorErrors: OpenHands' editor reports a failure as an
// observation whose text opens with "ERROR:"; it is Failed, in V0 and V1.
func TestOpenHandsEditorErrors(t *testing.T) {
	v0 := `[{"id":1,"source":"agent","action":"edit","args":{"path":"/w/a.py"},"tool_call_metadata":{"function_name":"str_replace_editor","tool_call_id":"c1","model_response":{"id":"r","choices":[{"message":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"str_replace_editor","arguments":"{\"command\":\"view\",\"path\":\"/w/a.py\"}"}}]}}]}}},
{"id":2,"source":"environment","observation":"edit","content":"ERROR:\nInvalid ` + "`path`" + ` parameter: /w/a.py does not exist.","cause":1,"tool_call_metadata":{"function_name":"str_replace_editor","tool_call_id":"c1"}}]`
	v1 := `{"id":"a","timestamp":"t","source":"agent","thought":[],"action":{"kind":"FileEditorAction"},"tool_name":"file_editor","tool_call_id":"c1","tool_call":{"id":"c1","name":"file_editor","arguments":"{\"command\":\"view\",\"path\":\"/w/a.py\"}"},"llm_response_id":"r","kind":"ActionEvent"}
{"id":"o","timestamp":"t","source":"environment","tool_name":"file_editor","tool_call_id":"c1","observation":{"content":[{"type":"text","text":"ERROR:\nInvalid path"}],"kind":"FileEditorObservation"},"action_id":"a","kind":"ObservationEvent"}
`
	for name, src := range map[string]string{"v0.json": v0, "v1.jsonl": v1} {
		tr, err := Read(strings.NewReader(src), name, OpenHands)
		if err != nil {
			t.Fatal(err)
		}
		last := tr.Messages[len(tr.Messages)-1]
		if len(last.ToolCallIDs) == 0 || !last.Parts[0].Failed {
			t.Errorf("%s: the error observation is not Failed: %+v", name, last)
		}
	}
}
