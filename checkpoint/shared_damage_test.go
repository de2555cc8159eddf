package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

// QA-31 (regression): one flipped byte in an element every checkpoint shares (the first
// message: stored once, content-addressed) makes every checkpoint of the
// session fail ("element … is not stored", though it is stored, damaged),
// Recover finds none that verifies, and every later Save of the session
// fails the same way: the session is stuck until someone deletes its
// directory by hand, and the whole history is lost for one byte.
func TestSharedElementDamageLeavesAWayForward(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ids := growingSession(t, dir, 4)
	logPath := filepath.Join(dir, "s1", "log")
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The first message's text is in the first batch, shared by all four.
	i := bytes.Index(b, []byte("do the thing number 0"))
	if i < 0 {
		t.Fatal("first message not found in the log")
	}
	b[i+3] ^= 0x01
	if err := os.WriteFile(logPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, lerr := s.Latest(ctx, "s1")
	if lerr != nil && strings.Contains(lerr.Error(), "not stored") {
		t.Errorf("Latest says the damaged element is %q: it is stored, its bytes are damaged (say where)", lerr)
	}
	rec, rerr := checkpoint.Recover(ctx, s, "s1")
	if rerr != nil {
		// Nothing before the damage: start over, the damaged log kept aside.
		where, err := checkpoint.StartOver(ctx, s, "s1")
		if err != nil {
			t.Fatalf("Recover: %v; StartOver: %v", rerr, err)
		}
		if kept, err := os.ReadFile(where); err != nil || !bytes.Equal(kept, b) {
			t.Errorf("the damaged log is not kept as it was at %s: %v", where, err)
		}
		if _, err := checkpoint.StartOver(ctx, s, "s1"); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("StartOver twice: %v", err)
		}
	}
	// A way forward: recover salvages something, or a save starts over.
	next := &checkpoint.Checkpoint{Session: "s1", Task: "qa task", Status: checkpoint.StatusRunning,
		Transcript: &compact.Transcript{Messages: []compact.Message{compact.UserMessage("step 5")}}}
	parent := ""
	if rerr == nil && rec != nil {
		parent = rec.ID
	} else if lerr == nil {
		parent = ids[len(ids)-1]
	}
	if err := s.Save(ctx, next, parent); err != nil {
		t.Errorf("after one damaged byte in a shared element: Recover: %v; the next Save: %v (errors.Is ErrCorrupt: %v): the session is stuck",
			rerr, err, errors.Is(err, checkpoint.ErrCorrupt))
	}
}

// TestStartOverLeavesAReadableSessionAlone: only a session without a
// readable head can be started over.
func TestStartOverLeavesAReadableSessionAlone(t *testing.T) {
	dir := t.TempDir()
	growingSession(t, dir, 2)
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := checkpoint.StartOver(context.Background(), s, "s1"); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Errorf("StartOver of a readable session: %v, want ErrInvalid", err)
	}
	if _, err := checkpoint.StartOver(context.Background(), s, "nosuch"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("StartOver of an unknown session: %v, want ErrNotFound", err)
	}
}

// compactingFileSession saves, in a FileStore in dir, a session "s1"
// whose transcript is compacted on the way: [m0 m1], [m0 m1 m2 m3],
// [h m3 m4], [h m3 m4 m5]. It returns the checkpoints' IDs.
func compactingFileSession(t *testing.T, dir string) []string {
	t.Helper()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := func(i int) compact.Message { return compact.UserMessage(fmt.Sprintf("message %d of the session", i)) }
	h := compact.AssistantMessage("handoff: messages 0 to 2 summarized")
	var ids []string
	parent := ""
	for _, msgs := range [][]compact.Message{{m(0), m(1)}, {m(0), m(1), m(2), m(3)}, {h, m(3), m(4)}, {h, m(3), m(4), m(5)}} {
		c := &checkpoint.Checkpoint{Session: "s1", Task: "a task", Status: checkpoint.StatusRunning, Transcript: &compact.Transcript{Messages: msgs}}
		if err := s.Save(context.Background(), c, parent); err != nil {
			t.Fatal(err)
		}
		parent = c.ID
		ids = append(ids, c.ID)
	}
	return ids
}

