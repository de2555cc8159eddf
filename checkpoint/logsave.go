package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// batch collects the frames of one save: the blobs it introduces.
type batch struct {
	s       *LogStore
	ss      *logSession
	session string
	r       *redact.Redactor
	enc     *elemEncoder
	frames  [][]byte
	added   map[Addr]bool
	bytes   int
}

// put returns the address of an element, adding its blob to the batch
// unless the session's log already holds it.
func (b *batch) put(kind byte, data []byte) Addr {
	a := b.s.codec.address(kind, data)
	if _, ok := b.ss.blobs[a]; !ok && !b.added[a] {
		codec, stored := b.s.codec.sealBlob(b.session, a, data)
		f := blobFrame(a, kind, codec, stored)
		b.frames = append(b.frames, f)
		b.added[a] = true
		b.bytes += len(f)
	}
	return a
}

// listPlan is how one list of a save differs from the head's.
type listPlan struct {
	keep   int    // entries of the head's list kept
	add    []Addr // entries appended
	idKeep int    // leading entries recognised as the caller's earlier ones
}

// planList compares items with the refs of the head's list (base) and
// encodes only what it cannot recognise.
func planList[T any](b *batch, kind byte, items, ref []T, base []Addr, same func(x, y *T) bool, enc func(*T) ([]byte, error)) (listPlan, error) {
	var p listPlan
	if len(ref) == len(base) {
		for p.idKeep < len(items) && p.idKeep < len(ref) && same(&items[p.idKeep], &ref[p.idKeep]) {
			p.idKeep++
		}
	}
	addrs := make([]Addr, 0, len(items)-p.idKeep)
	for i := p.idKeep; i < len(items); i++ {
		data, err := enc(&items[i])
		if err != nil {
			return p, err
		}
		addrs = append(addrs, b.put(kind, data))
	}
	p.keep = p.idKeep
	for p.keep < len(base) && p.keep-p.idKeep < len(addrs) && addrs[p.keep-p.idKeep] == base[p.keep] {
		p.keep++
	}
	p.add = addrs[p.keep-p.idKeep:]
	return p, nil
}

