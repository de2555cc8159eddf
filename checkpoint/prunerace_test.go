package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

// QA-27 (regression): a prune beside a running agent breaks the agent's saves. The
// agent's loop saves with its own last checkpoint as parent (the head: prune
// keeps the newest), yet after another handle's Prune rewrote the log the
// save fails with ErrConflict ("another writer saved while this one was
// saving"), which a loop takes for a second writer on its session. And the
// prune itself fails with ErrConflict when a save lands during it, so a
// cron'd `compact checkpoint prune --keep N` exits 1 now and then.
func TestPruneBesideASaver(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	saves, saveConflicts := 0, 0
	var firstSaveErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		parent := ""
		tr := compact.Transcript{}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tr.Messages = append(tr.Messages, compact.UserMessage(fmt.Sprintf("step %d", i)))
			c := &checkpoint.Checkpoint{Session: "s1", Task: "qa", Status: checkpoint.StatusRunning,
				Transcript: &compact.Transcript{Messages: append([]compact.Message(nil), tr.Messages...)}}
			saves++
			if err := s.Save(ctx, c, parent); err != nil {
				saveConflicts++
				if firstSaveErr == nil {
					firstSaveErr = err
				}
				// As a loop would: reload the head and go on from it.
				if h, err := s.Latest(ctx, "s1"); err == nil {
					parent = h.ID
				}
				continue
			}
			parent = c.ID
		}
	}()
	pruneConflicts, runs := 0, 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); runs++ {
		if _, err := p.Prune(ctx, checkpoint.PruneOptions{KeepLast: 2}); errors.Is(err, checkpoint.ErrConflict) {
			pruneConflicts++
		} else if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("prune: %v", err)
		}
	}
	close(stop)
	wg.Wait()
	if saveConflicts > 0 {
		t.Errorf("%d of %d saves, each with the head as parent, failed beside a pruner (no other writer): first: %v",
			saveConflicts, saves, firstSaveErr)
	}
	if pruneConflicts > 0 {
		t.Errorf("%d of %d prunes beside a saving loop failed with ErrConflict", pruneConflicts, runs)
	}
}
