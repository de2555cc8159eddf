package format

import (
	"github.com/compactkit/compact"
)

// Messages converted from another format arrive in that format's shape:
// results inside user messages (Anthropic), a call and its result in one
// message (Gemini CLI, server tools), calls without ids (OpenAI's legacy
// function_call). The agent writers each take one shape; these functions
// give it to them, touching only the messages they must encode (a message
// read from the target format keeps its records).

// writeShapes gives each agent writer its shape.
var writeShapes = map[Name]func(compact.Transcript, Name) compact.Transcript{
	SWEAgent:     chatShape,
	MiniSWEAgent: chatShape,
	OpenHands:    chatShape,
	Codex:        chatShape,
	GeminiCLI:    geminiShape,
}

// foreign reports whether a writer of format to must encode m itself.
func foreign(m *compact.Message, to Name) bool {
	return mustEncode(m, to)
}

// chatShape rewrites the messages from other formats in OpenAI Chat's
// shape: an assistant message making calls, then one tool message per call
// answered (ToolCallIDs), every call with an id.
func chatShape(t compact.Transcript, to Name) compact.Transcript {
	if !anyForeign(&t, to) {
		return t
	}
	msgs, _ := fillCallIDs(t.Messages, false)
	var out []compact.Message
	newAt := make([]int, len(msgs)+1)
	for i := range msgs {
		newAt[i] = len(out)
		m := &msgs[i]
		if !foreign(&t.Messages[i], to) {
			// Read from this format: written back as read, call ids
			// and all (an id filled in would change the message).
			out = append(out, t.Messages[i])
			continue
		}
		if !needsSplit(m) {
			out = append(out, *m)
			continue
		}
		for _, s := range plan(m) {
			switch s.kind {
			case segOwn:
				out = append(out, compact.Message{Role: m.Role, Name: m.Name, Synthetic: m.Synthetic, Summary: m.Summary, Parts: unitParts(s.units)})
			case segCalls:
				out = append(out, compact.Message{Role: compact.RoleAssistant, Parts: unitParts(s.units)})
			case segResult:
				parts := append([]compact.Part(nil), s.content...)
				if len(parts) == 0 {
					parts = []compact.Part{{Type: compact.PartText}}
				}
				// A tool message has no error flag: the tag says it failed,
				// for the writers whose format can (OpenHands' error
				// observations).
				for k := range parts {
					parts[k].Failed = parts[k].Failed || s.isError
				}
				out = append(out, compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{s.id}, Parts: parts})
			}
		}
	}
	newAt[len(msgs)] = len(out)
	return withMessages(t, out, newAt)
}

// needsSplit reports whether m is not yet in chat shape: it holds results
// as parts, or calls beside results.
func needsSplit(m *compact.Message) bool {
	for _, p := range m.Parts {
		if p.Type == compact.PartToolResult {
			return true
		}
	}
	return false
}

// geminiShape folds the results of calls into the message making the
// calls, as Gemini CLI records them (each call holds its results): results
// given in later messages (tool messages, user messages of results) join
// their call, and a message left with nothing is dropped.
func geminiShape(t compact.Transcript, to Name) compact.Transcript {
	if !anyForeign(&t, to) {
		return t
	}
	msgs, _ := fillCallIDs(t.Messages, false)
	var out []compact.Message
	callAt := map[string]int{} // call id -> index in out of a foreign message making it
	newAt := make([]int, len(msgs)+1)
	for i := range msgs {
		newAt[i] = len(out)
		m := &msgs[i]
		if !foreign(&t.Messages[i], to) {
			out = append(out, t.Messages[i]) // as read (see chatShape)
			continue
		}
		// The results this message gives, as result parts.
		var results []compact.Part
		kept := compact.Message{Role: m.Role, Name: m.Name, Synthetic: m.Synthetic, Summary: m.Summary, ID: m.ID, Source: m.Source}
		if len(m.ToolCallIDs) > 0 {
			text := m.Text()
			for _, id := range uniqueIDs(m.ToolCallIDs) {
				results = append(results, compact.Part{Type: compact.PartToolResult, CallID: id, Text: text})
			}
			for _, p := range m.Parts {
				if p.Type != compact.PartText {
					kept.Parts = append(kept.Parts, p)
				}
			}
		} else {
			for _, p := range m.Parts {
				if p.Type == compact.PartToolResult {
					if _, ok := callAt[p.CallID]; ok {
						results = append(results, p)
						continue
					}
				}
				kept.Parts = append(kept.Parts, p)
			}
		}
		for _, r := range results {
			k, ok := callAt[r.CallID]
			if !ok {
				// No call to join: the answer stays where it is.
				kept.Parts = append(kept.Parts, compact.Part{Type: compact.PartText, Text: r.Text})
				continue
			}
			out[k].Parts = insertResult(out[k].Parts, r)
		}
		if len(kept.Parts) == 0 {
			continue
		}
		if kept.Role == compact.RoleTool {
			kept.Role = compact.RoleUser
		}
		for _, p := range kept.Parts {
			if p.Type == compact.PartToolCall && p.ToolCall != nil {
				callAt[p.ToolCall.ID] = len(out)
			}
		}
		out = append(out, kept)
	}
	newAt[len(msgs)] = len(out)
	return withMessages(t, out, newAt)
}

// insertResult puts r after its call and the results already given for
// it.
func insertResult(parts []compact.Part, r compact.Part) []compact.Part {
	at := len(parts)
	for i, p := range parts {
		if p.Type == compact.PartToolCall && p.ToolCall != nil && p.ToolCall.ID == r.CallID {
			at = i + 1
			for at < len(parts) && parts[at].Type == compact.PartToolResult && parts[at].CallID == r.CallID {
				at++
			}
			break
		}
	}
	out := make([]compact.Part, 0, len(parts)+1)
	out = append(out, parts[:at]...)
	out = append(out, r)
	return append(out, parts[at:]...)
}

func anyForeign(t *compact.Transcript, to Name) bool {
	for i := range t.Messages {
		if foreign(&t.Messages[i], to) {
			return true
		}
	}
	return false
}

// unitParts flattens units into parts.
func unitParts(us []unit) []compact.Part {
	var out []compact.Part
	for _, u := range us {
		out = append(out, u.parts...)
	}
	return out
}

// withMessages returns t with msgs as its messages, its records moved by
// newAt (old message index -> new).
func withMessages(t compact.Transcript, msgs []compact.Message, newAt []int) compact.Transcript {
	t.Messages = msgs
	recs := make([]compact.Record, len(t.Records))
	copy(recs, t.Records)
	for i := range recs {
		recs[i].At = newAt[min(max(recs[i].At, 0), len(newAt)-1)]
	}
	t.Records = recs
	return t
}
