package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/safeurl"
	"github.com/compactkit/compact/redact"
)

// Store keeps the checkpoints of many sessions. Implementations are safe for
// concurrent use, by goroutines and, for FileStore and the Redis store
// (package checkpoint/redis), by other processes sharing the directory or
// server.
type Store interface {
	// Save stores c as the session's new latest checkpoint if parent is
	// still its latest ("" for a session's first checkpoint), and fails
	// with ErrConflict otherwise. It fills c's SchemaVersion, ID, ParentID,
	// Seq, CreatedAt, UpdatedAt and Hash; on any error c is unchanged.
	// c's Status must be set (one of Statuses): an empty one is ErrInvalid.
	// The raw JSON values c holds (tool arguments, source records, cached
	// results, State) must not be changed in place after a save: a store
	// recognises unchanged values by their memory, as compact.Transcript
	// documents for raw source bytes. Assign new values instead.
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
	// Busy names the sessions left as they were because saves kept
	// landing while they were pruned: live sessions, pruned another time.
	Busy []string `json:"busy,omitempty"`
}

// Options configures a store. The zero value gives a store that redacts
// with the default redactor and does not encrypt.
type Options struct {
	// Key, when set (16, 24 or 32 bytes), encrypts every checkpoint written
	// with AES-GCM. Checkpoints written without a key stay readable.
	Key []byte
	// Redactor masks every string of a checkpoint that could carry a
	// secret before it is written (the task, step outputs and arguments,
	// the transcript with its raw source records, cached results,
	// receipts, pending params, State). Nil means redact.New's default
	// redactor, unless Plain is set.
	Redactor *redact.Redactor
	// Plain stores checkpoints as given, secrets included: for callers
	// that redact themselves, or that must resume with the real values.
	// It excludes Redactor.
	Plain bool
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// DisableEventLog (FileStore) turns off the per-session event log.
	DisableEventLog bool
	// TTL (Redis store) is how long a session's keys live after its last
	// save; 0 means 30 days.
	TTL time.Duration
	// Prefix (Redis store) starts every key; "" means "compact:ckpt".
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
	// usedNonces are the parent's used resume-token nonces, which a
	// save keeps.
	usedNonces []string
}

// Opener opens a store of one URL scheme from its spec.
type Opener func(ctx context.Context, spec string, opts Options) (Store, error)

var (
	schemesMu sync.RWMutex
	schemes   = map[string]Opener{}
)

// Register makes Open open specs of scheme ("redis" for
// "redis://HOST:PORT/DB") with open, as database/sql drivers register
// themselves: a store package registers its schemes in its init, and a
// program links it in with a blank import, so that importing checkpoint
// alone pulls in no client library. Registering a scheme twice panics.
func Register(scheme string, open Opener) {
	schemesMu.Lock()
	defer schemesMu.Unlock()
	if _, dup := schemes[scheme]; dup {
		panic("checkpoint: Register called twice for scheme " + scheme)
	}
	schemes[scheme] = open
}

// Open opens the store that spec names: "SCHEME://..." for a store
// package registered for SCHEME (import _
// "github.com/compactkit/compact/checkpoint/redis" for redis:// and
// rediss://), anything else a FileStore directory, created if missing.
// The errors of Open name the spec with its password masked.
func Open(ctx context.Context, spec string, opts Options) (Store, error) {
	if spec == "" {
		return nil, fmt.Errorf("%w: empty store spec", ErrInvalid)
	}
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok {
		return NewFileStore(spec, opts)
	}
	schemesMu.RLock()
	open := schemes[scheme]
	schemesMu.RUnlock()
	if open == nil {
		if scheme == "redis" || scheme == "rediss" {
			return nil, fmt.Errorf("%w: store %q: the Redis store is not linked in (import _ \"github.com/compactkit/compact/checkpoint/redis\")", ErrInvalid, safeurl.String(spec))
		}
		return nil, fmt.Errorf("%w: store %q: want a directory or redis://HOST:PORT/DB", ErrInvalid, safeurl.String(spec))
	}
	return open(ctx, spec, opts)
}

