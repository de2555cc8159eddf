package serve_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
	"github.com/compactkit/compact/tokens"
)

// exactClaude is an Anthropic model counted with an exact encoding (a
// models file may say so), so that the Messages API's compaction block is
// the only estimated part of its count.
const exactClaude = "tiny-claude-exact"

func withExactClaude(t testing.TB) rigOption {
	m := testModels(t)
	if err := m.Set(tokens.Model{Name: exactClaude, Encoding: tokens.O200kBase, Window: testWindow, OutputReserve: testReserve, Provider: "anthropic"}); err != nil {
		t.Fatal(err)
	}
	return func(c *serve.Config) { c.Models = m }
}

// withCompactionItem puts a provider-native compaction item first in the
// request's list: a Responses `compaction` item, or an assistant message
// holding an Anthropic `compaction` block.
func withCompactionItem(t testing.TB, api servetest.API, body []byte, payload string) []byte {
	t.Helper()
	var item any
	switch api {
	case servetest.Responses:
		item = map[string]any{"type": "compaction", "id": "cmp_01", "encrypted_content": payload}
	case servetest.Messages:
		item = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "compaction", "content": payload}}}
	}
	raw, _ := json.Marshal(item)
	key := `"` + listKey(api) + `":[`
	if !strings.Contains(string(body), key) {
		t.Fatalf("no %s in the request", key)
	}
	return []byte(strings.Replace(string(body), key, key+string(raw)+",\n", 1))
}

// TestOpaqueCountedAsEstimate (QA-5): a request holding a provider's own
// compaction (an opaque summary whose tokens are estimated) is logged as
// "counted":"exact+estimate" with the estimated part, as `compact count`
// says "exact, except N tokens ... estimated"; without one, "exact"; and a
// model counted by estimate says "estimate" either way.
func TestOpaqueCountedAsEstimate(t *testing.T) {
	// 4 KB of base64-like bytes, as OpenAI's encrypted_content.
	payload := "gAAAAAB" + strings.Repeat("q7Xz9Kp2", 512)
	want := tokens.OpaqueTokens(payload)
	for _, tc := range []struct {
		name    string
		api     servetest.API
		model   string
		opaque  bool
		counted string
	}{
		{"responses/compaction", servetest.Responses, gptModel, true, "exact+estimate"},
		{"responses/plain", servetest.Responses, gptModel, false, "exact"},
		{"messages/compaction", servetest.Messages, exactClaude, true, "exact+estimate"},
		{"messages/plain", servetest.Messages, exactClaude, false, "exact"},
		{"messages/estimated-model", servetest.Messages, claudeModel, true, "estimate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, withExactClaude(t))
			// Bytes over the threshold, so that the request is read and
			// counted rather than let through on a bound.
			body := request(tc.api, tc.model, conversation(12, 30), false)
			if tc.opaque {
				body = withCompactionItem(t, tc.api, body, payload)
			}
			if code, answer := r.post(t, apiPaths[tc.api], body, nil); code != 200 {
				t.Fatalf("status %d: %s", code, answer)
			}
			logs := r.waitLogs(t, `"msg":"request"`)
			line := grepLines(logs, `"msg":"request"`)
			if !strings.Contains(line, `"counted":"`+tc.counted+`"`) {
				t.Errorf("log line does not say counted %q:\n%s", tc.counted, line)
			}
			hasOpaque := strings.Contains(line, `"opaque_estimated":`)
			if tc.opaque && !strings.Contains(line, `"opaque_estimated":`+strconv.Itoa(want)) {
				t.Errorf("log line does not give the estimated part (%d tokens):\n%s", want, line)
			}
			if !tc.opaque && hasOpaque {
				t.Errorf("log line names an estimated part with no compaction item:\n%s", line)
			}
			if tc.opaque && !strings.Contains(string(r.up.Last().Body), payload) {
				t.Error("the compaction item was not forwarded byte for byte")
			}
		})
	}
}
