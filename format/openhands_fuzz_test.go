package format

import "testing"

func FuzzOpenHands(f *testing.F) {
	seedAgent(f, "openhands_",
		`[{"id":1,"source":"user","message":"m","action":"message","args":{"content":"m","image_urls":["data:image/png;base64,AA=="]}},{"id":2,"source":"agent","action":"run","args":{"command":"ls","thought":"t"},"tool_call_metadata":{"function_name":"execute_bash","tool_call_id":"c","model_response":{"id":"r","choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"execute_bash","arguments":"{\"command\":\"ls\"}"}}]}}]}}},{"id":3,"source":"agent","cause":2,"observation":"run","content":"x","tool_call_metadata":{"function_name":"execute_bash","tool_call_id":"c"}}]`,
		`{"instance_id":"a","history":[{"content":"fix","action":"message"},{"command":"ls","action":"run"},{"content":"x","observation":"run"}]}`+"\n"+`{"instance_id":"b","history":[]}`,
		`[{"observation":"error","content":"bad","source":"agent"}]`, "{\"history\": [",
		`[{"id":0,"source":"user","action":"message","args":{"content":"go"}},{"id":1,"source":"agent","action":"run","args":{"command":"ls"}},{"id":2,"source":"agent","observation":"run","content":"x","cause":1},{"id":3,"source":"agent","action":"condensation","args":{"forgotten_event_ids":null,"forgotten_events_start_id":1,"forgotten_events_end_id":1,"summary":"s","summary_offset":1}},{"id":4,"source":"agent","action":"condensation_request","args":{}}]`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, OpenHands) })
}
