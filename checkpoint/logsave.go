package checkpoint

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// batch collects the frames of one save, the blobs it introduces, laid
// out as encodeBatch lays out a batch (its header, then each frame after
// its length) as they are encoded: a save writes buf as it is, with no
// copy of its frames and one checksum pass over each.
type batch struct {
	s       *LogStore
	ss      *logSession
	session string
	r       *redact.Redactor
	enc     *elemEncoder
	buf     []byte
	// blobs are the elements buf adds, by where their data lies in it;
	// frames where each frame lies (start, end).
	blobs  []addedBlob
	frames [][2]int
	added  map[Addr]bool
	// h hashes addresses (codec.address), reset for each element.
	h   hash.Hash
	sum []byte
	// sc tells the save's clean JSON values (see json).
	sc *redact.Scope
}

// addedBlob is an element a batch adds: its data is buf[at:at+n].
type addedBlob struct {
	a           Addr
	at, n       int
	kind, codec byte
}

func newBatch(s *LogStore, ss *logSession, session string, r *redact.Redactor) *batch {
	b, _ := s.batches.Get().(*batch)
	if b == nil {
		b = &batch{enc: newElemEncoder(), added: map[Addr]bool{}}
	}
	b.s, b.ss, b.session, b.r = s, ss, session, r
	b.buf = append(b.buf[:0], make([]byte, batchHeader)...)
	return b
}

// release returns b to the pool, unless the store holds on to its buffer.
func (b *batch) release() {
	if _, ok := b.s.b.(logRanger); !ok || cap(b.buf) > maxPooledBatch {
		return // the store holds the elements' bytes in memory
	}
	s := b.s
	b.s, b.ss, b.r, b.sc = nil, nil, nil, nil
	b.blobs, b.frames = b.blobs[:0], b.frames[:0]
	clear(b.added)
	s.batches.Put(b)
}

// maxPooledBatch is the largest batch buffer kept for the next save.
const maxPooledBatch = 8 << 20

// json is redactJSON, with the check that finds most values clean done
// in one scope for the whole save rather than one per value (a save of
// new cached results has a hundred small values).
func (b *batch) json(v json.RawMessage) json.RawMessage {
	if b.r == nil || len(v) == 0 {
		return v
	}
	if b.sc == nil {
		b.sc = b.r.NewScope()
	}
	if _, found := b.sc.Redact(string(v)); len(found) == 0 {
		return v
	}
	return redactJSON(b.r, v)
}

// put returns the address of an element, adding its blob to the batch
// unless the session's log already holds it.
func (b *batch) put(kind byte, data []byte) Addr {
	a := b.address(kind, data)
	if _, ok := b.ss.blobs[a]; ok || b.added[a] {
		return a
	}
	codec := codecByte
	if b.s.codec.aead != nil {
		codec, data = b.s.codec.sealBlob(b.session, a, data)
	}
	start := b.frameStart(blobDataOffset + len(data))
	b.buf = append(b.buf, frameBlob, 0, 0, 0, 0)
	b.buf = append(b.buf, a[:]...)
	b.buf = append(b.buf, kind, codec)
	b.buf = append(b.buf, data...)
	b.endFrame(start)
	b.blobs = append(b.blobs, addedBlob{a: a, at: start + blobDataOffset, n: len(data), kind: kind, codec: codec})
	b.added[a] = true
	return a
}

// frameStart appends the length of the next frame, n bytes, and returns
// where the frame starts.
func (b *batch) frameStart(n int) int {
	b.buf = binary.AppendUvarint(b.buf, uint64(n))
	return len(b.buf)
}

// endFrame puts the checksum of the frame that starts at start and ends
// buf.
func (b *batch) endFrame(start int) {
	binary.LittleEndian.PutUint32(b.buf[start+1:], crc32.Checksum(b.buf[start+5:], castagnoli()))
	b.frames = append(b.frames, [2]int{start, len(b.buf)})
}

