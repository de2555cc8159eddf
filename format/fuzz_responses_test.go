package format

import "testing"

func FuzzReadResponses(f *testing.F) {
	seedFuzz(f, "testdata/responses/*.json*",
		`{"object":"response","instructions":"i","output":[{"type":"mcp_call","id":"m","name":"x","arguments":"{}","error":"boom"}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, OpenAIResponses) })
}
