package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Writing Claude Code sessions.
//
// Unchanged messages are written as the records they were read from, byte
// for byte, and non-message records go back where they stood. A message
// that changed is written as one record built on its first source record:
// only "message.content" is replaced (and the derived "toolUseResult" copy
// of a tool's output is dropped, since it would contradict the new content).
//
// A transcript that carries a new summary message (a compact handoff, no
// source record) is written the way Claude Code itself writes a compaction,
// so that `claude --resume` picks it up:
//
//	{"parentUuid":null,"logicalParentUuid":<last record before>,...,"type":"system",
//	 "subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,
//	 "level":"info","compactMetadata":{"trigger":"manual","preTokens":N}, ...}
//	... the kept head ...
//	{"parentUuid":<previous>,...,"type":"user","message":{"role":"user","content":<handoff>},
//	 "isVisibleInTranscriptOnly":true,"isCompactSummary":true, ...}
//	... the kept tail ...
//
// The boundary (parentUuid null) starts a new chain before the first kept
// message, so the head, the summary and the tail are all on the chain
// Claude Code walks back from the newest record, and all after the last
// boundary, which is where it cuts a long file on load. Claude Code's own
// compaction puts the summary right after the boundary because it keeps no
// head; the record shapes and fields are the ones it writes (as documented
// by reverse-engineering notes of its sessionStorage: jeremedia/
// claude-code-log-format, and fixtures of tools that parse these files).
//
// parentUuid is re-pointed only where the chain would otherwise break: the
// record right after an inserted record points to it, and a record whose
// parent was dropped (or lies before the boundary, or is null) points to
// the record written before it. Everything else in a record stays
// byte-identical. Without a compaction, only records whose parent was one
// of the merged-away records of a changed split message are re-pointed.
//
// The inserted records get uuids derived from the session id and the
// summary text, and the newest timestamp of the input, so the same input
// always gives the same bytes.

// ccOut is one record to write.
type ccOut struct {
	raws [][]byte
	// build makes a record the writer adds (boundary, summary, a message
	// with no source record) once its parent in the chain is known.
	build    func(parent, logicalParent string) []byte
	uuid     string
	boundary bool
	// rewound: records of a branch the conversation was rewound from,
	// written as they are but kept off the live chain.
	rewound bool
}

// ccContext holds the session fields copied onto records the writer adds.
type ccContext struct {
	chained   bool // records carry uuid/parentUuid (JSONL, not the export)
	sessionID string
	fields    []ccKV // userType, cwd, sessionId, version, gitBranch, as found
	timestamp string // newest timestamp of the input
	preTokens int64
	seq       int
}

type ccKV struct {
	key string
	val json.RawMessage
}

func writeClaudeCode(w io.Writer, t compact.Transcript) error {
	export := len(t.Envelope) > 0 && len(jsonscan.Lookup(t.Envelope, "loglines")) > 0
	recs := ccEncode(&t, !export)
	if export {
		return fillList(w, t.Envelope, "loglines", recs)
	}
	ew := &stickyWriter{w: w}
	for _, r := range recs {
		ew.writeLine(r)
	}
	return ew.err
}

// ccEncode returns the records to write, in order.
func ccEncode(t *compact.Transcript, chained bool) [][]byte {
	compacting := slices.IndexFunc(t.Messages, func(m compact.Message) bool { return isNewSummary(&m, ClaudeCode) }) >= 0
	ctx := ccNewContext(t, chained)
	records := slices.Clone(t.Records)
	slices.SortStableFunc(records, func(a, b compact.Record) int { return a.At - b.At })
	var out []ccOut
	remap := map[string]string{} // uuid of a merged-away record -> uuid of its message's record
	r := 0
	for i := range t.Messages {
		for ; r < len(records) && records[r].At <= i; r++ {
			out = append(out, ccOut{raws: [][]byte{records[r].Raw}, rewound: records[r].Type == ccRewound})
		}
		if compacting && i == 0 {
			out = append(out, ctx.boundary())
		}
		for _, m := range ccSplitResults(&t.Messages[i]) {
			out = append(out, ccEncodeMessage(m, &ctx, remap))
		}
	}
	for ; r < len(records); r++ {
		out = append(out, ccOut{raws: [][]byte{records[r].Raw}, rewound: records[r].Type == ccRewound})
	}
	return ccChain(out, &ctx, compacting, remap)
}

