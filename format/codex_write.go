package format

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Writing Codex rollouts.
//
// Without a new summary, lines go back as they were read: unchanged
// messages byte for byte, changed ones as new response_item lines (one per
// item, with the timestamp of the message's first line), records in place.
//
// A transcript that carries a new summary message (a compact handoff) is
// written the way Codex's remote compaction writes one (codex-rs core:
// compact_remote.rs persists RolloutItem::Compacted(CompactedItem {
// message, replacement_history: Some(new_history) })): every record first,
// in order, then one line
//
//	{"timestamp":...,"type":"compacted","payload":{"message":<handoff>,
//	 "replacement_history":[<head items>, <handoff as a user message>, <tail items>]}}
//
// When Codex resumes, a compacted line with a replacement_history replaces
// the history rebuilt so far (reconstruct_history_from_rollout), so it
// resumes with exactly head + handoff + tail, and so does readCodex. The
// kept messages' items go into the list byte for byte (the payload of
// their lines); their lines are not repeated before it, since anything
// before the compacted line is replaced anyway. The timestamp is the
// input's newest, so the same input gives the same bytes.
//
// The same shape is used when messages that came from an earlier
// replacement_history were changed or removed (their items live inside
// that compacted record, which can then no longer be copied): a new
// compacted line then carries the current history, with an empty message.

func writeCodex(w io.Writer, t compact.Transcript) error {
	compacting := slices.IndexFunc(t.Messages, func(m compact.Message) bool { return isNewSummary(&m, Codex) }) >= 0
	if !compacting {
		var buf bytes.Buffer
		inner := codexAppend(&buf, &t)
		if !inner || codexRereads(buf.Bytes(), &t) {
			_, err := w.Write(buf.Bytes())
			return err
		}
	}
	return codexCompact(w, &t)
}

// codexAppend writes t line by line; it reports whether t holds messages
// read from a replacement_history (written only through their record).
func codexAppend(buf *bytes.Buffer, t *compact.Transcript) (inner bool) {
	ew := &stickyWriter{w: buf}
	records := slices.Clone(t.Records)
	slices.SortStableFunc(records, func(a, b compact.Record) int { return a.At - b.At })
	ts := codexNewest(t)
	r := 0
	for i := range t.Messages {
		for ; r < len(records) && records[r].At <= i; r++ {
			ew.writeLine(records[r].Raw)
		}
		m := &t.Messages[i]
		if !mustEncode(m, Codex) {
			for _, rec := range m.Source.Records {
				if codexIsLine(rec) {
					ew.writeLine(rec)
				} else {
					inner = true
				}
			}
			continue
		}
		if codexFromInner(m) {
			inner = true
		}
		stamp := ts
		if len(m.Source.Records) > 0 {
			if s := jsonscan.LookupString(m.Source.Records[0], "timestamp"); s != "" {
				stamp = s
			}
		}
		for _, item := range codexItems(m) {
			ew.writeLine(codexLineJSON(stamp, cxResponseItem, item))
		}
	}
	for ; r < len(records); r++ {
		ew.writeLine(records[r].Raw)
	}
	return inner
}

// codexRereads reports whether out reads back as t's messages.
func codexRereads(out []byte, t *compact.Transcript) bool {
	back, err := readCodex(bytes.NewReader(out), newReadState("", Codex, ReadOptions{}))
	if err != nil || len(back.Messages) != len(t.Messages) {
		return false
	}
	for i := range back.Messages {
		if back.Messages[i].Fingerprint() != t.Messages[i].Fingerprint() {
			return false
		}
	}
	return true
}

