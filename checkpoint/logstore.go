package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// LogPos is a position in a session's log, as its LogBackend counts: Gen
// names the log's generation (it changes when the log is rewritten, as by
// Prune) and N the position within it (bytes, frames).
type LogPos struct {
	Gen string
	N   int64
}

// LogBackend keeps the logs of a store's sessions: for each session, an
// append-only sequence of frames, written in batches that are durable
// and all-or-nothing. FileStore keeps them in files, package
// checkpoint/redis in Redis; NewLogStore turns any LogBackend into a
// Store. Frames check themselves, so a backend stores them as they are.
type LogBackend interface {
	// ReadLog returns the frames of the session's log committed after
	// from, and the position after the last of them. When the log is of
	// another generation than from.Gen, it returns the frames from the
	// start and a position of the new generation. A session without a
	// log is ErrNotFound.
	ReadLog(ctx context.Context, session string, from LogPos) (frames [][]byte, end LogPos, err error)
	// AppendLog appends frames as one batch, durably, if the log still
	// ends at at (the zero LogPos for a session without a log), and
	// returns the new end. Otherwise it fails with ErrConflict.
	AppendLog(ctx context.Context, session string, at LogPos, frames [][]byte) (LogPos, error)
	// RewriteLog replaces the session's log with frames, as a new
	// generation, if it still ends at at; otherwise ErrConflict.
	RewriteLog(ctx context.Context, session string, at LogPos, frames [][]byte) (LogPos, error)
	// Sessions lists the sessions that have a log.
	Sessions(ctx context.Context) ([]string, error)
	// DeleteLog removes a session's log; a missing one is not an error.
	DeleteLog(ctx context.Context, session string) error
	// Close releases the backend.
	Close() error
}

// LogSetAsider is a LogBackend that can move a session's log out of the
// way, kept under another name, so that the session starts over (see
// StartOver). It returns where the log now is.
type LogSetAsider interface {
	SetAsideLog(ctx context.Context, session string) (where string, err error)
}

// logRanger is a LogBackend that reads its logs back by byte position
// and takes a batch already encoded (FileStore's): the store then keeps
// where each element lies in the log rather than its bytes, and a save
// writes the batch it built without another copy.
type logRanger interface {
	// readLogAt is ReadLog with the byte offset of each frame in the log
	// (-1 for a damage frame the backend made in place of damage).
	readLogAt(ctx context.Context, session string, from LogPos) (frames [][]byte, offs []int64, end LogPos, err error)
	// readAt fills buf from byte off of the session's log of generation
	// gen: errLogRewritten when the log is now of another generation.
	readAt(session, gen string, off int64, buf []byte) error
	// appendBatch is AppendLog with the frames already encoded as one
	// batch (encodeBatch).
	appendBatch(ctx context.Context, session string, at LogPos, batch []byte) (LogPos, error)
}

// errLogRewritten: a log was rewritten (by a prune or a recover in
// another process) between reading its index and reading an element
// back; the operation reads the log again and starts over.
var errLogRewritten = errors.New("the log was rewritten meanwhile")

// LogStore is the Store over a LogBackend: content-addressed elements,
// records that say what changed, compare-and-set saves. FileStore and
// checkpoint/redis's Store are LogStores. A LogStore keeps an index of
// what it has read of a session's log in memory (each element's address
// and place, each record's changes), so that the next read or save takes
// only what was appended since; over a backend that reads its log back by
// position (FileStore) the elements' bytes stay in the log and are read
// back when a load needs them, elsewhere (Redis) they are held too. Past
// maxCachedSessions it forgets a session to make room (which costs a full
// read of its log the next time it is used).
type LogStore struct {
	b     LogBackend
	opts  Options
	codec codec

	// legacy reads sessions a FileStore wrote before logs (nil elsewhere).
	legacy *legacyFiles
	// events, when set, receives the transitions of each committed save.
	events func(session string, events []Event)

	redactOnce sync.Once
	redactor   *redact.Redactor
	redactErr  error

	mu       sync.Mutex
	sessions map[string]*logSession
	// batches keeps the batches of saves a FileStore wrote (their
	// buffers: a few hundred KB for a save of new content), so that a
	// save makes no garbage of the size of what it writes.
	batches sync.Pool
}

var _ Store = (*LogStore)(nil)

