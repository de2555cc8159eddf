package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unsafe"

	"github.com/compactkit/compact"
)

// A transcript read with ReadOptions.Source keeps, for the messages of the
// formats that support it, where each source record lies in the file
// (compact.Source.Spans) instead of the record's bytes: a compaction
// writes only its head and tail verbatim, so holding every record beside
// the decoded messages would double the memory a long transcript takes for
// bytes that are never written. LoadSources reads back the records of the
// messages that are about to be written.
//
// Each record a reader keeps is a fresh copy of its line or element (never
// a buffer reused for the next one), so a message built from it stays
// right however the reader shares its bytes; once the record is noted as a
// span, the strings that share it are copied out (detach) and the copy is
// dropped.

// ErrSourceChanged is returned (wrapped) by LoadSources when the file no
// longer holds, at a record's span, the bytes that were read there.
var ErrSourceChanged = errors.New("the input changed since it was read")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// spanSum is the checksum a span keeps of its record.
func spanSum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// LoadSources reads back from at (the file t was read from, with
// ReadOptions.Source) the source records of every message of t that holds
// spans, and puts them in Source.Records, so that writers emit them
// verbatim. A record whose bytes in at no longer match what was read (a
// file changed, truncated or replaced since) is an error wrapping
// ErrSourceChanged that names the record's offset; t is then unchanged.
// Messages without spans are left as they are.
func LoadSources(at io.ReaderAt, name string, t *compact.Transcript) error {
	loaded := make([][]json.RawMessage, len(t.Messages))
	for i := range t.Messages {
		spans := t.Messages[i].Source.Spans
		if len(spans) == 0 {
			continue
		}
		recs := make([]json.RawMessage, len(spans))
		for j, sp := range spans {
			b, err := loadSpan(at, sp)
			if err != nil {
				return spanError(name, t.Format, sp, err)
			}
			recs[j] = b
		}
		loaded[i] = recs
	}
	for i, recs := range loaded {
		if recs == nil {
			continue
		}
		m := &t.Messages[i]
		m.Source.Records, m.Source.Spans = recs, nil
	}
	return nil
}

// loadSpan reads sp's record from at and checks it against sp.Sum.
func loadSpan(at io.ReaderAt, sp compact.Span) ([]byte, error) {
	b := make([]byte, sp.Len)
	n, err := at.ReadAt(b, sp.Offset)
	if n < sp.Len {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file ends before the record does", ErrSourceChanged)
		}
		return nil, err
	}
	if spanSum(b) != sp.Sum {
		return nil, fmt.Errorf("%w: the record's bytes differ", ErrSourceChanged)
	}
	return b, nil
}

func spanError(name, f string, sp compact.Span, err error) error {
	return &Error{File: name, Format: Name(f), Offset: sp.Offset,
		Msg: fmt.Sprintf("reading back the %d-byte source record: %v (read it again)", sp.Len, err), Err: err}
}

// ErrSourceNotLoaded is returned (wrapped) by Write for a transcript whose
// messages still hold spans of their source records (ReadOptions.Source)
// instead of the records: writing it would re-encode messages that should
// be written verbatim. LoadSources loads them.
var ErrSourceNotLoaded = errors.New("source records not loaded (see format.LoadSources)")

// checkLoaded fails on a message that holds spans, not records.
func checkLoaded(t *compact.Transcript) error {
	for i := range t.Messages {
		if len(t.Messages[i].Source.Spans) > 0 {
			return fmt.Errorf("message %d (%s): %w", i, t.Messages[i].ID, ErrSourceNotLoaded)
		}
	}
	return nil
}

// spanning reports whether records are kept as spans in this read.
func (rs *readState) spanning() bool { return rs.opts.Source != nil && !rs.streaming() }

// copyRecord returns a fresh copy of rec, a slice of the line being read
// (rs.line, at rs.lineOff in the input), noting where it lies so that
// spanOf can tell it.
func (rs *readState) copyRecord(rec []byte) []byte {
	c := append([]byte(nil), rec...)
	rs.rec = nil
	if off, ok := within(rec, rs.line); ok && rs.spanning() && len(rec) > 0 {
		rs.rec, rs.recOff = c, rs.lineOff+int64(off)
	}
	return c
}

// spanOf returns the span of raw when raw is the record copyRecord copied
// last (the whole of it) and records are kept as spans.
func (rs *readState) spanOf(raw []byte) (compact.Span, bool) {
	if len(raw) == 0 || len(raw) != len(rs.rec) || unsafe.SliceData(raw) != unsafe.SliceData(rs.rec) {
		return compact.Span{}, false
	}
	return compact.Span{Offset: rs.recOff, Len: len(raw), Sum: spanSum(raw)}, true
}