// appendFrame adds a frame as it is (a record).
func (b *batch) appendFrame(f []byte) {
	start := b.frameStart(len(f))
	b.buf = append(b.buf, f...)
	b.frames = append(b.frames, [2]int{start, len(b.buf)})
}

// seal fills in the batch header: buf is then encodeBatch of the frames.
func (b *batch) seal() []byte {
	buf := b.buf
	buf[0], buf[1] = batchMagic0, batchMagic1
	binary.LittleEndian.PutUint32(buf[2:], uint32(len(buf)-batchHeader))
	binary.LittleEndian.PutUint32(buf[6:], crc32.Checksum(buf[batchHeader:], castagnoli()))
	binary.LittleEndian.PutUint32(buf[10:], crc32.Checksum(buf[:10], castagnoli()))
	return buf
}

// frameList returns the batch's frames, slices of buf.
func (b *batch) frameList() [][]byte {
	out := make([][]byte, len(b.frames))
	for i, f := range b.frames {
		out[i] = b.buf[f[0]:f[1]:f[1]]
	}
	return out
}

// address is codec.address with one hash for the whole save.
func (b *batch) address(kind byte, data []byte) Addr {
	if b.h == nil {
		if key := b.s.codec.addrKey; key != nil {
			b.h = hmac.New(sha256.New, key)
		} else {
			b.h = sha256.New()
		}
		b.sum = make([]byte, 0, sha256.Size)
	}
	b.h.Reset()
	b.sum = append(b.sum[:0], kind)
	b.h.Write(b.sum)
	b.h.Write(data)
	var a Addr
	copy(a[:], b.h.Sum(b.sum[:0]))
	return a
}

// listPlan is how one list of a save differs from the head's.
type listPlan struct {
	d listDelta
	// changed lists the positions (ascending) whose item was not
	// recognised as the one saved there before: encoded, and copied into
	// the new head's refs.
	changed []int
}

// planList compares items with the refs of the head's list (base), by
// position, and encodes only what it cannot recognise.
func planList[T any](b *batch, kind byte, items, ref []T, base []Addr, same func(x, y *T) bool, enc func(*T) ([]byte, error)) (listPlan, error) {
	return planListAt(b, kind, items, unrecognised(items, ref, base, same), base, enc)
}

