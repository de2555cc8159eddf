package format

import (
	"testing"

	"github.com/compactkit/compact"
)

// Shapes follow the Responses API reference,
// https://platform.openai.com/docs/api-reference/responses (create request:
// instructions, input items, function and built-in tools; response object:
// output items), its item types (message with input_text/output_text and
// input_image, reasoning with summary and encrypted_content, function_call
// and function_call_output by call_id, custom_tool_call, local_shell_call,
// web_search_call, item_reference) and the compaction item returned by
// POST /responses/compact.
var responsesCases = []readerCase{
	{
		file: "testdata/responses/request.json", as: OpenAIResponses,
		want: []string{
			`system text="You are a helpful assistant with a weather tool."`,
			`user text="Weather in Oslo?"`,
			`assistant think="Need the weather tool for Oslo." call=call_oslo:get_weather{"city":"Oslo"}`,
			`tool ->"call_oslo" text="{\"temp_c\": 3, \"sky\": \"snow\"}"`,
			`assistant text="It is 3°C and snowing in Oslo."`,
			`user text="And tomorrow?"`,
		},
		tools: []string{"get_weather", "web_search"},
	},
	{
		file: "testdata/responses/response.json", as: OpenAIResponses,
		want: []string{
			`assistant call=ws_01:web_search{"type":"search","query":"Oslo weather tomorrow"} result=ws_01:"completed" text="Tomorrow: -1°C, clear." call=call_alert:set_alert{"city":"Oslo","below_c":0}`,
		},
		orphans: 1, // set_alert awaits its output
	},
	{
		file: "testdata/responses/items.jsonl", as: OpenAIResponses,
		want: []string{
			`developer text="Use apply_patch for edits."`,
			`user text="Rename foo to bar in main.go" image=https://example.com/screen.png`,
			`assistant call=call_patch:apply_patch"*** Begin Patch\n*** Update File: main.go\n-foo()\n+bar()\n*** End Patch"`,
			`tool ->"call_patch" text="Done: 1 file changed"`,
			`assistant call=call_sh:local_shell{"type":"exec","command":["go","build","./..."]}`,
			`tool ->"call_sh" text="{\"output\":\"\",\"metadata\":{\"exit_code\":0}}"`,
			`user [summary] opaque="gAAAAABo-compacted"`,
			`assistant text="Renamed and it builds."`,
		},
		records: []string{"item_reference"},
	},
}

func TestReadResponses(t *testing.T) { testReaders(t, responsesCases) }

func TestResponsesKeepsEncryptedReasoningOnlyInRecords(t *testing.T) {
	tr := readFile(t, "testdata/responses/request.json")
	m := tr.Messages[2]
	if len(m.Source.Records) != 2 {
		t.Fatalf("the turn should keep its reasoning and function_call items, got %d records", len(m.Source.Records))
	}
	for _, p := range m.Parts {
		if p.Text == "gAAAAABo-secret" {
			t.Error("encrypted_content leaked into a part")
		}
	}
	if got := string(m.Source.Records[0]); !contains(got, "gAAAAABo-secret") {
		t.Errorf("the reasoning record lost its encrypted_content: %s", got)
	}
	// A compaction item is a summary only the API can read: an opaque
	// part, the item kept byte for byte.
	items := readFile(t, "testdata/responses/items.jsonl")
	c := items.Messages[6]
	if !c.Summary || len(c.Parts) != 1 || c.Parts[0].Type != compact.PartOpaque || c.Text() != "" ||
		string(c.Source.Records[0]) != `{"type":"compaction","id":"cmp_01","encrypted_content":"gAAAAABo-compacted"}` {
		t.Errorf("compaction read as %+v", c)
	}
}
