package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// ErrResultNotJSON: the fn given to Cache.Do returned a result that is not
// JSON. Its effect took place all the same, so the call is recorded as done
// (its bytes kept as a JSON string) and never runs again.
var ErrResultNotJSON = errors.New("tool result is not JSON")

// Cache runs tool calls at most once per idempotency key (see Key) and
// remembers their results, so a resumed run reuses what an earlier run did
// instead of repeating its side effects. The zero value is an empty cache;
// NewCache starts from a checkpoint's ToolCache. It is safe for concurrent
// use: calls of Do with the same key wait for the one that runs; if that
// one panics, the key is released and the next call runs fn again.
type Cache struct {
	// Persist, when set, is called with each new result before Do returns
	// it, typically to save a checkpoint holding Results, so the result is
	// durable before anything acts on it. If Persist fails, Do returns its
	// error; the result stays cached in memory, so the call is still not
	// repeated by this process.
	Persist func(ctx context.Context, key string, result json.RawMessage) error

	mu       sync.Mutex
	results  map[string]json.RawMessage
	inflight map[string]*cacheCall
}

type cacheCall struct {
	done   chan struct{}
	result json.RawMessage
	err    error
}

// NewCache returns a cache holding a copy of results (a checkpoint's
// ToolCache).
func NewCache(results map[string]json.RawMessage) *Cache {
	c := &Cache{results: make(map[string]json.RawMessage, len(results))}
	for k, v := range results {
		c.results[k] = v
	}
	return c
}

// Do returns the result stored for key, or runs fn, stores its result and
// returns it. A failed fn (one that returns an error) stores nothing, so the
// call runs again next time: fn must return an error only when its effect
// did not take place. A result that is not valid JSON is stored as a JSON
// string holding its bytes, so the call is not repeated, and Do returns
// that string with an error wrapping ErrResultNotJSON; later calls return
// the string without error.
func (c *Cache) Do(ctx context.Context, key string, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	if key == "" {
		return nil, fmt.Errorf("cache: empty idempotency key")
	}
	for {
		c.mu.Lock()
		if r, ok := c.results[key]; ok {
			c.mu.Unlock()
			return r, nil
		}
		call, running := c.inflight[key]
		if !running {
			break // with the lock held
		}
		c.mu.Unlock()
		select {
		case <-call.done:
			if call.err == nil {
				return call.result, nil
			}
			// The runner failed; its error is its own. Try again ourselves.
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	call := &cacheCall{done: make(chan struct{})}
	if c.inflight == nil {
		c.inflight = map[string]*cacheCall{}
	}
	c.inflight[key] = call
	c.mu.Unlock()

	call.result, call.err = c.run(ctx, key, call, fn)
	var notJSON error
	if call.err == nil && !json.Valid(call.result) {
		call.result, _ = json.Marshal(string(call.result)) // a string always encodes
		notJSON = fmt.Errorf("cache: result of %s: %w; kept as a JSON string, so the call is not repeated", key, ErrResultNotJSON)
	}
	c.mu.Lock()
	delete(c.inflight, key)
	if call.err == nil {
		if c.results == nil {
			c.results = map[string]json.RawMessage{}
		}
		c.results[key] = call.result
	}
	c.mu.Unlock()
	close(call.done)
	if call.err != nil {
		return nil, call.err
	}
	if c.Persist != nil {
		if err := c.Persist(ctx, key, call.result); err != nil {
			return call.result, errors.Join(fmt.Errorf("cache: persist %s: %w", key, err), notJSON)
		}
	}
	return call.result, notJSON
}

// errToolPanicked marks a call whose fn panicked: its waiters run fn
// themselves.
var errToolPanicked = errors.New("tool call panicked")

// run calls fn. If fn panics (or calls runtime.Goexit) it releases key
// first, storing nothing, so the calls waiting for it and the next Do run
// fn again (a loop that recovers from a tool's panic retries it); the panic
// goes on.
func (c *Cache) run(ctx context.Context, key string, call *cacheCall, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		call.err = fmt.Errorf("cache: %s: %w", key, errToolPanicked)
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		close(call.done)
	}()
	r, err := fn(ctx)
	returned = true
	return r, err
}

// Results returns a copy of every stored result, to put in a checkpoint's
// ToolCache.
func (c *Cache) Results() map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]json.RawMessage, len(c.results))
	for k, v := range c.results {
		out[k] = v
	}
	return out
}
