package checkpoint_test

import (
	"context"
	"slices"
	"testing"

	"github.com/compactkit/compact/checkpoint"
)

// QA-34: Recover after one damaged element deletes checkpoints that are
// intact. Here the damage costs the 2nd checkpoint only: before Recover the
// 1st, 3rd and 4th load and Verify names the 2nd alone (and advises
// `recover`); after Recover the 1st is gone although every element it needs
// is there: it was older than the damaged one, so the rewrite dropped it.
// `recover` should drop the damage, never a checkpoint that loads.
func TestQARecoverKeepsIntactCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ids := compactingFileSession(t, dir)
	flipIn(t, dir, "message 2 of")
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var loadedBefore []string
	for _, id := range ids {
		if _, err := s.Load(ctx, "s1", id); err == nil {
			loadedBefore = append(loadedBefore, id)
		}
	}
	if len(loadedBefore) != 3 {
		t.Fatalf("before Recover %d of 4 checkpoints load; want 3 (the damage costs the 2nd only)", len(loadedBefore))
	}
	if _, err := checkpoint.Recover(ctx, s, "s1"); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	for _, id := range loadedBefore {
		if _, err := s.Load(ctx, "s1", id); err != nil {
			t.Errorf("checkpoint %s loaded before Recover, after it: %v", id, err)
		}
	}
}

// After QA-34's Recover, the history lists every checkpoint kept, the
// one recover dropped left out, and Verify finds nothing wrong.
func TestRecoverKeepsHistoryAcrossTheDroppedCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ids := compactingFileSession(t, dir)
	flipIn(t, dir, "message 2 of")
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := checkpoint.Recover(ctx, s, "s1"); err != nil {
		t.Fatal(err)
	}
	metas, err := s.History(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range metas {
		got = append(got, m.ID)
	}
	want := []string{ids[3], ids[2], ids[0]}
	if !slices.Equal(got, want) {
		t.Errorf("history after recover %v, want %v (the 2nd dropped)", got, want)
	}
	if _, problems, err := checkpoint.Verify(ctx, s, "s1"); err != nil || len(problems) > 0 {
		t.Errorf("verify after recover: %v, %v", problems, err)
	}
	// The session goes on, and a new store reads the same.
	c, _ := s.Latest(ctx, "s1")
	if err := s.Save(ctx, c, ids[3]); err != nil {
		t.Fatal(err)
	}
	s2, _ := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if metas, err := s2.History(ctx, "s1"); err != nil || len(metas) != 4 {
		t.Errorf("a new store's history: %d checkpoints, %v; want 4", len(metas), err)
	}
}
