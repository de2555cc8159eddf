package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore keeps checkpoints in Redis, for many workers on many machines.
// It uses core commands only, so it runs on a stock redis-server.
//
// A session's keys share the hash tag {SESSION}, so in a cluster one session
// lives in one slot and its transactions stay atomic:
//
//	PREFIX:{SESSION}:head   string: the head pointer (latest ID and hash)
//	PREFIX:{SESSION}:ckpt   hash: checkpoint ID → stored checkpoint
//	PREFIX:{SESSION}:meta   hash: checkpoint ID → its Meta, for History
//	PREFIX:sessions         sorted set: session → last update (ms), for List
//
// Save is compare-and-set: it WATCHes the head, checks the expected parent
// and writes the checkpoint, its meta and the new head in one MULTI/EXEC,
// refreshing the TTL of every key of the session. The session index is
// updated after the transaction; it carries no TTL, and entries whose
// session expired are dropped when List or Prune meets them. Stored values
// are the same blobs FileStore writes (hash-checked, optionally encrypted).
type RedisStore struct {
	rdb   redis.UniversalClient
	opts  Options
	codec codec
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns a store on rdb (a client, cluster client or ring
// shard from go-redis). Close closes rdb.
func NewRedisStore(rdb redis.UniversalClient, opts Options) (*RedisStore, error) {
	cd, err := newCodec(opts.Key)
	if err != nil {
		return nil, err
	}
	if opts.Prefix == "" {
		opts.Prefix = "compact:ckpt"
	}
	if opts.TTL <= 0 {
		opts.TTL = 30 * 24 * time.Hour
	}
	return &RedisStore{rdb: rdb, opts: opts, codec: cd}, nil
}

func (s *RedisStore) key(session, what string) string {
	return s.opts.Prefix + ":{" + session + "}:" + what
}

func (s *RedisStore) indexKey() string { return s.opts.Prefix + ":sessions" }

// Ping checks that the server answers.
func (s *RedisStore) Ping(ctx context.Context) error {
	return s.wrap(s.rdb.Ping(ctx).Err(), "ping")
}

// Close closes the client.
func (s *RedisStore) Close() error { return s.rdb.Close() }

// wrap classifies a go-redis error: a server that cannot be reached becomes
// ErrUnavailable, naming where it was looked for.
func (s *RedisStore) wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	var rerr redis.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("redis %s: %w", op, err)
	case errors.As(err, &rerr):
		return fmt.Errorf("redis %s: %w", op, err)
	default:
		return fmt.Errorf("%w: redis %s at %s: %w", ErrUnavailable, op, s.addr(), err)
	}
}

func (s *RedisStore) addr() string {
	if c, ok := s.rdb.(*redis.Client); ok {
		return c.Options().Addr
	}
	return "the configured servers"
}

// head reads and verifies a session's head pointer through g (the client,
// or a transaction watching the key).
func (s *RedisStore) head(ctx context.Context, g redis.Cmdable, session string) (headRecord, Meta, error) {
	var h headRecord
	blob, err := g.Get(ctx, s.key(session, "head")).Bytes()
	if errors.Is(err, redis.Nil) {
		return h, Meta{}, fmt.Errorf("%w: session %s", ErrNotFound, session)
	}
	if err != nil {
		return h, Meta{}, s.wrap(err, "read head of "+session)
	}
	hdr, payload, err := s.codec.open(blob, kindHead)
	if err != nil {
		return h, hdr.Meta, fmt.Errorf("session %s: head: %w", session, err)
	}
	if err := json.Unmarshal(payload, &h); err != nil {
		return h, hdr.Meta, fmt.Errorf("session %s: head: %w: %v", session, ErrCorrupt, err)
	}
	if h.Info.Latest != hdr.Meta.ID || h.Info.Session != session {
		return h, hdr.Meta, fmt.Errorf("session %s: head: %w: names %s/%s", session, ErrCorrupt, h.Info.Session, h.Info.Latest)
	}
	return h, hdr.Meta, nil
}

