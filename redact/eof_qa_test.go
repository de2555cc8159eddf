package redact_test

import (
	"strings"
	"testing"

	"github.com/compactkit/compact/redact"
)

// QA-38: a quoted secret whose closing quote is missing is masked when a
// line break follows it and kept whole when the text ends there. The
// compactor redacts each dropped message on its own before the summarizer
// prompt and the handoff, and a message's text rarely ends with a line
// break; a tool output cut short (`head -c`, a harness's output limit, the
// pruner) ends exactly like this. Found as 2 gitleaks cases
// (slack-legacy-workspace-token-027/029) that `compact redact` masks in the
// transcript file and that reach the LLM summarizer's request unmasked.
func TestQAUnterminatedQuotedSecretAtTheEnd(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ in, secret string }{
		{`DB_PASSWORD="Kq7mZ2pQA99xWv`, "Kq7mZ2pQA99xWv"},
		{`{"password": "Kq7mZ2pQA99xWv`, "Kq7mZ2pQA99xWv"},
		{`api_key: "abcd1234efgh5678ijkl`, "abcd1234efgh5678ijkl"},
		{`secret='Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB`, "Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"},
		{`"access_token1": "xoxa-5-8unlt6l4737r`, "xoxa-5-8unlt6l4737r"},
		{"Here is what I found:\n\"refresh_token1\": \"xoxr-7-iskm8aag93s3", "xoxr-7-iskm8aag93s3"},
	}
	for _, c := range cases {
		withNL := r.String(c.in + "\n")
		atEnd := r.String(c.in)
		if !strings.Contains(withNL, c.secret) && strings.Contains(atEnd, c.secret) {
			t.Errorf("masked with a line break after it, kept at the end of the text:\n  %q\n  -> %q", c.in, atEnd)
		}
	}
}
