package checkpoint

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
	"pgregory.net/rapid"
)

func rawTranscript(raws ...string) *compact.Transcript {
	t := &compact.Transcript{Format: "x"}
	for i, r := range raws {
		call := &compact.ToolCall{ID: "c", Name: "f", Arguments: json.RawMessage(r)}
		m := compact.Message{ID: string(rune('a' + i)), Role: compact.RoleAssistant,
			Parts: []compact.Part{{Type: compact.PartToolCall, ToolCall: call}}}
		m.Source = compact.Source{Format: "x", Records: []json.RawMessage{json.RawMessage(r)}, Fingerprint: m.Fingerprint()}
		t.Messages = append(t.Messages, m)
		t.Records = append(t.Records, compact.Record{At: i, Type: "meta", Raw: json.RawMessage(r)})
		t.Tools = append(t.Tools, compact.ToolDef{Name: "f", Parameters: json.RawMessage(r)})
	}
	if len(raws) > 0 {
		t.Envelope = json.RawMessage(raws[0])
	}
	return t
}

func sameRawValues(t testing.TB, got, want *compact.Transcript) {
	t.Helper()
	if got.Hash() != want.Hash() {
		t.Fatalf("transcript hash changed")
	}
	if !bytes.Equal(got.Envelope, want.Envelope) {
		t.Fatalf("envelope %q, want %q", got.Envelope, want.Envelope)
	}
	for i := range want.Messages {
		g, w := got.Messages[i], want.Messages[i]
		if !bytes.Equal(g.Source.Records[0], w.Source.Records[0]) || !bytes.Equal(g.Parts[0].ToolCall.Arguments, w.Parts[0].ToolCall.Arguments) ||
			!bytes.Equal(got.Records[i].Raw, want.Records[i].Raw) || !bytes.Equal(got.Tools[i].Parameters, want.Tools[i].Parameters) {
			t.Fatalf("message %d: raw bytes changed", i)
		}
		if !g.Unchanged() {
			t.Fatalf("message %d no longer unchanged", i)
		}
	}
}

func TestVerbatimRawValues(t *testing.T) {
	want := rawTranscript(
		`{"a":1}`,
		"{\n  \"pretty\": [1, 2],\n  \"x\": \"y\"\n}",
		`{"html":"<b> & </b>"}`,
		"{\"sep\":\"\u2028\u2029\"}",
		`{"$verbatim":"looks like the wrapper"}`,
		`not json at all`,
		`  "padded string"  `,
	)
	cd, _ := newCodec(nil)
	c := &Checkpoint{SchemaVersion: 1, ID: "00000001-aaaaaaaaaaaa", Session: "s", Seq: 1, Status: StatusRunning, Transcript: want}
	blob, err := cd.encode(c)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := cd.decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	sameRawValues(t, got.Transcript, want)
	// The raw section holds the values as they were, pretty or not.
	if !bytes.Contains(blob, []byte("{\n  \"pretty\": [1, 2],")) {
		t.Fatal("a pretty record was not stored as is")
	}
	// A reference outside the raw section is corruption.
	body := bytes.Replace(blob[bytes.IndexByte(blob, '\n')+1:], []byte(`"envelope":[0,`), []byte(`"envelope":[9999999,`), 1)
	if _, err := unmarshalBody(body); err == nil {
		t.Fatal("a reference outside the raw section decoded")
	}
}

func TestVerbatimProperty(t *testing.T) {
	cd, _ := newCodec(nil)
	rapid.Check(t, func(rt *rapid.T) {
		raws := rapid.SliceOfN(rapid.OneOf(
			rapid.String(),
			rapid.Map(rapid.MapOf(rapid.String(), rapid.String()), func(m map[string]string) string {
				b, _ := json.MarshalIndent(m, "", rapid.SampledFrom([]string{"", " ", "\t"}).Draw(rt, "indent"))
				return string(b)
			}),
		), 1, 5).Draw(rt, "raws")
		want := rawTranscript(raws...)
		c := &Checkpoint{SchemaVersion: 1, ID: "00000001-aaaaaaaaaaaa", Session: "s", Seq: 1, Status: StatusRunning, Transcript: want}
		blob, err := cd.encode(c)
		if err != nil {
			rt.Fatal(err)
		}
		got, _, err := cd.decode(blob)
		if err != nil {
			rt.Fatal(err)
		}
		sameRawValues(t, got.Transcript, want)
	})
}