// Save implements Store.
func (s *RedisStore) Save(ctx context.Context, c *Checkpoint, parent string) error {
	if err := c.validate(s.opts.Redactor != nil); err != nil {
		return err
	}
	session := c.Session
	headKey, ckptKey, metaKey := s.key(session, "head"), s.key(session, "ckpt"), s.key(session, "meta")
	var d *Checkpoint
	txf := func(tx *redis.Tx) error {
		prev, _, err := s.head(ctx, tx, session)
		var ps parentState
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		default:
			ps = parentState{exists: true, id: prev.Info.Latest, seq: prev.Info.Seq, createdAt: prev.Info.CreatedAt}
		}
		var blob []byte
		d, blob, err = prepare(&s.opts, s.codec, c, parent, ps)
		if err != nil {
			return err
		}
		hb, err := json.Marshal(newHeadRecord(d))
		if err != nil {
			return fmt.Errorf("save session %s: head: %w", session, err)
		}
		m := metaOf(d)
		m.Size, m.Codec = len(blob), s.codec.name()
		meta, _ := json.Marshal(m)
		ttl := s.opts.TTL
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, ckptKey, d.ID, blob)
			p.HSet(ctx, metaKey, d.ID, meta)
			p.Set(ctx, headKey, s.codec.seal(kindHead, metaOf(d), hb), ttl)
			p.PExpire(ctx, ckptKey, ttl)
			p.PExpire(ctx, metaKey, ttl)
			return nil
		})
		return err
	}
	err := s.rdb.Watch(ctx, txf, headKey)
	switch {
	case errors.Is(err, redis.TxFailedErr):
		return fmt.Errorf("%w: session %s: another writer saved while this one was saving", ErrConflict, session)
	case errors.Is(err, ErrConflict), errors.Is(err, ErrInvalid), errors.Is(err, ErrCorrupt),
		errors.Is(err, ErrKeyRequired), errors.Is(err, ErrWrongKey), errors.Is(err, ErrUnavailable):
		return err
	case err != nil:
		return s.wrap(err, "save session "+session)
	}
	commit(c, d)
	// The index lives outside the session's slot; a failure here leaves a
	// committed checkpoint that List misses until the next save.
	if err := s.rdb.ZAdd(ctx, s.indexKey(), redis.Z{Score: float64(d.UpdatedAt.UnixMilli()), Member: session}).Err(); err != nil {
		return fmt.Errorf("session %s saved as %s, but not indexed for listing: %w", session, d.ID, s.wrap(err, "index"))
	}
	return nil
}

// Latest implements Store.
func (s *RedisStore) Latest(ctx context.Context, session string) (*Checkpoint, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	_, m, err := s.head(ctx, s.rdb, session)
	if err != nil && !(errors.Is(err, ErrKeyRequired) || errors.Is(err, ErrWrongKey)) {
		return nil, err
	}
	if m.ID == "" {
		return nil, err
	}
	return loadHeadCheckpoint(ctx, s, session, m)
}

