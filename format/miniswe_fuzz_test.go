package format

import "testing"

func FuzzMiniSWEAgent(f *testing.F) {
	seedAgent(f, "minisweagent_",
		`{"info":{},"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"a","reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}],"extra":{}},{"role":"tool","content":"x","tool_call_id":"c"},{"role":"exit","content":"done","extra":{"exit_status":"Submitted"}}],"trajectory_format":"mini-swe-agent-1.1"}`,
		`[{"role":"user","content":"u","extra":{}},{"role":"exit","content":""}]`, `{"messages":[`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, MiniSWEAgent) })
}
