// Package redis is the checkpoint store on Redis, for many workers on many
// machines. It is the one package of the module that imports a Redis
// client: link it in with
//
//	import _ "github.com/compactkit/compact/checkpoint/redis"
//
// and checkpoint.Open opens "redis://[user:pass@]HOST:PORT/DB" (rediss://
// for TLS) specs, or call New with a client of your own.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/internal/safeurl"
	"github.com/redis/go-redis/v9"
)

func init() {
	checkpoint.Register("redis", Open)
	checkpoint.Register("rediss", Open)
}

// Store is a checkpoint.Store in Redis. It uses core commands only, so it
// runs on a stock redis-server. A session's log (see checkpoint.LogStore)
// is a list, one frame per element, and its keys share the hash tag
// {SESSION}, so in a cluster one session lives in one slot and its
// transactions stay atomic:
//
//	PREFIX:{SESSION}:log    list: the session's frames (elements, records)
//	PREFIX:{SESSION}:gen    string: the log's generation (new on each rewrite)
//	PREFIX:sessions         sorted set: session → last update (ms), for List
//
// A save WATCHes the log, checks that it still ends where the saver read
// it, and appends its frames in one MULTI/EXEC, refreshing the TTL of the
// session's keys; so a save writes only the elements that are new. The
// session index is updated after the transaction; it carries no TTL, and
// entries whose session expired are dropped when they are met.
type Store struct {
	*checkpoint.LogStore
	log *redisLog
}

// Open is the checkpoint.Opener of redis:// and rediss:// specs: it
// connects and pings, so an unreachable server is reported at once. Its
// client honours each call's context deadline and does not retry a refused
// dial with backoff. Its errors never show the spec's password.
func Open(ctx context.Context, spec string, opts checkpoint.Options) (checkpoint.Store, error) {
	ro, err := redis.ParseURL(spec)
	if err != nil {
		// go-redis and net/url quote the whole URL in their errors.
		return nil, fmt.Errorf("%w: store %q: %w", checkpoint.ErrInvalid, safeurl.String(spec), safeurl.Error(err, spec))
	}
	// A call gives up at its context's deadline (go-redis otherwise waits
	// out its own read timeout and retries), and a refused connection is
	// dialled twice, not five times with backoff: a store on the request
	// path of a proxy must fail fast.
	ro.ContextTimeoutEnabled = true
	ro.DialerRetries = 1
	s, err := New(redis.NewClient(ro), opts)
	if err != nil {
		return nil, err
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, safeurl.Error(err, spec)
	}
	if err := s.CheckEviction(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// CheckEviction returns an error wrapping checkpoint.ErrInvalid when the
// server may evict the store's keys: a maxmemory-policy other than
// noeviction (a Redis run as a cache). The keys carry a TTL, so volatile-*
// policies evict them as allkeys-* do, and an evicted log is a session
// whose checkpoints vanished without a word. A server that does not say
// (INFO refused) passes. Open calls it; a store made with New may.
func (s *Store) CheckEviction(ctx context.Context) error {
	info, err := s.log.rdb.Info(ctx, "memory").Result()
	if err != nil {
		return nil
	}
	policy := ""
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:"); ok {
			policy = v
		}
	}
	if policy == "" || policy == "noeviction" {
		return nil
	}
	return fmt.Errorf("%w: the Redis at %s evicts keys when it is full (maxmemory-policy %s): checkpoints would vanish without a word; "+
		"set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, or in redis.conf), or use a Redis that is not run as a cache",
		checkpoint.ErrInvalid, s.log.addr(), policy)
}

// New returns a store on rdb (a client, cluster client or ring from
// go-redis). Close closes rdb.
func New(rdb redis.UniversalClient, opts checkpoint.Options) (*Store, error) {
	if opts.Prefix == "" {
		opts.Prefix = "compact:ckpt"
	}
	if opts.TTL <= 0 {
		opts.TTL = 30 * 24 * time.Hour
	}
	l := &redisLog{rdb: rdb, prefix: opts.Prefix, ttl: opts.TTL}
	ls, err := checkpoint.NewLogStore(l, opts)
	if err != nil {
		return nil, err
	}
	return &Store{LogStore: ls, log: l}, nil
}

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.log.wrap(s.log.rdb.Ping(ctx).Err(), "ping")
}

// redisLog is the checkpoint.LogBackend on Redis. A position's N counts
// frames.
type redisLog struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
}

func (l *redisLog) key(session, what string) string {
	return l.prefix + ":{" + session + "}:" + what
}

