package serve

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Provider names the upstream an API is served by.
type Provider string

// Providers. Each has its own upstream URL.
const (
	ProviderOpenAI    Provider = "openai"
	ProviderAnthropic Provider = "anthropic"
)

// api is one of the request shapes the proxy compacts: where it is served,
// which reader reads it, which member holds the conversation, and how a
// handoff message is written in it.
type api struct {
	name     string // for logs and metrics
	path     string
	format   format.Name
	provider Provider
	// list is the top-level member holding the conversation; besides are
	// the other members the prompt holds (tool definitions, a system
	// prompt outside the list).
	list    string
	besides []string
	// volatile are members a client may move between requests without
	// changing what the model reads; prefix matching ignores them.
	volatile []string
	// handoff encodes a user message of text as one list element.
	handoff func(text string) []byte
}

var apis = []*api{
	{
		name: "chat", path: "/v1/chat/completions", format: format.OpenAIChat, provider: ProviderOpenAI, list: "messages",
		besides: []string{"tools", "functions"},
		handoff: func(text string) []byte {
			return mustJSON(struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			}{"user", text})
		},
	},
	{
		name: "responses", path: "/v1/responses", format: format.OpenAIResponses, provider: ProviderOpenAI, list: "input",
		besides: []string{"instructions", "tools"},
		handoff: func(text string) []byte {
			type part struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			return mustJSON(struct {
				Type    string `json:"type"`
				Role    string `json:"role"`
				Content []part `json:"content"`
			}{"message", "user", []part{{"input_text", text}}})
		},
	},
	{
		name: "messages", path: "/v1/messages", format: format.Anthropic, provider: ProviderAnthropic, list: "messages",
		besides:  []string{"system", "tools"},
		volatile: []string{"cache_control"},
		handoff: func(text string) []byte {
			type block struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			return mustJSON(struct {
				Role    string  `json:"role"`
				Content []block `json:"content"`
			}{"user", []block{{"text", text}}})
		},
	},
}

// beside reports whether key is one of the members beside the list that
// the prompt holds.
func (a *api) beside(key string) bool {
	for _, b := range a.besides {
		if key == b {
			return true
		}
	}
	return false
}

// apiFor returns the compacting API served at path, or nil.
// Besides the paths clients use with a base URL ending in /v1, a path that
// ends like one (Azure OpenAI's /openai/deployments/NAME/chat/completions,
// a gateway's /api/v1/chat/completions) is that API too, forwarded to the
// same path on the upstream; for Anthropic's only with Anthropic's
// version header, since OpenAI's Assistants API has paths ending in
// /messages too.
func apiFor(r *http.Request) *api {
	for _, a := range apis {
		switch {
		case r.URL.Path == a.path:
			return a
		case !strings.HasSuffix(r.URL.Path, strings.TrimPrefix(a.path, "/v1")):
		case a.provider == ProviderOpenAI || r.Header.Get("anthropic-version") != "":
			return a
		}
	}
	return nil
}

// providerFor picks the upstream of a request the proxy passes through:
// Anthropic's paths and requests that carry Anthropic's headers go to the
// Anthropic upstream, everything else to the OpenAI one.
func providerFor(r *http.Request) Provider {
	if a := apiFor(r); a != nil {
		return a.provider
	}
	if strings.HasPrefix(r.URL.Path, "/v1/messages/") || strings.HasPrefix(r.URL.Path, "/v1/complete") {
		return ProviderAnthropic
	}
	if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" {
		return ProviderAnthropic
	}
	return ProviderOpenAI
}

// overflowPhrases are what providers and OpenAI-compatible servers say
// when a prompt does not fit the model's context (OpenAI's
// context_length_exceeded code and Responses message, Anthropic's "prompt is
// too long" and "input length and `max_tokens` exceed context limit",
// vLLM, SGLang, llama.cpp, Ollama, OpenRouter, Gemini's OpenAI endpoint).
// Matched case-insensitively in an error answer's body.
var overflowPhrases = []string{
	"context_length_exceeded",
	"context length",
	"context window",
	"context_window",
	"maximum context",
	"prompt is too long",
	"input is too long",
	"too many tokens",
	"exceeds the maximum number of tokens",
	"input token count",
	"reduce the length of the messages",
	"exceed context limit",
	"exceeds the maximum allowed length",
}

// isOverflow reports whether an upstream error answer says the prompt was
// too long for the model.
func isOverflow(status int, body []byte) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge &&
		status != http.StatusUnprocessableEntity && status != http.StatusInternalServerError {
		return false
	}
	low := bytes.ToLower(body)
	for _, p := range overflowPhrases {
		if bytes.Contains(low, []byte(p)) {
			return true
		}
	}
	return false
}

func mustJSON(v any) []byte {
	b, err := jsonscan.Marshal(v)
	if err != nil {
		panic(err) // only called with types that always encode
	}
	return b
}
