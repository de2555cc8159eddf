package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// lines reads r one line at a time, for JSONL formats. Lines may be of any
// length; each is handed to fn without its line ending, with its 1-based
// number. Blank lines are skipped. The slice passed to fn is only valid
// until fn returns: copy what you keep (json.Unmarshal into a RawMessage
// copies).
func lines(r io.Reader, fn func(line []byte, n int) error) error {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	var long []byte // accumulates lines longer than the reader's buffer
	for n := 1; ; n++ {
		chunk, err := br.ReadSlice('\n')
		line := chunk
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				long = append(long, chunk...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(line, n); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
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