// codexCompact writes every record, then a compacted line whose
// replacement_history is the whole live history: the messages' items and
// the live non-message items (ghost snapshots, web searches) where they
// stood, as Codex's remote compaction keeps them.
func codexCompact(w io.Writer, t *compact.Transcript) error {
	ew := &stickyWriter{w: w}
	records := slices.Clone(t.Records)
	slices.SortStableFunc(records, func(a, b compact.Record) int { return a.At - b.At })
	live := 0 // records from here on follow the last reset
	for i, r := range records {
		ew.writeLine(r.Raw)
		if r.Marker {
			live = i + 1
		}
	}
	history := []json.RawMessage{}
	message := ""
	r := live
	for i := range t.Messages {
		for ; r < len(records) && records[r].At <= i; r++ {
			if item := codexLiveItem(records[r]); item != nil {
				history = append(history, item)
			}
		}
		m := &t.Messages[i]
		if isNewSummary(m, Codex) {
			message = m.Text()
		}
		history = append(history, codexItems(m)...)
	}
	for ; r < len(records); r++ {
		if item := codexLiveItem(records[r]); item != nil {
			history = append(history, item)
		}
	}
	// The lines of earlier local compactions go before the new one: read
	// back, they mark their summaries (now items of the list) as summaries.
	for i := range t.Messages {
		if m := &t.Messages[i]; !mustEncode(m, Codex) {
			for _, rec := range m.Source.Records {
				if codexIsLine(rec) && jsonscan.LookupString(rec, "type") == cxCompacted {
					ew.writeLine(rec)
				}
			}
		}
	}
	var payload jsonObject
	payload.add("message", message).add("replacement_history", history)
	ew.writeLine(codexLineJSON(codexNewest(t), cxCompacted, payload.bytes()))
	return ew.err
}

// codexLiveItem returns the item of a response_item record that is part of
// the history without being a message, or nil.
func codexLiveItem(r compact.Record) json.RawMessage {
	if !strings.HasPrefix(r.Type, cxResponseItem+":") {
		return nil
	}
	payload := jsonscan.Lookup(r.Raw, "payload")
	var it codexItem
	if jsonscan.Raw(payload).First() != '{' || json.Unmarshal(payload, &it) != nil {
		return nil
	}
	if _, _, isMessage := codexParts(&it); isMessage {
		return nil // a message demoted by an earlier compaction
	}
	return payload
}

// codexItems returns m as Responses API items: its own items when it is
// unchanged, newly encoded ones otherwise.
func codexItems(m *compact.Message) []json.RawMessage {
	if !mustEncode(m, Codex) {
		var items []json.RawMessage
		for _, rec := range m.Source.Records {
			switch {
			case !codexIsLine(rec):
				items = append(items, rec)
			case jsonscan.LookupString(rec, "type") == cxCompacted:
				// A legacy compaction's summary becomes the user message
				// Codex itself would rebuild from it.
				items = append(items, codexMessageItem(compact.RoleUser, m.Parts))
			case jsonscan.LookupString(rec, "type") == cxResponseItem:
				items = append(items, json.RawMessage(jsonscan.Lookup(rec, "payload")))
			default:
				// An event line that sat inside the model turn: not an item.
			}
		}
		return items
	}
	kinds := codexCallKinds(m)
	var items []json.RawMessage
	switch m.Role {
	case compact.RoleAssistant:
		var run []compact.Part
		flush := func() {
			if len(run) == 0 {
				return
			}
			if run[0].Type == compact.PartThinking {
				items = append(items, codexReasoningItem(run))
			} else {
				items = append(items, codexMessageItem(compact.RoleAssistant, run))
			}
			run = nil
		}
		for _, p := range m.Parts {
			switch p.Type {
			case compact.PartToolCall:
				flush()
				if p.ToolCall != nil {
					items = append(items, codexCallItem(p.ToolCall, kinds[p.ToolCall.ID]))
				}
			case compact.PartThinking, compact.PartText, compact.PartImage:
				if len(run) > 0 && (run[0].Type == compact.PartThinking) != (p.Type == compact.PartThinking) {
					flush()
				}
				run = append(run, p)
			}
		}
		flush()
	case compact.RoleTool:
		id := ""
		if len(m.ToolCallIDs) > 0 {
			id = m.ToolCallIDs[0]
		}
		items = append(items, codexOutputItem(id, m.Text(), kinds[id]))
	default:
		var rest []compact.Part
		for _, p := range m.Parts {
			if p.Type == compact.PartToolResult {
				items = append(items, codexOutputItem(p.CallID, p.Text, kinds[p.CallID]))
			} else {
				rest = append(rest, p)
			}
		}
		if len(rest) > 0 || len(items) == 0 {
			items = append(items, codexMessageItem(m.Role, rest))
		}
	}
	return items
}