// ccSplitResults splits an assistant message that carries its calls'
// results (Gemini CLI keeps them in the model turn) into the assistant turn
// and a user turn holding the results, as Claude Code writes them: the API
// takes tool_result blocks only in a user turn.
func ccSplitResults(m *compact.Message) []*compact.Message {
	inResult := func(p compact.Part) bool {
		return p.Type == compact.PartToolResult || p.Type == compact.PartImage && p.CallID != ""
	}
	if m.Role != compact.RoleAssistant || !mustEncode(m, ClaudeCode) || ccTemplate(m) != nil ||
		!slices.ContainsFunc(m.Parts, func(p compact.Part) bool { return p.Type == compact.PartToolResult }) {
		return []*compact.Message{m}
	}
	call, results := *m, &compact.Message{Role: compact.RoleUser}
	call.Parts = nil
	for _, p := range m.Parts {
		if inResult(p) {
			results.Parts = append(results.Parts, p)
		} else {
			call.Parts = append(call.Parts, p)
		}
	}
	return []*compact.Message{&call, results}
}

// ccEncodeMessage returns the record(s) for m.
func ccEncodeMessage(m *compact.Message, ctx *ccContext, remap map[string]string) ccOut {
	if !mustEncode(m, ClaudeCode) {
		raws := make([][]byte, len(m.Source.Records))
		for i, r := range m.Source.Records {
			raws[i] = r
		}
		return ccOut{raws: raws}
	}
	content := ccContentJSON(m)
	if tmpl := ccTemplate(m); tmpl != nil {
		msgObj := jsonscan.Lookup(tmpl, "message")
		set := map[string]json.RawMessage{"message": jsonscan.SetMembers(msgObj, map[string]json.RawMessage{"content": content}, []string{"content"})}
		order := []string{"message"}
		var drop []string
		if m.Summary {
			set["isCompactSummary"] = json.RawMessage("true")
			order = append(order, "isCompactSummary")
		} else {
			drop = append(drop, "isCompactSummary")
		}
		if m.Role != compact.RoleAssistant {
			drop = append(drop, "toolUseResult")
		}
		raw := jsonscan.SetMembers(tmpl, set, order, drop...)
		first := jsonscan.LookupString(tmpl, "uuid")
		raws := [][]byte{raw}
		for _, rec := range m.Source.Records[1:] {
			switch jsonscan.LookupString(rec, "type") {
			case ccUser, ccAssistant, ccSummary:
				if u := jsonscan.LookupString(rec, "uuid"); u != "" && first != "" {
					remap[u] = first
				}
			default:
				// A metadata record that sat inside the message (progress,
				// a snapshot) stays, after it.
				raws = append(raws, rec)
			}
		}
		return ccOut{raws: raws}
	}
	return ctx.fresh(m, content)
}

// ccTemplate returns the first source record of m that holds a message
// object, to build a changed message on.
func ccTemplate(m *compact.Message) []byte {
	if m.Source.Format != string(ClaudeCode) {
		return nil
	}
	for _, rec := range m.Source.Records {
		if v := jsonscan.Lookup(rec, "message"); len(v) > 0 && v[0] == '{' {
			return rec
		}
	}
	return nil
}