func (l *redisLog) indexKey() string { return l.prefix + ":sessions" }

// wrap classifies a go-redis error: a server that cannot be reached becomes
// checkpoint.ErrUnavailable, naming where it was looked for; a server that
// refuses writes because it is full says so, and what to do.
func (l *redisLog) wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	var rerr redis.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("redis %s: %w", op, err)
	case isOOM(err):
		return fmt.Errorf("redis %s: the Redis at %s is full: its used memory is over its maxmemory, and it refuses writes (%w); "+
			"raise maxmemory (CONFIG SET maxmemory, or in redis.conf), free memory (compact checkpoint prune --max-age DUR deletes whole sessions older than DUR; or delete other keys), or use another Redis",
			op, l.addr(), err)
	case errors.As(err, &rerr):
		return fmt.Errorf("redis %s: %w", op, err)
	default:
		return fmt.Errorf("%w: redis %s at %s: %w", checkpoint.ErrUnavailable, op, l.addr(), err)
	}
}

func (l *redisLog) addr() string {
	if c, ok := l.rdb.(*redis.Client); ok {
		return c.Options().Addr
	}
	return "the configured servers"
}

// ReadLog implements checkpoint.LogBackend: the generation and the frames
// after from, read in one pipeline that reads the generation again after
// the frames: a log rewritten meanwhile (a new generation) is read again.
// No MULTI: a Redis that is full refuses every command queued in one, and
// a full store must still be read.
func (l *redisLog) ReadLog(ctx context.Context, session string, from checkpoint.LogPos) ([][]byte, checkpoint.LogPos, error) {
	genKey, logKey := l.key(session, "gen"), l.key(session, "log")
	for start, try := from.N, 0; ; start, try = 0, try+1 {
		var gen, genAfter *redis.StringCmd
		var rng *redis.StringSliceCmd
		_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			gen = p.Get(ctx, genKey)
			rng = p.LRange(ctx, logKey, start, -1)
			genAfter = p.Get(ctx, genKey)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, from, l.wrap(err, "read "+session)
		}
		if gen.Val() != genAfter.Val() && try < 10 {
			continue // rewritten while read
		}
		g, gerr := gen.Result()
		if errors.Is(gerr, redis.Nil) {
			// A session saved by a version before logs is not "no state".
			if n, err := l.rdb.Exists(ctx, l.key(session, "head")).Result(); err == nil && n > 0 {
				return nil, from, fmt.Errorf("%w: session %s is stored in the Redis layout of compact before logs (%s); this version does not read it: finish the session with that version, or delete it",
					checkpoint.ErrInvalid, session, l.key(session, "head"))
			}
			l.rdb.ZRem(ctx, l.indexKey(), session) // expired by its TTL, or deleted
			return nil, checkpoint.LogPos{}, fmt.Errorf("%w: session %s", checkpoint.ErrNotFound, session)
		}
		if g != from.Gen && start != 0 {
			continue // rewritten since: read it all
		}
		vals := rng.Val()
		frames := make([][]byte, len(vals))
		for i, v := range vals {
			frames[i] = []byte(v)
		}
		return frames, checkpoint.LogPos{Gen: g, N: start + int64(len(frames))}, nil
	}
}

func newGen() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// check verifies, inside a WATCH, that the log still ends at at.
func (l *redisLog) check(ctx context.Context, tx *redis.Tx, session string, at checkpoint.LogPos) error {
	g, err := tx.Get(ctx, l.key(session, "gen")).Result()
	if errors.Is(err, redis.Nil) {
		g, err = "", nil
	}
	if err != nil {
		return err
	}
	n, err := tx.LLen(ctx, l.key(session, "log")).Result()
	if err != nil {
		return err
	}
	if g != at.Gen || n != at.N {
		return checkpoint.ErrConflict
	}
	return nil
}

