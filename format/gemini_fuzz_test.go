package format

import "testing"

func FuzzGeminiCLI(f *testing.F) {
	seedAgent(f, "gemini_",
		`{"sessionId":"s","projectHash":"h","messages":[{"id":"1","type":"user","content":"hi"},{"id":"2","type":"gemini","content":"","thoughts":[{"subject":"s","description":"d"}],"toolCalls":[{"id":"c","name":"read_file","args":{"p":1},"result":[{"functionResponse":{"id":"c","name":"read_file","response":{"error":"nope"}}}],"status":"error"}]},{"id":"3","type":"info","content":"x"}]}`,
		`{"sessionId":"s","messages":[{"type":"gemini","content":[{"text":"a"},"b"]}]}`, `{"messages": [`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzAgent(t, data, GeminiCLI) })
}
