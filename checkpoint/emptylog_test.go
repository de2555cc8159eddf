package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// TestEmptyLogIsNoSession (QA-8.1): an empty log (a first save that
// crashed after creating it) holds no checkpoint: the session is neither
// listed nor a problem for Verify, Recover says it was never saved, and a
// first save over it succeeds.
func TestEmptyLogIsNoSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeSave := func(c *checkpoint.Checkpoint, parent string) {
		t.Helper()
		if err := s.Save(ctx, c, parent); err != nil {
			t.Fatal(err)
		}
	}
	storeSave(storetest.Sample("s1", 0), "")
	if err := os.MkdirAll(filepath.Join(dir, "s2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s2", "log"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := s.List(ctx, checkpoint.Filter{})
	if err != nil || len(infos) != 1 || infos[0].Session != "s1" {
		t.Errorf("List: %v %+v", err, infos)
	}
	if n, probs, err := checkpoint.Verify(ctx, s); err != nil || len(probs) != 0 || n != 1 {
		t.Errorf("Verify: %d checked, %v %v", n, probs, err)
	}
	if _, err := checkpoint.Recover(ctx, s, "s2"); !errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, checkpoint.ErrCorrupt) {
		t.Errorf("Recover of the empty log: %v, want ErrNotFound", err)
	}
	if _, err := s.Latest(ctx, "s2"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Latest of the empty log: %v", err)
	}
	storeSave(storetest.Sample("s2", 0), "")
	if infos, _ := s.List(ctx, checkpoint.Filter{}); len(infos) != 2 {
		t.Errorf("after a first save over the empty log: %+v", infos)
	}
}
