package checkpoint_test

// A FileStore log cut short or with one byte damaged anywhere (QA-1 in
// /work/team/QA.md): only a cut-short last append is a torn tail; damage
// is reported with its offset, never read as another checkpoint, never cut
// off by a save, and recover keeps what is before it.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

var damageFull = flag.Bool("damage.full", false, "damage and cut the log at every byte of its last two batches, not a sample")

// growingSession saves n checkpoints of one growing session "s1" in dir
// and returns their IDs.
func growingSession(t *testing.T, dir string, n int) []string {
	t.Helper()
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	var msgs []compact.Message
	parent := ""
	for i := range n {
		msgs = append(msgs, compact.UserMessage(fmt.Sprintf("step %d: do the thing number %d", i, i)),
			compact.AssistantMessage(fmt.Sprintf("done %d", i)))
		c := &checkpoint.Checkpoint{Session: "s1", Task: "a task", Status: checkpoint.StatusRunning,
			Transcript: &compact.Transcript{Messages: append([]compact.Message(nil), msgs...)}}
		if err := s.Save(ctx, c, parent); err != nil {
			t.Fatal(err)
		}
		parent = c.ID
		ids = append(ids, c.ID)
	}
	return ids
}

// lastBatchOffsets returns the offsets to cut or damage the log at: every
// byte of its last two batches with -damage.full, else every byte of
// their headers and of the frame lengths after them, and a stride through
// the rest. from is where the last two batches start.
func lastBatchOffsets(t *testing.T, dir string) (offs []int, from int) {
	t.Helper()
	starts, size, err := checkpoint.LogBatches(dir, "s1")
	if err != nil || len(starts) < 3 {
		t.Fatalf("log batches %v: %v", starts, err)
	}
	from = int(starts[len(starts)-2])
	for off := from; off < int(size); off++ {
		in := off - from
		if len(starts) > 0 && off >= int(starts[len(starts)-1]) {
			in = off - int(starts[len(starts)-1])
		}
		if *damageFull || in < 20 || off%23 == 0 || off == int(size)-1 {
			offs = append(offs, off)
		}
	}
	return offs, from
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLogCutAnywhereIsATornTail cuts the log at offsets of its last two
// batches: what is left is a torn tail; the newest whole checkpoint loads,
// verifies, and takes the next save.
func TestLogCutAnywhereIsATornTail(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	ids := growingSession(t, base, 5)
	offs, _ := lastBatchOffsets(t, base)
	for _, off := range offs {
		dir := t.TempDir()
		copyTree(t, base, dir)
		if err := os.Truncate(filepath.Join(dir, "s1", "log"), int64(off)); err != nil {
			t.Fatal(err)
		}
		s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Latest(ctx, "s1")
		if err != nil {
			t.Errorf("cut at %d: Latest: %v", off, err)
			continue
		}
		if c.ID != ids[2] && c.ID != ids[3] {
			t.Errorf("cut at %d: Latest is seq %d, want the 3rd or 4th", off, c.Seq)
		}
		if _, probs, err := checkpoint.Verify(ctx, s, "s1"); err != nil || len(probs) != 0 {
			t.Errorf("cut at %d: Verify: %v %v", off, probs, err)
		}
		n := &checkpoint.Checkpoint{Session: "s1", Status: checkpoint.StatusRunning, Transcript: c.Transcript}
		if err := s.Save(ctx, n, c.ID); err != nil {
			t.Errorf("cut at %d: Save over the torn tail: %v", off, err)
		}
		s.Close()
	}
}

// TestLogDamageAnywhereIsReported flips a byte at offsets of the last two
// batches. Damage is never read as a checkpoint with other content, never
// unreported while the head is lost, and recover leaves a session that
// loads and verifies with every checkpoint before the damage.
func TestLogDamageAnywhereIsReported(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	ids := growingSession(t, base, 5)
	orig, err := checkpoint.NewFileStore(base, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, id := range ids {
		c, err := orig.Load(ctx, "s1", id)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = c.Transcript.Hash()
	}
	full, err := os.ReadFile(filepath.Join(base, "s1", "log"))
	if err != nil {
		t.Fatal(err)
	}
	offs, _ := lastBatchOffsets(t, base)
	for _, off := range offs {
		dir := t.TempDir()
		copyTree(t, base, dir)
		b := append([]byte(nil), full...)
		b[off] ^= 0x5a
		if err := os.WriteFile(filepath.Join(dir, "s1", "log"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, lerr := s.Latest(ctx, "s1")
		if lerr == nil && want[c.ID] != c.Transcript.Hash() {
			t.Errorf("damage at %d: Latest returned checkpoint %s with other content", off, c.ID)
		}
		_, probs, verr := checkpoint.Verify(ctx, s, "s1")
		if verr == nil && len(probs) == 0 && (lerr != nil || c.ID != ids[4]) {
			t.Errorf("damage at %d: Verify reports nothing, but the head is lost (Latest: %v)", off, lerr)
		}
		for _, p := range probs {
			if !strings.Contains(p.Message, "at byte ") && !strings.Contains(p.Message, "does not match") {
				t.Errorf("damage at %d: the problem does not say where: %s", off, p.Message)
			}
		}
		if _, err := checkpoint.Recover(ctx, s, "s1"); err != nil {
			t.Errorf("damage at %d: Recover: %v", off, err)
		}
		c2, err := s.Latest(ctx, "s1")
		if err != nil {
			t.Errorf("damage at %d: after Recover, Latest: %v", off, err)
		} else if c2.Seq < 3 || want[c2.ID] != c2.Transcript.Hash() {
			t.Errorf("damage at %d: after Recover, Latest is seq %d: intact checkpoints lost", off, c2.Seq)
		}
		if _, probs, _ := checkpoint.Verify(ctx, s, "s1"); len(probs) != 0 {
			t.Errorf("damage at %d: after Recover, Verify: %v", off, probs)
		}
		s.Close()
	}
}

// damageFirstLength sets a high byte of the first batch's length field, so
// that, unchecked, it would point past the end of the file.
func damageFirstLength(t *testing.T, dir string) []byte {
	t.Helper()
	p := filepath.Join(dir, "s1", "log")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	d := append([]byte(nil), b...)
	d[5] ^= 0x40
	if err := os.WriteFile(p, d, 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDamagedLengthIsNotATornTail: a damaged length in the first batch is
// damage at byte 0, not a torn tail that hides the session; the batch's
// frames, which check themselves, are still read (its end is where the
// next batch starts), so it costs no checkpoint: Verify reports the
// damage, saves append after it without cutting it, and Recover rewrites
// the log without it.
func TestDamagedLengthIsNotATornTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ids := growingSession(t, dir, 5)
	damaged := damageFirstLength(t, dir)
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err := s.Latest(ctx, "s1"); err != nil || c.ID != ids[4] {
		t.Fatalf("Latest: %v %v, want the 5th checkpoint", c, err)
	}
	_, probs, err := checkpoint.Verify(ctx, s, "s1")
	if err != nil || len(probs) != 1 || probs[0].ID != "" || !strings.Contains(probs[0].Message, "log damaged at byte 0") {
		t.Errorf("Verify: %v %v, want the damage at byte 0, and no checkpoint lost", probs, err)
	}
	n := &checkpoint.Checkpoint{Session: "s1", Status: checkpoint.StatusRunning}
	if err := s.Save(ctx, n, ""); !errors.Is(err, checkpoint.ErrConflict) {
		t.Errorf("Save over \"\": %v, want ErrConflict", err)
	}
	if err := s.Save(ctx, n, ids[4]); err != nil {
		t.Errorf("Save over the head: %v", err)
	}
	if res, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1}); err == nil || res.Checkpoints != 0 {
		t.Errorf("Prune of a damaged log: %+v %v", res, err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "s1", "log"))
	if len(after) <= len(damaged) || string(after[:len(damaged)]) != string(damaged) {
		t.Errorf("the damaged log was changed: %d bytes, was %d", len(after), len(damaged))
	}
	if c, err := checkpoint.Recover(ctx, s, "s1"); err != nil || c.ID != n.ID {
		t.Errorf("Recover: %v %v, want the head", c, err)
	}
	if h, err := s.History(ctx, "s1"); err != nil || len(h) != 6 {
		t.Errorf("History after Recover: %d checkpoints, %v; want all 6", len(h), err)
	}
	if _, probs, err := checkpoint.Verify(ctx, s, "s1"); err != nil || len(probs) != 0 {
		t.Errorf("Verify after Recover: %v %v", probs, err)
	}
}

// TestFirstSaveOverAnExistingLogConflicts: a writer that thinks it starts
// the session (parent "") over a log it has not read conflicts.
func TestFirstSaveOverAnExistingLogConflicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	growingSession(t, dir, 2)
	before, _ := os.ReadFile(filepath.Join(dir, "s1", "log"))
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := &checkpoint.Checkpoint{Session: "s1", Status: checkpoint.StatusRunning}
	if err := s.Save(ctx, n, ""); !errors.Is(err, checkpoint.ErrConflict) {
		t.Errorf("Save(parent \"\") over a log of 2 checkpoints: %v, want ErrConflict", err)
	}
	// The backend itself, below the store's read of the log.
	if _, err := s.Backend().AppendLog(ctx, "s1", checkpoint.LogPos{}, [][]byte{[]byte("x")}); !errors.Is(err, checkpoint.ErrConflict) {
		t.Errorf("AppendLog at the zero position over a log: %v, want ErrConflict", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "s1", "log"))
	if string(after) != string(before) {
		t.Errorf("the log changed: %d bytes, was %d", len(after), len(before))
	}
}

// TestOldLogLayoutReads: a log written before batch headers loads, and its
// next save appends a batch after it.
func TestOldLogLayoutReads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ids := growingSession(t, dir, 3)
	if err := checkpoint.OldLayout(dir, "s1"); err != nil {
		t.Fatal(err)
	}
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Latest(ctx, "s1")
	if err != nil || c.ID != ids[2] || len(c.Transcript.Messages) != 6 {
		t.Fatalf("Latest of an old log: %v", err)
	}
	n := &checkpoint.Checkpoint{Session: "s1", Status: checkpoint.StatusCompleted, Transcript: c.Transcript}
	if err := s.Save(ctx, n, c.ID); err != nil {
		t.Fatal(err)
	}
	fresh, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if _, probs, err := checkpoint.Verify(ctx, fresh, "s1"); err != nil || len(probs) != 0 {
		t.Errorf("Verify: %v %v", probs, err)
	}
	if h, err := fresh.History(ctx, "s1"); err != nil || len(h) != 4 {
		t.Errorf("History: %d checkpoints, %v", len(h), err)
	}
	// An old-layout frame cut short proves nothing about its length: it
	// is damage, and recover keeps the batches before it.
	dir2 := t.TempDir()
	ids2 := growingSession(t, dir2, 3)
	if err := checkpoint.OldLayout(dir2, "s1"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir2, "s1", "log")
	st, _ := os.Stat(p)
	if err := os.Truncate(p, st.Size()-10); err != nil {
		t.Fatal(err)
	}
	s2, _ := checkpoint.NewFileStore(dir2, checkpoint.Options{})
	if _, err := s2.Latest(ctx, "s1"); !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), "runs past the end") {
		t.Errorf("Latest of a cut old log: %v, want ErrCorrupt", err)
	}
	if c, err := checkpoint.Recover(ctx, s2, "s1"); err != nil || c.ID != ids2[1] {
		t.Errorf("Recover of a cut old log: %v", err)
	}
}
