package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
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