// Load implements Store.
func (s *RedisStore) Load(ctx context.Context, session, id string) (*Checkpoint, error) {
	if err := checkIDs(session, id); err != nil {
		return nil, err
	}
	blob, err := s.rdb.HGet(ctx, s.key(session, "ckpt"), id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: session %s, checkpoint %s", ErrNotFound, session, id)
	}
	if err != nil {
		return nil, s.wrap(err, "load "+session+"/"+id)
	}
	c, _, err := s.codec.decode(blob)
	if err != nil {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	if c.ID != id || c.Session != session {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w: stored value holds %s/%s", session, id, ErrCorrupt, c.Session, c.ID)
	}
	return c, nil
}

// metas reads the meta of every stored checkpoint of a session.
func (s *RedisStore) metas(ctx context.Context, g redis.Cmdable, session string) (map[string]Meta, error) {
	all, err := g.HGetAll(ctx, s.key(session, "meta")).Result()
	if err != nil {
		return nil, s.wrap(err, "history of "+session)
	}
	out := make(map[string]Meta, len(all))
	for id, v := range all {
		var m Meta
		if err := json.Unmarshal([]byte(v), &m); err != nil || m.ID != id {
			return nil, fmt.Errorf("session %s: checkpoint %s: %w: meta does not decode", session, id, ErrCorrupt)
		}
		out[id] = m
	}
	return out, nil
}

// History implements Store.
func (s *RedisStore) History(ctx context.Context, session string) ([]Meta, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	_, head, err := s.head(ctx, s.rdb, session)
	if err != nil && head.ID == "" {
		return nil, err
	}
	metas, err := s.metas(ctx, s.rdb, session)
	if err != nil {
		return nil, err
	}
	var out []Meta
	for id := head.ID; id != ""; {
		m, ok := metas[id]
		if !ok {
			if len(out) == 0 {
				return nil, fmt.Errorf("session %s: %w: head names %s, which is not stored", session, ErrCorrupt, id)
			}
			break // pruned
		}
		out = append(out, m)
		id = m.ParentID
		if len(out) > len(metas) {
			return out, fmt.Errorf("session %s: %w: parent chain loops", session, ErrCorrupt)
		}
	}
	return out, nil
}

// List implements Store.
func (s *RedisStore) List(ctx context.Context, f Filter) ([]SessionInfo, error) {
	now := s.opts.now()
	min := "-inf"
	if f.MaxAge > 0 {
		min = strconv.FormatInt(now.Add(-f.MaxAge).UnixMilli(), 10)
	}
	sessions, err := s.rdb.ZRangeByScore(ctx, s.indexKey(), &redis.ZRangeBy{Min: min, Max: "+inf"}).Result()
	if err != nil {
		return nil, s.wrap(err, "list sessions")
	}
	var out []SessionInfo
	var errs []error
	for _, session := range sessions {
		h, _, err := s.head(ctx, s.rdb, session)
		if errors.Is(err, ErrNotFound) {
			s.rdb.ZRem(ctx, s.indexKey(), session) // expired by its TTL
			continue
		}
		if errors.Is(err, ErrUnavailable) {
			return out, err
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if f.match(&h.Info, now) {
			out = append(out, h.Info)
		}
	}
	sortInfos(out)
	return out, errors.Join(errs...)
}

// Delete implements Store.
func (s *RedisStore) Delete(ctx context.Context, session string) error {
	if err := checkSession(session); err != nil {
		return err
	}
	if err := s.rdb.Del(ctx, s.key(session, "head"), s.key(session, "ckpt"), s.key(session, "meta")).Err(); err != nil {
		return s.wrap(err, "delete "+session)
	}
	return s.wrap(s.rdb.ZRem(ctx, s.indexKey(), session).Err(), "unindex "+session)
}

// Prune implements Store.
func (s *RedisStore) Prune(ctx context.Context, p PruneOptions) (PruneResult, error) {
	var res PruneResult
	sessions, err := s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return res, s.wrap(err, "list sessions")
	}
	now := s.opts.now()
	var errs []error
	for _, session := range sessions {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var r PruneResult
		for range 5 { // a writer saving meanwhile voids the transaction: retry
			r = PruneResult{}
			err = s.rdb.Watch(ctx, func(tx *redis.Tx) error { return s.pruneSession(ctx, tx, session, p, now, &r) },
				s.key(session, "head"))
			if !errors.Is(err, redis.TxFailedErr) {
				break
			}
		}
		if errors.Is(err, ErrUnavailable) {
			return res, err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", session, err))
			continue
		}
		res.Checkpoints += r.Checkpoints
		res.Sessions += r.Sessions
	}
	return res, errors.Join(errs...)
}

func (s *RedisStore) pruneSession(ctx context.Context, tx *redis.Tx, session string, p PruneOptions, now time.Time, res *PruneResult) error {
	_, head, err := s.head(ctx, tx, session)
	if errors.Is(err, ErrNotFound) {
		return s.wrap(s.rdb.ZRem(ctx, s.indexKey(), session).Err(), "unindex "+session)
	}
	if head.ID == "" {
		return err
	}
	metas, err := s.metas(ctx, tx, session)
	if err != nil {
		return err
	}
	cutoff := now.Add(-p.MaxAge)
	if p.MaxAge > 0 && head.UpdatedAt.Before(cutoff) {
		_, err := tx.TxPipelined(ctx, func(pp redis.Pipeliner) error {
			pp.Del(ctx, s.key(session, "head"), s.key(session, "ckpt"), s.key(session, "meta"))
			return nil
		})
		if err != nil {
			return err
		}
		res.Checkpoints += len(metas)
		res.Sessions++
		return s.wrap(s.rdb.ZRem(ctx, s.indexKey(), session).Err(), "unindex "+session)
	}
	keep := map[string]bool{}
	for id, n := head.ID, 0; id != ""; n++ {
		m, ok := metas[id]
		if !ok || n > len(metas) {
			break
		}
		if n > 0 && ((p.KeepLast > 0 && n >= p.KeepLast) || (p.MaxAge > 0 && m.UpdatedAt.Before(cutoff))) {
			break
		}
		keep[id] = true
		id = m.ParentID
	}
	var drop []string
	for id := range metas {
		if !keep[id] {
			drop = append(drop, id)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	_, err = tx.TxPipelined(ctx, func(pp redis.Pipeliner) error {
		pp.HDel(ctx, s.key(session, "ckpt"), drop...)
		pp.HDel(ctx, s.key(session, "meta"), drop...)
		return nil
	})
	if err == nil {
		res.Checkpoints += len(drop)
	}
	return err
}
