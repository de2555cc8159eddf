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

// TestMaskMessagesMatchesTranscript: MaskMessages leaves in its slice the
// messages Transcript gives, with the same findings, over the sample
// sessions in every format; it writes nothing the slice shares with the
// transcript it came from, and shares every message it did not mask.
func TestMaskMessagesMatchesTranscript(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	masked := 0
	for _, seed := range []uint64{1, 2, 3} {
		for _, f := range sample.Files(seed) {
			tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(tr)
			want, wantFound := r.Transcript(compact.Transcript{Messages: tr.Messages})
			got := append([]compact.Message(nil), tr.Messages...)
			gotFound := r.MaskMessages(got)
			if after, _ := json.Marshal(tr); !bytes.Equal(before, after) {
				t.Fatalf("seed %d %s: MaskMessages wrote into the messages it was given", seed, f.Name)
			}
			if !reflect.DeepEqual(got, want.Messages) {
				t.Errorf("seed %d %s: MaskMessages and Transcript differ", seed, f.Name)
			}
			if !reflect.DeepEqual(gotFound, wantFound) {
				t.Errorf("seed %d %s: findings differ:\nMaskMessages %v\nTranscript   %v", seed, f.Name, gotFound, wantFound)
			}
			hit := map[int]bool{}
			for _, fd := range gotFound {
				hit[fd.Message] = true
			}
			masked += len(hit)
			for i := range tr.Messages {
				if hit[i] || len(tr.Messages[i].Parts) == 0 {
					continue
				}
				if &got[i].Parts[0] != &tr.Messages[i].Parts[0] {
					t.Errorf("seed %d %s: message %d has no secret, yet its parts were copied", seed, f.Name, i)
				}
			}
		}
	}
	if masked == 0 {
		t.Fatal("no sample message held a secret: the test shows nothing")
	}
}

// TestMaskMessagesCopiesWhatItMasks: a masked message is a copy; the
// message it replaced keeps its text, the slice holds the mask.
func TestMaskMessagesCopiesWhatItMasks(t *testing.T) {
	r, _ := redact.New(redact.Config{})
	secret := "ghp_" + "cvbPCbk5Z4VrZQN1n2YBsOkccFy39I3r0il2"
	orig := []compact.Message{
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "hello"}}},
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "token " + secret}}},
	}
	msgs := append([]compact.Message(nil), orig...)
	found := r.MaskMessages(msgs)
	if len(found) != 1 || found[0].Message != 1 {
		t.Fatalf("findings %v, want one in message 1", found)
	}
	if orig[1].Parts[0].Text != "token "+secret {
		t.Errorf("the original message changed: %q", orig[1].Parts[0].Text)
	}
	if msgs[1].Parts[0].Text == orig[1].Parts[0].Text {
		t.Errorf("the slice still holds the secret: %q", msgs[1].Parts[0].Text)
	}
	if &msgs[0].Parts[0] != &orig[0].Parts[0] {
		t.Error("message 0 has no secret, yet it was copied")
	}
}

// TestMaskedCopiesMatchesMaskMessages: MaskedCopies gives, message by
// message, what MaskMessages leaves in a copy of the messages without
// their source records (the same masks, the same findings), writes nothing
// into the messages it reads, and copies only those it masks.
func TestMaskedCopiesMatchesMaskMessages(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	masked := 0
	for _, seed := range []uint64{1, 2, 3} {
		for _, f := range sample.Files(seed) {
			tr, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(tr)
			want := make([]compact.Message, len(tr.Messages))
			for i, m := range tr.Messages {
				m.Source = compact.Source{Format: m.Source.Format}
				want[i] = m
			}
			wantFound := r.MaskMessages(want)
			copies, gotFound := r.MaskedCopies(tr.Messages)
			if after, _ := json.Marshal(tr); !bytes.Equal(before, after) {
				t.Fatalf("seed %d %s: MaskedCopies wrote into the messages it was given", seed, f.Name)
			}
			if !reflect.DeepEqual(gotFound, wantFound) {
				t.Errorf("seed %d %s: findings differ:\nMaskedCopies %v\nMaskMessages %v", seed, f.Name, gotFound, wantFound)
			}
			for i := range tr.Messages {
				got, ok := copies[i]
				if !ok {
					got = tr.Messages[i]
					got.Source = compact.Source{Format: got.Source.Format}
				} else if got.Source.Records != nil {
					t.Errorf("seed %d %s: the copy of message %d carries source records", seed, f.Name, i)
				}
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("seed %d %s: message %d differs from MaskMessages'", seed, f.Name, i)
				}
			}
			masked += len(copies)
		}
	}
	if masked == 0 {
		t.Fatal("no sample message held a secret: the test shows nothing")
	}
}
