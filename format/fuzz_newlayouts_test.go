package format

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/corpus"
)

// seedWild adds the wild corpus's files whose names start with prefix (a
// JSON-lines file cut to its first 32 KB), when the corpus is there.
func seedWild(f *testing.F, prefix string, extra ...string) {
	if corpus.Available() {
		files, _ := filepath.Glob(filepath.Join(corpus.Dir(f, corpus.Wild), prefix+"*"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) > 32<<10 {
				data = data[:bytes.LastIndexByte(data[:32<<10], '\n')+1]
			}
			f.Add(data)
		}
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

// FuzzGeminiJSONL: Gemini CLI's JSON-lines layout, read and written back.
func FuzzGeminiJSONL(f *testing.F) {
	seedWild(f, "gemini_",
		`{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}`+"\n"+
			`{"id":"u","timestamp":"t","type":"user","content":[{"text":"hi"}]}`+"\n"+
			`{"$set":{"lastUpdated":"t2"}}`+"\n"+
			`{"id":"g","timestamp":"t","type":"gemini","content":""}`+"\n"+
			`{"id":"g","timestamp":"t","type":"gemini","content":"","toolCalls":[{"id":"c","name":"ls","args":{},"result":[{"functionResponse":{"id":"c","response":{"output":"a"}}}],"status":"success"}]}`+"\n",
		`{"sessionId":"s","projectHash":"h"}`+"\n"+`{"id":"x","type":"info","content":"n"}`+"\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, GeminiCLI) })
}

// FuzzOpenHandsV1: OpenHands V1 events, as JSON lines and as an evaluation
// instance's history, read and written back.
func FuzzOpenHandsV1(f *testing.F) {
	ev := `{"id":"a","timestamp":"t","source":"agent","thought":[{"type":"text","text":"go"}],"action":{"command":"ls","kind":"TerminalAction"},"tool_name":"terminal","tool_call_id":"c1","tool_call":{"id":"c1","name":"terminal","arguments":"{\"command\":\"ls\"}"},"llm_response_id":"r1","kind":"ActionEvent"}` + "\n" +
		`{"id":"o","timestamp":"t","source":"environment","tool_name":"terminal","tool_call_id":"c1","observation":{"content":[{"type":"text","text":"a.go"}],"is_error":false,"exit_code":0,"kind":"TerminalObservation"},"action_id":"a","kind":"ObservationEvent"}` + "\n"
	seedWild(f, "openhands_v1_",
		`{"id":"m","timestamp":"t","source":"user","llm_message":{"role":"user","content":[{"type":"text","text":"hi"}]},"kind":"MessageEvent"}`+"\n"+ev,
		`{"instance_id":"i","history":[{"kind":"MessageEvent","id":"m","source":"user","llm_message":{"role":"user","content":"hi"}},{"kind":"Condensation","id":"k","forgotten_event_ids":["m"],"summary":"s"}]}`+"\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, OpenHands) })
}

// FuzzStreamAndCheck: on any input, Stream hands over what Read returns
// (resets applied), and Check never panics and fails only as Read fails.
func FuzzStreamAndCheck(f *testing.F) {
	// Small seeds: the property runs three reads per input.
	for _, src := range []string{
		`{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"assistant","uuid":"a","parentUuid":"u","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]}}` + "\n" +
			`{"type":"progress","uuid":"p","parentUuid":"a","sessionId":"s"}` + "\n" +
			`{"type":"assistant","uuid":"b","parentUuid":"p","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"y"}]}}` + "\n" +
			`{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null,"sessionId":"s"}` + "\n" +
			`{"type":"user","uuid":"d","parentUuid":"c","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"sum"}}` + "\n",
		`{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ask"}]}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"r"}]}}` + "\n" +
			`{"timestamp":"t","type":"event_msg","payload":{"type":"agent_reasoning","text":"r"}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}}` + "\n" +
			`{"timestamp":"t","type":"compacted","payload":{"message":"m"}}` + "\n",
		`{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":"yo"}` + "\n",
		// Rewinds: a Claude Code branch, a Codex rollback.
		`{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"assistant","uuid":"a","parentUuid":"u","sessionId":"s","message":{"id":"m","role":"assistant","content":"a"}}` + "\n" +
			`{"type":"user","uuid":"v","parentUuid":"a","sessionId":"s","message":{"role":"user","content":"old"}}` + "\n" +
			`{"type":"user","uuid":"w","parentUuid":"a","sessionId":"s","message":{"role":"user","content":"new"}}` + "\n",
		`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ask"}]}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]}}` + "\n" +
			`{"timestamp":"t","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}` + "\n",
	} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, err := Read(bytes.NewReader(data), "fuzz", "")
		_, _, cerr := Check(data, "fuzz", "")
		if err != nil {
			return
		}
		if cerr != nil && len(want.Messages) > 0 {
			// Check reads past damaged lines; it may only fail where a
			// read fails.
			t.Fatalf("Check failed on readable input: %v", cerr)
		}
		var got []compact.Message
		_, serr := Stream(bytes.NewReader(data), "fuzz", "", ReadOptions{}, Sink{
			Message: func(m compact.Message) error { got = append(got, m); return nil },
			Reset: func(keep func(compact.Role, bool) bool) {
				kept := got[:0]
				for _, m := range got {
					if keep != nil && keep(m.Role, m.Summary) {
						kept = append(kept, m)
					}
				}
				got = kept
			},
			Rewind: func(n int) { got = got[:n] },
		})
		if serr != nil {
			t.Fatalf("Stream failed where Read did not: %v", serr)
		}
		if len(got) != len(want.Messages) {
			t.Fatalf("Stream gave %d messages, Read %d", len(got), len(want.Messages))
		}
		for i := range got {
			if got[i].Fingerprint() != want.Messages[i].Fingerprint() || got[i].ID != want.Messages[i].ID {
				t.Fatalf("message %d differs", i)
			}
		}
	})
}
