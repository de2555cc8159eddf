package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"pgregory.net/rapid"
)

func sampleBlob(t testing.TB, key []byte, text string) (codec, *Checkpoint, []byte) {
	cd, err := newCodec(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &Checkpoint{SchemaVersion: SchemaVersion, ID: "00000001-aaaaaaaaaaaa", Seq: 1, Session: "s", Status: StatusRunning,
		Task: text, UpdatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Transcript: &compact.Transcript{Messages: []compact.Message{{ID: "m", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}}}}
	blob, err := cd.encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return cd, c, blob
}

// A damaged blob never decodes to other content: it fails, or (a change the
// JSON decoder ignores, such as the case of a key) decodes to the same body.
func TestDamageNeverLoadsOtherState(t *testing.T) {
	for _, key := range [][]byte{nil, bytes.Repeat([]byte{1}, 32)} {
		rapid.Check(t, func(rt *rapid.T) {
			cd, c, blob := sampleBlob(t, key, rapid.String().Draw(rt, "text"))
			damaged := bytes.Clone(blob)
			switch rapid.IntRange(0, 2).Draw(rt, "how") {
			case 0:
				i := rapid.IntRange(0, len(blob)-1).Draw(rt, "at")
				damaged[i] ^= byte(rapid.IntRange(1, 255).Draw(rt, "mask"))
			case 1:
				damaged = damaged[:rapid.IntRange(0, len(blob)-1).Draw(rt, "cut")]
			case 2:
				i := rapid.IntRange(0, len(blob)).Draw(rt, "at")
				damaged = append(damaged[:i:i], append([]byte{'x'}, blob[i:]...)...)
			}
			got, _, err := cd.decode(damaged)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrWrongKey) && !errors.Is(err, ErrKeyRequired) {
					rt.Fatalf("damage reported as %v", err)
				}
				return
			}
			if got.Hash != c.Hash || got.Task != c.Task {
				rt.Fatalf("damaged blob decoded to other content")
			}
		})
	}
}

func TestCodecRoundTrip(t *testing.T) {
	key := bytes.Repeat([]byte{3}, 16)
	cd, c, blob := sampleBlob(t, key, "secret plan")
	if bytes.Contains(blob, []byte("secret plan")) {
		t.Fatal("encrypted blob holds plain text")
	}
	got, meta, err := cd.decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	if got.Task != "secret plan" || got.Hash != c.Hash || meta.Codec != codecAESGCM || meta.Hash != c.Hash {
		t.Fatalf("round trip: %+v %+v", got, meta)
	}
	plain, _ := newCodec(nil)
	if _, _, err := plain.decode(blob); !errors.Is(err, ErrKeyRequired) {
		t.Fatalf("no key: %v", err)
	}
	// A sealed body moved under another checkpoint's header does not open.
	_, _, other := sampleBlob(t, key, "other")
	h1 := blob[:bytes.IndexByte(blob, '\n')]
	var hdr header
	json.Unmarshal(h1, &hdr)
	hdr.Meta.ID = "00000002-bbbbbbbbbbbb"
	moved, _ := json.Marshal(hdr)
	swapped := append(append(moved, '\n'), blob[len(h1)+1:]...)
	if _, _, err := cd.decode(swapped); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("swapped header: %v", err)
	}
	_ = other
	// A newer format version is refused, not misread.
	newer := bytes.Replace(blob, []byte(`"version":1`), []byte(`"version":2`), 1)
	if _, _, err := cd.decode(newer); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer version: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	_, _, blob := sampleBlob(f, nil, "hello")
	f.Add(blob)
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"format":"compact-checkpoint","version":1,"kind":"checkpoint","codec":"plain","sha256":"","size":0,"meta":{}}` + "\n"))
	cd, _ := newCodec(nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, _, err := cd.decode(b)
		if err != nil {
			if c != nil {
				t.Fatal("a checkpoint returned with an error")
			}
			return
		}
		// Whatever decodes re-encodes to a blob that decodes the same.
		again, err := cd.encode(c.Clone())
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := cd.decode(again); err != nil {
			t.Fatalf("re-encoded checkpoint does not decode: %v", err)
		}
	})
}
