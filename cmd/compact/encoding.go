package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A codec is how an input's bytes hold its text when they are not the
// text itself: UTF-16 (PowerShell 5's > and Notepad's "Unicode" write it)
// or gzip. redact reads the text through it and writes its output back
// the same way: scanning the raw bytes would find nothing and pass every
// secret through as "0 masked".
type codec struct {
	name   string
	reader func(*bufio.Reader) (io.Reader, error)
	writer func(io.Writer) io.WriteCloser
}

// errNotScanned is what inputs whose text redact cannot read are refused
// with: never passed through as clean.
var errNotScanned = errors.New("not scanned")

// compressedMagic are the formats redact refuses: it cannot write them back.
var compressedMagic = []struct {
	magic, name, undo string
}{
	{"\x28\xb5\x2f\xfd", "zstd", "zstd -dc"},
	{"\xfd7zXZ\x00", "xz", "xz -dc"},
	{"BZh", "bzip2", "bzip2 -dc"},
	{"PK\x03\x04", "zip", "unzip -p"},
	{"\x04\x22\x4d\x18", "lz4", "lz4 -dc"},
	{"7z\xbc\xaf\x27\x1c", "7z", "7z x -so"},
}

// sniffCodec tells from the input's first bytes how it holds its text:
// nil for UTF-8 (or any text redact reads as it is), a codec for UTF-16
// and gzip, an error wrapping errNotScanned for compressed formats redact
// cannot write back and UTF-32. It reads no more than the first read
// brings, unless that is the start of a magic number or of NUL-interleaved
// text: a stream that stops after a short first line is not kept waiting.
func sniffCodec(br *bufio.Reader) (*codec, error) {
	head := sniffHead(br)
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return gzipCodec, nil
	case bytes.HasPrefix(head, []byte{0xff, 0xfe, 0, 0}), bytes.HasPrefix(head, []byte{0, 0, 0xfe, 0xff}):
		return nil, fmt.Errorf("UTF-32 text: %w; convert it to UTF-8 (iconv -f UTF-32 -t UTF-8)", errNotScanned)
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		return utf16Codec(false, true), nil
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		return utf16Codec(true, true), nil
	}
	for _, m := range compressedMagic {
		if bytes.HasPrefix(head, []byte(m.magic)) && (m.name != "bzip2" || bzip2Header(head)) {
			return nil, fmt.Errorf("%s-compressed input: %w (redact cannot write %s back); decompress it first: %s FILE | compact redact", m.name, errNotScanned, m.name, m.undo)
		}
	}
	if be, ok := nulInterleaved(head); ok {
		return utf16Codec(be, false), nil
	}
	return nil, nil
}

// sniffLen is how much of the input sniffCodec looks at, at most.
const sniffLen = 512

// sniffHead returns what the first read brought (up to sniffLen bytes),
// and more only while what it has could still be the start of a magic
// number, or holds a NUL (UTF-16 text) and is shorter than 16 bytes.
func sniffHead(br *bufio.Reader) []byte {
	if _, err := br.Peek(1); err != nil { // the first read
		return nil
	}
	for {
		head, err := br.Peek(min(br.Buffered(), sniffLen))
		if err != nil || len(head) >= sniffLen || !needsMore(head) {
			return head
		}
		if _, err := br.Peek(len(head) + 1); err != nil {
			head, _ = br.Peek(br.Buffered())
			return head
		}
	}
}

// needsMore reports a head too short to tell: a proper prefix of a magic
// number, or a few bytes holding a NUL.
func needsMore(head []byte) bool {
	const bzip2Len = 10
	if len(head) >= 4 && (bytes.HasPrefix(head, []byte{0xff, 0xfe}) || bytes.HasPrefix(head, []byte{0xfe, 0xff})) {
		return false // a UTF-16 (or UTF-32) byte-order mark: told
	}
	magics := []string{"\x1f\x8b", "\xff\xfe\x00\x00", "\x00\x00\xfe\xff"}
	for _, m := range compressedMagic {
		magics = append(magics, m.magic)
	}
	for _, m := range magics {
		if len(head) < len(m) && strings.HasPrefix(m, string(head)) {
			return true
		}
	}
	if bytes.HasPrefix(head, []byte("BZh")) && len(head) < bzip2Len {
		return true
	}
	return len(head) < 16 && bytes.IndexByte(head, 0) >= 0
}

// bzip2Header reports "BZh", a block size digit and the first block's
// magic: text may well start with "BZh".
func bzip2Header(h []byte) bool {
	return len(h) >= 10 && h[3] >= '1' && h[3] <= '9' && string(h[4:10]) == "\x31\x41\x59\x26\x53\x59"
}

