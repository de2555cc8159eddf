package checkpoint_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/redis/go-redis/v9"
)

// fileBackend is a FileStore directory for the conformance suite.
type fileBackend struct{ dir string }

func newFileBackend(t *testing.T) *fileBackend { return &fileBackend{dir: t.TempDir()} }

func (b *fileBackend) Open(opts checkpoint.Options) (checkpoint.Store, error) {
	return checkpoint.NewFileStore(b.dir, opts)
}

func (b *fileBackend) Dump() ([]byte, error) {
	var all bytes.Buffer
	err := filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		all.Write(data)
		return err
	})
	return all.Bytes(), err
}

func (b *fileBackend) Corrupt(session, id string, mutate func([]byte) []byte) error {
	path := filepath.Join(b.dir, session, id+".ckpt")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, mutate(data), 0o600)
}

func (b *fileBackend) Remove(session, id string) error {
	return os.Remove(filepath.Join(b.dir, session, id+".ckpt"))
}

// redisServer is a redis-server the tests start on a free loopback port,
// in a temporary directory, with an append-only file so a restart keeps
// its data.
type redisServer struct {
	t    testing.TB
	dir  string
	port int
	cmd  *exec.Cmd
}

// requireRedis is the environment variable that turns a missing
// redis-server from a skip into a failure (CI sets it).
const requireRedis = "COMPACT_REQUIRE_REDIS"

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv(requireRedis) != "" {
			t.Fatalf("redis-server is not on PATH and %s is set", requireRedis)
		}
		t.Skipf("redis-server is not on PATH; install it (apt-get install redis-server) or set %s=1 to make this a failure", requireRedis)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &redisServer{t: t, dir: t.TempDir(), port: port}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

func (r *redisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start starts the server and waits until it answers.
func (r *redisServer) Start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server",
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
		"--daemonize", "no", "--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server on %s did not answer: %v\n%s", r.Addr(), err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the server down (SIGTERM: it writes its append-only file).
func (r *redisServer) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	r.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}

var prefixes atomic.Int64

// redisBackend is one key prefix on a redis server: an empty store.
type redisBackend struct {
	srv    *redisServer
	prefix string
	rdb    *redis.Client
}

func newRedisBackend(t *testing.T, srv *redisServer) *redisBackend {
	b := &redisBackend{srv: srv, prefix: fmt.Sprintf("test%d-%d", os.Getpid(), prefixes.Add(1)),
		rdb: redis.NewClient(&redis.Options{Addr: srv.Addr()})}
	t.Cleanup(func() { b.rdb.Close() })
	return b
}

func (b *redisBackend) Open(opts checkpoint.Options) (checkpoint.Store, error) {
	opts.Prefix = b.prefix
	return checkpoint.NewRedisStore(redis.NewClient(&redis.Options{Addr: b.srv.Addr()}), opts)
}

func (b *redisBackend) Dump() ([]byte, error) {
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
		case "hash":
			m, err := b.rdb.HGetAll(ctx, key).Result()
			if err != nil {
				return nil, err
			}
			for k, v := range m {
				all.WriteString(k + v)
			}
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

func (b *redisBackend) Corrupt(session, id string, mutate func([]byte) []byte) error {
	ctx := context.Background()
	key := b.prefix + ":{" + session + "}:ckpt"
	v, err := b.rdb.HGet(ctx, key, id).Bytes()
	if err != nil {
		return err
	}
	return b.rdb.HSet(ctx, key, id, mutate(v)).Err()
}

func (b *redisBackend) Remove(session, id string) error {
	ctx := context.Background()
	p := b.prefix + ":{" + session + "}:"
	if err := b.rdb.HDel(ctx, p+"ckpt", id).Err(); err != nil {
		return err
	}
	return b.rdb.HDel(ctx, p+"meta", id).Err()
}
