package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/redis/go-redis/v9"
)

// Redis stops in the middle: calls fail with ErrUnavailable naming the
// server; once it is back, retrying the same save succeeds and nothing
// saved before is lost.
func TestRedisStoreServerRestart(t *testing.T) {
	srv := startRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: 1, DialTimeout: time.Second})
	s, err := checkpoint.NewRedisStore(rdb, checkpoint.Options{Prefix: "restart"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storetest.Sample("restart", 0)
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	first := c.ID

	srv.Stop()
	c.Task = "saved after the restart"
	err = s.Save(ctx, c, first)
	if !errors.Is(err, checkpoint.ErrUnavailable) || !strings.Contains(err.Error(), srv.Addr()) {
		t.Fatalf("save with the server down: %v; want ErrUnavailable naming %s", err, srv.Addr())
	}
	if c.ID != first {
		t.Fatal("a failed save changed the checkpoint")
	}
	if _, err := s.Latest(ctx, "restart"); !errors.Is(err, checkpoint.ErrUnavailable) {
		t.Fatalf("latest with the server down: %v", err)
	}
	if _, err := s.List(ctx, checkpoint.Filter{}); !errors.Is(err, checkpoint.ErrUnavailable) {
		t.Fatalf("list with the server down: %v", err)
	}
	if _, _, err := checkpoint.Verify(ctx, s, "restart"); !errors.Is(err, checkpoint.ErrUnavailable) {
		t.Fatalf("verify with the server down: %v", err)
	}
	t.Logf("with the server down: %v", err)

	srv.Start()
	if err := s.Save(ctx, c, first); err != nil {
		t.Fatalf("retry after the restart: %v", err)
	}
	got, err := s.Latest(ctx, "restart")
	if err != nil || got.Seq != 2 || got.Task != "saved after the restart" || got.ParentID != first {
		t.Fatalf("after the restart: %+v %v", got, err)
	}
}

// Every key of a session carries the TTL, refreshed by each save, and all
// of them share the session's hash tag.
func TestRedisStoreKeys(t *testing.T) {
	srv := startRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	s, _ := checkpoint.NewRedisStore(redis.NewClient(&redis.Options{Addr: srv.Addr()}), checkpoint.Options{Prefix: "ttl", TTL: time.Hour})
	defer s.Close()
	c := storetest.Sample("sess-1", 0)
	if err := s.Save(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "ttl:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sessionKeys := 0
	for _, k := range keys {
		if k == "ttl:sessions" {
			continue
		}
		sessionKeys++
		if !strings.HasPrefix(k, "ttl:{sess-1}:") {
			t.Errorf("key %s lacks the session's hash tag", k)
		}
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
			t.Errorf("key %s: ttl %v %v", k, ttl, err)
		}
	}
	if sessionKeys != 3 {
		t.Fatalf("session keys %v", keys)
	}
	// An expired session disappears from List and its index entry goes.
	for _, k := range keys {
		if k != "ttl:sessions" {
			rdb.Del(ctx, k)
		}
	}
	if all, err := s.List(ctx, checkpoint.Filter{}); err != nil || len(all) != 0 {
		t.Fatalf("list after expiry: %+v %v", all, err)
	}
	if n, _ := rdb.ZCard(ctx, "ttl:sessions").Result(); n != 0 {
		t.Fatalf("index keeps %d expired sessions", n)
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir() + "/store"
	s, err := checkpoint.Open(ctx, dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fs, ok := s.(*checkpoint.FileStore); !ok || fs.Dir() != dir {
		t.Fatalf("open %s: %T", dir, s)
	}
	// Reading a store never saved to finds nothing and creates nothing.
	if all, err := s.List(ctx, checkpoint.Filter{}); err != nil || len(all) != 0 {
		t.Fatalf("list of a new store: %v %v", all, err)
	}
	if _, err := s.Prune(ctx, checkpoint.PruneOptions{KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("reading created the store directory: %v", err)
	}
	if err := s.Save(ctx, storetest.Sample("first", 0), ""); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, dir + "/first"} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", p, st.Mode(), err)
		}
	}
	files, _ := os.ReadDir(dir + "/first")
	for _, f := range files {
		if st, _ := f.Info(); st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v", f.Name(), st.Mode())
		}
	}
	for _, bad := range []string{"", "http://example.com/x", "redis://[::1"} {
		if _, err := checkpoint.Open(ctx, bad, checkpoint.Options{}); !errors.Is(err, checkpoint.ErrInvalid) {
			t.Errorf("open %q: %v", bad, err)
		}
	}
	if _, err := exec.LookPath("redis-server"); err == nil || os.Getenv(requireRedis) != "" {
		srv := startRedis(t)
		r, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/2", checkpoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		srv.Stop()
		if _, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/2", checkpoint.Options{}); !errors.Is(err, checkpoint.ErrUnavailable) {
			t.Fatalf("open with the server down: %v", err)
		}
	}
}