// addSource appends raw to src's records, or its span sp when ok and src
// holds spans or nothing yet. A message whose records cannot all be spans
// holds them all as bytes: its spans are read back (a rare mix: an item of
// a replacement history beside lines).
func (rs *readState) addSource(src *compact.Source, raw []byte, sp compact.Span, ok bool) {
	if ok && len(src.Records) == 0 {
		src.Spans = append(src.Spans, sp)
		return
	}
	if len(src.Spans) > 0 {
		src.Records = rs.sourceRecords(*src)
		src.Spans = nil
	}
	src.Records = append(src.Records, raw)
}

// sourceRecords returns src's records, read back from the input where src holds
// spans. A failure to read them back is kept as the read's error
// (rs.spanErr), reported when the read ends.
func (rs *readState) sourceRecords(src compact.Source) []json.RawMessage {
	if len(src.Spans) == 0 {
		return src.Records
	}
	out := make([]json.RawMessage, len(src.Spans))
	for i, sp := range src.Spans {
		b, err := loadSpan(rs.opts.Source, sp)
		if err != nil && rs.spanErr == nil {
			rs.spanErr = spanError(rs.name, string(rs.format), sp, err)
		}
		out[i] = b
	}
	return out
}

// within returns where b starts in buf when b is a slice of buf.
func within(b, buf []byte) (int, bool) {
	if len(b) == 0 || len(buf) == 0 {
		return 0, false
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	if d > uintptr(len(buf)) || int(d)+len(b) > len(buf) {
		return 0, false
	}
	return int(d), true
}

// detach copies out the strings and bytes of m that share buf, a record
// m was read from, so that buf is not kept alive by them once m holds the
// record's span instead.
func detach(m *compact.Message, buf []byte) {
	str := func(s *string) {
		if len(*s) > 0 {
			if _, ok := within(unsafe.Slice(unsafe.StringData(*s), len(*s)), buf); ok {
				*s = string(append([]byte(nil), *s...))
			}
		}
	}
	if m.Role = knownRole(m.Role); !isKnownRole(m.Role) {
		role := string(m.Role)
		str(&role)
		m.Role = compact.Role(role)
	}
	str(&m.ID)
	str(&m.Name)
	for i := range m.ToolCallIDs {
		str(&m.ToolCallIDs[i])
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		str(&p.Text)
		str(&p.CallID)
		if p.Image != nil {
			str(&p.Image.URL)
			str(&p.Image.MediaType)
			str(&p.Image.Data)
		}
		if tc := p.ToolCall; tc != nil {
			str(&tc.ID)
			str(&tc.Name)
			str(&tc.Target)
			if _, ok := within(tc.Arguments, buf); ok {
				tc.Arguments = append([]byte(nil), tc.Arguments...)
			}
		}
	}
}

// keep adds raw, a record m was read from, to m's source: as a span when
// records are kept so (raw is the record copyRecord copied last), with
// m's strings that share raw copied out.
func (rs *readState) keep(m *compact.Message, raw []byte) {
	sp, ok := rs.spanOf(raw)
	rs.addSource(&m.Source, raw, sp, ok)
	if len(m.Source.Spans) > 0 {
		detach(m, raw)
	}
}

// knownRole returns the Role constant r equals, or r: a role read from a
// record is then not held as a copy per message (a long transcript holds
// one per record otherwise).
func knownRole(r compact.Role) compact.Role {
	switch r {
	case compact.RoleSystem:
		return compact.RoleSystem
	case compact.RoleDeveloper:
		return compact.RoleDeveloper
	case compact.RoleUser:
		return compact.RoleUser
	case compact.RoleAssistant:
		return compact.RoleAssistant
	case compact.RoleTool:
		return compact.RoleTool
	}
	return r
}

// isKnownRole reports whether r is one of the Role constants' own strings.
func isKnownRole(r compact.Role) bool {
	return len(r) > 0 && unsafe.StringData(string(r)) == unsafe.StringData(string(knownRole(r)))
}

// sharedStrings shares equal strings between the messages of one read:
// tool names, which repeat across a transcript's calls, and the call id a
// tool-role message answers with, equal to the id of the call before it.
// A long transcript then holds each once instead of once per record.
type sharedStrings struct {
	names   map[string]string
	pending map[string]string // ids of calls not answered yet
}

// maxSharedName bounds the names kept for sharing.
const maxSharedName = 64

// share points m's tool names and answered call ids at the equal strings
// seen before. Messages must come in transcript order.
func (s *sharedStrings) share(m *compact.Message) {
	for _, p := range m.Parts {
		tc := p.ToolCall
		if tc == nil {
			continue
		}
		if n := tc.Name; n != "" && len(n) <= maxSharedName {
			if s.names == nil {
				s.names = map[string]string{}
			}
			if seen, ok := s.names[n]; ok {
				tc.Name = seen
			} else {
				s.names[n] = n
			}
		}
		if tc.ID != "" {
			if s.pending == nil {
				s.pending = map[string]string{}
			}
			s.pending[tc.ID] = tc.ID
		}
	}
	for i, id := range m.ToolCallIDs {
		if seen, ok := s.pending[id]; ok {
			m.ToolCallIDs[i] = seen
			delete(s.pending, id)
		}
	}
}