// unrecognised lists the positions (ascending) of the items planList
// encodes: those not recognised, by position, in the head's refs.
func unrecognised[T any](items, ref []T, base []Addr, same func(x, y *T) bool) []int {
	if len(ref) != len(base) {
		ref = nil // refs of another head: recognise nothing
	}
	var out []int
	for i := range items {
		if i < len(ref) && same(&items[i], &ref[i]) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// planListAt is planList with the positions to encode known.
func planListAt[T any](b *batch, kind byte, items []T, changed []int, base []Addr, enc func(*T) ([]byte, error)) (listPlan, error) {
	p := listPlan{d: listDelta{n: len(items)}}
	m := min(len(items), len(base))
	// The record keeps its delta as long as the session is open: no room
	// to spare in it.
	if k := len(changed) - sort.SearchInts(changed, m); k > 0 {
		p.d.add = make([]Addr, 0, k)
	}
	p.changed = make([]int, 0, len(changed))
	for _, i := range changed {
		data, err := enc(&items[i])
		if err != nil {
			return p, err
		}
		a := b.put(kind, data)
		p.changed = append(p.changed, i)
		switch {
		case i >= m:
			p.d.add = append(p.d.add, a)
		case a != base[i]:
			p.d.sets = append(p.d.sets, setOp{i: i, a: a})
		}
	}
	return p, nil
}

// nextRefs returns the refs of a list after a save: the old ones cut to
// the new length, with the changed positions copied from items.
func nextRefs[T any](old, items []T, p listPlan, clone func(T) T) []T {
	if len(old) > p.d.n {
		old = old[:p.d.n]
	}
	for _, i := range p.changed {
		if i < len(old) {
			old[i] = clone(items[i])
		} else {
			old = append(old, clone(items[i]))
		}
	}
	return old
}

func same[T any](x T) T { return x }

// nextKeyed is nextRefs for a list whose items have keys, keeping the map
// from key to position (at) up to date.
func nextKeyed[T any](old []T, at map[string]int, items []T, p listPlan, baseLen int, key func(T) string) ([]T, map[string]int) {
	if at == nil || len(old) != baseLen {
		old, at = nil, map[string]int{}
	}
	for _, i := range p.changed {
		if i < len(old) && at[key(old[i])] == i {
			delete(at, key(old[i]))
		}
	}
	for i := p.d.n; i < len(old); i++ {
		if at[key(old[i])] == i {
			delete(at, key(old[i]))
		}
	}
	old = nextRefs(old, items, p, same[T])
	for _, i := range p.changed {
		at[key(old[i])] = i
	}
	return old, at
}

// maxRaceRetries bounds how often a save or a prune plans again after the
// log moved under it without its head changing (a prune's rewrite, a
// save's append).
const maxRaceRetries = 5

// errRaced: the log moved between a save's read and its append.
var errRaced = errors.New("the log moved while saving")

// Save implements Store: it appends the elements the head does not hold
// and a record of what changed, in one durable write. A log rewritten
// meanwhile without a new head (a Prune in another handle) is read again
// and the save planned again: only a new head is a conflict.
func (s *LogStore) Save(ctx context.Context, c *Checkpoint, parent string) error {
	for try := 0; ; try++ {
		err := s.saveOnce(ctx, c, parent)
		if !errors.Is(err, errRaced) {
			return err
		}
		if try == maxRaceRetries {
			return fmt.Errorf("%w: session %s: another writer saved while this one was saving", ErrConflict, c.Session)
		}
	}
}

func (s *LogStore) saveOnce(ctx context.Context, c *Checkpoint, parent string) error {
	r, err := s.redactorFor()
	if err != nil {
		return fmt.Errorf("checkpoint store: default redactor: %w", err)
	}
	if !ValidSessionID(c.Session) {
		return c.validate(false, nil, nil)
	}
	if parent != "" && !ValidSessionID(parent) {
		return fmt.Errorf("%w: parent ID %q", ErrInvalid, parent)
	}
	name := c.Session
	ss, err := s.locked(ctx, name)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	head, herr := ss.headState(name)
	var ps parentState
	switch {
	case errors.Is(herr, ErrNotFound) && len(ss.recs) == 0:
		if s.legacy != nil {
			h, lerr := s.legacy.readHead(name)
			switch {
			case errors.Is(lerr, ErrNotFound):
			case lerr != nil:
				return lerr
			default:
				ps = parentState{exists: true, id: h.Info.Latest, seq: h.Info.Seq, createdAt: h.Info.CreatedAt}
				if ps.id == parent {
					old, err := s.legacy.latest(ctx, name)
					if err != nil {
						return err
					}
					ps.usedNonces = old.UsedNonces
				}
			}
		}
	case herr != nil:
		return herr
	default:
		ps = parentState{exists: true, id: head.meta.ID, seq: head.meta.Seq, createdAt: head.meta.CreatedAt}
	}
	if ps.id != parent {
		return conflictError(name, parent, ps.id)
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	now := s.opts.now().UTC()
	rec := &logRecord{full: head == nil}
	m := &rec.meta
	m.ParentID, m.Seq, m.Session, m.Status = parent, ps.seq+1, name, c.Status
	m.ID = newID(m.Seq)
	m.CreatedAt, m.UpdatedAt = ps.createdAt, now
	if !ps.exists {
		m.CreatedAt = now
	}
	m.Codec = s.codec.name()
	if s.codec.aead != nil {
		m.KeyID = s.codec.keyID
	}
	base := &logIndex{}
	ref := refs{}
	if head != nil {
		base = ss.head
		if ss.ref.id == head.meta.ID {
			ref = ss.ref
		}
		hv, err := s.elem(name, ss, kindHead, base.head, head.meta.KeyID)
		if errors.Is(err, errLogRewritten) {
			return errRaced // read the log again
		}
		if err != nil {
			return fmt.Errorf("session %s: checkpoint %s: %w", name, head.meta.ID, err)
		}
		ps.usedNonces = hv.(headElem).UsedNonces
	}
	// Used resume tokens stay used: a save keeps its parent's nonces
	// whatever the caller passes (a checkpoint built afresh, or a Clone of
	// an older one, has none), so no writer can re-arm a token.
	c.UsedNonces = unionNonces(ps.usedNonces, c.UsedNonces)
	b := newBatch(s, ss, name, r)
	defer b.release()
	plans, next, err := s.plan(b, c, ref, base, &rec.delta)
	if err != nil {
		return err
	}
	// Steps recognised as saved before were checked then.
	if err := c.validate(r != nil, plans[listSteps].changed, keptStep(ref, plans[listSteps])); err != nil {
		return err
	}
	for l := range numLists {
		rec.delta.lists[l] = plans[l].d
	}
	m.Hash = base.hashWith(&rec.delta, m)
	info, _ := json.Marshal(recordInfo{Task: maybeRedact(r, c.Task), Steps: len(c.Steps), CompletedSteps: c.CompletedSteps()})
	if s.codec.aead != nil {
		info = s.codec.sealBytes(infoAAD(name, m.ID), info)
	}
	rec.info = info
	var events []Event
	if s.events != nil {
		events = s.transitions(name, ss, head, ref, plans[listSteps], c, m)
	}
	rf := rec.encode()
	rec.size = len(rf)
	b.appendFrame(rf)
	var end LogPos
	lr, ranged := s.b.(logRanger)
	if ranged {
		end, err = lr.appendBatch(ctx, name, ss.pos, b.seal())
	} else {
		end, err = s.b.AppendLog(ctx, name, ss.pos, b.frameList())
	}
	if errors.Is(err, ErrConflict) {
		return errRaced // read again: a new head is a conflict then
	}
	if err != nil {
		return fmt.Errorf("save session %s: %w", name, err)
	}
	// The session takes the batch in as reading it back from the log
	// would (apply), without reading or parsing it again.
	start := end.N - int64(len(b.buf))
	for _, x := range b.blobs {
		loc := blobLoc{at: -1, n: uint32(x.n), kind: x.kind, codec: x.codec}
		if ranged {
			loc.at = start + int64(x.at)
		} else {
			ss.data[x.a] = b.buf[x.at : x.at+x.n : x.at+x.n]
		}
		ss.blobs[x.a] = loc
	}
	ss.applyRecord(name, rec)
	ss.pos = end
	ss.ref = next(ref, m.ID)
	c.SchemaVersion, c.ID, c.ParentID, c.Seq = SchemaVersion, m.ID, m.ParentID, m.Seq
	c.CreatedAt, c.UpdatedAt, c.Hash = m.CreatedAt, m.UpdatedAt, m.Hash
	if len(events) > 0 {
		s.events(name, events)
	}
	return nil
}

// unionNonces returns old followed by the nonces of add it lacks.
func unionNonces(old, add []string) []string {
	out := slices.Clone(old)
	for _, n := range add {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// keptStep returns whether a step ID belongs to a step the save keeps as
// it was saved (nil when the refs are not the head's: every step is
// checked).
func keptStep(ref refs, p listPlan) func(string) bool {
	if ref.stepAt == nil || len(ref.steps) == 0 {
		return nil
	}
	changed := make(map[int]bool, len(p.changed))
	for _, i := range p.changed {
		changed[i] = true
	}
	return func(id string) bool {
		j, ok := ref.stepAt[id]
		return ok && j < p.d.n && !changed[j]
	}
}

func conflictError(session, want, have string) error {
	if want == "" {
		want = "(none: a new session)"
	}
	if have == "" {
		have = "(none)"
	}
	return fmt.Errorf("%w: session %s: expected parent %s, latest is %s", ErrConflict, session, want, have)
}

func maybeRedact(r *redact.Redactor, s string) string {
	if r == nil {
		return s
	}
	return r.String(s)
}

// plan encodes what c holds that the head does not, and returns each
// list's plan and a function that turns the refs into the new head's.
func (s *LogStore) plan(b *batch, c *Checkpoint, ref refs, base *logIndex, d *logDelta) ([numLists]listPlan, func(refs, string) refs, error) {
	var plans [numLists]listPlan
	r, e := b.r, b.enc
	fail := func(err error) ([numLists]listPlan, func(refs, string) refs, error) { return plans, nil, err }
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: session %s: "+format, append([]any{ErrInvalid, c.Session}, args...)...)
	}

	var msgs []compact.Message
	var recs []compact.Record
	if t := c.Transcript; t != nil {
		msgs, recs = t.Messages, t.Records
	}
	var err error
	changed := unrecognised(msgs, ref.msgs, base.lists[listMessages], sameMessage)
	toStore := msgs
	if r != nil && len(changed) > 0 {
		// The messages to store are masked in one pass of the redactor
		// (redactMessages), and stored from toStore's positions.
		if len(changed) == len(msgs) { // all new: no copies to line them up
			toStore = redactMessages(r, msgs)
		} else {
			fresh := make([]compact.Message, len(changed))
			for k, i := range changed {
				fresh[k] = msgs[i]
			}
			fresh = redactMessages(r, fresh)
			toStore = make([]compact.Message, len(msgs))
			for k, i := range changed {
				toStore[i] = fresh[k]
			}
		}
	}
	plans[listMessages], err = planListAt(b, kindMessage, toStore, changed, base.lists[listMessages],
		func(m *compact.Message) ([]byte, error) { return encodeMessage(e, m), nil })
	if err != nil {
		return fail(invalid("transcript: %v", err))
	}
	plans[listRecords], err = planList(b, kindRecord, recs, ref.recs, base.lists[listRecords], sameRecord,
		func(x *compact.Record) ([]byte, error) {
			y := *x
			if r != nil {
				y.Raw = b.json(y.Raw)
			}
			return encodeRecord(e, &y)
		})
	if err != nil {
		return fail(invalid("transcript records: %v", err))
	}
	plans[listSteps], err = planList(b, kindStep, c.Steps, ref.steps, base.lists[listSteps], sameStep,
		func(st *Step) ([]byte, error) {
			if len(st.Args) > 0 && !json.Valid(st.Args) {
				return nil, invalid("step %q: args are not valid JSON", st.ID)
			}
			x := *st
			if r != nil {
				x.Output, x.Error, x.Args = r.String(x.Output), r.String(x.Error), b.json(x.Args)
			}
			return e.json(&x, nil)
		})
	if err != nil {
		return fail(err)
	}
	// The cache is a map: its list keeps the order it was saved in, then
	// new keys sorted.
	cache := cacheOrder(c.ToolCache, ref)
	plans[listCache], err = planList(b, kindCache, cache, ref.cache, base.lists[listCache],
		func(x, y *cacheEntry) bool { return x.Key == y.Key && sameRaw(x.Value, y.Value) },
		func(x *cacheEntry) ([]byte, error) {
			if !json.Valid(x.Value) {
				return nil, invalid("tool cache entry %q is not valid JSON", x.Key)
			}
			y := *x
			if r != nil {
				y.Value = b.json(y.Value)
			}
			return e.json(&y, nil)
		})
	if err != nil {
		return fail(err)
	}
	plans[listEffects], err = planList(b, kindEffect, c.SideEffects, ref.effects, base.lists[listEffects], sameEffect,
		func(x *SideEffect) ([]byte, error) {
			y := *x
			if r != nil {
				y.Receipt = b.json(y.Receipt)
			}
			return e.json(&y, nil)
		})
	if err != nil {
		return fail(invalid("side effect: %v", err))
	}
	plans[listCompactions], err = planList(b, kindCompaction, c.Compactions, ref.comps, base.lists[listCompactions], sameCompaction,
		func(x *compact.Compaction) ([]byte, error) {
			y := *x
			if r != nil {
				y.Reason = r.String(y.Reason)
				y.Warnings = slices.Clone(y.Warnings)
				for i := range y.Warnings {
					y.Warnings[i] = r.String(y.Warnings[i])
				}
			}
			return e.json(&y, nil)
		})
	if err != nil {
		return fail(invalid("compaction record: %v", err))
	}

	h := headElem{Task: c.Task, PlanVersion: c.PlanVersion, CurrentStep: c.CurrentStep, Pending: c.Pending,
		Permissions: c.Permissions, RetryCount: c.RetryCount, LastError: c.LastError, UsedNonces: c.UsedNonces}
	if r != nil {
		h.Task, h.LastError = r.String(h.Task), r.String(h.LastError)
		if h.Pending != nil {
			p := *h.Pending
			// The params hash stays that of the real params: an approval
			// is bound to what will run, not to its masked picture.
			p.Params = b.json(p.Params)
			h.Pending = &p
		}
		h.Permissions = slices.Clone(h.Permissions)
		for i := range h.Permissions {
			h.Permissions[i].Ref = r.String(h.Permissions[i].Ref)
		}
	}
	hb, err := e.json(&h, nil)
	if err != nil {
		return fail(invalid("%v", err))
	}
	d.head = b.put(kindHead, hb)

	switch {
	case c.Transcript == nil:
	case ref.tshell != nil && base.tr != nil && sameTranscriptShell(c.Transcript, ref.tshell):
		d.tr = base.tr
	default:
		t := c.Transcript
		if r != nil {
			x := redactShell(r, *t)
			t = &x
		}
		tb, err := encodeTranscript(e, t)
		if err != nil {
			return fail(invalid("transcript: %v", err))
		}
		a := b.put(kindTranscript, tb)
		d.tr = &a
	}
	switch {
	case len(c.State) == 0:
	case base.st != nil && ref.state != nil && bytes.Equal(c.State, ref.state):
		d.st = base.st
	default:
		if !json.Valid(c.State) {
			return fail(invalid("state is not valid JSON"))
		}
		st := c.State
		if r != nil {
			st = b.json(st)
		}
		a := b.put(kindState, st)
		d.st = &a
	}

	// The refs of the new head: what was recognised stays, the rest is
	// copied from the caller, so that changing c afterwards is noticed.
	var shell *compact.Transcript
	if t := c.Transcript; t != nil {
		x := *t
		x.Tools = slices.Clone(t.Tools)
		x.Messages, x.Records = nil, nil
		shell = &x
	}
	state := c.State
	// The head's index changes in place when the save is applied: its
	// lengths now are what the refs were aligned with.
	stepsLen, cacheLen := len(base.lists[listSteps]), len(base.lists[listCache])
	next := func(old refs, id string) refs {
		// In place: the old refs are the store's own and are replaced.
		n := refs{id: id, tshell: shell, state: state}
		n.msgs = nextRefs(old.msgs, msgs, plans[listMessages], compact.Message.Clone)
		n.recs = nextRefs(old.recs, recs, plans[listRecords], same[compact.Record])
		n.steps, n.stepAt = nextKeyed(old.steps, old.stepAt, c.Steps, plans[listSteps], stepsLen, func(s Step) string { return s.ID })
		n.cache, n.cacheAt = nextKeyed(old.cache, old.cacheAt, cache, plans[listCache], cacheLen, func(e cacheEntry) string { return e.Key })
		n.effects = nextRefs(old.effects, c.SideEffects, plans[listEffects], same[SideEffect])
		n.comps = nextRefs(old.comps, c.Compactions, plans[listCompactions], func(x compact.Compaction) compact.Compaction {
			x.DroppedIDs, x.Warnings = slices.Clone(x.DroppedIDs), slices.Clone(x.Warnings)
			return x
		})
		return n
	}
	return plans, next, nil
}

// cacheOrder lists a tool cache in the order the head's refs have it,
// then the new keys sorted, so an unchanged cache keeps its order.
func cacheOrder(m map[string]json.RawMessage, ref refs) []cacheEntry {
	out := make([]cacheEntry, 0, len(m))
	for _, e := range ref.cache {
		if v, ok := m[e.Key]; ok {
			out = append(out, cacheEntry{Key: e.Key, Value: v})
		}
	}
	if len(out) == len(m) {
		return out
	}
	var fresh []string
	for key := range m {
		if _, ok := ref.cacheAt[key]; !ok {
			fresh = append(fresh, key)
		}
	}
	slices.Sort(fresh)
	for _, key := range fresh {
		out = append(out, cacheEntry{Key: key, Value: m[key]})
	}
	return out
}

// transitions lists the events of saving c over head. With the head's
// refs at hand only the steps the save changes are compared.
func (s *LogStore) transitions(name string, ss *logSession, head *logRecord, ref refs, p listPlan, c *Checkpoint, m *recordMeta) []Event {
	d := &Checkpoint{Session: name, ID: m.ID, Seq: m.Seq, Status: c.Status, Steps: c.Steps, UpdatedAt: m.UpdatedAt}
	if head == nil {
		if s.legacy != nil {
			if h, err := s.legacy.readHead(name); err == nil {
				return transitions(&h, d)
			}
		}
		return transitions(nil, d)
	}
	prev := headRecord{Info: SessionInfo{Status: head.meta.Status}, Steps: map[string]StepStatus{}}
	if ref.id == head.meta.ID && len(ref.steps) == len(ss.head.lists[listSteps]) {
		d.Steps = nil
		for _, i := range p.changed {
			d.Steps = append(d.Steps, c.Steps[i])
			if i < len(ref.steps) {
				prev.Steps[ref.steps[i].ID] = ref.steps[i].Status
			}
		}
		for i := p.d.n; i < len(ref.steps); i++ {
			prev.Steps[ref.steps[i].ID] = ref.steps[i].Status
		}
		return transitions(&prev, d)
	}
	for _, a := range ss.head.lists[listSteps] {
		if v, err := s.elem(name, ss, kindStep, a, head.meta.KeyID); err == nil {
			prev.Steps[v.(Step).ID] = v.(Step).Status
		}
	}
	return transitions(&prev, d)
}

// hashWith returns the hash of the checkpoint that applying d to x gives,
// without changing x: only the chunks the delta touches are rehashed.
func (x *logIndex) hashWith(d *logDelta, m *recordMeta) string {
	var n [numLists]int
	var chunks [numLists][][32]byte
	for l := range numLists {
		ld := &d.lists[l]
		base := x.lists[l]
		n[l] = ld.n
		t := touched(ld, len(base))
		if len(t) == 0 { // unchanged, or cut at a chunk's end
			chunks[l] = x.chunks[l][:min(len(x.chunks[l]), (ld.n+chunkLen-1)/chunkLen)]
			continue
		}
		chunks[l] = append([][32]byte(nil), x.chunks[l][:min(len(x.chunks[l]), (ld.n+chunkLen-1)/chunkLen)]...)
		k := min(ld.n, len(base))
		buf := make([]Addr, 0, chunkLen)
		for _, c := range t {
			buf = buf[:0]
			for i := c * chunkLen; i < min(ld.n, (c+1)*chunkLen); i++ {
				switch {
				case i >= k:
					buf = append(buf, ld.add[i-k])
				default:
					buf = append(buf, base[i])
				}
			}
			for _, op := range ld.sets {
				if op.i/chunkLen == c {
					buf[op.i-c*chunkLen] = op.a
				}
			}
			sum := chunkSum(buf)
			if c < len(chunks[l]) {
				chunks[l][c] = sum
			} else {
				chunks[l] = append(chunks[l], sum)
			}
		}
	}
	return hashOf(m, d.head, d.tr, d.st, n, chunks)
}
