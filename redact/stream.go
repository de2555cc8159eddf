package redact

import (
	"io"
	"strings"

	"github.com/compactkit/compact/internal/jsonscan"
)

// pieceBytes is the size of the pieces RedactTo reads a large document in.
const pieceBytes = 1 << 20

// RedactTo writes doc with every secret masked to w, and returns the
// findings (offsets into doc). The output is what Redact returns; a large
// document is read a piece at a time (whole lines of JSON Lines, whole
// elements of a JSON array, each cut only where a secret cannot span the
// cut), so the memory it takes beyond doc is that of a piece, not of
// another copy of doc or two.
func (s *Scope) RedactTo(w io.Writer, doc string) ([]Finding, error) {
	s.m.reserve(doc)
	if len(doc) <= pieceBytes {
		out, found := s.r.redactDoc(doc, s.m)
		_, err := io.WriteString(w, out)
		return found, err
	}
	if t := strings.TrimLeft(doc, " \t\r\n"); strings.HasPrefix(t, "[") {
		if found, ok, err := s.redactArrayTo(w, doc); ok || err != nil {
			return found, err
		}
	}
	var all []Finding
	for _, p := range linePieces(doc) {
		out, found := s.r.redactDoc(doc[p[0]:p[1]], s.m)
		if _, err := io.WriteString(w, out); err != nil {
			return all, err
		}
		for _, f := range found {
			f.Start, f.End = f.Start+p[0], f.End+p[0]
			all = append(all, f)
		}
	}
	return all, nil
}

// linePieces cuts doc into pieces of about pieceBytes, each cut between
// two lines of JSON (one ending in } or ], the next starting with { or [):
// no secret, and no multi-line text a detector reads as one (a PEM key, a
// YAML block), spans such a cut. A document without such places is one
// piece.
func linePieces(doc string) [][2]int {
	var pieces [][2]int
	start := 0
	for at := 0; at < len(doc); {
		nl := strings.IndexByte(doc[at:], '\n')
		if nl < 0 {
			break
		}
		end := at + nl + 1
		if end-start >= pieceBytes && jsonLineEnd(doc[at:end]) && end < len(doc) && jsonLineStart(doc[end:]) {
			pieces = append(pieces, [2]int{start, end})
			start = end
		}
		at = end
	}
	return append(pieces, [2]int{start, len(doc)})
}

func jsonLineEnd(line string) bool {
	line = strings.TrimRight(line, " \t\r\n")
	return line != "" && (line[len(line)-1] == '}' || line[len(line)-1] == ']')
}

func jsonLineStart(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\r")
	return rest != "" && (rest[0] == '{' || rest[0] == '[')
}

// redactArrayTo writes a large JSON array a group of whole elements at a
// time, each element read as a JSON region of its own. ok is false when
// doc is not one well-formed array: the caller reads it another way.
func (s *Scope) redactArrayTo(w io.Writer, doc string) ([]Finding, bool, error) {
	start := strings.IndexByte(doc, '[')
	end := jsonscan.ValueEnd(doc, start)
	if end < 0 || jsonscan.SkipSpace(doc, end) != len(doc) {
		return nil, false, nil
	}
	elems, complete := jsonscan.Elements(doc[start:end])
	if !complete || len(elems) == 0 {
		return nil, false, nil
	}
	var all []Finding
	prev := 0 // written up to here
	for i := 0; i < len(elems); {
		j, from := i, start+elems[i].Start
		var regions [][2]int
		for j < len(elems) && (j == i || start+elems[j].End-from <= pieceBytes) {
			regions = append(regions, [2]int{start + elems[j].Start - from, start + elems[j].End - from})
			j++
		}
		to := start + elems[j-1].End
		piece := doc[from:to]
		out, found := s.r.redactRegions(piece, regions, s.m)
		if _, err := io.WriteString(w, doc[prev:from]); err != nil {
			return all, true, err
		}
		if _, err := io.WriteString(w, out); err != nil {
			return all, true, err
		}
		for _, f := range found {
			f.Start, f.End = f.Start+from, f.End+from
			all = append(all, f)
		}
		prev, i = to, j
	}
	_, err := io.WriteString(w, doc[prev:])
	return all, true, err
}

// redactRegions masks piece, whose regions are JSON values (the elements
// of an array), keeping each of them valid.
func (r *Redactor) redactRegions(piece string, regions [][2]int, m *masker) (string, []Finding) {
	v := viewPool.Get().(*jsonView)
	v.regions, v.lits, v.escs = v.regions[:0], v.lits[:0], v.escs[:0]
	b := &viewBuilder{doc: piece, v: v}
	for _, rg := range regions {
		b.region(rg[0], rg[1])
	}
	b.finish()
	defer v.release()
	spans := r.findInView(piece, v, m)
	if len(spans) == 0 {
		return piece, nil
	}
	out, found := r.apply(piece, spans, m)
	if validJSON("[" + out + "]") {
		return out, found
	}
	// Should masking ever break an element, each is redacted alone, with
	// the re-encoding fallback of redactDoc.
	var b2 strings.Builder
	found = found[:0]
	prev := 0
	for _, rg := range regions {
		b2.WriteString(piece[prev:rg[0]])
		o, f := r.redactDoc(piece[rg[0]:rg[1]], m)
		b2.WriteString(o)
		for _, x := range f {
			x.Start, x.End = x.Start+rg[0], x.End+rg[0]
			found = append(found, x)
		}
		prev = rg[1]
	}
	b2.WriteString(piece[prev:])
	return b2.String(), found
}
