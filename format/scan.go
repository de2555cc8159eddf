package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/compactkit/compact/internal/jsonscan"
)

// lines reads r one line at a time, for JSONL formats. Lines may be of any
// length; each is handed to fn without its line ending, with its 1-based
// number. Blank lines are skipped. The slice passed to fn is only valid
// until fn returns: copy what you keep (json.Unmarshal into a RawMessage
// copies).
func lines(r io.Reader, fn func(line []byte, n int) error) error {
	return linesAt(r, func(line []byte, n int, _ int64) error { return fn(line, n) })
}

// linesAt is lines that also tells fn the byte offset of each line in r.
func linesAt(r io.Reader, fn func(line []byte, n int, off int64) error) error {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	var long []byte // accumulates lines longer than the reader's buffer
	var pos int64   // bytes read before the line
	for n := 1; ; n++ {
		chunk, err := br.ReadSlice('\n')
		line, off := chunk, pos
		pos += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				long = append(long, chunk...)
				pos += int64(len(chunk))
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if n == 1 && bytes.HasPrefix(line, utf8BOM) {
			line, off = line[len(utf8BOM):], off+int64(len(utf8BOM))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(line, n, off); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// lines reads the JSONL input r as lines does, for a reader whose fn fails
// on a line it cannot read (an *Error naming the line). A line holding
// several whole records with no newline between them is handed to fn one
// record at a time, with a warning; a damaged line is skipped with a
// warning under SkipBadLines, and is otherwise the error.
func (rs *readState) lines(r io.Reader, fn func(line []byte, n int) error) error {
	defer func() { rs.line, rs.rec = nil, nil }()
	err := linesAt(r, func(line []byte, n int, off int64) error {
		rs.line, rs.lineOff = line, off
		if err := rs.checkUTF8(line, n, 0); err != nil {
			return err
		}
		err := fn(line, n)
		if err == nil {
			return nil
		}
		var fe *Error
		if !errors.As(err, &fe) || fe.Line != n {
			return err // not the line's fault (a reader's own limit, I/O)
		}
		if recs := splitRecords(line); len(recs) > 1 {
			rs.warn(Warning{Line: n, Offset: -1, Kind: WarnSplitLine,
				Msg: fmt.Sprintf("the line holds %d records with no newline between them; read as %d", len(recs), len(recs))})
			for _, rec := range recs {
				if err := fn(rec, n); err != nil {
					return rs.skip(err, n)
				}
			}
			return nil
		}
		return rs.skip(err, n)
	})
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return err
		}
		return &Error{File: rs.name, Format: rs.format, Offset: -1, Msg: "reading input", Err: err}
	}
	return nil
}

// skip returns err, or nil after a warning when damaged lines are skipped.
func (rs *readState) skip(err error, n int) error {
	if !rs.opts.SkipBadLines {
		return err
	}
	// The warning says the file, line and format; the error's text, once.
	msg := err.Error()
	if fe := (*Error)(nil); errors.As(err, &fe) && fe.Line == n && (fe.File == rs.name || fe.File == "") {
		msg = fe.what()
	}
	rs.warn(Warning{Line: n, Offset: -1, Kind: WarnSkipped, Msg: "line skipped: " + msg})
	return nil
}

// splitRecords returns the JSON values line holds one after another (with
// nothing but spaces between them), each a whole, valid value; nil when
// line is anything else.
func splitRecords(line []byte) [][]byte {
	var out [][]byte
	for i := jsonscan.SkipSpace(line, 0); i < len(line); i = jsonscan.SkipSpace(line, i) {
		if line[i] != '{' && line[i] != '[' {
			return nil
		}
		end := jsonscan.ValueEnd(line, i)
		if end < 0 || !jsonscan.Valid(line[i:end]) {
			return nil
		}
		out = append(out, line[i:end])
		i = end
	}
	return out
}

// detectError explains why no format recognised head: when head is JSON
// (or JSON lines) that breaks before head ends, where and how it breaks
// (a raw control character in a string, nesting past encoding/json's
// limit, …); otherwise err.
func detectError(name string, head []byte, err error) error {
	t := bytes.TrimPrefix(head, utf8BOM)
	i := jsonscan.SkipSpace(t, 0)
	if i >= len(t) || t[i] != '{' && t[i] != '[' {
		return fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	for {
		var v json.RawMessage
		derr := dec.Decode(&v)
		if errors.Is(derr, io.EOF) {
			break
		}
		var syn *json.SyntaxError
		if errors.As(derr, &syn) {
			off := syn.Offset + int64(len(head)-len(t))
			return &Error{File: name, Offset: off, Msg: "invalid JSON, so no format can read it: " + syn.Error()}
		}
		if derr != nil {
			break // cut short by the end of head: not the input's fault
		}
	}
	if _, inString, ok := closeCut(head); ok && inString && len(head) >= SniffSize {
		return fmt.Errorf("%s: %w: the first %d bytes detection reads end inside one string; name the format with --format", name, err, SniffSize)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// jsonError turns a decoding error into an *Error with the byte offset (for
// JSON documents) or line (for JSONL, where base is the line number) and a
// message saying what was expected.
func jsonError(file string, f Name, line int, err error, expected string) error {
	e := &Error{File: file, Format: f, Line: line, Offset: -1, Msg: expected, Err: err}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		e.Offset = syn.Offset
		e.Msg = fmt.Sprintf("invalid JSON, expected %s", expected)
	case errors.As(err, &typ):
		e.Offset = typ.Offset
		e.Msg = fmt.Sprintf("field %q has a %s, expected %s", typ.Field, typ.Value, expected)
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Msg = fmt.Sprintf("truncated JSON, expected %s", expected)
	}
	if line > 0 {
		e.Offset = -1 // the line says where; an offset within it would mislead
	}
	return e
}

// utf8BOM is skipped at the start of an input: editors on Windows write it,
// and encoding/json rejects it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// jsonShape is what detection can see of an input's first bytes without
// decoding all of them: whether it is one JSON array, one JSON object or JSON
// lines, and the records at its start. Parsing is tolerant of the head
// ending mid-value, since a head is usually a cut-off prefix.
type jsonShape struct {
	// kind is '[' for a JSON array, '{' for a single JSON object, 'l' for
	// JSON lines (several values, one per line) and 0 for anything else.
	kind byte
	// fields are a top-level object's fields in order (kind '{', or the first
	// line for kind 'l'); the last one may be cut off (complete false).
	fields []jsonField
	// items are the complete elements of a top-level array, or the complete
	// lines of JSON lines, up to sniffItems of them.
	items [][]byte
	// cut is true when the object was closed by closeCut where the head
	// ended inside one of its values: fields after those seen are unknown.
	cut bool
}

// jsonField is one field of a JSON object seen in a head.
type jsonField struct {
	key      string
	value    []byte
	complete bool
}

// sniffItems bounds how many records detection decodes: enough to see past a
// system prompt and a first exchange, few enough to stay fast.
const sniffItems = 24

// shapeOf describes head. It never fails: an input it cannot make sense of
// has kind 0.
func shapeOf(head []byte) jsonShape {
	head = bytes.TrimPrefix(head, utf8BOM)
	i := jsonscan.SkipSpace(head, 0)
	if i >= len(head) {
		return jsonShape{}
	}
	switch head[i] {
	case '[':
		return jsonShape{kind: '[', items: headItems(head[i:], sniffItems)}
	case '{':
		end := jsonscan.ValueEnd(head, i)
		if end > 0 {
			if rest := jsonscan.SkipSpace(head, end); rest < len(head) && head[rest] == '{' &&
				bytes.IndexByte(head[end:rest], '\n') >= 0 {
				return jsonShape{kind: 'l', fields: fieldsOf(head[i:end]), items: headRecords(head[i:], sniffItems)}
			}
		}
		sh := jsonShape{kind: '{', fields: fieldsOf(head[i:])}
		if n := len(sh.fields); n > 0 && sh.fields[n-1].key == cutKey {
			sh.fields, sh.cut = sh.fields[:n-1], true
		}
		return sh
	}
	return jsonShape{}
}

// field returns the value of the field called key, and whether it was seen.
func (s jsonShape) field(key string) (jsonField, bool) {
	for _, f := range s.fields {
		if f.key == key {
			return f, true
		}
	}
	return jsonField{}, false
}

// fieldsOf returns the fields of the JSON object at the start of b, as far
// as b goes.
func fieldsOf(b []byte) []jsonField {
	members, _ := jsonscan.Members(b)
	out := make([]jsonField, len(members))
	for i, m := range members {
		out[i] = jsonField{key: m.Key, value: jsonscan.Value(b, m.Value), complete: m.Value.End >= 0}
	}
	return out
}

// recordKeys returns the top-level members of a complete JSON object (a
// sniffed record) with their raw values, or nil when b is not one.
func recordKeys(b []byte) map[string]json.RawMessage {
	members, complete := jsonscan.Members(b)
	if !complete {
		return nil
	}
	m := make(map[string]json.RawMessage, len(members))
	for _, f := range members {
		m[f.Key] = jsonscan.Value(b, f.Value)
	}
	return m
}

// jsonDoc is a JSON document read by readJSONDoc: a bare array of records, or
// an object holding arrays of records under known keys next to other fields.
type jsonDoc struct {
	object bool
	// fields are the object's fields in order. A list field streamed into
	// items keeps its place here with a nil value.
	fields []docField
	// items are the records of the bare array or of the list fields, in the
	// order read.
	items []docItem
}

// docField is one top-level field of a JSON document.
type docField struct {
	key    string
	value  json.RawMessage
	offset int64
}

// docItem is one record of a list in a JSON document.
type docItem struct {
	key    string // the field holding the list; "" for a bare array
	raw    json.RawMessage
	offset int64 // byte offset of the record in the input
}

// readJSONDoc reads one JSON document from r, streaming the arrays under
// listKeys (or the document itself, when it is an array) record by record,
// so the input is held once, as the records' raw bytes. A list key holding a
// scalar is kept as a field. expected says, for error messages, what the
// document should be.
//
// A valid document is read whole and cut in place (scanJSONDoc): the
// records are slices of the one buffer, with no copy. Anything else (a
// syntax error, a read error, a shape the readers reject) goes through the
// streaming decoder, which says what and where.
func readJSONDoc(r io.Reader, file string, f Name, expected string, listKeys ...string) (jsonDoc, error) {
	buf, err := readWhole(r)
	if err == nil {
		if doc, ok := scanJSONDoc(buf, listKeys); ok {
			return doc, nil
		}
	}
	// The decoder sees what was read, then the read error if there was one.
	var rest io.Reader = bytes.NewReader(buf)
	if err != nil {
		rest = io.MultiReader(rest, errReader{err})
	}
	return decodeJSONDoc(rest, file, f, expected, listKeys...)
}

// readWhole reads r to its end into one buffer of exactly its size:
// records are slices of it, so slack would stay alive with them.
func readWhole(r io.Reader) ([]byte, error) {
	var chunks [][]byte
	total, size := 0, 64<<10
	if n := sizeOf(r); n >= 0 && n < math.MaxInt {
		size = int(n) + 1 // one byte more, to see the end in one read
	}
	for {
		chunk := make([]byte, size)
		n, err := io.ReadFull(r, chunk)
		chunks = append(chunks, chunk[:n])
		total += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return bytes.Join(chunks, nil), err
		}
		size = min(size*2, 16<<20)
	}
	if len(chunks) == 1 {
		return chunks[0][:total:total], nil
	}
	return bytes.Join(chunks, nil), nil
}

// sizedReader is a reader that knows how many bytes it holds (a file with
// the head ReadWith sniffed put back in front), so that readWhole reads it
// into one buffer of that size instead of into chunks it then joins: one
// copy of the input in memory instead of two at once.
type sizedReader struct {
	io.Reader
	size int64
}

// sizeOf returns how many bytes r holds from where it is, or -1 when that
// is not known (a pipe, a terminal, any other reader).
func sizeOf(r io.Reader) int64 {
	switch r := r.(type) {
	case *sizedReader:
		return r.size
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return max(fi.Size()-off, 0)
	case *bytes.Reader: // a request body in memory (serve): its rest
		return int64(r.Len())
	case *strings.Reader:
		return int64(r.Len())
	}
	return -1
}

// scanJSONDoc is readJSONDoc for a whole, valid document: the same fields
// and items at the same offsets, as slices of buf (capped, so that an
// append to one never writes over the next). ok is false for anything
// decodeJSONDoc would report or keep differently (invalid JSON, a list key
// holding something other than an array).
func scanJSONDoc(buf []byte, listKeys []string) (jsonDoc, bool) {
	buf = bytes.TrimPrefix(buf, utf8BOM)
	var doc jsonDoc
	if !jsonscan.Valid(buf) {
		return doc, false
	}
	at := jsonscan.SkipSpace(buf, 0)
	switch buf[at] {
	case '[':
		return doc, scanList(buf, at, "", &doc)
	case '{':
		doc.object = true
		members, complete := jsonscan.Members(buf[at:])
		if !complete {
			return doc, false
		}
		for _, m := range members {
			start, end := at+m.Value.Start, at+m.Value.End
			// The decoder's offset of a field is just past its key.
			keyEnd := start - 1
			for buf[keyEnd] != ':' {
				keyEnd--
			}
			for keyEnd--; buf[keyEnd] != '"'; keyEnd-- {
			}
			field := docField{key: m.Key, offset: int64(keyEnd + 1)}
			switch {
			case !slices.Contains(listKeys, m.Key):
				field.value = buf[start:end:end]
				doc.fields = append(doc.fields, field)
			case buf[start] == '[':
				doc.fields = append(doc.fields, field)
				if !scanList(buf, start, m.Key, &doc) {
					return doc, false
				}
			default:
				return doc, false
			}
		}
		return doc, true
	}
	return doc, false
}

// scanList appends the elements of the array at buf[at] to doc.items.
func scanList(buf []byte, at int, key string, doc *jsonDoc) bool {
	elems, complete := jsonscan.Elements(buf[at:])
	for _, e := range elems {
		start, end := at+e.Start, at+e.End
		doc.items = append(doc.items, docItem{key: key, raw: buf[start:end:end], offset: int64(start)})
	}
	return complete
}

// decodeJSONDoc is readJSONDoc through the streaming decoder.
func decodeJSONDoc(r io.Reader, file string, f Name, expected string, listKeys ...string) (jsonDoc, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	dec := json.NewDecoder(br)
	var doc jsonDoc
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return doc, &Error{File: file, Format: f, Offset: -1, Msg: "empty input, expected " + expected}
	case err != nil:
		return doc, jsonError(file, f, 0, err, expected)
	}
	switch tok {
	case json.Delim('['):
		if err := readList(dec, &doc, "", file, f, expected); err != nil {
			return doc, err
		}
	case json.Delim('{'):
		doc.object = true
		if err := readObject(dec, &doc, file, f, expected, listKeys); err != nil {
			return doc, err
		}
	default:
		return doc, &Error{File: file, Format: f, Offset: -1,
			Msg: fmt.Sprintf("expected %s, got %s", expected, describeToken(tok))}
	}
	at := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return doc, &Error{File: file, Format: f, Offset: at,
			Msg: "unexpected data after the JSON document (one document expected; JSON lines are a different format)"}
	}
	return doc, nil
}

