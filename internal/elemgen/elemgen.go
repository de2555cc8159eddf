// Package elemgen draws request elements for property tests: one OpenAI
// Chat Completions message or one Responses item as JSON, with the members
// a reader must mind (roles, content shapes, calls and their outputs,
// reasoning, escapes and lone surrogates, unknown and case-variant keys)
// in any order. format's and serve's tests hold their count-only pass to
// the reader on these, comparing messages as Counted renders them.
package elemgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"pgregory.net/rapid"
)

// Element draws one element: a Chat message when chat is set, a Responses
// item otherwise. callID is the id of a Chat tool call it may hold.
func Element(rt *rapid.T, chat bool, callID string) string {
	text := rapid.SampledFrom([]string{`""`, `"plain words"`, `"line\nbreak \"quoted\" \u00e9\ud83d\ude00 tab\t"`, `"lone \ud83d surrogate \udc00"`, `null`, `"  "`, `"\u0085x"`, `5`})
	args := rapid.SampledFrom([]string{`"{\"path\":\"a.go\"}"`, `" {\"x\": [1, 2]} "`, `"not json"`, `""`, `null`, `{"path":"a.go"}`, `"\u00a0{}"`})
	str := rapid.SampledFrom([]string{`"a"`, `"b"`, `""`, `"a"`, `null`, `1`})
	role := rapid.SampledFrom([]string{`"user"`, `"assistant"`, `"system"`, `"developer"`, `"tool"`, `"user"`, `"assistant"`, `"tool"`, `"function"`, `""`, `null`})
	partType := rapid.SampledFrom([]string{`"text"`, `"input_text"`, `"output_text"`, `"image_url"`, `"refusal"`, `"summary_text"`, `null`})
	content := func(rt *rapid.T, label string) string {
		switch rapid.IntRange(0, 3).Draw(rt, label) {
		case 0:
			return text.Draw(rt, label+"-text")
		case 1:
			var parts []string
			for range rapid.IntRange(0, 3).Draw(rt, label+"-n") {
				p := fmt.Sprintf(`{"type":%s,"text":%s}`, partType.Draw(rt, label+"-type"), text.Draw(rt, label+"-part"))
				if rapid.IntRange(0, 9).Draw(rt, label+"-odd") == 0 {
					p = `{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}`
				}
				parts = append(parts, p)
			}
			return "[" + strings.Join(parts, ",") + "]"
		case 2:
			if rapid.IntRange(0, 9).Draw(rt, label+"-object") == 0 {
				return `{"type":"text","text":"x"}`
			}
			return text.Draw(rt, label+"-text")
		}
		return "null"
	}
	members := map[string]string{}
	if chat {
		members["role"] = role.Draw(rt, "role")
		members["content"] = content(rt, "content")
		for _, key := range []string{"name", "tool_call_id", "refusal", "id"} {
			if rapid.IntRange(0, 2).Draw(rt, key) == 0 {
				members[key] = str.Draw(rt, key+"-value")
			}
		}
		for _, key := range []string{"reasoning_content", "function_call", "Role", "extra"} {
			if rapid.IntRange(0, 29).Draw(rt, key) == 0 {
				members[key] = str.Draw(rt, key+"-value")
			}
		}
		if rapid.Bool().Draw(rt, "calls") {
			members["tool_calls"] = fmt.Sprintf(`[{"id":%q,"type":"function","function":{"name":%s,"arguments":%s}}]`,
				callID, str.Draw(rt, "fn"), args.Draw(rt, "args"))
		}
	} else {
		typ := rapid.SampledFrom([]string{`"message"`, `"function_call"`, `"function_call_output"`, `"reasoning"`,
			`"message"`, `"function_call"`, `"function_call_output"`, `"custom_tool_call"`, `"custom_tool_call_output"`,
			`"compaction"`, `"web_search_call"`, ""}).Draw(rt, "type")
		if typ != "" {
			members["type"] = typ
		}
		switch typ {
		case `"message"`, "":
			members["role"] = role.Draw(rt, "role")
			members["content"] = content(rt, "content")
		case `"function_call"`:
			members["call_id"] = str.Draw(rt, "call_id")
			members["name"] = str.Draw(rt, "name")
			members["arguments"] = args.Draw(rt, "args")
		case `"custom_tool_call"`:
			members["call_id"] = str.Draw(rt, "call_id")
			members["name"] = str.Draw(rt, "name")
			members["input"] = text.Draw(rt, "input")
		case `"function_call_output"`, `"custom_tool_call_output"`:
			members["call_id"] = str.Draw(rt, "call_id")
			members["output"] = content(rt, "output")
		case `"reasoning"`:
			members["summary"] = fmt.Sprintf(`[{"type":"summary_text","text":%s}]`, text.Draw(rt, "summary"))
			members["encrypted_content"] = str.Draw(rt, "encrypted")
			members["content"] = rapid.SampledFrom([]string{`null`, `[]`, `[{"type":"reasoning_text","text":"r"}]`, `"s"`}).Draw(rt, "reasoning-content")
		}
		for _, key := range []string{"id", "status", "Type", "extra"} {
			if rapid.IntRange(0, 4+25*len(key)/5).Draw(rt, key) == 0 {
				members[key] = str.Draw(rt, key+"-value")
			}
		}
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = rapid.Permutation(keys).Draw(rt, "order")
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", k, members[k])
	}
	b.WriteString("}")
	return b.String()
}

// Counted renders what the token counter reads of m (role, name, results,
// each part's type, text, call and image), so that a test compares the
// count pass's message with the reader's.
func Counted(m compact.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "role=%q name=%q results=%q", m.Role, m.Name, m.ToolCallIDs)
	for _, p := range m.Parts {
		fmt.Fprintf(&b, " [%s %q %q", p.Type, p.Text, p.CallID)
		if tc := p.ToolCall; tc != nil {
			fmt.Fprintf(&b, " call %q %q %s", tc.ID, tc.Name, tc.Arguments)
		}
		if p.Image != nil {
			fmt.Fprintf(&b, " image %q %q %d", p.Image.URL, p.Image.MediaType, len(p.Image.Data))
		}
		b.WriteString("]")
	}
	return b.String()
}
