package syncbuffer

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once (run with -race): every write is there,
// whole, once they are done.
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Fatalf("%d lines, want 800", got)
	}
}
