package format

import "testing"

func FuzzClaudeCode(f *testing.F) {
	seedAgent(f, "claudecode_",
		`{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}`+"\n",
		`{"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]}}`+"\n"+
			`{"type":"assistant","uuid":"b","parentUuid":"a","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"y"}]}}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null}`+"\n"+`{"type":"user","isCompactSummary":true,"uuid":"c","parentUuid":"b","message":{"role":"user","content":"s"}}`,
		`{"loglines":[{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}}]}`,
		"{\"type\":\"user\"\n", "42\n[]\n", "")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, ClaudeCode) })
}
