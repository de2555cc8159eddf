package serve_test

import (
	"bytes"
	"testing"

	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// TestOverflowWordingsRetried (QA-28): the overflow retry knows the answer
// Claude Code users hit most, Anthropic's "input length and `max_tokens`
// exceed context limit: 178959 + 64000 > 200000, decrease input length or
// `max_tokens` and try again" (anthropics/claude-code#228, #408), and
// SGLang's "Input length (160062 tokens) exceeds the maximum allowed length
// (59862 tokens)": both are retried with a forced compaction.
func TestOverflowWordingsRetried(t *testing.T) {
	for name, c := range map[string]struct {
		api  servetest.API
		text string
	}{
		"anthropic input+max_tokens": {servetest.Messages, "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again"},
		"sglang input length":        {servetest.Chat, "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens)."},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, func(c *serve.Config) { c.Compaction.Window = 1_000_000 })
			r.up.Script = func(a servetest.API, body []byte) servetest.Reply {
				if !bytes.Contains(body, []byte("<<<compact:handoff>>>")) {
					return servetest.Reply{Status: 400, Text: c.text}
				}
				return servetest.Reply{Text: "fits now"}
			}
			body := request(c.api, modelFor(c.api), conversation(40, 8), false)
			status, answer := r.post(t, apiPaths[c.api], body, nil)
			if status != 200 || !bytes.Contains(answer, []byte("fits now")) {
				t.Errorf("the client got %d (%d upstream requests): the overflow was not recognised: %.160s", status, len(r.up.Requests()), answer)
			}
		})
	}
}

// TestRequestMaxTokensReserved (QA-28): a request whose own answer limit
// (max_tokens) is larger than the model's output reserve is compacted when
// its prompt and that limit would not fit the window together, though the
// prompt alone is under the threshold.
func TestRequestMaxTokensReserved(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			r := newRig(t)
			body := request(api, modelFor(api), conversation(28, 8), false)
			key := map[servetest.API]string{servetest.Chat: "max_completion_tokens", servetest.Responses: "max_output_tokens", servetest.Messages: "max_tokens"}[api]
			r.post(t, apiPaths[api], body, nil)
			if bytes.Contains(r.up.Last().Body, []byte("<<<compact:handoff>>>")) {
				t.Fatal("the test's prompt alone should be under the threshold")
			}
			// 7000 of the window's 16000 tokens for the answer.
			limited := bytes.Replace(body, []byte(`"model"`), []byte(`"`+key+`":7000,"model"`), 1)
			if api == servetest.Messages {
				limited = bytes.Replace(body, []byte(`"max_tokens":1024`), []byte(`"max_tokens":7000`), 1)
			}
			r.post(t, apiPaths[api], limited, map[string]string{serve.SessionHeader: "limited-" + string(api)})
			if !bytes.Contains(r.up.Last().Body, []byte("<<<compact:handoff>>>")) {
				t.Fatalf("a prompt that does not fit beside its max tokens (%s) was not compacted:\n%s", key, r.logs.String())
			}
		})
	}
}
