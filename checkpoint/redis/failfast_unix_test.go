//go:build unix

package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// TestStoreFailsFast (QA-10, store part): a store opened from a spec gives
// up at the caller's deadline when the server stalls (SIGSTOP), instead of
// waiting out go-redis's read timeout and retries, and a refused
// connection fails without a second of dial retries.
func TestStoreFailsFast(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	spec := "redis://" + srv.Addr() + "/0"
	s, err := checkpoint.Open(ctx, spec, checkpoint.Options{Prefix: "failfast"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storetest.Sample("ff", 0)
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	other, err := checkpoint.Open(ctx, spec, checkpoint.Options{Prefix: "failfast"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	srv.Pause()
	defer srv.Continue()
	for _, call := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"Latest", func(ctx context.Context) error { _, err := other.Latest(ctx, "ff"); return err }},
		{"Save", func(ctx context.Context) error { return s.Save(ctx, storetest.Sample("ff2", 0), "") }},
	} {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		start := time.Now()
		err := call.fn(cctx)
		took := time.Since(start)
		cancel()
		if err == nil || took > 1500*time.Millisecond {
			t.Errorf("%s on a stalled server with a 300 ms deadline: %v after %v", call.name, err, took)
		}
		t.Logf("%s on a stalled server: %v after %v", call.name, err, took)
	}
	srv.Continue()
	if _, err := other.Latest(ctx, "ff"); err != nil {
		t.Errorf("after the server went on: %v", err)
	}

	srv.Stop()
	start := time.Now()
	_, err = checkpoint.Open(ctx, spec, checkpoint.Options{})
	took := time.Since(start)
	if !errors.Is(err, checkpoint.ErrUnavailable) || took > time.Second {
		t.Errorf("Open on a refused port: %v after %v", err, took)
	}
	t.Logf("Open on a refused port: %v after %v", err, took)
}