// NewLogStore returns the Store that keeps its sessions in b.
func NewLogStore(b LogBackend, opts Options) (*LogStore, error) {
	cd, err := newCodec(opts.Key)
	if err != nil {
		return nil, err
	}
	if opts.Redactor != nil && opts.Plain {
		return nil, fmt.Errorf("%w: options: a Redactor and Plain exclude each other", ErrInvalid)
	}
	return &LogStore{b: b, opts: opts, codec: cd, sessions: map[string]*logSession{}}, nil
}

// Backend returns the store's backend.
func (s *LogStore) Backend() LogBackend { return s.b }

// Close closes the backend.
func (s *LogStore) Close() error { return s.b.Close() }

// redactorFor returns the redactor saves use: Options.Redactor, else the
// default one, else nil in plain mode.
func (s *LogStore) redactorFor() (*redact.Redactor, error) {
	if s.opts.Plain {
		return nil, nil
	}
	if s.opts.Redactor != nil {
		return s.opts.Redactor, nil
	}
	s.redactOnce.Do(func() { s.redactor, s.redactErr = redact.New(redact.Config{}) })
	return s.redactor, s.redactErr
}

// maxCachedSessions bounds how many sessions' logs a LogStore keeps in
// memory: a proxy serving many sessions keeps the busy ones.
const maxCachedSessions = 64

// logSession is what the store knows of one session's log.
type logSession struct {
	mu  sync.Mutex
	pos LogPos
	// blobs says where the log holds each element. The bytes of an
	// element stay in the log (read back when needed, see blobBytes)
	// where the backend reads its log back by position (logRanger); other
	// backends' elements are held in data.
	blobs map[Addr]blobLoc
	data  map[Addr][]byte
	// elems caches decoded elements, up to elemCacheBytes of their
	// encodings (elemBytes).
	elems     map[Addr]any
	elemBytes int
	recs      []*logRecord
	byID      map[string]int
	// head is the index of the last record; nil when it cannot be known
	// (a damaged record on the way to it).
	head *logIndex
	// bad marks records that cannot be loaded: their index is unknown or
	// their hash does not match.
	bad    map[int]error
	damage []string
	// lost names the damage that took an element's frame, by the address
	// the damaged frame still shows.
	lost map[Addr]string
	// tailDamaged is set while no intact record follows the last damage.
	tailDamaged bool
	ref         refs
}

// refs are the elements of the head as the caller last held them, by
// position, so the next save recognises what it keeps.
type refs struct {
	id      string
	msgs    []compact.Message
	recs    []compact.Record
	steps   []Step
	stepAt  map[string]int // step ID → index in steps
	cache   []cacheEntry
	cacheAt map[string]int // key → index in cache
	effects []SideEffect
	comps   []compact.Compaction
	tshell  *compact.Transcript
	state   json.RawMessage
}

func (s *LogStore) session(name string) *logSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[name]
	if ss == nil {
		if len(s.sessions) >= maxCachedSessions { // bound the memory of a long-lived store
			for k, v := range s.sessions {
				if v.mu.TryLock() {
					delete(s.sessions, k)
					v.mu.Unlock()
					break
				}
			}
		}
		ss = &logSession{}
		ss.reset(LogPos{})
		s.sessions[name] = ss
	}
	return ss
}

func (ss *logSession) reset(pos LogPos) {
	ss.pos = pos
	ss.blobs, ss.data = map[Addr]blobLoc{}, map[Addr][]byte{}
	if ss.elems == nil {
		ss.elems = map[Addr]any{}
	}
	ss.recs, ss.byID, ss.bad, ss.damage, ss.lost = nil, map[string]int{}, map[int]error{}, nil, nil
	ss.head, ss.tailDamaged = nil, false
	ss.ref = refs{}
}

func (ss *logSession) headRecord() *logRecord {
	if len(ss.recs) == 0 {
		return nil
	}
	return ss.recs[len(ss.recs)-1]
}

// sync reads what was appended to the session's log since the last read.
// It reports whether the session has a log.
func (s *LogStore) sync(ctx context.Context, name string, ss *logSession) (bool, error) {
	var frames [][]byte
	var offs []int64
	var end LogPos
	var err error
	if lr, ok := s.b.(logRanger); ok {
		frames, offs, end, err = lr.readLogAt(ctx, name, ss.pos)
	} else {
		frames, end, err = s.b.ReadLog(ctx, name, ss.pos)
	}
	if errors.Is(err, ErrNotFound) {
		ss.reset(LogPos{})
		return false, nil
	}
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return false, err
	}
	if end.Gen != ss.pos.Gen {
		ss.reset(LogPos{Gen: end.Gen})
	}
	for i, f := range frames {
		off := int64(-1)
		if offs != nil {
			off = offs[i]
		}
		ss.apply(name, f, off)
	}
	ss.pos = end
	if err != nil && (len(ss.damage) == 0 || ss.damage[len(ss.damage)-1] != damageText(err)) {
		// Nothing past damage to the log itself can be read.
		ss.damage = append(ss.damage, damageText(err))
		ss.tailDamaged = true
	}
	return true, nil
}