// ccChain flattens out into records and keeps the uuid chain whole (see the
// comment at the top of this file).
func ccChain(out []ccOut, ctx *ccContext, compacting bool, remap map[string]string) [][]byte {
	var recs [][]byte
	prev, prevMsg := "", "" // last chain record written; last conversation record
	live := map[string]bool{}
	rewound := map[string]bool{}
	afterInserted, inLive := false, !compacting
	for _, o := range out {
		if o.rewound && ctx.chained {
			// Off the live chain: never a parent of what follows. A branch
			// whose root was dropped is hung off the live record before
			// it, so that it still reads as a branch left behind.
			for _, raw := range o.raws {
				uuid, parent, chain := ccChainFields(raw)
				if chain && compacting && inLive && prev != "" && !live[parent] && !rewound[parent] {
					raw = ccSetParent(raw, prev)
				}
				if chain {
					rewound[uuid] = true
				}
				recs = append(recs, raw)
			}
			continue
		}
		if o.build != nil {
			logical := ""
			parent := prev
			if o.boundary {
				logical, parent = prevMsg, ""
				inLive = true
				clear(live)
			}
			recs = append(recs, o.build(parent, logical))
			if ctx.chained {
				prev = o.uuid
				live[o.uuid] = true
			}
			afterInserted = true
			continue
		}
		for _, raw := range o.raws {
			if !ctx.chained {
				recs = append(recs, raw)
				continue
			}
			uuid, parent, chain := ccChainFields(raw)
			if !chain {
				recs = append(recs, raw)
				continue
			}
			switch {
			case afterInserted && prev != "":
				if parent != prev {
					raw = ccSetParent(raw, prev)
				}
			case compacting && inLive:
				if (parent == "" || !live[parent]) && prev != "" {
					raw = ccSetParent(raw, prev)
				}
			case parent != "" && remap[parent] != "":
				raw = ccSetParent(raw, remap[parent])
			}
			recs = append(recs, raw)
			live[uuid] = true
			prev = uuid
			if t := jsonscan.LookupString(raw, "type"); t == ccUser || t == ccAssistant {
				prevMsg = uuid
			}
			afterInserted = false
		}
	}
	return recs
}

// ccChainFields returns a record's uuid and parentUuid ("" for null), and
// whether it is on the main chain at all (has both fields, not a sidechain).
func ccChainFields(raw []byte) (uuid, parent string, chain bool) {
	fields, _ := jsonscan.Members(raw)
	u, p := jsonscan.ValueOf(raw, fields, "uuid"), jsonscan.ValueOf(raw, fields, "parentUuid")
	if len(u) == 0 || u[0] != '"' || p == nil {
		return "", "", false
	}
	if sc := jsonscan.ValueOf(raw, fields, "isSidechain"); string(sc) == "true" {
		return "", "", false
	}
	_ = json.Unmarshal(u, &uuid)
	if p[0] == '"' {
		_ = json.Unmarshal(p, &parent)
	}
	return uuid, parent, true
}

// ccSetParent returns a copy of raw with its parentUuid value replaced and
// every other byte kept.
func ccSetParent(raw []byte, parent string) []byte {
	members, _ := jsonscan.Members(raw)
	if at, ok := jsonscan.Find(members, "parentUuid"); ok && at.End >= 0 {
		v := jsonOf(parent)
		out := make([]byte, 0, len(raw)+len(v))
		out = append(out, raw[:at.Start]...)
		out = append(out, v...)
		return append(out, raw[at.End:]...)
	}
	return raw
}

// ccNewContext gathers what added records copy from the session.
func ccNewContext(t *compact.Transcript, chained bool) ccContext {
	ctx := ccContext{chained: chained}
	var all [][]byte
	for i := range t.Messages {
		if t.Messages[i].Source.Format == string(ClaudeCode) {
			for _, r := range t.Messages[i].Source.Records {
				all = append(all, r)
			}
		}
	}
	for _, r := range t.Records {
		all = append(all, r.Raw)
	}
	for _, rec := range all {
		fields, ok := jsonscan.Members(rec)
		if !ok {
			continue
		}
		if ts := jsonscan.ValueOf(rec, fields, "timestamp"); len(ts) > 0 && ts[0] == '"' {
			var s string
			if json.Unmarshal(ts, &s) == nil && s > ctx.timestamp {
				ctx.timestamp = s
			}
		}
		if ctx.fields == nil && len(jsonscan.ValueOf(rec, fields, "sessionId")) > 0 {
			for _, k := range []string{"userType", "cwd", "sessionId", "version", "gitBranch"} {
				if v := jsonscan.ValueOf(rec, fields, k); v != nil {
					ctx.fields = append(ctx.fields, ccKV{k, json.RawMessage(v)})
				}
			}
			ctx.sessionID = jsonscan.LookupString(rec, "sessionId")
		}
	}
	if ctx.sessionID == "" && chained {
		ctx.sessionID = ccUUID("session", t.Hash())
		ctx.fields = []ccKV{{"userType", json.RawMessage(`"external"`)}, {"sessionId", jsonOf(ctx.sessionID)}}
	}
	ctx.preTokens = ccLastUsage(t)
	return ctx
}