// flipIn flips one bit of the FileStore log of s1 in dir, inside the first
// occurrence of what, and returns the byte offset.
func flipIn(t *testing.T, dir, what string) int {
	t.Helper()
	p := filepath.Join(dir, "s1", "log")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(what))
	if i < 0 {
		t.Fatalf("%q not in the log", what)
	}
	b[i+2] ^= 0x01
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return i + 2
}

// TestDamagedByteCostsOnlyItsCheckpoints (QA-31): one flipped bit in the
// log file, inside a message only the 2nd checkpoint holds, costs the 2nd
// checkpoint only, not the batch, nor the log after it: the others load,
// Verify names the 2nd and the byte, Recover keeps the head and drops the
// damage, and the session goes on.
func TestDamagedByteCostsOnlyItsCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ids := compactingFileSession(t, dir)
	flipIn(t, dir, "message 2 of")
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, id := range ids {
		if _, err := s.Load(ctx, "s1", id); (err != nil) != (i == 1) {
			t.Errorf("checkpoint %d: %v; want only the 2nd lost", i+1, err)
		}
	}
	if c, err := s.Latest(ctx, "s1"); err != nil || c.ID != ids[3] {
		t.Fatalf("Latest: %v %v", c, err)
	}
	_, probs, err := checkpoint.Verify(ctx, s, "s1")
	if err != nil || len(probs) != 1 || probs[0].ID != ids[1] || !strings.Contains(probs[0].Message, "log damaged at byte ") {
		t.Errorf("Verify: %+v %v; want the 2nd checkpoint, with where the log is damaged", probs, err)
	}
	// Saves go on over the intact head, never cutting the damage.
	c, _ := s.Latest(ctx, "s1")
	c.Transcript.Messages = append(c.Transcript.Messages, compact.UserMessage("go on"))
	if err := s.Save(ctx, c, ids[3]); err != nil {
		t.Fatalf("Save over the intact head: %v", err)
	}
	if rec, err := checkpoint.Recover(ctx, s, "s1"); err != nil || rec.ID != c.ID {
		t.Fatalf("Recover: %v %v; want the head", rec, err)
	}
	if _, probs, err := checkpoint.Verify(ctx, s, "s1"); err != nil || len(probs) != 0 {
		t.Errorf("Verify after Recover: %+v %v", probs, err)
	}
	if h, err := s.History(ctx, "s1"); err != nil || len(h) != 4 || h[3].ID != ids[0] {
		t.Errorf("History after Recover: %d checkpoints, %v; want the head, the 4th, the 3rd and the 1st (QA-34)", len(h), err)
	}
}

// TestDamagedHeadElementRecoversToTheOneBefore (QA-31): damage in a
// message only the head holds: the head is lost, named; Recover makes the
// 3rd checkpoint the head.
func TestDamagedHeadElementRecoversToTheOneBefore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ids := compactingFileSession(t, dir)
	off := flipIn(t, dir, "message 5 of")
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Latest(ctx, "s1"); !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), "is damaged: log damaged at byte") {
		t.Errorf("Latest: %v; want the element named damaged, with where (byte %d)", err, off)
	}
	_, probs, err := checkpoint.Verify(ctx, s, "s1")
	if err != nil || len(probs) != 1 || probs[0].ID != ids[3] {
		t.Errorf("Verify: %+v %v; want the 4th checkpoint only", probs, err)
	}
	rec, err := checkpoint.Recover(ctx, s, "s1")
	if err != nil || rec.ID != ids[2] {
		t.Fatalf("Recover: %v %v; want the 3rd", rec, err)
	}
	if c, err := s.Latest(ctx, "s1"); err != nil || c.ID != ids[2] || len(c.Transcript.Messages) != 3 {
		t.Errorf("Latest after Recover: %v %v", c, err)
	}
}