// SaveCompaction records a compaction as a new checkpoint of session, over
// parent, the checkpoint whose transcript was compacted ("" to start the
// session): the parent's transcript is replaced by t and recs are appended
// to its compaction records. A session without checkpoints is started
// (status running, task taken from the transcript's first ask). Like Save
// it is compare-and-set: if another writer saved after parent, nothing is
// written and the error is ErrConflict; reload, compact again, retry.
func SaveCompaction(ctx context.Context, s Store, session, parent string, t compact.Transcript, recs ...compact.Compaction) (*Checkpoint, error) {
	var c *Checkpoint
	if parent == "" {
		c = &Checkpoint{Session: session, Status: StatusRunning, Task: firstAsk(&t)}
	} else {
		var err error
		if c, err = s.Load(ctx, session, parent); err != nil {
			return nil, err
		}
	}
	c.Transcript = &t
	c.Compactions = append(c.Compactions, recs...)
	if err := s.Save(ctx, c, parent); err != nil {
		return nil, err
	}
	return c, nil
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
// none are given, readable or not), checking hashes and the parent chain,
// and returns what it found wrong: each checkpoint lost (one whose element
// or record damage took, named by its ID), each place of damage that cost
// no checkpoint (a session-wide Problem), a session without a readable head is a
// problem too (Recover rebuilds one), and so is a session sealed with a key
// the store was not given (its Problem's Err is ErrKeyRequired or
// ErrWrongKey: not verified, not damaged). The error is for a failure to verify
// at all (a store that cannot be reached), not for defects.
func Verify(ctx context.Context, s Store, sessions ...string) (checked int, problems []Problem, err error) {
	if len(sessions) == 0 {
		if sessions, err = allSessions(ctx, s); err != nil && len(sessions) == 0 {
			return 0, nil, err
		}
	}
	report := func(session, id string, err error) {
		problems = append(problems, Problem{Session: session, ID: id, Err: err, Message: err.Error()})
	}
	for _, session := range sessions {
		if err := ctx.Err(); err != nil {
			return checked, problems, err
		}
		if f, ok := s.(interface{ forget(string) }); ok {
			f.forget(session) // read and check every element afresh
		}
		metas, herr := s.History(ctx, session)
		if errors.Is(herr, ErrUnavailable) {
			return checked, problems, herr
		}
		if herr != nil {
			report(session, "", herr)
		}
		var damage []string
		if lc, ok := s.(logChecker); ok {
			// Damage in the middle of a log costs the checkpoints that
			// need what it took: each is checked, the chain cut or not.
			all, d, err := lc.logCheckpoints(ctx, session)
			if err == nil && len(d) > 0 {
				metas, damage = all, d
			}
		}
		first := len(problems)
		for i, m := range metas {
			c, err := s.Load(ctx, session, m.ID)
			checked++
			if errors.Is(err, ErrUnavailable) {
				return checked, problems, err
			}
			if locked(err) {
				// Without its key nothing of the session can be
				// checked: said once, not once per checkpoint.
				report(session, "", fmt.Errorf("not verified: %w", err))
				break
			}
			if errors.Is(err, ErrNotFound) && !stillListed(ctx, s, session, m.ID) {
				continue // pruned since History listed it (QA-37): not damage
			}
			if err != nil {
				report(session, m.ID, err)
				continue
			}
			if c.Hash != m.Hash {
				report(session, m.ID, fmt.Errorf("%w: body hash %s, history says %s", ErrCorrupt, c.Hash, m.Hash))
			}
			if i+1 < len(metas) && metas[i+1].ID != c.ParentID && !droppedParent(ctx, s, session, c.ParentID) {
				report(session, m.ID, fmt.Errorf("%w: parent is %s, history continues with %s", ErrCorrupt, c.ParentID, metas[i+1].ID))
			}
		}
		// Each place of damage is reported, once: by the problems it
		// caused, or, when it cost no checkpoint, on its own.
	damaged:
		for _, d := range damage {
			for _, p := range problems[first:] {
				if strings.Contains(p.Message, d) {
					continue damaged
				}
			}
			report(session, "", fmt.Errorf("%w: %s", ErrCorrupt, d))
		}
	}
	return checked, problems, nil
}

// stillListed reports whether the history of a session (read again)
// still lists checkpoint id: one a prune removed meanwhile is not.
func stillListed(ctx context.Context, s Store, session, id string) bool {
	metas, err := s.History(ctx, session)
	if err != nil {
		return true
	}
	for _, m := range metas {
		if m.ID == id {
			return true
		}
	}
	return false
}

// droppedParent reports whether a checkpoint's parent is one Recover
// left out (it did not load): not stored, and nothing says it was lost
// (a damaged log says ErrCorrupt instead).
func droppedParent(ctx context.Context, s Store, session, parent string) bool {
	_, err := s.Load(ctx, session, parent)
	return errors.Is(err, ErrNotFound)
}

// logChecker is a Store that can name every checkpoint of a session's
// log and the damage in it (LogStore).
type logChecker interface {
	logCheckpoints(ctx context.Context, session string) ([]Meta, []string, error)
}

// sessionLister is a Store that can name its sessions whether or not
// their heads are readable.
type sessionLister interface {
	Sessions(ctx context.Context) ([]string, error)
}

func allSessions(ctx context.Context, s Store) ([]string, error) {
	if l, ok := s.(sessionLister); ok {
		return l.Sessions(ctx)
	}
	infos, err := s.List(ctx, Filter{})
	var names []string
	for _, in := range infos {
		names = append(names, in.Session)
	}
	return names, err
}

// recoverer is a Store that can rebuild a session's head.
type recoverer interface {
	Recover(ctx context.Context, session string) (*Checkpoint, error)
}

// Recover rebuilds the head of a session whose head cannot be read (a
// damaged end of its log, a lost HEAD file) from the newest checkpoint that
// loads and verifies, and returns that checkpoint. The damaged remains are
// dropped. A session whose head reads is left as it is.
func Recover(ctx context.Context, s Store, session string) (*Checkpoint, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	r, ok := s.(recoverer)
	if !ok {
		return nil, fmt.Errorf("%w: this store cannot recover sessions", ErrInvalid)
	}
	return r.Recover(ctx, session)
}

// StartOver sets aside the log of a session that has no readable head and
// no checkpoint Recover could make one (damage in its first batch, or in
// what every checkpoint shares), keeping it under another name for a
// closer look, so that the next save, with parent "", starts the session
// over. It returns where the damaged log now is. A session whose head
// reads is left alone (ErrInvalid).
func StartOver(ctx context.Context, s Store, session string) (string, error) {
	if err := checkSession(session); err != nil {
		return "", err
	}
	so, ok := s.(interface {
		StartOver(ctx context.Context, session string) (string, error)
	})
	if !ok {
		return "", fmt.Errorf("%w: this store cannot start sessions over", ErrInvalid)
	}
	return so.StartOver(ctx, session)
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
