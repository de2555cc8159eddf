package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf16"

	"github.com/compactkit/compact/redact"
	"pgregory.net/rapid"
)

func encodeUTF16(s string, bigEndian, bom bool) []byte {
	var b []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xfeff}, units...)
	}
	for _, c := range units {
		if bigEndian {
			b = append(b, byte(c>>8), byte(c))
		} else {
			b = append(b, byte(c), byte(c>>8))
		}
	}
	return b
}

func decodeUTF16(t *testing.T, b []byte, bigEndian bool) string {
	t.Helper()
	if len(b)%2 != 0 {
		t.Fatalf("odd UTF-16 output: %d bytes", len(b))
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			units[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
	}
	return string(utf16.Decode(units))
}

// TestRedactEncodedInput (QA-44): UTF-16 (with or without a byte-order
// mark, either order) and gzip input is redacted as the text it holds and
// written back in its encoding: the output decodes to what redacting the
// UTF-8 text gives, for text and for JSON.
func TestRedactEncodedInput(t *testing.T) {
	const token = "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"
	texts := map[string]string{
		"text": "deploy log é 😀\nGITHUB_TOKEN=" + token + "\nexport PASSWORD='Zq8!vR2#pLm9'\n",
		"json": `[{"role":"user","content":"my token is ` + token + ` 😀"}]` + "\n",
	}
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for kind, text := range texts {
		want, _ := r.NewScope(text).RedactText(text)
		if kind == "json" {
			want, _ = r.NewScope(text).Redact(text)
		}
		if strings.Contains(want, token) {
			t.Fatalf("%s: the UTF-8 text keeps the token", kind)
		}
		for _, enc := range []struct {
			name    string
			be, bom bool
		}{{"UTF-16LE BOM", false, true}, {"UTF-16BE BOM", true, true}, {"UTF-16LE", false, false}, {"UTF-16BE", true, false}} {
			in := encodeUTF16(text, enc.be, enc.bom)
			code, out, stderr := redactRun(t, string(in), nil, "--report", "-")
			if code != exitOK {
				t.Fatalf("%s %s: exit %d: %s", kind, enc.name, code, stderr)
			}
			o := []byte(out)
			if enc.bom {
				if !bytes.HasPrefix(o, in[:2]) {
					t.Fatalf("%s %s: the byte-order mark is not written back: % x", kind, enc.name, o[:min(4, len(o))])
				}
				o = o[2:]
			}
			if got := decodeUTF16(t, o, enc.be); got != want {
				t.Fatalf("%s %s:\n got  %q\n want %q", kind, enc.name, got, want)
			}
			if !strings.Contains(stderr, "github-token") {
				t.Errorf("%s %s: report: %q", kind, enc.name, stderr)
			}
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(text))
		zw.Close()
		code, out, stderr := redactRun(t, gz.String(), nil, "-")
		if code != exitOK {
			t.Fatalf("%s gzip: exit %d: %s", kind, code, stderr)
		}
		zr, err := gzip.NewReader(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%s gzip: the output is no gzip: %v", kind, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || string(got) != want {
			t.Fatalf("%s gzip: %v\n got  %q\n want %q", kind, err, got, want)
		}
	}
}

// TestRedactRefusesCompressed (QA-44): compressed input redact cannot
// write back is refused (exit 2, saying what and how to decompress it),
// never passed through as "0 secret(s) masked".
func TestRedactRefusesCompressed(t *testing.T) {
	for name, head := range map[string]string{
		"zstd":  "\x28\xb5\x2f\xfd\x04\x58\x00\x00",
		"xz":    "\xfd7zXZ\x00\x00\x04",
		"bzip2": "BZh91AY&SY\x00\x00",
		"zip":   "PK\x03\x04\x14\x00",
	} {
		code, out, stderr := redactRun(t, head+strings.Repeat("x", 100), nil, "--report", "-")
		if code != exitUsage || out != "" || !strings.Contains(stderr, name+"-compressed input: not scanned") {
			t.Errorf("%s: exit %d, %d bytes out, %q", name, code, len(out), stderr)
		}
	}
	// Text that starts like a bzip2 header is text.
	if code, out, _ := redactRun(t, "BZh is a word\n", nil, "-"); code != exitOK || out != "BZh is a word\n" {
		t.Errorf("text starting BZh: exit %d, %q", code, out)
	}
}

// TestUTF16RoundTrip: any text, read as UTF-16 a byte at a time and
// written back through writes cut anywhere, comes back byte for byte.
func TestUTF16RoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.String().Draw(rt, "text")
		be := rapid.Bool().Draw(rt, "big endian")
		bom := rapid.Bool().Draw(rt, "bom")
		in := encodeUTF16(s, be, bom)
		cd := utf16Codec(be, bom)
		dec, err := cd.reader(bufio.NewReader(iotest.OneByteReader(bytes.NewReader(in))))
		if err != nil {
			rt.Fatal(err)
		}
		text, err := io.ReadAll(dec)
		if err != nil || string(text) != s {
			rt.Fatalf("decoded %q (%v), want %q", text, err, s)
		}
		var out bytes.Buffer
		w := cd.writer(&out)
		for rest := text; len(rest) > 0; {
			n := rapid.IntRange(1, len(rest)).Draw(rt, "write")
			if _, err := w.Write(rest[:n]); err != nil {
				rt.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), in) && len(text) > 0 {
			rt.Fatalf("written back % x, want % x", out.Bytes(), in)
		}
	})
}

// TestSniffCodecOnAStalledPipe: telling the encoding waits for no more
// than the first read of a stream that stops after a short first line
// (tail -f), in UTF-8 or UTF-16.
func TestSniffCodecOnAStalledPipe(t *testing.T) {
	for _, tc := range []struct {
		first string
		codec string
	}{{"hi\n", ""}, {"ok", ""}, {string(encodeUTF16("hi\n", false, true)), "UTF-16LE"}, {string(encodeUTF16("a long enough line\n", false, false)), "UTF-16LE"}} {
		pr, pw := io.Pipe()
		go io.WriteString(pw, tc.first) // and the pipe stays open
		got := make(chan string, 1)
		go func() {
			cd, err := sniffCodec(bufio.NewReaderSize(pr, 64<<10))
			switch {
			case err != nil:
				got <- err.Error()
			case cd == nil:
				got <- ""
			default:
				got <- cd.name
			}
		}()
		select {
		case name := <-got:
			if name != tc.codec {
				t.Errorf("sniffCodec(%q) = %q, want %q", tc.first, name, tc.codec)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("sniffCodec(%q) still waits on a pipe that stopped after it", tc.first)
		}
		pw.Close()
	}
}
