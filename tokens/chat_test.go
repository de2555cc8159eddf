package tokens

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
)

func textMsg(role compact.Role, name, text string) compact.Message {
	return compact.Message{Role: role, Name: name, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}
}

// TestCookbookCounts reproduces the prompt_tokens the OpenAI API reported
// for the examples of OpenAI's cookbook, "How to count tokens with
// tiktoken" (github.com/openai/openai-cookbook,
// examples/How_to_count_tokens_with_tiktoken.ipynb, sections 6 and 7):
// 129 (gpt-3.5-turbo, gpt-4) and 124 (gpt-4o, gpt-4o-mini) for the chat
// example; 105 and 101 for the tools example.
func TestCookbookCounts(t *testing.T) {
	chat := []compact.Message{
		textMsg(compact.RoleSystem, "", "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."),
		textMsg(compact.RoleSystem, "example_user", "New synergies will help drive top-line growth."),
		textMsg(compact.RoleSystem, "example_assistant", "Things working well together will increase revenue."),
		textMsg(compact.RoleSystem, "example_user", "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."),
		textMsg(compact.RoleSystem, "example_assistant", "Let's talk later when we're less busy about how to do better."),
		textMsg(compact.RoleUser, "", "This late pivot means we don't have time to boil the ocean for the client deliverable."),
	}
	weather := []compact.Message{
		textMsg(compact.RoleSystem, "", "You are a helpful assistant that can answer to questions about the weather."),
		textMsg(compact.RoleUser, "", "What's the weather like in San Francisco?"),
	}
	tools := []compact.ToolDef{{
		Name:        "get_current_weather",
		Description: "Get the current weather in a given location",
		Parameters: json.RawMessage(`{
			"type": "object",
			"properties": {
				"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
				"unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}
			},
			"required": ["location"]
		}`),
	}}
	cases := []struct {
		model string
		msgs  []compact.Message
		tools []compact.ToolDef
		want  int
	}{
		{"gpt-3.5-turbo", chat, nil, 129},
		{"gpt-4-0613", chat, nil, 129},
		{"gpt-4", chat, nil, 129},
		{"gpt-4o", chat, nil, 124},
		{"gpt-4o-mini", chat, nil, 124},
		{"gpt-3.5-turbo", weather, tools, 105},
		{"gpt-4", weather, tools, 105},
		{"gpt-4o", weather, tools, 101},
		{"gpt-4o-mini", weather, tools, 101},
	}
	for _, tc := range cases {
		for _, cache := range []*Cache{nil, NewCache(64)} {
			c, err := ForModel(tc.model, WithCache(cache))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second round answers from the cache
				if got := c.CountMessages(tc.msgs, tc.tools); got != tc.want {
					t.Errorf("%s (tools %v, cache %v): %d prompt tokens, the API reported %d", tc.model, tc.tools != nil, cache != nil, got, tc.want)
				}
			}
			tr := compact.Transcript{Messages: tc.msgs, Tools: tc.tools}
			if got := c.Transcript(tr); got != tc.want {
				t.Errorf("%s: Transcript = %d, want %d", tc.model, got, tc.want)
			}
		}
	}
}
