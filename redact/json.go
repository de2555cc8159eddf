package redact

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// JSON-aware redaction. Detection runs over the raw document, where a
// secret keeps its context ("password": "..." is one piece of text, not a
// key and a value decoded apart). Each span found is then clipped to the
// string literals it overlaps, so a mask only ever replaces bytes between a
// literal's quotes, never a quote, a brace or the half of an escape; every
// other byte of the document is kept as it was. The output is checked, and
// should it ever fail to parse, each affected literal is decoded, redacted
// and re-encoded instead.

type docKind int

const (
	docText docKind = iota
	docJSON
	docJSONL
)

func jsonKindOf(doc string) docKind {
	trimmed := strings.TrimSpace(doc)
	if trimmed == "" || !(trimmed[0] == '{' || trimmed[0] == '[' || trimmed[0] == '"') {
		return docText
	}
	if json.Valid([]byte(doc)) {
		return docJSON
	}
	lines := 0
	for line := range strings.Lines(doc) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !json.Valid([]byte(line)) {
			return docText
		}
		lines++
	}
	if lines == 0 {
		return docText
	}
	return docJSONL
}

func validDoc(doc string, kind docKind) bool {
	switch kind {
	case docJSON:
		return json.Valid([]byte(doc))
	case docJSONL:
		for line := range strings.Lines(doc) {
			if line = strings.TrimSpace(line); line != "" && !json.Valid([]byte(line)) {
				return false
			}
		}
	}
	return true
}

// redactDoc masks doc; JSON and JSON Lines stay valid.
func (r *Redactor) redactDoc(doc string) (string, []Finding) {
	kind := jsonKindOf(doc)
	if kind == docText {
		return r.Redact(doc)
	}
	spans := r.findInJSON(doc)
	if len(spans) == 0 {
		return doc, nil
	}
	out, found := r.apply(doc, spans)
	if validDoc(out, kind) {
		return out, found
	}
	return r.redactLiterals(doc, spans, stringLiterals(doc))
}

// findInJSON finds the secrets of a JSON text, each span clipped to the
// string literal it starts in.
func (r *Redactor) findInJSON(doc string) []cand {
	return r.find(doc, func(d string, spans []cand) []cand {
		if len(spans) == 0 {
			return spans // most documents: no need to map their literals
		}
		return clipToLiterals(d, spans, stringLiterals(d))
	})
}

// stringLiterals returns the content ranges (between the quotes) of the
// string literals of a valid JSON text, in order.
func stringLiterals(doc string) [][2]int {
	var lits [][2]int
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		s := i + 1
		j := s
		for j < len(doc) && doc[j] != '"' {
			if doc[j] == '\\' {
				j++
			}
			j++
		}
		lits = append(lits, [2]int{s, min(j, len(doc))})
		i = j
	}
	return lits
}

// clipToLiterals cuts each span to the string literal it starts in. A span
// that reaches past its literal was read across the JSON structure (a value
// escaped inside one string running on into the next): the rest is not
// the secret's, and masking it could rename a key.
func clipToLiterals(doc string, spans []cand, lits [][2]int) []cand {
	var out []cand
	for _, c := range spans {
		i := sort.Search(len(lits), func(i int) bool { return lits[i][1] > c.start })
		if i == len(lits) || lits[i][0] > c.start {
			continue // not inside a string
		}
		s, e := max(c.start, lits[i][0]), min(c.end, lits[i][1])
		s, e = safeSpan(doc, s, e)
		if s < e {
			c.start, c.end = s, e
			out = append(out, c)
		}
	}
	return out
}

// redactLiterals is the fallback: every literal a span touches is decoded,
// redacted as plain text and re-encoded.
func (r *Redactor) redactLiterals(doc string, spans []cand, lits [][2]int) (string, []Finding) {
	touched := make([]bool, len(lits))
	for _, c := range spans {
		i := sort.Search(len(lits), func(i int) bool { return lits[i][1] > c.start })
		for ; i < len(lits) && lits[i][0] < c.end; i++ {
			touched[i] = true
		}
	}
	var b strings.Builder
	var found []Finding
	prev := 0
	for i, l := range lits {
		if !touched[i] {
			continue
		}
		var v string
		if err := json.Unmarshal([]byte(doc[l[0]-1:l[1]+1]), &v); err != nil {
			continue
		}
		masked, f := r.Redact(v)
		enc := encodeString(masked)
		b.WriteString(doc[prev : l[0]-1])
		b.WriteString(enc)
		prev = l[1] + 1
		for _, x := range f {
			found = append(found, Finding{Rule: x.Rule, Start: l[0], End: l[1]})
		}
	}
	b.WriteString(doc[prev:])
	return b.String(), found
}

// encodeString encodes s as a JSON string literal, quotes included, without
// HTML escaping.
func encodeString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}
