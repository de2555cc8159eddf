package checkpoint

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/compactkit/compact"
	"pgregory.net/rapid"
)

// appendMessage writes what encoding/json writes of the stored types, byte for byte, for any message: so a message's address
// is the same whichever of them encoded it.
func TestAppendMessageMatchesEncoder(t *testing.T) {
	// Strings with every kind of byte JSON escapes, invalid UTF-8, U+2028.
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z]{0,4}`),
		rapid.SampledFrom([]string{"", "\x00\b\f\n\r\t\"\\<>&", "bad \xff\xfe utf8", "line\u2028sep\u2029", "é€😀"}))
	raw := rapid.OneOf(rapid.Just(json.RawMessage(nil)), rapid.Just(json.RawMessage{}),
		rapid.SampledFrom([]json.RawMessage{json.RawMessage(`{"a": 1}`), json.RawMessage(" [1,\n2] "), json.RawMessage(`"x"`)}))
	flag := rapid.Bool()
	rapid.Check(t, func(rt *rapid.T) {
		m := compact.Message{ID: str.Draw(rt, "id"), Role: compact.Role(str.Draw(rt, "role")), Name: str.Draw(rt, "name"),
			Synthetic: flag.Draw(rt, "syn"), Summary: flag.Draw(rt, "sum")}
		switch rapid.IntRange(0, 2).Draw(rt, "ids") {
		case 1:
			m.ToolCallIDs = []string{}
		case 2:
			m.ToolCallIDs = rapid.SliceOfN(str, 1, 3).Draw(rt, "idlist")
		}
		for range rapid.IntRange(0, 3).Draw(rt, "parts") {
			p := compact.Part{Type: compact.PartType(str.Draw(rt, "type")), Text: str.Draw(rt, "text"), CallID: str.Draw(rt, "call"),
				IsError: flag.Draw(rt, "err"), Failed: flag.Draw(rt, "failed"), Harness: flag.Draw(rt, "harness")}
			if flag.Draw(rt, "image") {
				p.Image = &compact.Image{URL: str.Draw(rt, "url"), MediaType: str.Draw(rt, "mt"), Data: str.Draw(rt, "data")}
			}
			if flag.Draw(rt, "tool") {
				p.ToolCall = &compact.ToolCall{ID: str.Draw(rt, "tid"), Name: str.Draw(rt, "tname"), Arguments: raw.Draw(rt, "args"),
					Kind: compact.ToolKind(str.Draw(rt, "kind")), Target: str.Draw(rt, "target")}
			}
			m.Parts = append(m.Parts, p)
		}
		if rapid.IntRange(0, 3).Draw(rt, "emptyparts") == 0 && len(m.Parts) == 0 {
			m.Parts = []compact.Part{}
		}
		m.Source.Format, m.Source.Fingerprint = str.Draw(rt, "format"), str.Draw(rt, "fp")
		for range rapid.IntRange(0, 3).Draw(rt, "records") {
			m.Source.Records = append(m.Source.Records, raw.Draw(rt, "record"))
		}
		want, err := encodeMessageReflect(newElemEncoder(), &m)
		if err != nil {
			rt.Fatal(err)
		}
		if got := appendMessage(nil, &m); !bytes.Equal(got, want) {
			rt.Fatalf("appendMessage wrote\n%q\nencodeMessage wrote\n%q", got, want)
		}
	})
}

// appendMessage writes each field of these types by name: a field added
// to one of them must be added there (and to this count).
func TestAppendMessageKnowsEveryField(t *testing.T) {
	for _, c := range []struct {
		t reflect.Type
		n int
	}{
		{reflect.TypeFor[compact.Message](), 8}, {reflect.TypeFor[compact.Part](), 8}, {reflect.TypeFor[compact.Image](), 3},
		{reflect.TypeFor[compact.ToolCall](), 5}, {reflect.TypeFor[compact.Source](), 4}, // Spans is never written (json:"-")
	} {
		if got := c.t.NumField(); got != c.n {
			t.Errorf("%v has %d fields, appendMessage writes %d: teach it the new ones", c.t, got, c.n)
		}
	}
}

// encodeMessageReflect is how messages were encoded before appendMessage:
// encoding/json over the stored types, whose bytes appendMessage keeps.
func encodeMessageReflect(e *elemEncoder, m *compact.Message) ([]byte, error) {
	var raw rawSection
	t := compact.Transcript{Messages: []compact.Message{*m}}
	st := toStored(&t, &raw)
	return e.json(&st.Messages[0], rawOrEmpty(raw.buf))
}

// A batch's addresses and frames are the codec's, and its bytes are
// encodeBatch of its frames.
func TestBatchAddressAndFrame(t *testing.T) {
	for _, key := range [][]byte{nil, bytes.Repeat([]byte{7}, 32)} {
		cd, err := newCodec(key)
		if err != nil {
			t.Fatal(err)
		}
		s := &LogStore{codec: cd}
		b := newBatch(s, &logSession{blobs: map[Addr]blobLoc{}}, "s1", nil)
		for _, data := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abc"), 1000)} {
			for _, kind := range []byte{kindMessage, kindStep} {
				a := b.address(kind, data)
				if a != cd.address(kind, data) {
					t.Fatalf("key %v kind %c: address differs from the codec's", key != nil, kind)
				}
				n := len(b.frames)
				if b.put(kind, data) != a || len(b.frames) != n+1 {
					t.Fatalf("kind %c: put did not add one frame", kind)
				}
				f := b.frameList()[n]
				k, body, err := checkFrame(f)
				if err != nil || k != frameBlob {
					t.Fatalf("kind %c: frame does not check: %v", kind, err)
				}
				_, sb, _ := parseBlob(body)
				if key == nil && !bytes.Equal(f, blobFrame(a, kind, codecByte, data)) {
					t.Fatalf("kind %c: plain frame differs from blobFrame's", kind)
				}
				if key != nil {
					plain, err := cd.openBlob("s1", a, sb, cd.keyID)
					if err != nil || !bytes.Equal(plain, data) {
						t.Fatalf("kind %c: sealed frame does not open to the data: %v", kind, err)
					}
				}
				if x := b.blobs[len(b.blobs)-1]; !bytes.Equal(b.buf[x.at:x.at+x.n], sb.data) {
					t.Fatalf("kind %c: the batch's place of the data is wrong", kind)
				}
			}
		}
		b.appendFrame((&logRecord{}).encode())
		if got, want := b.seal(), encodeBatch(b.frameList()); !bytes.Equal(got, want) {
			t.Fatal("the batch differs from encodeBatch of its frames")
		}
	}
}
