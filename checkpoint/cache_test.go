package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

func TestCacheRunsOnce(t *testing.T) {
	ctx := context.Background()
	var c checkpoint.Cache // the zero value works
	var runs atomic.Int32
	fn := func(context.Context) (json.RawMessage, error) {
		runs.Add(1)
		return json.RawMessage(`{"receipt":"r-1"}`), nil
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Do(ctx, "pay:1", fn)
			if err != nil || string(r) != `{"receipt":"r-1"}` {
				t.Errorf("Do: %s, %v", r, err)
			}
		}()
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("fn ran %d times for one key", runs.Load())
	}
	if _, err := c.Do(ctx, "", fn); err == nil {
		t.Fatal("empty key accepted")
	}
}

func TestCacheFailureIsNotStored(t *testing.T) {
	ctx := context.Background()
	c := checkpoint.NewCache(nil)
	boom := errors.New("boom")
	if _, err := c.Do(ctx, "k", func(context.Context) (json.RawMessage, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	r, err := c.Do(ctx, "k", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`1`), nil })
	if err != nil || string(r) != "1" || len(c.Results()) != 1 {
		t.Fatalf("after failures: %s %v %v", r, err, c.Results())
	}
}

// An fn that performs its effect and returns bytes that are not JSON: the
// call is recorded (persisted) as done and never runs again (issue 18.5:
// before, the result was dropped and the effect ran again on the retry).
func TestCacheResultNotJSON(t *testing.T) {
	ctx := context.Background()
	var persisted map[string]json.RawMessage
	c := checkpoint.NewCache(nil)
	c.Persist = func(_ context.Context, key string, v json.RawMessage) error {
		persisted = map[string]json.RawMessage{key: v}
		return nil
	}
	effects := 0
	pay := func(context.Context) (json.RawMessage, error) {
		effects++
		return json.RawMessage(`receipt 7 (not json)`), nil
	}
	r, err := c.Do(ctx, "pay:1", pay)
	if !errors.Is(err, checkpoint.ErrResultNotJSON) || string(r) != `"receipt 7 (not json)"` {
		t.Fatalf("first call: %s %v", r, err)
	}
	if string(persisted["pay:1"]) != string(r) {
		t.Fatalf("persisted %s", persisted)
	}
	r2, err := c.Do(ctx, "pay:1", pay)
	if err != nil || string(r2) != string(r) || effects != 1 {
		t.Fatalf("retry: %s %v, %d effects", r2, err, effects)
	}
	// A resumed run (a new cache from the checkpoint) does not repeat it.
	again := checkpoint.NewCache(persisted)
	if _, err := again.Do(ctx, "pay:1", pay); err != nil || effects != 1 {
		t.Fatalf("resumed: %v, %d effects", err, effects)
	}
}

// A resumed run reuses the results its predecessor persisted, so the side
// effect is not repeated.
func TestCacheSurvivesResume(t *testing.T) {
	ctx := context.Background()
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	cp := storetest.Sample("pay", 0)
	cp.ToolCache = nil
	if err := s.Save(ctx, cp, ""); err != nil {
		t.Fatal(err)
	}
	charges := 0
	charge := func(context.Context) (json.RawMessage, error) {
		charges++
		return json.RawMessage(`{"charge":"ch_1"}`), nil
	}
	key, _ := checkpoint.Key("charge", json.RawMessage(`{"amount":100,"to":"acct"}`))

	run := func() {
		r, err := checkpoint.Resume(ctx, s, "pay")
		if err != nil {
			t.Fatal(err)
		}
		c := r.Checkpoint
		cache := checkpoint.NewCache(c.ToolCache)
		cache.Persist = func(ctx context.Context, key string, result json.RawMessage) error {
			c.ToolCache = cache.Results()
			c.SideEffects = append(c.SideEffects, checkpoint.SideEffect{Tool: "charge", Key: key, Receipt: result})
			return s.Save(ctx, c, c.ID)
		}
		// Same call, args spelled differently.
		k2, _ := checkpoint.Key("charge", json.RawMessage(`{"to":"acct","amount":100.0}`))
		if _, err := cache.Do(ctx, k2, charge); err != nil {
			t.Fatal(err)
		}
	}
	run()
	run() // the "crashed and resumed" run
	if charges != 1 {
		t.Fatalf("charged %d times", charges)
	}
	latest, _ := s.Latest(ctx, "pay")
	if string(latest.ToolCache[key]) != `{"charge":"ch_1"}` || len(latest.SideEffects) != 2 {
		t.Fatalf("persisted cache %v, side effects %v", latest.ToolCache, latest.SideEffects)
	}
}

// TestCacheKeyUsableAfterPanic (QA-19): a tool function that panics leaves
// its key free: the panic reaches the caller, a call that was waiting for
// it runs fn itself, the next Do runs fn again and stores its result, and
// nothing of the panicked call is stored.
func TestCacheKeyUsableAfterPanic(t *testing.T) {
	c := checkpoint.NewCache(nil)
	started, release := make(chan struct{}), make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		c.Do(context.Background(), "k", func(context.Context) (json.RawMessage, error) {
			close(started)
			<-release
			panic("tool crashed")
		})
	}()
	<-started
	var runs atomic.Int32
	waiter := make(chan error, 1)
	go func() {
		r, err := c.Do(context.Background(), "k", func(context.Context) (json.RawMessage, error) {
			runs.Add(1)
			return json.RawMessage(`"w"`), nil
		})
		if err == nil && string(r) != `"w"` {
			err = errors.New("waiter got " + string(r))
		}
		waiter <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the waiter wait
	close(release)
	if p := <-panicked; p != "tool crashed" {
		t.Fatalf("the panic did not reach the caller: %v", p)
	}
	select {
	case err := <-waiter:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Do waiting for the call that panicked still waits (deadlock)")
	}
	if runs.Load() != 1 {
		t.Errorf("the waiter's fn ran %d times, want 1", runs.Load())
	}
	// The result is stored now: later calls (10 at once) run nothing.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Do(context.Background(), "k", func(context.Context) (json.RawMessage, error) {
				runs.Add(1)
				return json.RawMessage(`"again"`), nil
			})
			if err != nil || string(r) != `"w"` {
				t.Errorf("Do after the retry: %s %v", r, err)
			}
		}()
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("fn ran %d times in all, want 1", runs.Load())
	}

	// A panic with nobody waiting: the next Do (no deadline) runs fn.
	c2 := checkpoint.NewCache(nil)
	func() {
		defer func() { recover() }()
		c2.Do(context.Background(), "k", func(context.Context) (json.RawMessage, error) { panic("tool crashed") })
	}()
	if len(c2.Results()) != 0 {
		t.Errorf("a panicked call stored %v", c2.Results())
	}
	done := make(chan error, 1)
	go func() {
		_, err := c2.Do(context.Background(), "k", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`1`), nil })
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || string(c2.Results()["k"]) != "1" {
			t.Errorf("second Do: %v, stored %v", err, c2.Results())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Do of a key whose first call panicked still waits (deadlock)")
	}
}
