package format

import "testing"

func FuzzReadAnthropic(f *testing.F) {
	seedFuzz(f, "testdata/anthropic/*.json",
		`{"system":"s","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, Anthropic) })
}