// apply takes one frame of the log into the session's state: off is its
// byte offset in the log when the backend reads its log back by position
// (the element's bytes are then left there), else -1 (they are kept).
func (ss *logSession) apply(name string, f []byte, off int64) {
	kind, body, err := checkFrame(f)
	if err != nil {
		desc, raw := fmt.Sprintf("a frame after checkpoint %s: %s", ss.lastID(), damageText(err)), f
		if isDamageFrame(f) {
			desc, raw = parseDamageFrame(f)
		}
		ss.damage = append(ss.damage, desc)
		if len(raw) >= 5+34 && raw[0] == frameBlob {
			if ss.lost == nil {
				ss.lost = map[Addr]string{}
			}
			ss.lost[Addr(raw[5:37])] = desc
		}
		ss.tailDamaged = true
		return
	}
	if kind == frameBlob {
		a, b, err := parseBlob(body)
		if err != nil {
			ss.damage = append(ss.damage, damageText(err))
			return
		}
		loc := blobLoc{at: -1, n: uint32(len(b.data)), kind: b.kind, codec: b.codec}
		if off >= 0 {
			loc.at = off + blobDataOffset
		} else {
			ss.data[a] = b.data
		}
		ss.blobs[a] = loc
		return
	}
	r, err := parseRecord(body)
	if err != nil {
		ss.damage = append(ss.damage, fmt.Sprintf("record after checkpoint %s: %s", ss.lastID(), damageText(err)))
		ss.head, ss.tailDamaged = nil, true
		return
	}
	r.size = len(f)
	ss.applyRecord(name, r)
}

// applyRecord takes one record of the log into the session's state.
func (ss *logSession) applyRecord(name string, r *logRecord) {
	i := len(ss.recs)
	ss.recs = append(ss.recs, r)
	ss.byID[r.meta.ID] = i
	switch {
	case r.meta.Session != name:
		ss.bad[i] = fmt.Errorf("%w: record of session %s in the log of %s", ErrCorrupt, r.meta.Session, name)
		ss.head = nil
		return
	case r.full:
		ss.head = &logIndex{}
	case ss.head == nil || i == 0 || ss.recs[i-1].meta.ID != r.meta.ParentID:
		ss.bad[i] = fmt.Errorf("%w: checkpoint %s follows a damaged or missing checkpoint %s", ErrCorrupt, r.meta.ID, r.meta.ParentID)
		if len(ss.damage) > 0 {
			ss.bad[i] = fmt.Errorf("%w (the log is damaged before it: %s)", ss.bad[i], ss.damage[len(ss.damage)-1])
		}
		ss.head = nil
		return
	}
	if err := ss.head.apply(&r.delta); err != nil {
		ss.bad[i] = fmt.Errorf("checkpoint %s: %w", r.meta.ID, err)
		ss.head = nil
		return
	}
	if h := ss.head.hash(&r.meta); h != r.meta.Hash {
		ss.bad[i] = fmt.Errorf("%w: checkpoint %s: content hashes to %s, record says %s", ErrCorrupt, r.meta.ID, h, r.meta.Hash)
	}
	ss.tailDamaged = false // the chain goes on past any damage
}

// damageSummary says where the session's log is damaged: the first
// place, and how many more there are.
func (ss *logSession) damageSummary() string {
	if len(ss.damage) == 1 {
		return ss.damage[0]
	}
	return fmt.Sprintf("%s (and %d more places)", ss.damage[0], len(ss.damage)-1)
}

func (ss *logSession) lastID() string {
	if r := ss.headRecord(); r != nil {
		return r.meta.ID
	}
	return "(none)"
}