func readObject(dec *json.Decoder, doc *jsonDoc, file string, f Name, expected string, listKeys []string) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return docError(dec, file, f, err, expected)
		}
		key, _ := tok.(string)
		off := dec.InputOffset()
		if !slices.Contains(listKeys, key) {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return docError(dec, file, f, err, fmt.Sprintf("a value for %q", key))
			}
			doc.fields = append(doc.fields, docField{key: key, value: v, offset: off})
			continue
		}
		tok, err = dec.Token()
		if err != nil {
			return docError(dec, file, f, err, fmt.Sprintf("an array for %q", key))
		}
		switch tok.(type) {
		case json.Delim:
			if tok != json.Delim('[') {
				return &Error{File: file, Format: f, Offset: off,
					Msg: fmt.Sprintf("field %q: expected an array, got an object", key)}
			}
			doc.fields = append(doc.fields, docField{key: key, offset: off})
			if err := readList(dec, doc, key, file, f, expected); err != nil {
				return err
			}
		default: // a scalar: kept for the reader to judge
			v, _ := json.Marshal(tok)
			doc.fields = append(doc.fields, docField{key: key, value: v, offset: off})
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return docError(dec, file, f, err, "a closing '}'")
	}
	return nil
}

func readList(dec *json.Decoder, doc *jsonDoc, key, file string, f Name, expected string) error {
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return docError(dec, file, f, err, expected)
		}
		end := dec.InputOffset()
		doc.items = append(doc.items, docItem{key: key, raw: raw, offset: end - int64(len(raw))})
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return docError(dec, file, f, err, "a closing ']'")
	}
	return nil
}

// docUTF8 checks a read document's fields and records for invalid UTF-8.
func (rs *readState) docUTF8(doc *jsonDoc) error {
	for _, f := range doc.fields {
		if err := rs.checkUTF8(f.value, 0, f.offset); err != nil {
			return err
		}
	}
	for _, it := range doc.items {
		if err := rs.checkUTF8(it.raw, 0, it.offset); err != nil {
			return err
		}
	}
	return nil
}

// docError reports a decoding error inside a document, saying where.
func docError(dec *json.Decoder, file string, f Name, err error, expected string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{File: file, Format: f, Offset: dec.InputOffset(),
			Msg: "truncated JSON: the input ends inside the document, expected " + expected}
	}
	e := jsonError(file, f, 0, err, expected).(*Error)
	if e.Offset < 0 {
		e.Offset = dec.InputOffset()
	}
	return e
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	}
	return "something else"
}