// ccLastUsage is the prompt size Claude Code last reported: the usage of
// the newest assistant record, which is what it shows as preTokens.
func ccLastUsage(t *compact.Transcript) int64 {
	for i := len(t.Messages) - 1; i >= 0; i-- {
		recs := t.Messages[i].Source.Records
		for j := len(recs) - 1; j >= 0; j-- {
			u := jsonscan.Lookup(jsonscan.Lookup(recs[j], "message"), "usage")
			if len(u) == 0 {
				continue
			}
			var usage struct {
				In         int64 `json:"input_tokens"`
				CacheWrite int64 `json:"cache_creation_input_tokens"`
				CacheRead  int64 `json:"cache_read_input_tokens"`
				Out        int64 `json:"output_tokens"`
			}
			if json.Unmarshal(u, &usage) == nil {
				return usage.In + usage.CacheWrite + usage.CacheRead + usage.Out
			}
		}
	}
	return 0
}

// ccUUID derives a uuid (version 5 layout) from its inputs.
func ccUUID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// jsonObject builds a JSON object with keys in the order added.
type jsonObject struct {
	b bytes.Buffer
}

func (o *jsonObject) add(key string, v any) *jsonObject {
	if o.b.Len() == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteByte(',')
	}
	o.b.Write(jsonOf(key))
	o.b.WriteByte(':')
	switch raw := v.(type) {
	case json.RawMessage:
		o.b.Write(raw)
	case []byte:
		o.b.Write(raw)
	default:
		o.b.Write(jsonOf(v))
	}
	return o
}

func (o *jsonObject) bytes() []byte {
	if o.b.Len() == 0 {
		return []byte("{}")
	}
	return append(o.b.Bytes(), '}')
}

// head adds the chain and session fields Claude Code puts first.
func (ctx *ccContext) head(o *jsonObject, parent string) {
	if !ctx.chained {
		return
	}
	if parent == "" {
		o.add("parentUuid", nil)
	} else {
		o.add("parentUuid", parent)
	}
	o.add("isSidechain", false)
	for _, kv := range ctx.fields {
		o.add(kv.key, kv.val)
	}
}

func (ctx *ccContext) tail(o *jsonObject, uuid string) {
	if ctx.timestamp != "" {
		o.add("timestamp", ctx.timestamp)
	}
	if ctx.chained {
		o.add("uuid", uuid)
	}
}

// boundary is the compact_boundary record that starts the new chain.
func (ctx *ccContext) boundary() ccOut {
	ctx.seq++
	uuid := ccUUID(ctx.sessionID, "compact_boundary", fmt.Sprint(ctx.seq), ctx.timestamp)
	return ccOut{uuid: uuid, boundary: true, build: func(parent, logical string) []byte {
		var o jsonObject
		if ctx.chained {
			o.add("parentUuid", nil)
			if logical != "" {
				o.add("logicalParentUuid", logical)
			}
			o.add("isSidechain", false)
			for _, kv := range ctx.fields {
				o.add(kv.key, kv.val)
			}
		}
		o.add("type", ccSystem).add("subtype", ccCompactBoundary).add("content", "Conversation compacted").add("isMeta", false)
		if ctx.timestamp != "" {
			o.add("timestamp", ctx.timestamp)
		}
		if ctx.chained {
			o.add("uuid", uuid)
		}
		o.add("level", "info")
		var meta jsonObject
		meta.add("trigger", "manual").add("preTokens", ctx.preTokens)
		o.add("compactMetadata", json.RawMessage(meta.bytes()))
		return o.bytes()
	}}
}

// fresh is a record for a message with no source record to build on: the
// compaction summary, or a message from another format.
func (ctx *ccContext) fresh(m *compact.Message, content json.RawMessage) ccOut {
	ctx.seq++
	uuid := ccUUID(ctx.sessionID, m.Fingerprint(), fmt.Sprint(ctx.seq))
	return ccOut{uuid: uuid, build: func(parent, _ string) []byte {
		var o jsonObject
		ctx.head(&o, parent)
		if m.Role == compact.RoleAssistant {
			o.add("type", ccAssistant)
			var msg jsonObject
			msg.add("id", "msg_"+uuid[:8]+uuid[9:13]).add("type", "message").add("role", ccAssistant).add("content", content)
			o.add("message", json.RawMessage(msg.bytes()))
		} else {
			o.add("type", ccUser)
			var msg jsonObject
			msg.add("role", ccUser).add("content", content)
			o.add("message", json.RawMessage(msg.bytes()))
			if m.Summary {
				o.add("isVisibleInTranscriptOnly", true).add("isCompactSummary", true)
			} else if m.Synthetic || m.Role == compact.RoleSystem || m.Role == compact.RoleDeveloper {
				o.add("isMeta", true)
			}
		}
		ctx.tail(&o, uuid)
		return o.bytes()
	}}
}

