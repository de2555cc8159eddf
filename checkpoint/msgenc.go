package checkpoint

import (
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// appendMessage appends the stored form of m to dst: the JSON of its
// storedMessage as encoding/json writes it, a newline, and its raw
// section (see verbatim.go), written field by field instead of through
// reflection, which was most of the cost of saving a transcript no
// element of which is stored yet. TestAppendMessageMatchesEncoder holds it
// to encoding/json byte for byte (so addresses stay what they were), and
// TestAppendMessageKnowsEveryField fails when a domain type it writes
// gains a field.
func appendMessage(dst []byte, m *compact.Message) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonscan.AppendQuote(dst, m.ID)
	dst = append(dst, `,"role":`...)
	dst = jsonscan.AppendQuote(dst, string(m.Role))
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = jsonscan.AppendQuote(dst, m.Name)
	}
	if len(m.ToolCallIDs) > 0 {
		dst = append(dst, `,"tool_call_ids":[`...)
		for i, id := range m.ToolCallIDs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonscan.AppendQuote(dst, id)
		}
		dst = append(dst, ']')
	}
	if m.Synthetic {
		dst = append(dst, `,"synthetic":true`...)
	}
	if m.Summary {
		dst = append(dst, `,"summary":true`...)
	}
	off := 0 // where the next raw value starts in the raw section
	if len(m.Parts) > 0 {
		dst = append(dst, `,"parts":[`...)
		for i := range m.Parts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, off = appendPart(dst, &m.Parts[i], off)
		}
		dst = append(dst, ']')
	}
	if s := &m.Source; s.Format != "" || s.Fingerprint != "" || len(s.Records) > 0 {
		dst = append(dst, `,"source":{`...)
		comma := false
		if s.Format != "" {
			dst = append(dst, `"format":`...)
			dst = jsonscan.AppendQuote(dst, s.Format)
			comma = true
		}
		if s.Fingerprint != "" {
			if comma {
				dst = append(dst, ',')
			}
			dst = append(dst, `"fingerprint":`...)
			dst = jsonscan.AppendQuote(dst, s.Fingerprint)
			comma = true
		}
		if len(s.Records) > 0 {
			if comma {
				dst = append(dst, ',')
			}
			dst = append(dst, `"records":[`...)
			for i, r := range s.Records {
				if i > 0 {
					dst = append(dst, ',')
				}
				if r == nil {
					dst = append(dst, "null"...)
					continue
				}
				dst = appendRawRef(dst, off, len(r))
				off += len(r)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, "}\n"...)
	// The raw section: arguments in the order of the parts, then records.
	for i := range m.Parts {
		if tc := m.Parts[i].ToolCall; tc != nil {
			dst = append(dst, tc.Arguments...)
		}
	}
	for _, r := range m.Source.Records {
		dst = append(dst, r...)
	}
	return dst
}

func appendPart(dst []byte, p *compact.Part, off int) ([]byte, int) {
	dst = append(dst, `{"type":`...)
	dst = jsonscan.AppendQuote(dst, string(p.Type))
	if p.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = jsonscan.AppendQuote(dst, p.Text)
	}
	if im := p.Image; im != nil {
		dst = append(dst, `,"image":{`...)
		comma := false
		for _, f := range [...]struct{ key, v string }{{`"url":`, im.URL}, {`"media_type":`, im.MediaType}, {`"data":`, im.Data}} {
			if f.v == "" {
				continue
			}
			if comma {
				dst = append(dst, ',')
			}
			dst = append(dst, f.key...)
			dst = jsonscan.AppendQuote(dst, f.v)
			comma = true
		}
		dst = append(dst, '}')
	}
	if p.CallID != "" {
		dst = append(dst, `,"call_id":`...)
		dst = jsonscan.AppendQuote(dst, p.CallID)
	}
	if p.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	if p.Failed {
		dst = append(dst, `,"failed":true`...)
	}
	if p.Harness {
		dst = append(dst, `,"harness":true`...)
	}
	if tc := p.ToolCall; tc != nil {
		dst = append(dst, `,"tool_call":{"id":`...)
		dst = jsonscan.AppendQuote(dst, tc.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonscan.AppendQuote(dst, tc.Name)
		if tc.Kind != "" {
			dst = append(dst, `,"kind":`...)
			dst = jsonscan.AppendQuote(dst, string(tc.Kind))
		}
		if tc.Target != "" {
			dst = append(dst, `,"target":`...)
			dst = jsonscan.AppendQuote(dst, tc.Target)
		}
		if tc.Arguments != nil {
			dst = append(dst, `,"arguments":`...)
			dst = appendRawRef(dst, off, len(tc.Arguments))
			off += len(tc.Arguments)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), off
}

// appendRawRef appends a rawRef as its MarshalJSON writes it.
func appendRawRef(dst []byte, off, n int) []byte {
	dst = append(dst, '[')
	dst = strconv.AppendInt(dst, int64(off), 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, ']')
}