// headState returns the session's latest checkpoint as the log has it:
// the record, or ErrNotFound for a session without one, or ErrCorrupt when
// the log's end is damaged.
func (ss *logSession) headState(name string) (*logRecord, error) {
	r := ss.headRecord()
	if ss.tailDamaged || (len(ss.damage) > 0 && (r == nil || ss.head == nil)) {
		hint := "checkpoint recover makes the newest checkpoint before it the head"
		if len(ss.bad) == len(ss.recs) {
			hint = "no checkpoint before it can be read: checkpoint recover --start-over sets the damaged log aside and starts the session over"
		}
		return nil, fmt.Errorf("session %s: %w: no readable head: %s (%s)", name, ErrCorrupt, ss.damage[len(ss.damage)-1], hint)
	}
	if r == nil {
		return nil, fmt.Errorf("%w: session %s", ErrNotFound, name)
	}
	if err := ss.bad[len(ss.recs)-1]; err != nil || ss.head == nil {
		if err == nil {
			err = fmt.Errorf("%w: checkpoint %s cannot be rebuilt", ErrCorrupt, r.meta.ID)
		}
		if len(ss.damage) > 0 {
			return nil, fmt.Errorf("session %s: %w (the log is damaged: %s)", name, err, ss.damageSummary())
		}
		return nil, fmt.Errorf("session %s: %w", name, err)
	}
	return r, nil
}

