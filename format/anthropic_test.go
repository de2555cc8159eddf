package format

import "testing"

// Shapes follow the Messages API reference,
// https://docs.anthropic.com/en/api/messages (request: system as text
// blocks with cache_control, tools with input_schema, content blocks text,
// image base64/url, thinking with signature, tool_use, tool_result with
// string or block content and is_error), the server tools' blocks
// (server_tool_use, web_search_tool_result) and redacted_thinking from the
// extended-thinking and web-search tool guides, and a response object.
var anthropicCases = []readerCase{
	{
		file: "testdata/anthropic/request.json", as: Anthropic,
		want: []string{
			`system text="You are a careful coding agent." text="Repository: example/app"`,
			`user text="Why does the build fail?"`,
			`assistant think="I should read the Makefile and run the build." text="Let me look." call=toolu_01A:read_file{"path":"Makefile"} call=toolu_01B:run{"cmd":"make"}`,
			`user result=toolu_01A:"build:\n\tgo build ./..." result=toolu_01B!:"main.go:3:2: undefined: foo" result=toolu_01B!:image=image/png;iVBORw0KGgo=`,
			`assistant text="main.go uses an undefined name foo."`,
			`user text="Fix it, here is the design:" image=https://example.com/design.png`,
		},
		tools: []string{"read_file", "run"},
	},
	{
		file: "testdata/anthropic/server_tools.json", as: Anthropic,
		want: []string{
			`user text="Who won the 2024 Tour de France? Also see the attached rules."`,
			`assistant think="" call=srvtoolu_01:web_search{"query":"2024 Tour de France winner"} result=srvtoolu_01:"Pogačar wins 2024 Tour https://example.com/tdf2024" text="Tadej Pogačar won the 2024 Tour de France."`,
		},
	},
	{
		file: "testdata/anthropic/response.json", as: Anthropic,
		want: []string{
			`assistant text="I'll check the file." call=toolu_01X:read_file{"path":"go.mod"}`,
		},
		orphans: 1, // the call awaits its result
	},
}

func TestReadAnthropic(t *testing.T) { testReaders(t, anthropicCases) }