// nulInterleaved reports UTF-16 text without a byte-order mark: in its
// first bytes, nearly every other byte is NUL (ASCII text in UTF-16), on
// the high side of each pair.
func nulInterleaved(head []byte) (bigEndian, ok bool) {
	pairs := len(head) / 2
	if pairs < 4 {
		return false, false
	}
	var le, be int
	for i := 0; i+1 < len(head); i += 2 {
		switch {
		case head[i] != 0 && head[i+1] == 0:
			le++
		case head[i] == 0 && head[i+1] != 0:
			be++
		}
	}
	switch {
	case le*10 >= pairs*9:
		return false, true
	case be*10 >= pairs*9:
		return true, true
	}
	return false, false
}

var gzipCodec = &codec{
	name: "gzip",
	reader: func(br *bufio.Reader) (io.Reader, error) {
		return gzip.NewReader(br)
	},
	writer: func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
}

// utf16Codec reads UTF-16 of the given byte order as UTF-8 and writes
// UTF-8 back as UTF-16, with the byte-order mark if the input had one.
func utf16Codec(bigEndian, bom bool) *codec {
	name := "UTF-16LE"
	if bigEndian {
		name = "UTF-16BE"
	}
	return &codec{
		name: name,
		reader: func(br *bufio.Reader) (io.Reader, error) {
			if bom {
				br.Discard(2)
			}
			return &utf16Reader{r: br, be: bigEndian}, nil
		},
		writer: func(w io.Writer) io.WriteCloser { return &utf16Writer{w: w, be: bigEndian, bom: bom} },
	}
}

// utf16Reader decodes UTF-16 into UTF-8. A lone surrogate becomes U+FFFD.
type utf16Reader struct {
	r    io.Reader
	be   bool
	in   []byte // bytes read, not yet decoded: an odd byte, a high surrogate's pair
	out  []byte // decoded, not yet returned
	buf  []byte
	eof  bool
	rerr error
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.eof {
			if len(u.in) > 0 { // a truncated unit or surrogate pair
				u.in = u.in[:0]
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				break
			}
			return 0, u.rerr
		}
		if u.buf == nil {
			u.buf = make([]byte, 32<<10)
		}
		n, err := u.r.Read(u.buf)
		u.in = append(u.in, u.buf[:n]...)
		if err != nil {
			u.eof = true
			if err != io.EOF {
				u.rerr = err
			} else {
				u.rerr = io.EOF
			}
		}
		u.decode()
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// decode moves the whole units of in to out.
func (u *utf16Reader) decode() {
	i := 0
	for ; i+1 < len(u.in); i += 2 {
		c := u.unit(i)
		if utf16.IsSurrogate(rune(c)) && c < 0xdc00 { // a high surrogate: needs its pair
			if i+3 >= len(u.in) {
				if !u.eof {
					break
				}
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				continue
			}
			if r := utf16.DecodeRune(rune(c), rune(u.unit(i+2))); r != utf8.RuneError {
				u.out = utf8.AppendRune(u.out, r)
				i += 2
				continue
			}
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
			continue
		}
		if utf16.IsSurrogate(rune(c)) {
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
			continue
		}
		u.out = utf8.AppendRune(u.out, rune(c))
	}
	u.in = append(u.in[:0], u.in[i:]...)
}

func (u *utf16Reader) unit(i int) uint16 {
	if u.be {
		return uint16(u.in[i])<<8 | uint16(u.in[i+1])
	}
	return uint16(u.in[i]) | uint16(u.in[i+1])<<8
}

// utf16Writer encodes UTF-8 as UTF-16. A byte that is no UTF-8 becomes
// U+FFFD; a sequence cut by a write waits for the next.
type utf16Writer struct {
	w       io.Writer
	be, bom bool
	started bool
	pend    []byte
	buf     []byte
}

func (u *utf16Writer) Write(p []byte) (int, error) {
	u.buf = u.buf[:0]
	if !u.started && u.bom {
		u.buf = u.appendUnit(u.buf, 0xfeff)
	}
	u.started = true
	data := p
	if len(u.pend) > 0 {
		data = append(u.pend, p...)
		u.pend = nil
	}
	for len(data) > 0 {
		if !utf8.FullRune(data) {
			u.pend = append([]byte(nil), data...)
			break
		}
		r, n := utf8.DecodeRune(data)
		data = data[n:]
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			u.buf = u.appendUnit(u.appendUnit(u.buf, uint16(r1)), uint16(r2))
		} else {
			u.buf = u.appendUnit(u.buf, uint16(r))
		}
	}
	if _, err := u.w.Write(u.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes a sequence the last write cut, as U+FFFD.
func (u *utf16Writer) Close() error {
	if len(u.pend) == 0 {
		return nil
	}
	u.pend = nil
	_, err := u.w.Write(u.appendUnit(nil, uint16(utf8.RuneError)))
	return err
}

func (u *utf16Writer) appendUnit(b []byte, c uint16) []byte {
	if u.be {
		return append(b, byte(c>>8), byte(c))
	}
	return append(b, byte(c), byte(c>>8))
}
