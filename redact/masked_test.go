package redact_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/sample"
	"github.com/compactkit/compact/redact"
)

// TestMaskedMatchesTranscript: Masked gives what Transcript gives (same
// transcript, same findings) over the sample sessions in every format,
// leaves its input as it was, and shares every message it did not mask.
func TestMaskedMatchesTranscript(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		for _, f := range sample.Files(seed) {
			tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(tr)
			want, wantFound := r.Transcript(tr)
			got, gotFound := r.Masked(tr)
			if after, _ := json.Marshal(tr); !bytes.Equal(before, after) {
				t.Fatalf("seed %d %s: Masked modified its input", seed, f.Name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d %s: Masked and Transcript differ", seed, f.Name)
			}
			if !reflect.DeepEqual(gotFound, wantFound) {
				t.Errorf("seed %d %s: findings differ:\nMasked     %v\nTranscript %v", seed, f.Name, gotFound, wantFound)
			}
			masked := map[int]bool{}
			for _, fd := range gotFound {
				masked[fd.Message] = true
			}
			if len(gotFound) == 0 && len(tr.Messages) > 0 && &got.Messages[0] != &tr.Messages[0] {
				t.Errorf("seed %d %s: nothing masked, yet the message list was copied", seed, f.Name)
			}
			for i := range tr.Messages {
				if masked[i] || len(tr.Messages[i].Parts) == 0 {
					continue
				}
				if &got.Messages[i].Parts[0] != &tr.Messages[i].Parts[0] {
					t.Errorf("seed %d %s: message %d has no secret, yet its parts were copied", seed, f.Name, i)
				}
			}
		}
	}
}

// TestMaskedCopiesWhatItMasks: a masked message is a copy; the input
// keeps its secret and the output does not.
func TestMaskedCopiesWhatItMasks(t *testing.T) {
	r, _ := redact.New(redact.Config{})
	secret := "ghp_" + "cvbPCbk5Z4VrZQN1n2YBsOkccFy39I3r0il2"
	in := compact.Transcript{Messages: []compact.Message{
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "hello"}}},
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "token " + secret}}},
	}}
	out, found := r.Masked(in)
	if len(found) != 1 || found[0].Message != 1 {
		t.Fatalf("findings %v, want one in message 1", found)
	}
	if in.Messages[1].Parts[0].Text != "token "+secret {
		t.Errorf("input changed: %q", in.Messages[1].Parts[0].Text)
	}
	if out.Messages[1].Parts[0].Text == in.Messages[1].Parts[0].Text {
		t.Errorf("output still holds the secret: %q", out.Messages[1].Parts[0].Text)
	}
	if &out.Messages[0].Parts[0] != &in.Messages[0].Parts[0] {
		t.Error("message 0 has no secret, yet it was copied")
	}
}