// indexOf rebuilds the index of record i by replaying the log from the
// last full record before it.
func (ss *logSession) indexOf(i int) (*logIndex, error) {
	if err := ss.bad[i]; err != nil {
		return nil, err
	}
	if i == len(ss.recs)-1 && ss.head != nil {
		return ss.head, nil
	}
	start := i
	for start >= 0 && !ss.recs[start].full {
		start--
	}
	if start < 0 {
		return nil, fmt.Errorf("%w: checkpoint %s has no full record before it", ErrCorrupt, ss.recs[i].meta.ID)
	}
	x := &logIndex{}
	for j := start; j <= i; j++ {
		if err := ss.bad[j]; err != nil && j < i {
			return nil, fmt.Errorf("%w: checkpoint %s depends on %s: %v", ErrCorrupt, ss.recs[i].meta.ID, ss.recs[j].meta.ID, err)
		}
		if err := x.apply(&ss.recs[j].delta); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// elem returns the decoded element at a, checking it against its address.
func (s *LogStore) elem(name string, ss *logSession, kind byte, a Addr, keyID string) (any, error) {
	return s.elemFrom(name, ss, kind, a, keyID, nil)
}

// elemFrom is elem, taking the element's bytes from what prefetch returns
// (see fetch), when it is not nil and they are there.
func (s *LogStore) elemFrom(name string, ss *logSession, kind byte, a Addr, keyID string, prefetch func() (map[Addr][]byte, error)) (any, error) {
	loc, ok := ss.blobs[a]
	if d, lost := ss.lost[a]; !ok && lost {
		return nil, fmt.Errorf("%w: element %x is damaged: %s", ErrCorrupt, a[:6], d)
	}
	if !ok && len(ss.damage) > 0 {
		// Stored, most likely, in a frame the damage made unreadable.
		return nil, fmt.Errorf("%w: element %x is unreadable: %s", ErrCorrupt, a[:6], ss.damageSummary())
	}
	if !ok {
		return nil, fmt.Errorf("%w: element %x is not stored", ErrCorrupt, a[:6])
	}
	if v, ok := ss.elems[a]; ok {
		return v, nil
	}
	if loc.kind != kind {
		return nil, fmt.Errorf("%w: element %x is a %q where a %q was expected", ErrCorrupt, a[:6], loc.kind, kind)
	}
	var got map[Addr][]byte
	if prefetch != nil {
		var err error
		if got, err = prefetch(); err != nil {
			return nil, err
		}
	}
	stored, ok := got[a]
	if !ok {
		var err error
		if stored, err = s.blobBytes(name, ss, a, loc); err != nil {
			return nil, err
		}
	}
	data, err := s.codec.openBlob(name, a, storedBlob{kind: loc.kind, codec: loc.codec, data: stored}, keyID)
	if err != nil {
		return nil, err
	}
	v, err := decodeElem(kind, data)
	if err != nil {
		return nil, fmt.Errorf("%w: element %x: %v", ErrCorrupt, a[:6], err)
	}
	if ss.elemBytes+len(stored) > elemCacheBytes {
		clear(ss.elems) // a small cache: what a load or a save needs again soon
		ss.elemBytes = 0
	}
	ss.elems[a] = v
	ss.elemBytes += len(stored)
	return v, nil
}

// elemCacheBytes bounds a session's cache of decoded elements, by the
// size of their encodings: a few checkpoints of a few hundred KB.
const elemCacheBytes = 4 << 20

// blobBytes returns the stored bytes of the element at a: held in memory,
// or read back from the log.
func (s *LogStore) blobBytes(name string, ss *logSession, a Addr, loc blobLoc) ([]byte, error) {
	if loc.at < 0 {
		return ss.data[a], nil
	}
	got, err := s.fetch(name, ss, []Addr{a})
	if err != nil {
		return nil, err
	}
	return got[a], nil
}

// fetch reads back from the log the bytes of the elements at addrs that
// are not held in memory, in as few reads as their places allow: the
// elements of one save lie side by side.
func (s *LogStore) fetch(name string, ss *logSession, addrs []Addr) (map[Addr][]byte, error) {
	lr, ok := s.b.(logRanger)
	if !ok {
		return nil, nil
	}
	type want struct {
		a   Addr
		loc blobLoc
	}
	var ws []want
	seen := map[Addr]bool{}
	for _, a := range addrs {
		if seen[a] {
			continue
		}
		if loc, ok := ss.blobs[a]; ok && loc.at >= 0 {
			seen[a] = true
			ws = append(ws, want{a, loc})
		}
	}
	if len(ws) == 0 {
		return nil, nil
	}
	slices.SortFunc(ws, func(x, y want) int { return cmpInt64(x.loc.at, y.loc.at) })
	got := make(map[Addr][]byte, len(ws))
	// A gap of up to fetchGap bytes between two elements is read rather
	// than paid for with another read.
	const fetchGap = 64 << 10
	for i := 0; i < len(ws); {
		from, to := ws[i].loc.at, ws[i].loc.at+int64(ws[i].loc.n)
		j := i + 1
		for ; j < len(ws) && ws[j].loc.at <= to+fetchGap; j++ {
			to = max(to, ws[j].loc.at+int64(ws[j].loc.n))
		}
		buf := make([]byte, to-from)
		if err := lr.readAt(name, ss.pos.Gen, from, buf); err != nil {
			return nil, fmt.Errorf("session %s: read elements back from the log: %w", name, err)
		}
		for _, w := range ws[i:j] {
			got[w.a] = buf[w.loc.at-from : w.loc.at-from+int64(w.loc.n) : w.loc.at-from+int64(w.loc.n)]
		}
		i = j
	}
	return got, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// materialize builds the checkpoint of record r over index x, with fresh
// copies the caller may change, and the refs a save over it compares with.
func (s *LogStore) materialize(name string, ss *logSession, r *logRecord, x *logIndex) (*Checkpoint, refs, error) {
	m := &r.meta
	c := &Checkpoint{SchemaVersion: SchemaVersion, ID: m.ID, ParentID: m.ParentID, Seq: m.Seq, Session: m.Session,
		Status: m.Status, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Hash: m.Hash}
	ref := refs{id: m.ID}
	wrap := func(err error) (*Checkpoint, refs, error) {
		return nil, refs{}, fmt.Errorf("session %s: checkpoint %s: %w", name, m.ID, err)
	}
	// The first element not decoded in the cache has the bytes of all of
	// them read back, in as few reads as they allow.
	var got map[Addr][]byte
	fetched := false
	prefetch := func() (map[Addr][]byte, error) {
		if fetched {
			return got, nil
		}
		fetched = true
		var missing []Addr
		for _, a := range x.addrs() {
			if _, ok := ss.elems[a]; !ok {
				missing = append(missing, a)
			}
		}
		var err error
		got, err = s.fetch(name, ss, missing)
		return got, err
	}
	get := func(kind byte, a Addr) (any, error) { return s.elemFrom(name, ss, kind, a, m.KeyID, prefetch) }
	hv, err := get(kindHead, x.head)
	if err != nil {
		return wrap(err)
	}
	h := hv.(headElem)
	c.Task, c.PlanVersion, c.CurrentStep, c.RetryCount, c.LastError = h.Task, h.PlanVersion, h.CurrentStep, h.RetryCount, h.LastError
	c.Permissions = slices.Clone(h.Permissions)
	c.UsedNonces = slices.Clone(h.UsedNonces)
	if h.Pending != nil {
		p := *h.Pending
		c.Pending = &p
	}
	if x.st != nil {
		v, err := get(kindState, *x.st)
		if err != nil {
			return wrap(err)
		}
		c.State, ref.state = v.(json.RawMessage), v.(json.RawMessage)
	}
	if x.tr != nil {
		v, err := get(kindTranscript, *x.tr)
		if err != nil {
			return wrap(err)
		}
		shell := v.(*compact.Transcript)
		ref.tshell = shell
		t := *shell
		t.Tools = slices.Clone(shell.Tools)
		c.Transcript = &t
		t.Messages = make([]compact.Message, 0, len(x.lists[listMessages]))
		ref.msgs = make([]compact.Message, 0, len(x.lists[listMessages]))
		for _, a := range x.lists[listMessages] {
			v, err := get(kindMessage, a)
			if err != nil {
				return wrap(err)
			}
			msg := v.(compact.Message)
			ref.msgs = append(ref.msgs, msg)
			t.Messages = append(t.Messages, msg.Clone())
		}
		for _, a := range x.lists[listRecords] {
			v, err := get(kindRecord, a)
			if err != nil {
				return wrap(err)
			}
			ref.recs = append(ref.recs, v.(compact.Record))
		}
		t.Records = slices.Clone(ref.recs)
	}
	for _, a := range x.lists[listSteps] {
		v, err := get(kindStep, a)
		if err != nil {
			return wrap(err)
		}
		ref.steps = append(ref.steps, v.(Step))
	}
	c.Steps = slices.Clone(ref.steps)
	ref.stepAt = make(map[string]int, len(ref.steps))
	for i, st := range ref.steps {
		ref.stepAt[st.ID] = i
	}
	if n := len(x.lists[listCache]); n > 0 {
		c.ToolCache = make(map[string]json.RawMessage, n)
	}
	for _, a := range x.lists[listCache] {
		v, err := get(kindCache, a)
		if err != nil {
			return wrap(err)
		}
		e := v.(cacheEntry)
		if ref.cacheAt == nil {
			ref.cacheAt = map[string]int{}
		}
		ref.cacheAt[e.Key] = len(ref.cache)
		ref.cache = append(ref.cache, e)
		c.ToolCache[e.Key] = e.Value
	}
	for _, a := range x.lists[listEffects] {
		v, err := get(kindEffect, a)
		if err != nil {
			return wrap(err)
		}
		ref.effects = append(ref.effects, v.(SideEffect))
	}
	c.SideEffects = slices.Clone(ref.effects)
	for _, a := range x.lists[listCompactions] {
		v, err := get(kindCompaction, a)
		if err != nil {
			return wrap(err)
		}
		cp := v.(compact.Compaction)
		cp.DroppedIDs, cp.Warnings = slices.Clone(cp.DroppedIDs), slices.Clone(cp.Warnings)
		ref.comps = append(ref.comps, v.(compact.Compaction))
		c.Compactions = append(c.Compactions, cp)
	}
	return c, ref, nil
}

func (s *LogStore) locked(ctx context.Context, name string) (*logSession, error) {
	if err := checkSession(name); err != nil {
		return nil, err
	}
	ss := s.session(name)
	ss.mu.Lock()
	if _, err := s.sync(ctx, name, ss); err != nil {
		ss.mu.Unlock()
		return nil, err
	}
	return ss, nil
}

// forget drops what the store knows of a session, so that the next read
// takes everything from the backend again and checks every element
// against its address (Verify).
func (s *LogStore) forget(session string) {
	s.mu.Lock()
	delete(s.sessions, session)
	s.mu.Unlock()
}

// Latest implements Store.
func (s *LogStore) Latest(ctx context.Context, session string) (*Checkpoint, error) {
	return reread(func() (*Checkpoint, error) { return s.latest(ctx, session) })
}

// reread runs a read again while the log was rewritten under it.
func reread(read func() (*Checkpoint, error)) (*Checkpoint, error) {
	for try := 0; ; try++ {
		c, err := read()
		if !errors.Is(err, errLogRewritten) || try == maxRaceRetries {
			return c, err
		}
	}
}

func (s *LogStore) latest(ctx context.Context, session string) (*Checkpoint, error) {
	ss, err := s.locked(ctx, session)
	if err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	r, err := ss.headState(session)
	if errors.Is(err, ErrNotFound) && len(ss.recs) == 0 && s.legacy != nil {
		return s.legacy.latest(ctx, session)
	}
	if err != nil {
		return nil, err
	}
	c, ref, err := s.materialize(session, ss, r, ss.head)
	if err != nil {
		return nil, err
	}
	ss.ref = ref
	return c, nil
}

// Load implements Store.
func (s *LogStore) Load(ctx context.Context, session, id string) (*Checkpoint, error) {
	if err := checkIDs(session, id); err != nil {
		return nil, err
	}
	return reread(func() (*Checkpoint, error) { return s.load(ctx, session, id) })
}

func (s *LogStore) load(ctx context.Context, session, id string) (*Checkpoint, error) {
	ss, err := s.locked(ctx, session)
	if err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	i, ok := ss.byID[id]
	if !ok {
		if s.legacy != nil {
			if c, err := s.legacy.load(ctx, session, id); !errors.Is(err, ErrNotFound) {
				return c, err
			}
		}
		if len(ss.damage) > 0 {
			return nil, fmt.Errorf("session %s: checkpoint %s: %w: not found, and the log has damage where it may have been: %s", session, id, ErrCorrupt, ss.damage[0])
		}
		return nil, fmt.Errorf("%w: session %s, checkpoint %s", ErrNotFound, session, id)
	}
	x, err := ss.indexOf(i)
	if err != nil {
		return nil, fmt.Errorf("session %s: checkpoint %s: %w", session, id, err)
	}
	c, ref, err := s.materialize(session, ss, ss.recs[i], x)
	if err != nil {
		return nil, err
	}
	if i == len(ss.recs)-1 {
		ss.ref = ref
	}
	return c, nil
}

func (r *logRecord) metaOut(codec string) Meta {
	m := r.meta
	return Meta{ID: m.ID, ParentID: m.ParentID, Seq: m.Seq, Session: m.Session, Status: m.Status,
		UpdatedAt: m.UpdatedAt, Hash: m.Hash, Size: r.size, Codec: m.Codec}
}

// History implements Store: the log's records from the latest back, then
// for a FileStore session started before logs, its older files. When the
// log's end is damaged, the records still readable come with the error.
func (s *LogStore) History(ctx context.Context, session string) ([]Meta, error) {
	ss, err := s.locked(ctx, session)
	if err != nil {
		return nil, err
	}
	_, herr := ss.headState(session)
	if errors.Is(herr, ErrNotFound) && len(ss.recs) == 0 && s.legacy != nil {
		herr = nil // a session from before logs, or none
	}
	var out []Meta
	parent := ""
	for i := len(ss.recs) - 1; i >= 0; i-- {
		r := ss.recs[i]
		if len(out) > 0 && out[len(out)-1].ParentID != r.meta.ID && !ss.dropped(i+1) {
			break
		}
		out = append(out, r.metaOut(r.meta.Codec))
		parent = r.meta.ParentID
	}
	empty := len(ss.recs) == 0
	ss.mu.Unlock()
	if herr != nil {
		return out, herr
	}
	if s.legacy != nil && (empty || parent != "") {
		more, err := s.legacy.history(ctx, session, parent, empty)
		if err != nil && !(errors.Is(err, ErrNotFound) && !empty) {
			return out, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// dropped reports whether the parent of record i is a checkpoint Recover
// left out (it did not load): i is then a full record, its parent is
// nowhere in the log, and the log is not damaged.
func (ss *logSession) dropped(i int) bool {
	if i >= len(ss.recs) || len(ss.damage) > 0 || !ss.recs[i].full {
		return false
	}
	_, stored := ss.byID[ss.recs[i].meta.ParentID]
	return !stored
}

// logCheckpoints returns the meta of every checkpoint record the
// session's log holds, newest first, whether the parent chain reaches it
// or not, and where the log is damaged: what Verify checks of a damaged
// log, in which damage may have cut the chain.
func (s *LogStore) logCheckpoints(ctx context.Context, session string) ([]Meta, []string, error) {
	ss, err := s.locked(ctx, session)
	if err != nil {
		return nil, nil, err
	}
	defer ss.mu.Unlock()
	out := make([]Meta, 0, len(ss.recs))
	for i := len(ss.recs) - 1; i >= 0; i-- {
		out = append(out, ss.recs[i].metaOut(ss.recs[i].meta.Codec))
	}
	return out, slices.Clone(ss.damage), nil
}

// Sessions lists the store's sessions, readable or not.
func (s *LogStore) Sessions(ctx context.Context) ([]string, error) {
	names, err := s.b.Sessions(ctx)
	if s.legacy != nil {
		more, lerr := s.legacy.sessions()
		names = append(names, more...)
		// Both read the store's directory: its failure is said once.
		if err == nil || lerr == nil || err.Error() != lerr.Error() {
			err = errors.Join(err, lerr)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), err
}

// info returns the session's summary from its head record.
func (s *LogStore) info(ctx context.Context, session string) (SessionInfo, error) {
	ss, err := s.locked(ctx, session)
	if err != nil {
		return SessionInfo{}, err
	}
	defer ss.mu.Unlock()
	r, err := ss.headState(session)
	if errors.Is(err, ErrNotFound) && len(ss.recs) == 0 && s.legacy != nil {
		h, err := s.legacy.readHead(session)
		return h.Info, err
	}
	if errors.Is(err, ErrCorrupt) {
		// Listed as damaged, described by the newest record still read.
		in := SessionInfo{Session: session, Damaged: strings.TrimPrefix(damageText(err), "session "+session+": ")}
		for i := len(ss.recs) - 1; i >= 0; i-- {
			if ss.bad[i] == nil {
				if good, ierr := s.recordInfo(session, ss.recs[i]); ierr == nil {
					good.Damaged = in.Damaged
					in = good
				}
				break
			}
		}
		return in, err
	}
	if err != nil {
		return SessionInfo{}, err
	}
	return s.recordInfo(session, r)
}

// recordInfo returns the session summary a record holds.
func (s *LogStore) recordInfo(session string, r *logRecord) (SessionInfo, error) {
	out := SessionInfo{Session: session, Status: r.meta.Status, Latest: r.meta.ID, Seq: r.meta.Seq,
		CreatedAt: r.meta.CreatedAt, UpdatedAt: r.meta.UpdatedAt}
	raw := r.info
	if r.meta.Codec == codecAESGCM {
		var err error
		raw, err = s.codec.openBytes(infoAAD(session, r.meta.ID), raw, r.meta.KeyID)
		if locked(err) {
			// Listed from what the record says in the clear.
			out.Encrypted = r.meta.KeyID
			return out, nil
		}
		if err != nil {
			return SessionInfo{}, fmt.Errorf("session %s: %w", session, err)
		}
	}
	var in recordInfo
	if err := json.Unmarshal(raw, &in); err != nil {
		return SessionInfo{}, fmt.Errorf("session %s: %w: info: %v", session, ErrCorrupt, err)
	}
	out.Task, out.Steps, out.CompletedSteps = in.Task, in.Steps, in.CompletedSteps
	return out, nil
}

// damageText is a damage error's text without the sentinel's, which
// whoever prints it says once.
func damageText(err error) string {
	return strings.ReplaceAll(err.Error(), ErrCorrupt.Error()+": ", "")
}

// List implements Store.
func (s *LogStore) List(ctx context.Context, f Filter) ([]SessionInfo, error) {
	names, err := s.Sessions(ctx)
	if err != nil && len(names) == 0 {
		return nil, err
	}
	info := s.info
	if _, ok := s.b.(*fileLog); ok {
		// A session whose lock a writer holds (a save in progress, or a
		// writer stopped mid-save) is listed as busy after a while, not
		// waited for: the other sessions are listed all the same.
		info = func(ctx context.Context, name string) (SessionInfo, error) {
			wctx, cancel := context.WithTimeout(ctx, listLockWait)
			defer cancel()
			in, err := s.info(wctx, name)
			if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return SessionInfo{Session: name, Busy: true}, nil
			}
			return in, err
		}
	}
	return listSessions(ctx, names, f, s.opts.now(), info)
}

// listLockWait is how long List waits for a session's lock before it
// lists the session as busy.
const listLockWait = 2 * time.Second

// listSessions is the one listing loop: each session's summary, filtered
// and sorted, damaged sessions (SessionInfo.Damaged) among them, with the
// sessions that could not be read at all reported after those that could.
// A store that cannot be reached stops it.
func listSessions(ctx context.Context, names []string, f Filter, now time.Time, info func(context.Context, string) (SessionInfo, error)) ([]SessionInfo, error) {
	var out []SessionInfo
	var errs []error
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		in, err := info(ctx, name)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // deleted or expired meanwhile, or never committed
		case errors.Is(err, ErrUnavailable):
			return out, err
		case err != nil && in.Damaged != "":
			if in.Latest == "" { // nothing read: no status or age to filter by
				if len(f.Status) == 0 {
					out = append(out, in)
				}
				continue
			}
		case err != nil:
			errs = append(errs, err)
			continue
		case in.Busy:
			if len(f.Status) == 0 { // nothing read: no status or age to filter by
				out = append(out, in)
			}
			continue
		}
		if f.match(&in, now) {
			out = append(out, in)
		}
	}
	sortInfos(out)
	return out, errors.Join(errs...)
}

// Delete implements Store.
func (s *LogStore) Delete(ctx context.Context, session string) error {
	if err := checkSession(session); err != nil {
		return err
	}
	ss := s.session(session)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.reset(LogPos{})
	return s.b.DeleteLog(ctx, session)
}

func sortInfos(in []SessionInfo) {
	sort.SliceStable(in, func(i, j int) bool {
		if !in[i].UpdatedAt.Equal(in[j].UpdatedAt) {
			return in[i].UpdatedAt.After(in[j].UpdatedAt)
		}
		return in[i].Session < in[j].Session
	})
}
