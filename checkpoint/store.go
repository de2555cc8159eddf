package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
	"github.com/redis/go-redis/v9"
)

// Store keeps the checkpoints of many sessions. Implementations are safe for
// concurrent use, by goroutines and, for FileStore and RedisStore, by other
// processes sharing the directory or server.
type Store interface {
	// Save stores c as the session's new latest checkpoint if parent is
	// still its latest ("" for a session's first checkpoint), and fails
	// with ErrConflict otherwise. It fills c's SchemaVersion, ID, ParentID,
	// Seq, CreatedAt, UpdatedAt and Hash; on any error c is unchanged.
	Save(ctx context.Context, c *Checkpoint, parent string) error
	// Latest loads the session's latest checkpoint.
	Latest(ctx context.Context, session string) (*Checkpoint, error)
	// Load loads one checkpoint of a session by ID.
	Load(ctx context.Context, session, id string) (*Checkpoint, error)
	// History returns the session's checkpoints from the latest back along
	// the parent chain, newest first, stopping where pruning cut the chain.
	History(ctx context.Context, session string) ([]Meta, error)
	// List returns the sessions that match f, most recently updated first.
	List(ctx context.Context, f Filter) ([]SessionInfo, error)
	// Delete removes a session and all its checkpoints. Deleting a session
	// that does not exist is not an error.
	Delete(ctx context.Context, session string) error
	// Prune drops old checkpoints and sessions, as p says.
	Prune(ctx context.Context, p PruneOptions) (PruneResult, error)
	// Close releases the store's resources.
	Close() error
}

// Filter selects sessions for Store.List. The zero value selects all.
type Filter struct {
	// Status keeps sessions whose latest status is one of these; empty
	// keeps any.
	Status []Status
	// MaxAge keeps sessions updated within this long before now; 0 keeps
	// any age.
	MaxAge time.Duration
}

func (f Filter) match(info *SessionInfo, now time.Time) bool {
	if len(f.Status) > 0 && !slices.Contains(f.Status, info.Status) {
		return false
	}
	return f.MaxAge <= 0 || !info.UpdatedAt.Before(now.Add(-f.MaxAge))
}

// PruneOptions says what Store.Prune drops. A session's latest checkpoint
// is kept unless the whole session is older than MaxAge.
type PruneOptions struct {
	// KeepLast keeps at most this many checkpoints per session, the newest;
	// 0 keeps any number.
	KeepLast int
	// MaxAge drops checkpoints saved longer ago than this, and whole
	// sessions whose latest checkpoint is that old; 0 drops nothing by age.
	MaxAge time.Duration
}

// PruneResult counts what Prune removed.
type PruneResult struct {
	Checkpoints int `json:"checkpoints"`
	Sessions    int `json:"sessions"`
}

// Options configures a store. The zero value gives a plain, non-redacting
// store.
type Options struct {
	// Key, when set (16, 24 or 32 bytes), encrypts every checkpoint written
	// with AES-GCM. Checkpoints written without a key stay readable.
	Key []byte
	// Redactor, when set, puts the store in redacting mode: every string of
	// a checkpoint that could carry a secret is masked before it is written.
	Redactor *redact.Redactor
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// DisableEventLog (FileStore) turns off the per-session event log.
	DisableEventLog bool
	// TTL (RedisStore) is how long a session's keys live after its last
	// save; 0 means 30 days.
	TTL time.Duration
	// Prefix (RedisStore) starts every key; "" means "compact:ckpt".
	Prefix string
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// newID returns a checkpoint ID: the sequence number, so IDs sort in save
// order, and random bits, so two writers racing for the same Seq never
// produce the same ID.
func newID(seq int64) string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%08d-%s", seq, hex.EncodeToString(b[:]))
}

// parentState is what a store knows of the session's latest checkpoint
// when it saves a new one.
type parentState struct {
	exists    bool
	id        string
	seq       int64
	createdAt time.Time
}

// prepare validates c and returns the copy to store (redacted in
// redacting mode) with its identity fields set, and its encoding.
func prepare(o *Options, cd codec, c *Checkpoint, parent string, head parentState) (*Checkpoint, []byte, error) {
	if err := c.validate(o.Redactor != nil); err != nil {
		return nil, nil, err
	}
	if parent != "" && !ValidSessionID(parent) {
		return nil, nil, fmt.Errorf("%w: parent ID %q", ErrInvalid, parent)
	}
	if head.id != parent {
		want, have := parent, head.id
		if want == "" {
			want = "(none: a new session)"
		}
		if have == "" {
			have = "(none)"
		}
		return nil, nil, fmt.Errorf("%w: session %s: expected parent %s, latest is %s", ErrConflict, c.Session, want, have)
	}
	var d *Checkpoint
	if o.Redactor != nil {
		d = redacted(o.Redactor, c)
	} else {
		d = c.Clone()
	}
	now := o.now().UTC()
	d.SchemaVersion = SchemaVersion
	d.ParentID = parent
	d.Seq = head.seq + 1
	d.ID = newID(d.Seq)
	d.CreatedAt = head.createdAt
	if !head.exists {
		d.CreatedAt = now
	}
	d.UpdatedAt = now
	blob, err := cd.encode(d)
	if err != nil {
		return nil, nil, err
	}
	return d, blob, nil
}

// commit copies the identity fields of the stored copy back to the
// caller's checkpoint after a successful save.
func commit(c, d *Checkpoint) {
	c.SchemaVersion, c.ID, c.ParentID, c.Seq = d.SchemaVersion, d.ID, d.ParentID, d.Seq
	c.CreatedAt, c.UpdatedAt, c.Hash = d.CreatedAt, d.UpdatedAt, d.Hash
}

