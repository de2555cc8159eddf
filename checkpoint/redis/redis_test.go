package redis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	ckredis "github.com/compactkit/compact/checkpoint/redis"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/redis/go-redis/v9"
)

// The test binary doubles as the writer process of the two-process test.
const (
	writerModeEnv = "CHECKPOINT_TEST_WRITER"
	writerSpecEnv = "CHECKPOINT_TEST_SPEC"
)

func TestMain(m *testing.M) {
	if os.Getenv(writerModeEnv) != "race" {
		os.Exit(m.Run())
	}
	ctx := context.Background()
	s, err := checkpoint.Open(ctx, os.Getenv(writerSpecEnv), checkpoint.Options{})
	if err == nil {
		err = storetest.RaceWriter(ctx, s, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var prefixes atomic.Int64

// backend is one key prefix on a redis server: an empty store.
type backend struct {
	srv    *storetest.RedisServer
	prefix string
	rdb    *redis.Client
}

func newBackend(t *testing.T, srv *storetest.RedisServer) *backend {
	b := &backend{srv: srv, prefix: fmt.Sprintf("test%d-%d", os.Getpid(), prefixes.Add(1)),
		rdb: redis.NewClient(&redis.Options{Addr: srv.Addr()})}
	t.Cleanup(func() { b.rdb.Close() })
	return b
}

func (b *backend) Open(opts checkpoint.Options) (checkpoint.Store, error) {
	opts.Prefix = b.prefix
	return ckredis.New(redis.NewClient(&redis.Options{Addr: b.srv.Addr()}), opts)
}

func (b *backend) Dump() ([]byte, error) {
	ctx := context.Background()
	var all bytes.Buffer
	iter := b.rdb.Scan(ctx, 0, b.prefix+":*", 100).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		typ, err := b.rdb.Type(ctx, key).Result()
		if err != nil {
			return nil, err
		}
		all.WriteString(key)
		switch typ {
		case "string":
			v, err := b.rdb.Get(ctx, key).Bytes()
			if err != nil {
				return nil, err
			}
			all.Write(v)
		case "list":
			vs, err := b.rdb.LRange(ctx, key, 0, -1).Result()
			if err != nil {
				return nil, err
			}
			all.WriteString(strings.Join(vs, ""))
		case "zset":
			m, err := b.rdb.ZRange(ctx, key, 0, -1).Result()
			if err != nil {
				return nil, err
			}
			all.WriteString(strings.Join(m, " "))
		default:
			return nil, fmt.Errorf("unexpected key %s of type %s", key, typ)
		}
	}
	return all.Bytes(), iter.Err()
}

func (b *backend) damage(session, id string, content bool, mutate func([]byte) []byte) error {
	ctx := context.Background()
	key := b.prefix + ":{" + session + "}:log"
	vs, err := b.rdb.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		return err
	}
	frames := make([][]byte, len(vs))
	for i, v := range vs {
		frames[i] = []byte(v)
	}
	damaged, err := storetest.DamageFrames(frames, id, content, mutate)
	if err != nil {
		return err
	}
	// A rewrite by hand: a new generation, so open stores read it afresh.
	p := b.rdb.TxPipeline()
	p.Del(ctx, key)
	for _, f := range damaged {
		p.RPush(ctx, key, f)
	}
	p.Set(ctx, b.prefix+":{"+session+"}:gen", fmt.Sprint("damaged-", prefixes.Add(1)), 0)
	_, err = p.Exec(ctx)
	return err
}

func (b *backend) Corrupt(session, id string, mutate func([]byte) []byte) error {
	return b.damage(session, id, false, mutate)
}

func (b *backend) CorruptContent(session, id string) error { return b.damage(session, id, true, nil) }

func TestConformance(t *testing.T) {
	srv := storetest.StartRedis(t)
	storetest.Run(t, func(t *testing.T) storetest.Backend { return newBackend(t, srv) })
}

func TestTwoProcessesLoseNothing(t *testing.T) {
	srv := storetest.StartRedis(t)
	spec := "redis://" + srv.Addr() + "/1"
	s, err := checkpoint.Open(context.Background(), spec, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	storetest.TwoProcessesLoseNothing(t, s, func() *exec.Cmd {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), writerModeEnv+"=race", writerSpecEnv+"="+spec)
		cmd.Stderr = os.Stderr
		return cmd
	})
}

// Redis stops in the middle: calls fail with ErrUnavailable naming the
// server; once it is back, retrying the same save succeeds and nothing
// saved before is lost.
func TestServerRestart(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: 1, DialTimeout: time.Second})
	s, err := ckredis.New(rdb, checkpoint.Options{Prefix: "restart"})
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
func TestKeys(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	s, _ := ckredis.New(redis.NewClient(&redis.Options{Addr: srv.Addr()}), checkpoint.Options{Prefix: "ttl", TTL: time.Hour})
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
	if sessionKeys != 2 {
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
	for _, bad := range []string{"redis://[::1", "redis://host:port:x/0"} {
		if _, err := checkpoint.Open(ctx, bad, checkpoint.Options{}); !errors.Is(err, checkpoint.ErrInvalid) {
			t.Errorf("open %q: %v", bad, err)
		}
	}
	srv := storetest.StartRedis(t)
	r, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/2", checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*ckredis.Store); !ok {
		t.Fatalf("open redis:// gave a %T", r)
	}
	r.Close()
	srv.Stop()
	if _, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/2", checkpoint.Options{}); !errors.Is(err, checkpoint.ErrUnavailable) {
		t.Fatalf("open with the server down: %v", err)
	}
}

// TestOpenErrorsMaskThePassword: Open's errors (and those of go-redis and
// net/url it wraps, which quote the whole URL) never show the password.
func TestOpenErrorsMaskThePassword(t *testing.T) {
	ctx := context.Background()
	const pw = "OpenPw55zzQA"
	for _, spec := range []string{
		"redis://user:" + pw + "@127.0.0.1:1/notanumber",
		"redis://user:" + pw + "@[::1:1/0",
		"rediss://:" + pw + "#x@127.0.0.1:1/0",
		"redis://:" + pw + "@127.0.0.1:1/0",
	} {
		_, err := checkpoint.Open(ctx, spec, checkpoint.Options{})
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("open %s: %v", spec, err)
		}
		// A spec that does not parse is named, masked.
		if errors.Is(err, checkpoint.ErrInvalid) && !strings.Contains(err.Error(), "[REDACTED:url-password]") {
			t.Errorf("open %s: %v does not name the store", spec, err)
		}
		if !errors.Is(err, checkpoint.ErrInvalid) && !errors.Is(err, checkpoint.ErrUnavailable) {
			t.Errorf("open %s: %v is neither ErrInvalid nor ErrUnavailable", spec, err)
		}
	}
}

// A session stored in the layout of a version before logs is reported as
// such, never taken for a session without state.
func TestOldLayoutIsNamed(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if err := rdb.Set(ctx, "old:{s1}:head", "a head of the old layout", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s, _ := ckredis.New(redis.NewClient(&redis.Options{Addr: srv.Addr()}), checkpoint.Options{Prefix: "old"})
	defer s.Close()
	_, err := s.Latest(ctx, "s1")
	if !errors.Is(err, checkpoint.ErrInvalid) || !strings.Contains(err.Error(), "layout") {
		t.Fatalf("latest of an old-layout session: %v", err)
	}
}
