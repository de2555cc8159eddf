package serve

import (
	"context"
	"testing"
	"time"
)

// A store operation that answers at once is never reported as timed out:
// the goroutine that runs it cancels its context right after answering,
// which once made bounded pick the deadline at random (a restarted proxy
// then lost its stored prefix now and then).
func TestBoundedKeepsAnAnswerThatArrived(t *testing.T) {
	s := &Server{cfg: Config{StoreTimeout: time.Minute}}
	for i := range 20000 {
		if err := s.bounded(context.Background(), func(context.Context) error { return nil }); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

// A store operation that does not answer in time is reported as such.
func TestBoundedTimesOut(t *testing.T) {
	s := &Server{cfg: Config{StoreTimeout: 20 * time.Millisecond}}
	release := make(chan struct{})
	defer close(release)
	err := s.bounded(context.Background(), func(context.Context) error { <-release; return nil })
	if err == nil {
		t.Fatal("a stalled store operation was not bounded")
	}
}
