package sample

// OpenAIChat renders the session as an OpenAI Chat Completions request
// body: the model, the messages (system, user, assistant with tool_calls,
// tool results with the tool role) and the tools. Thinking and harness
// notes have no place in it and are left out.
func OpenAIChat(s *Session) []byte {
	id := newIDs(s, "openai")
	msgs := []obj{{{"role", "system"}, {"content", s.System}}}
	for _, e := range s.Events {
		switch e.Kind {
		case UserText:
			msgs = append(msgs, obj{{"role", "user"}, {"content", e.Text}})
		case AssistantTurn:
			m := obj{{"role", "assistant"}, {"content", nullable(e.Text)}}
			var calls []obj
			var ids []string
			for _, c := range e.Calls {
				name, input := apiTool(c)
				callID := "call_" + id.str(alnum, 24)
				ids = append(ids, callID)
				calls = append(calls, obj{{"id", callID}, {"type", "function"}, {"function", obj{{"name", name}, {"arguments", string(marshal(input))}}}})
			}
			if len(calls) > 0 {
				m = append(m, kv{"tool_calls", calls})
			}
			msgs = append(msgs, m)
			for i, c := range e.Calls {
				msgs = append(msgs, obj{{"role", "tool"}, {"tool_call_id", ids[i]}, {"content", apiResult(c)}})
			}
		}
	}
	var tools []obj
	for _, t := range apiTools {
		tools = append(tools, obj{{"type", "function"}, {"function", obj{{"name", t.name}, {"description", t.desc}, {"parameters", t.schema}}}})
	}
	return indent(obj{{"model", "gpt-4.1"}, {"temperature", 0.2}, {"messages", msgs}, {"tools", tools}})
}

// Anthropic renders the session as an Anthropic Messages request body:
// the system prompt, the tools, and the messages, assistant turns as
// thinking, text and tool_use blocks, their results as tool_result blocks
// of the next user message (with the user's next text after them, as the
// API's alternation of roles requires).
func Anthropic(s *Session) []byte {
	id := newIDs(s, "anthropic")
	var msgs []obj
	var user []obj // the pending user message's blocks
	flush := func() {
		if len(user) > 0 {
			msgs = append(msgs, obj{{"role", "user"}, {"content", user}})
			user = nil
		}
	}
	for _, e := range s.Events {
		switch e.Kind {
		case UserText:
			user = append(user, obj{{"type", "text"}, {"text", e.Text}})
		case AssistantTurn:
			flush()
			var blocks []obj
			if e.Thinking != "" {
				blocks = append(blocks, obj{{"type", "thinking"}, {"thinking", e.Thinking}, {"signature", id.signature()}})
			}
			if e.Text != "" {
				blocks = append(blocks, obj{{"type", "text"}, {"text", e.Text}})
			}
			for _, c := range e.Calls {
				name, input := apiTool(c)
				callID := "toolu_01" + id.str(base62, 22)
				blocks = append(blocks, obj{{"type", "tool_use"}, {"id", callID}, {"name", name}, {"input", input}})
				r := obj{{"type", "tool_result"}, {"tool_use_id", callID}, {"content", apiResult(c)}}
				if c.Failed {
					r = append(r, kv{"is_error", true})
				}
				user = append(user, r)
			}
			msgs = append(msgs, obj{{"role", "assistant"}, {"content", blocks}})
		}
	}
	flush()
	var tools []obj
	for _, t := range apiTools {
		tools = append(tools, obj{{"name", t.name}, {"description", t.desc}, {"input_schema", t.schema}})
	}
	return indent(obj{{"model", "claude-sonnet-4-5"}, {"max_tokens", 8192},
		{"thinking", obj{{"type", "enabled"}, {"budget_tokens", 4096}}},
		{"system", s.System}, {"tools", tools}, {"messages", msgs}})
}

// signature is an opaque thinking-block signature (base64 of random bytes).
func (i ids) signature() string {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	return "Eu" + i.str(b64, 174) + "=="
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