// ccContentJSON encodes m's parts as Claude Code message content: a plain
// string for a user message that is one piece of text, blocks otherwise.
func ccContentJSON(m *compact.Message) json.RawMessage {
	if m.Role != compact.RoleAssistant && len(m.Parts) == 1 && m.Parts[0].Type == compact.PartText && len(m.ToolCallIDs) == 0 {
		if tmpl := ccTemplate(m); tmpl == nil || jsonscan.Raw(jsonscan.Lookup(jsonscan.Lookup(tmpl, "message"), "content")).First() == '"' {
			return jsonOf(m.Parts[0].Text)
		}
	}
	var blocks []json.RawMessage
	lastResult := -1 // index in blocks of the tool_result images attach to
	var resultImages []json.RawMessage
	flush := func() {
		if lastResult >= 0 && len(resultImages) > 0 {
			blocks[lastResult] = ccResultBlock(blocks[lastResult], resultImages)
		}
		lastResult, resultImages = -1, nil
	}
	for _, p := range m.Parts {
		if p.Type == compact.PartImage && p.CallID != "" && lastResult >= 0 {
			resultImages = append(resultImages, ccImageBlock(p.Image))
			continue
		}
		flush()
		switch p.Type {
		case compact.PartText:
			blocks = append(blocks, jsonOf(map[string]string{"type": "text", "text": p.Text}))
		case compact.PartThinking:
			blocks = append(blocks, jsonOf(map[string]string{"type": "thinking", "thinking": p.Text}))
		case compact.PartImage:
			blocks = append(blocks, ccImageBlock(p.Image))
		case compact.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			var o jsonObject
			// An object (the API takes no other input), on one line: a
			// pretty-printed one would break the JSONL record.
			args := argsObject(p.ToolCall.Arguments)
			var buf bytes.Buffer
			if json.Compact(&buf, args) == nil {
				args = buf.Bytes()
			}
			o.add("type", "tool_use").add("id", p.ToolCall.ID).add("name", p.ToolCall.Name).add("input", args)
			blocks = append(blocks, o.bytes())
		case compact.PartToolResult:
			blocks = append(blocks, ccResult(p.CallID, p.Text, p.IsError))
			lastResult = len(blocks) - 1
		}
	}
	flush()
	// A tool-role message from another format answers by ToolCallIDs.
	if len(m.ToolCallIDs) > 0 && !slices.ContainsFunc(m.Parts, func(p compact.Part) bool { return p.Type == compact.PartToolResult }) {
		blocks = []json.RawMessage{ccResult(m.ToolCallIDs[0], m.Text(), false)}
	}
	if blocks == nil {
		blocks = []json.RawMessage{}
	}
	return jsonOf(blocks)
}

func ccResult(id, text string, isError bool) json.RawMessage {
	var o jsonObject
	o.add("type", "tool_result").add("tool_use_id", id).add("content", text)
	if isError {
		o.add("is_error", true)
	}
	return o.bytes()
}

// ccResultBlock rewrites a tool_result block's content as a list so the
// images that came with the result go back into it.
func ccResultBlock(block json.RawMessage, images []json.RawMessage) json.RawMessage {
	text := jsonscan.LookupString(block, "content")
	var content []json.RawMessage
	if text != "" {
		content = append(content, jsonOf(map[string]string{"type": "text", "text": text}))
	}
	content = append(content, images...)
	return jsonscan.SetMembers(block, map[string]json.RawMessage{"content": jsonOf(content)}, nil)
}

func ccImageBlock(img *compact.Image) json.RawMessage {
	if img == nil {
		img = &compact.Image{}
	}
	src := map[string]string{"type": "base64", "media_type": img.MediaType, "data": img.Data}
	if img.Data == "" {
		src = map[string]string{"type": "url", "url": img.URL}
		if img.MediaType != "" {
			src["media_type"] = img.MediaType
		}
	}
	return jsonOf(map[string]any{"type": "image", "source": src})
}