// write runs a WATCHed transaction on the session's keys.
func (l *redisLog) write(ctx context.Context, session, op string, at checkpoint.LogPos, fn func(p redis.Pipeliner)) error {
	genKey, logKey := l.key(session, "gen"), l.key(session, "log")
	err := l.rdb.Watch(ctx, func(tx *redis.Tx) error {
		if err := l.check(ctx, tx, session, at); err != nil {
			return err
		}
		cmds, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			fn(p)
			p.PExpire(ctx, logKey, l.ttl)
			p.PExpire(ctx, genKey, l.ttl)
			return nil
		})
		return queuedCause(cmds, err)
	}, genKey, logKey)
	switch {
	case errors.Is(err, redis.TxFailedErr), errors.Is(err, checkpoint.ErrConflict):
		return checkpoint.ErrConflict
	case err != nil:
		return l.wrap(err, op+" "+session)
	}
	// The index lives outside the session's slot; a failure here leaves a
	// committed save that List misses until the next one.
	if err := l.rdb.ZAdd(ctx, l.indexKey(), redis.Z{Score: float64(time.Now().UnixMilli()), Member: session}).Err(); err != nil {
		return fmt.Errorf("session %s saved, but not indexed for listing: %w", session, l.wrap(err, "index"))
	}
	return nil
}

// queuedCause returns err, or when the server discarded the transaction
// (EXECABORT) because a queued command was refused, that command's error
// (OOM when full, READONLY on a replica, NOPERM), which says why.
func queuedCause(cmds []redis.Cmder, err error) error {
	if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		return err
	}
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && !strings.HasPrefix(cerr.Error(), "EXECABORT") {
			return fmt.Errorf("%w (%s refused: %w)", err, c.Name(), cerr)
		}
	}
	return err
}

// isOOM reports whether err is a full Redis refusing a write ("OOM command
// not allowed when used memory > 'maxmemory'"), itself or as the cause of
// a discarded transaction (queuedCause).
func isOOM(err error) bool {
	return strings.Contains(err.Error(), "OOM command not allowed")
}

func anys(frames [][]byte) []any {
	out := make([]any, len(frames))
	for i, f := range frames {
		out[i] = f
	}
	return out
}

// AppendLog implements checkpoint.LogBackend.
func (l *redisLog) AppendLog(ctx context.Context, session string, at checkpoint.LogPos, frames [][]byte) (checkpoint.LogPos, error) {
	gen := at.Gen
	if gen == "" {
		gen = newGen()
	}
	err := l.write(ctx, session, "save", at, func(p redis.Pipeliner) {
		if at.Gen == "" {
			p.Set(ctx, l.key(session, "gen"), gen, l.ttl)
		}
		p.RPush(ctx, l.key(session, "log"), anys(frames)...)
	})
	if err != nil {
		return at, err
	}
	return checkpoint.LogPos{Gen: gen, N: at.N + int64(len(frames))}, nil
}

// SetAsideLog implements checkpoint.LogSetAsider: the log is renamed
// (within the session's slot, keeping its TTL) and the generation dropped,
// so the next save starts the session over.
func (l *redisLog) SetAsideLog(ctx context.Context, session string) (string, error) {
	logKey := l.key(session, "log")
	aside := l.key(session, "log-damaged-"+time.Now().UTC().Format("20060102T150405.000000000Z"))
	cmds, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Rename(ctx, logKey, aside)
		p.Del(ctx, l.key(session, "gen"))
		return nil
	})
	if err = queuedCause(cmds, err); err != nil {
		return "", l.wrap(err, "set aside "+session)
	}
	return aside, nil
}

// RewriteLog implements checkpoint.LogBackend.
func (l *redisLog) RewriteLog(ctx context.Context, session string, at checkpoint.LogPos, frames [][]byte) (checkpoint.LogPos, error) {
	gen := newGen()
	err := l.write(ctx, session, "rewrite", at, func(p redis.Pipeliner) {
		p.Del(ctx, l.key(session, "log"))
		p.RPush(ctx, l.key(session, "log"), anys(frames)...)
		p.Set(ctx, l.key(session, "gen"), gen, l.ttl)
	})
	if err != nil {
		return at, err
	}
	return checkpoint.LogPos{Gen: gen, N: int64(len(frames))}, nil
}

// Sessions implements checkpoint.LogBackend.
func (l *redisLog) Sessions(ctx context.Context) ([]string, error) {
	names, err := l.rdb.ZRange(ctx, l.indexKey(), 0, -1).Result()
	return names, l.wrap(err, "list sessions")
}

// DeleteLog implements checkpoint.LogBackend.
func (l *redisLog) DeleteLog(ctx context.Context, session string) error {
	if err := l.rdb.Del(ctx, l.key(session, "log"), l.key(session, "gen")).Err(); err != nil {
		return l.wrap(err, "delete "+session)
	}
	return l.wrap(l.rdb.ZRem(ctx, l.indexKey(), session).Err(), "unindex "+session)
}

// Close closes the client.
func (l *redisLog) Close() error { return l.rdb.Close() }
