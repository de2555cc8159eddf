package format

import "testing"

func FuzzSWEAgent(f *testing.F) {
	seedAgent(f, "sweagent_",
		`{"trajectory":[],"history":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"t"}],"is_demo":true},{"role":"assistant","content":"a","tool_calls":[{"id":"c","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","content":"x","tool_call_ids":["c"]}],"info":{}}`,
		`{"history":[]}`, `{"history":[1,"x",null]}`, `{"trajectory": [`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, SWEAgent) })
}