// Open opens the store that spec names: "redis://[user:pass@]HOST:PORT/DB"
// (or rediss:// for TLS) for a RedisStore, which it pings so an unreachable
// server is reported at once; anything else is a FileStore directory,
// created if missing.
func Open(ctx context.Context, spec string, opts Options) (Store, error) {
	if spec == "" {
		return nil, fmt.Errorf("%w: empty store spec", ErrInvalid)
	}
	if strings.HasPrefix(spec, "redis://") || strings.HasPrefix(spec, "rediss://") {
		ro, err := redis.ParseURL(spec)
		if err != nil {
			return nil, fmt.Errorf("%w: store %q: %w", ErrInvalid, spec, err)
		}
		s, err := NewRedisStore(redis.NewClient(ro), opts)
		if err != nil {
			return nil, err
		}
		if err := s.Ping(ctx); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	if strings.Contains(spec, "://") {
		return nil, fmt.Errorf("%w: store %q: want a directory or redis://HOST:PORT/DB", ErrInvalid, spec)
	}
	return NewFileStore(spec, opts)
}

// SaveCompaction records a compaction as a new checkpoint of session: the
// latest checkpoint's transcript is replaced by t and recs are appended to
// its compaction records. A session without checkpoints is started (status
// running, task taken from the transcript's first ask). A concurrent writer
// that saves in between is not overwritten: the latest is reloaded and the
// change applied again, a few times before ErrConflict is returned.
func SaveCompaction(ctx context.Context, s Store, session string, t compact.Transcript, recs ...compact.Compaction) (*Checkpoint, error) {
	var err error
	for range 5 {
		c, lerr := s.Latest(ctx, session)
		parent := ""
		switch {
		case errors.Is(lerr, ErrNotFound):
			c = &Checkpoint{Session: session, Status: StatusRunning, Task: firstAsk(&t)}
		case lerr != nil:
			return nil, lerr
		default:
			parent = c.ID
		}
		c.Transcript = &t
		c.Compactions = append(c.Compactions, recs...)
		if err = s.Save(ctx, c, parent); err == nil {
			return c, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, err
		}
	}
	return nil, err
}

func firstAsk(t *compact.Transcript) string {
	for _, m := range t.Messages {
		if m.IsUserAsk() {
			s := strings.Join(strings.Fields(m.Text()), " ")
			if r := []rune(s); len(r) > 300 {
				s = string(r[:300])
			}
			return s
		}
	}
	return ""
}

// Problem is one defect Verify found.
type Problem struct {
	Session string `json:"session"`
	ID      string `json:"id,omitempty"`
	Err     error  `json:"-"`
	Message string `json:"error"`
}

// Verify loads every checkpoint of the given sessions (all sessions when
// none are given), checking hashes and the parent chain, and returns what
// it found wrong. The error is for a failure to verify at all (a store
// that cannot be reached), not for defects.
func Verify(ctx context.Context, s Store, sessions ...string) (checked int, problems []Problem, err error) {
	if len(sessions) == 0 {
		infos, err := s.List(ctx, Filter{})
		if err != nil && len(infos) == 0 {
			return 0, nil, err
		}
		for _, in := range infos {
			sessions = append(sessions, in.Session)
		}
	}
	report := func(session, id string, err error) {
		problems = append(problems, Problem{Session: session, ID: id, Err: err, Message: err.Error()})
	}
	for _, session := range sessions {
		if err := ctx.Err(); err != nil {
			return checked, problems, err
		}
		metas, herr := s.History(ctx, session)
		if errors.Is(herr, ErrUnavailable) {
			return checked, problems, herr
		}
		if herr != nil {
			report(session, "", herr)
		}
		for i, m := range metas {
			c, err := s.Load(ctx, session, m.ID)
			checked++
			if errors.Is(err, ErrUnavailable) {
				return checked, problems, err
			}
			if err != nil {
				report(session, m.ID, err)
				continue
			}
			if c.Hash != m.Hash {
				report(session, m.ID, fmt.Errorf("%w: body hash %s, history says %s", ErrCorrupt, c.Hash, m.Hash))
			}
			if i+1 < len(metas) && metas[i+1].ID != c.ParentID {
				report(session, m.ID, fmt.Errorf("%w: parent is %s, history continues with %s", ErrCorrupt, c.ParentID, metas[i+1].ID))
			}
		}
	}
	return checked, problems, nil
}

// loadHeadCheckpoint loads the checkpoint a session's head names and checks
// it against the hash the head recorded: a head naming a checkpoint that is
// missing or different is corruption, never "no state".
func loadHeadCheckpoint(ctx context.Context, s Store, session string, head Meta) (*Checkpoint, error) {
	c, err := s.Load(ctx, session, head.ID)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("session %s: %w: head names checkpoint %s, which is not stored", session, ErrCorrupt, head.ID)
	}
	if err != nil {
		return nil, err
	}
	if c.Hash != head.Hash {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w: hash %s, head recorded %s", session, head.ID, ErrCorrupt, c.Hash, head.Hash)
	}
	return c, nil
}

// checkIDs validates a session and a checkpoint ID before a store looks
// either up.
func checkIDs(session, id string) error {
	if err := checkSession(session); err != nil {
		return err
	}
	if !ValidSessionID(id) {
		return fmt.Errorf("%w: checkpoint ID %q", ErrInvalid, id)
	}
	return nil
}
