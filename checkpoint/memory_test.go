package checkpoint_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/compactkit/compact/checkpoint"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A FileStore keeps where each element lies in a session's log, not its
// bytes: saves of all-new content grow the store's memory by a small
// fraction of what they write (the index: an address and a place per
// element, the records), not by the content, and every checkpoint still
// loads, read back from the log.
func TestFileStoreMemoryBounded(t *testing.T) {
	saves := 120
	if testing.Short() {
		saves = 40
	}
	ctx := context.Background()
	s, err := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := freshCheckpoint(t, "mem", 0)
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	first := c.ID
	size := fullSize(t, c)
	before := heapInUse()
	for i := 1; i <= saves; i++ {
		next := freshCheckpoint(t, "mem", i)
		if err := s.Save(ctx, next, c.ID); err != nil {
			t.Fatal(err)
		}
		c = next
	}
	grown := int64(heapInUse()) - int64(before)
	perSave := float64(grown) / float64(saves)
	t.Logf("%d saves of %d bytes of new content: the heap grew %.1f KB per save (%.0f%% of a save's content)",
		saves, size, perSave/1024, 100*perSave/float64(size))
	// The content itself would be more than 100% (its bytes, their frames).
	if perSave > float64(size)/3 {
		t.Fatalf("the heap grew %.0f bytes per save of %d bytes: the store holds the content", perSave, size)
	}
	runtime.KeepAlive(s)
	// Every checkpoint still loads: the first, read back from the log, and
	// the latest; a store opened afresh reads them too.
	for _, id := range []string{first, c.ID} {
		got, err := s.Load(ctx, "mem", id)
		if err != nil {
			t.Fatal(err)
		}
		if id == c.ID && got.Hash != c.Hash {
			t.Fatalf("latest loads with hash %s, saved %s", got.Hash, c.Hash)
		}
	}
	s2, _ := checkpoint.NewFileStore(s.Dir(), checkpoint.Options{})
	got, err := s2.Latest(ctx, "mem")
	if err != nil || got.Hash != c.Hash {
		t.Fatalf("a new store loads %v, %v; want hash %s", got, err, c.Hash)
	}
}
