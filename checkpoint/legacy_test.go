package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// writeOldChain writes n checkpoints of session as FileStores wrote them
// before logs (a file each and a HEAD), and returns them oldest first.
func writeOldChain(t *testing.T, dir string, key []byte, session string, n int) []*checkpoint.Checkpoint {
	t.Helper()
	var out []*checkpoint.Checkpoint
	at := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	parent := ""
	for i := 1; i <= n; i++ {
		c := storetest.Sample(session, 10*i)
		c.ID, c.ParentID, c.Seq = checkpoint.NewIDForTest(int64(i)), parent, int64(i)
		c.CreatedAt, c.UpdatedAt = at, at.Add(time.Duration(i)*time.Minute)
		c.Task = "old task " + c.ID
		if err := checkpoint.WriteLegacy(dir, key, c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
		parent = c.ID
	}
	return out
}

// A store written before logs loads as it was, plain or encrypted, and
// goes on from its head: the history runs from the log into the files.
func TestFileStoreReadsOldLayout(t *testing.T) {
	for name, key := range map[string][]byte{"plain": nil, "aes-gcm": bytes.Repeat([]byte{3}, 32)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			old := writeOldChain(t, dir, key, "old", 3)
			s, err := checkpoint.NewFileStore(dir, checkpoint.Options{Key: key})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Latest(ctx, "old")
			if err != nil || got.ID != old[2].ID || got.Hash != old[2].Hash || got.Task != old[2].Task || len(got.Transcript.Messages) != 3 {
				t.Fatalf("latest of the old layout: %v %+v", err, got)
			}
			if c, err := s.Load(ctx, "old", old[0].ID); err != nil || c.Task != old[0].Task {
				t.Fatalf("load of the oldest: %v", err)
			}
			if infos, err := s.List(ctx, checkpoint.Filter{}); err != nil || len(infos) != 1 || infos[0].Latest != old[2].ID {
				t.Fatalf("list: %v %+v", err, infos)
			}
			got.Task = "the first save in a log"
			if err := s.Save(ctx, got, old[2].ID); err != nil {
				t.Fatal(err)
			}
			if got.Seq != 4 || got.ParentID != old[2].ID || !got.CreatedAt.Equal(old[2].CreatedAt) {
				t.Fatalf("save over the old head: seq %d parent %s created %v", got.Seq, got.ParentID, got.CreatedAt)
			}
			other, _ := checkpoint.NewFileStore(dir, checkpoint.Options{Key: key})
			if c, err := other.Latest(ctx, "old"); err != nil || c.ID != got.ID {
				t.Fatalf("another handle after the save: %v", err)
			}
			h, err := other.History(ctx, "old")
			if err != nil || len(h) != 4 || h[0].ID != got.ID || h[3].ID != old[0].ID {
				t.Fatalf("history across the log and the files: %v %+v", err, h)
			}
			if n, problems, err := checkpoint.Verify(ctx, other); err != nil || n != 4 || len(problems) > 0 {
				t.Fatalf("verify: %d %v %+v", n, err, problems)
			}
			res, err := other.Prune(ctx, checkpoint.PruneOptions{KeepLast: 2})
			if err != nil || res.Checkpoints != 2 {
				t.Fatalf("prune: %+v %v", res, err)
			}
			if h, err := other.History(ctx, "old"); err != nil || len(h) != 2 || h[1].ID != old[2].ID {
				t.Fatalf("history after prune: %v %+v", err, h)
			}
		})
	}
}

// Issue 14.1: a session whose HEAD is gone is a problem verify reports;
// prune deletes none of its checkpoints (it cannot place them in a chain);
// recover rebuilds the head from the newest checkpoint that verifies.
// Before, prune deleted all three ("pruned 3 checkpoints") and verify said
// "checked 0 checkpoints: 0 problems".
func TestSessionWithoutHead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := writeOldChain(t, dir, nil, "headless", 3)
	if err := os.Remove(filepath.Join(dir, "headless", "HEAD")); err != nil {
		t.Fatal(err)
	}
	s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	_, problems, err := checkpoint.Verify(ctx, s)
	if err != nil || len(problems) != 1 || problems[0].Session != "headless" || !errors.Is(problems[0].Err, checkpoint.ErrCorrupt) {
		t.Fatalf("verify: %v %+v", err, problems)
	}
	res, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1})
	if err == nil || !strings.Contains(err.Error(), "headless") || res.Checkpoints != 0 {
		t.Fatalf("prune: %+v %v", res, err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "headless", "*.ckpt")); len(files) != 3 {
		t.Fatalf("prune left %d of 3 checkpoint files", len(files))
	}
	c, err := checkpoint.Recover(ctx, s, "headless")
	if err != nil || c.ID != old[2].ID {
		t.Fatalf("recover: %v %v", c, err)
	}
	if n, problems, err := checkpoint.Verify(ctx, s); err != nil || n != 3 || len(problems) > 0 {
		t.Fatalf("verify after recover: %d %v %+v", n, err, problems)
	}
}

// A crash in the middle of a save leaves a torn batch at the end of the
// log, at any byte: the last committed checkpoint loads, and the next save
// cuts the torn bytes off.
func TestFileStoreTornTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	c := storetest.Sample("torn", 0)
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	committed := c.ID
	path := filepath.Join(dir, "torn", "log")
	before, _ := os.ReadFile(path)
	c.Task = "a save that is cut short"
	c.Transcript.Messages[2].Parts[0].Text = "new content for the torn batch"
	if err := s.Save(ctx, c, committed); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	for cut := len(before); cut < len(after); cut += max(1, (len(after)-len(before))/97) {
		if err := os.WriteFile(path, after[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		fresh, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
		got, err := fresh.Latest(ctx, "torn")
		if err != nil || got.ID != committed {
			t.Fatalf("cut at %d of %d: latest %v %v, want %s", cut, len(after), got, err, committed)
		}
		got.Task = "saved over the torn tail"
		if err := fresh.Save(ctx, got, committed); err != nil {
			t.Fatalf("cut at %d: save over the torn tail: %v", cut, err)
		}
		if back, err := fresh.Latest(ctx, "torn"); err != nil || back.ID != got.ID {
			t.Fatalf("cut at %d: after the save: %v %v", cut, back, err)
		}
	}
}
