package redact

import (
	"encoding/json"

	"github.com/compactkit/compact"
)

func (r *Redactor) transcript(t compact.Transcript) (compact.Transcript, []Finding) {
	c := t.Clone()
	var all []Finding
	note := func(found []Finding, msg, part int, field string) {
		for _, f := range found {
			f.Message, f.Part, f.Field = msg, part, field
			all = append(all, f)
		}
	}
	for i := range c.Messages {
		m := &c.Messages[i]
		for j := range m.Parts {
			p := &m.Parts[j]
			var found []Finding
			if p.Text != "" {
				p.Text, found = r.Redact(p.Text)
				note(found, i, j, partField(p.Type))
			}
			if p.ToolCall != nil && len(p.ToolCall.Arguments) > 0 {
				p.ToolCall.Arguments, found = r.redactRaw(p.ToolCall.Arguments)
				note(found, i, j, "arguments")
			}
			if p.Image != nil && p.Image.URL != "" {
				p.Image.URL, found = r.Redact(p.Image.URL)
				note(found, i, j, "image")
			}
		}
		// The source records hold the same content as read: mask them too,
		// so a writer that reuses them, or a checkpoint that stores them,
		// never carries the secret. A record that is not JSON and had to be
		// masked cannot stay a record without breaking its file: it is
		// dropped (the message is then written from its parts).
		recs := make([]json.RawMessage, 0, len(m.Source.Records))
		for j, rec := range m.Source.Records {
			masked, found := r.redactRaw(rec)
			if len(found) > 0 && !json.Valid(masked) {
				continue
			}
			note(found, i, j, "source")
			recs = append(recs, masked)
		}
		if len(recs) == 0 {
			recs = nil
		}
		m.Source.Records = recs
	}
	for i := range c.Records {
		masked, found := r.redactRaw(c.Records[i].Raw)
		c.Records[i].Raw = masked
		note(found, c.Records[i].At, i, "record")
	}
	if len(c.Envelope) > 0 {
		var found []Finding
		c.Envelope, found = r.redactRaw(c.Envelope)
		note(found, 0, 0, "envelope")
	}
	for i := range c.Tools {
		var found []Finding
		c.Tools[i].Description, found = r.Redact(c.Tools[i].Description)
		note(found, 0, i, "tool")
	}
	return c, all
}

func partField(t compact.PartType) string {
	switch t {
	case compact.PartThinking:
		return "thinking"
	case compact.PartToolResult:
		return "result"
	}
	return "text"
}

// redactRaw masks a raw JSON value, keeping it valid JSON. Raw values come
// from parsed documents and almost never hold a secret: the view that
// reads them validates them on the way, and the check of the output (a
// full parse) runs only for a value where something was found.
func (r *Redactor) redactRaw(raw json.RawMessage) (json.RawMessage, []Finding) {
	doc := string(raw)
	v, kind := newJSONView(doc)
	defer v.release()
	spans := r.findInView(doc, v)
	if len(spans) == 0 {
		return raw, nil
	}
	if kind != docJSON {
		out, found := r.Redact(doc) // not JSON after all: mask it as text
		return json.RawMessage(out), found
	}
	out, found := r.apply(doc, spans)
	if !validJSON(out) {
		out, found = r.redactLiterals(doc, spans, stringLiterals(doc))
	}
	return json.RawMessage(out), found
}