// Save implements Store: it appends the elements the head does not hold
// and a record of what changed, in one durable write.
func (s *LogStore) Save(ctx context.Context, c *Checkpoint, parent string) error {
	r, err := s.redactorFor()
	if err != nil {
		return fmt.Errorf("checkpoint store: default redactor: %w", err)
	}
	if !ValidSessionID(c.Session) {
		return c.validate(false, 0, nil)
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
	}
	// Steps recognised as saved before were checked then.
	known := 0
	if len(ref.steps) == len(base.lists[listSteps]) {
		for known < len(c.Steps) && known < len(ref.steps) && sameStep(&c.Steps[known], &ref.steps[known]) {
			known++
		}
	}
	if err := c.validate(r != nil, known, ref.stepAt); err != nil {
		return err
	}
	b := &batch{s: s, ss: ss, session: name, r: r, enc: newElemEncoder(), added: map[Addr]bool{}}
	plans, next, err := s.plan(b, c, ref, base, &rec.delta)
	if err != nil {
		return err
	}
	for l := range numLists {
		rec.delta.keep[l], rec.delta.add[l] = plans[l].keep, plans[l].add
	}
	m.Hash = base.hashWith(&rec.delta, m)
	info, _ := json.Marshal(recordInfo{Task: maybeRedact(r, c.Task), Steps: len(c.Steps), CompletedSteps: c.CompletedSteps()})
	if s.codec.aead != nil {
		info = s.codec.sealBytes(infoAAD(name, m.ID), info)
	}
	rec.info = info
	var events []Event
	if s.events != nil {
		events = s.transitions(name, ss, head, ref, plans[listSteps].idKeep, c, m)
	}
	rf := rec.encode()
	frames := append(b.frames, rf)
	end, err := s.b.AppendLog(ctx, name, ss.pos, frames)
	if errors.Is(err, ErrConflict) {
		return fmt.Errorf("%w: session %s: another writer saved while this one was saving", ErrConflict, name)
	}
	if err != nil {
		return fmt.Errorf("save session %s: %w", name, err)
	}
	for _, f := range frames {
		ss.apply(name, f)
	}
	ss.pos = end
	ss.ref = next(ref, m.ID)
	c.SchemaVersion, c.ID, c.ParentID, c.Seq = SchemaVersion, m.ID, m.ParentID, m.Seq
	c.CreatedAt, c.UpdatedAt, c.Hash = m.CreatedAt, m.UpdatedAt, m.Hash
	if len(events) > 0 {
		s.events(name, events)
	}
	return nil
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
	plans[listMessages], err = planList(b, kindMessage, msgs, ref.msgs, base.lists[listMessages], sameMessage,
		func(m *compact.Message) ([]byte, error) {
			if r != nil {
				x := redactMessage(r, *m)
				m = &x
			}
			return encodeMessage(e, m)
		})
	if err != nil {
		return fail(invalid("transcript: %v", err))
	}
	plans[listRecords], err = planList(b, kindRecord, recs, ref.recs, base.lists[listRecords], sameRecord,
		func(x *compact.Record) ([]byte, error) {
			y := *x
			if r != nil {
				y.Raw = redactJSON(r, y.Raw)
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
				x.Output, x.Error, x.Args = r.String(x.Output), r.String(x.Error), redactJSON(r, x.Args)
			}
			return e.json(&x, nil)
		})
	if err != nil {
		return fail(err)
	}
	// The cache is a map: its list keeps the order it was saved in, the
	// entries recognised first, then new keys sorted.
	ck, cache := cacheOrder(c.ToolCache, ref)
	if len(ref.cache) != len(base.lists[listCache]) {
		ck, cache = 0, cacheOrder0(c.ToolCache)
	}
	plans[listCache], err = planList(b, kindCache, cache, ref.cache[min(ck, len(ref.cache)):], base.lists[listCache][min(ck, len(base.lists[listCache])):],
		func(x, y *cacheEntry) bool { return x.Key == y.Key && sameRaw(x.Value, y.Value) },
		func(x *cacheEntry) ([]byte, error) {
			if !json.Valid(x.Value) {
				return nil, invalid("tool cache entry %q is not valid JSON", x.Key)
			}
			y := *x
			if r != nil {
				y.Value = redactJSON(r, y.Value)
			}
			return e.json(&y, nil)
		})
	if err != nil {
		return fail(err)
	}
	plans[listCache].keep += ck
	plans[listCache].idKeep += ck
	plans[listEffects], err = planList(b, kindEffect, c.SideEffects, ref.effects, base.lists[listEffects], sameEffect,
		func(x *SideEffect) ([]byte, error) {
			y := *x
			if r != nil {
				y.Receipt = redactJSON(r, y.Receipt)
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
			p.Params = redactJSON(r, p.Params)
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
			st = redactJSON(r, st)
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
	newMsgs := cloneTail(msgs, plans[listMessages].idKeep, compact.Message.Clone)
	newRecs := slices.Clone(recs[plans[listRecords].idKeep:])
	newSteps := slices.Clone(c.Steps[plans[listSteps].idKeep:])
	newCache := slices.Clone(cache[plans[listCache].idKeep-ck:])
	newEffects := slices.Clone(c.SideEffects[plans[listEffects].idKeep:])
	newComps := cloneTail(c.Compactions, plans[listCompactions].idKeep, func(x compact.Compaction) compact.Compaction {
		x.DroppedIDs, x.Warnings = slices.Clone(x.DroppedIDs), slices.Clone(x.Warnings)
		return x
	})
	next := func(old refs, id string) refs {
		// In place: the old refs are the store's own and are replaced.
		k := plans[listSteps].idKeep
		if old.stepAt == nil {
			old.stepAt = map[string]int{}
		}
		for i := k; i < len(old.steps); i++ {
			if old.stepAt[old.steps[i].ID] == i {
				delete(old.stepAt, old.steps[i].ID)
			}
		}
		for i, st := range newSteps {
			old.stepAt[st.ID] = k + i
		}
		kc := plans[listCache].idKeep
		if old.cacheAt == nil {
			old.cacheAt = map[string]int{}
		}
		for i := kc; i < len(old.cache); i++ {
			if old.cacheAt[old.cache[i].Key] == i {
				delete(old.cacheAt, old.cache[i].Key)
			}
		}
		for i, e := range newCache {
			old.cacheAt[e.Key] = kc + i
		}
		return refs{id: id,
			msgs:    append(old.msgs[:plans[listMessages].idKeep], newMsgs...),
			recs:    append(old.recs[:plans[listRecords].idKeep], newRecs...),
			steps:   append(old.steps[:k], newSteps...),
			stepAt:  old.stepAt,
			cache:   append(old.cache[:kc], newCache...),
			cacheAt: old.cacheAt,
			effects: append(old.effects[:plans[listEffects].idKeep], newEffects...),
			comps:   append(old.comps[:plans[listCompactions].idKeep], newComps...),
			tshell:  shell, state: state,
		}
	}
	return plans, next, nil
}

func cloneTail[T any](in []T, from int, clone func(T) T) []T {
	out := make([]T, 0, len(in)-from)
	for _, x := range in[from:] {
		out = append(out, clone(x))
	}
	return out
}

// cacheOrder returns how many leading entries of the head's cache refs m
// still holds unchanged, and the rest of m in order: the refs' remaining
// entries m holds, then the new keys sorted.
func cacheOrder(m map[string]json.RawMessage, ref refs) (int, []cacheEntry) {
	k := 0
	for k < len(ref.cache) {
		e := &ref.cache[k]
		if v, ok := m[e.Key]; !ok || !sameRaw(v, e.Value) {
			break
		}
		k++
	}
	var out []cacheEntry
	for _, e := range ref.cache[k:] {
		if v, ok := m[e.Key]; ok {
			out = append(out, cacheEntry{Key: e.Key, Value: v})
		}
	}
	if k+len(out) == len(m) {
		return k, out
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
	return k, out
}

// cacheOrder0 lists m by key.
func cacheOrder0(m map[string]json.RawMessage) []cacheEntry {
	_, out := cacheOrder(m, refs{})
	return out
}

// transitions lists the events of saving c over head. With the head's
// refs at hand only the steps past the first known are compared.
func (s *LogStore) transitions(name string, ss *logSession, head *logRecord, ref refs, known int, c *Checkpoint, m *recordMeta) []Event {
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
	var steps []Step
	if ref.id == head.meta.ID {
		steps = ref.steps[known:]
		d.Steps = c.Steps[known:]
	} else {
		for _, a := range ss.head.lists[listSteps] {
			if v, err := s.elem(name, ss, kindStep, a, head.meta.KeyID); err == nil {
				steps = append(steps, v.(Step))
			}
		}
	}
	for _, st := range steps {
		prev.Steps[st.ID] = st.Status
	}
	return transitions(&prev, d)
}

// hashWith returns the hash of the checkpoint that applying d to x gives,
// without changing x: each list's digest continues from the last entry
// it keeps.
func (x *logIndex) hashWith(d *logDelta, m *recordMeta) string {
	var n [numLists]int
	var tips [numLists][32]byte
	for l := range numLists {
		k := d.keep[l]
		if k > 0 {
			tips[l] = x.digests[l][k-1]
		}
		for _, a := range d.add[l] {
			tips[l] = chainDigest(tips[l], a)
		}
		n[l] = k + len(d.add[l])
	}
	return hashOf(m, d.head, d.tr, d.st, n, tips)
}
