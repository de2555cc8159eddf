package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

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