// codexCallKinds maps call ids to the item type they had in m's source, so
// a changed custom or local-shell call keeps its kind.
func codexCallKinds(m *compact.Message) map[string]string {
	kinds := map[string]string{}
	if m.Source.Format != string(Codex) {
		return kinds
	}
	for _, rec := range m.Source.Records {
		item := rec
		if codexIsLine(rec) {
			item = jsonscan.Lookup(rec, "payload")
		}
		if id := jsonscan.LookupString(item, "call_id"); id != "" {
			kinds[id] = jsonscan.LookupString(item, "type")
		}
	}
	return kinds
}

func codexMessageItem(role compact.Role, parts []compact.Part) json.RawMessage {
	in := role != compact.RoleAssistant
	content := []json.RawMessage{}
	for _, p := range parts {
		switch p.Type {
		case compact.PartText:
			typ := "output_text"
			if in {
				typ = "input_text"
			}
			content = append(content, jsonOf(map[string]string{"type": typ, "text": p.Text}))
		case compact.PartImage:
			content = append(content, jsonOf(map[string]string{"type": "input_image", "image_url": imageAsURL(p.Image)}))
		}
	}
	var o jsonObject
	o.add("type", "message").add("role", string(role)).add("content", content)
	return o.bytes()
}

func codexReasoningItem(parts []compact.Part) json.RawMessage {
	summary := []json.RawMessage{}
	for _, p := range parts {
		if p.Text != "" || len(parts) > 1 {
			summary = append(summary, jsonOf(map[string]string{"type": "summary_text", "text": p.Text}))
		}
	}
	var o jsonObject
	o.add("type", "reasoning").add("summary", summary).add("content", nil).add("encrypted_content", nil)
	return o.bytes()
}

func codexCallItem(tc *compact.ToolCall, kind string) json.RawMessage {
	var o jsonObject
	switch kind {
	case "custom_tool_call":
		var input string
		if json.Unmarshal(tc.Arguments, &input) != nil {
			input = string(tc.Arguments)
		}
		o.add("type", kind).add("name", tc.Name).add("input", input).add("call_id", tc.ID)
	case "local_shell_call":
		action := tc.Arguments
		if len(action) == 0 {
			action = json.RawMessage("{}")
		}
		o.add("type", kind).add("call_id", tc.ID).add("status", "completed").add("action", action)
	default:
		o.add("type", "function_call").add("name", tc.Name).add("arguments", argsToString(tc.Arguments)).add("call_id", tc.ID)
	}
	return o.bytes()
}

func codexOutputItem(id, text, callKind string) json.RawMessage {
	typ := "function_call_output"
	if callKind == "custom_tool_call" {
		typ = "custom_tool_call_output"
	}
	var o jsonObject
	o.add("type", typ).add("call_id", id).add("output", text)
	return o.bytes()
}

func codexLineJSON(ts, typ string, payload json.RawMessage) []byte {
	var o jsonObject
	if ts != "" {
		o.add("timestamp", ts)
	}
	o.add("type", typ).add("payload", payload)
	return o.bytes()
}

// codexIsLine reports whether a source record is a rollout line (rather than
// a bare item from a replacement_history).
func codexIsLine(rec []byte) bool {
	return len(jsonscan.Lookup(rec, "payload")) > 0 // Responses API items have no "payload"
}

// codexFromInner reports whether m was read from a replacement_history.
func codexFromInner(m *compact.Message) bool {
	return m.Source.Format == string(Codex) && len(m.Source.Records) > 0 && !codexIsLine(m.Source.Records[0])
}

// codexNewest is the newest timestamp in t's lines.
func codexNewest(t *compact.Transcript) string {
	newest := ""
	check := func(rec []byte) {
		if s := jsonscan.LookupString(rec, "timestamp"); s > newest {
			newest = s
		}
	}
	for i := range t.Messages {
		for _, rec := range t.Messages[i].Source.Records {
			check(rec)
		}
	}
	for _, r := range t.Records {
		check(r.Raw)
	}
	return newest
}
