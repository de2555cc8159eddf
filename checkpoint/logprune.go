package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Prune implements Store. A session whose log or head is damaged is left
// whole and reported: prune never deletes what it cannot place in a chain.
func (s *LogStore) Prune(ctx context.Context, p PruneOptions) (PruneResult, error) {
	var res PruneResult
	names, err := s.Sessions(ctx)
	if err != nil && len(names) == 0 {
		return res, err
	}
	errs := []error{err}
	now := s.opts.now()
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		r, err := s.pruneSession(ctx, name, p, now)
		// A save that landed during the pass moved the log on: plan
		// again on the new log (a pruner is not a second writer).
		for try := 0; errors.Is(err, ErrConflict) && try < maxRaceRetries; try++ {
			r, err = s.pruneSession(ctx, name, p, now)
		}
		if errors.Is(err, ErrConflict) {
			res.Busy = append(res.Busy, name)
			continue
		}
		if errors.Is(err, ErrUnavailable) {
			return res, err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", name, err))
		}
		res.Checkpoints += r.Checkpoints
		res.Sessions += r.Sessions
	}
	if s.legacy != nil {
		s.legacy.sweepTrash()
	}
	return res, errors.Join(errs...)
}

// chainEntry is one checkpoint of a session's chain, newest first: a
// record of the log (rec >= 0) or a file from before logs.
type chainEntry struct {
	rec     int
	id      string
	updated time.Time
}

func (s *LogStore) pruneSession(ctx context.Context, name string, p PruneOptions, now time.Time) (PruneResult, error) {
	var res PruneResult
	ss, err := s.locked(ctx, name)
	if err != nil {
		return res, err
	}
	defer ss.mu.Unlock()
	if len(ss.damage) > 0 || len(ss.bad) > 0 {
		return res, fmt.Errorf("%w: session %s has damaged checkpoints; not pruned (checkpoint verify says which; checkpoint recover drops them)", ErrCorrupt, name)
	}
	var chain []chainEntry
	for i := len(ss.recs) - 1; i >= 0; i-- {
		chain = append(chain, chainEntry{rec: i, id: ss.recs[i].meta.ID, updated: ss.recs[i].meta.UpdatedAt})
	}
	if s.legacy != nil {
		from, fromHead := "", len(ss.recs) == 0
		if !fromHead {
			from = ss.recs[0].meta.ParentID
		}
		if fromHead || from != "" {
			metas, err := s.legacy.history(ctx, name, from, fromHead)
			switch {
			case errors.Is(err, ErrNotFound) && !fromHead:
			case errors.Is(err, ErrNotFound):
				return res, nil // nothing stored
			case err != nil:
				return res, fmt.Errorf("%w; not pruned", err)
			}
			for _, m := range metas {
				chain = append(chain, chainEntry{rec: -1, id: m.ID, updated: m.UpdatedAt})
			}
		}
	}
	if len(chain) == 0 {
		return res, nil
	}
	cutoff := now.Add(-p.MaxAge)
	if p.MaxAge > 0 && chain[0].updated.Before(cutoff) {
		res.Checkpoints, res.Sessions = len(chain), 1
		ss.reset(LogPos{})
		return res, s.b.DeleteLog(ctx, name)
	}
	keep := len(chain)
	for n, e := range chain {
		if n > 0 && ((p.KeepLast > 0 && n >= p.KeepLast) || (p.MaxAge > 0 && e.updated.Before(cutoff))) {
			keep = n
			break
		}
	}
	if keep == len(chain) {
		return res, nil
	}
	// Files from before logs that the chain no longer reaches.
	for _, e := range chain[keep:] {
		if e.rec >= 0 {
			continue
		}
		if err := os.Remove(filepath.Join(s.legacy.dir, name, e.id+ckptExt)); err != nil && !os.IsNotExist(err) {
			return res, err
		}
		res.Checkpoints++
	}
	// Records: the log is rewritten from the oldest record kept.
	oldest := chain[keep-1].rec
	if oldest > 0 {
		keep := make([]int, 0, len(ss.recs)-oldest)
		for i := oldest; i < len(ss.recs); i++ {
			keep = append(keep, i)
		}
		frames, err := s.rebuild(name, ss, keep)
		if err != nil {
			return res, err
		}
		if _, err := s.b.RewriteLog(ctx, name, ss.pos, frames); err != nil {
			return res, err
		}
		res.Checkpoints += oldest
		ss.reset(ss.pos)
		ss.pos = LogPos{}
	}
	if keep < len(chain) && chain[keep].rec < 0 && len(ss.recs) > 0 && oldest <= 0 {
		// Only legacy files went: the log stays as it is.
	}
	return res, nil
}

// rebuild returns the frames of a log holding the records keep (indices
// of the session's log, ascending) and every element they hold: a record
// that follows the one before it in the log, kept too, stays as it is;
// any other is written as a full record (the first, and one after a
// checkpoint left out).
func (s *LogStore) rebuild(name string, ss *logSession, keep []int) ([][]byte, error) {
	var recs []*logRecord
	for n, k := range keep {
		r := ss.recs[k]
		if r.full || (n > 0 && keep[n-1] == k-1 && ss.recs[k-1].meta.ID == r.meta.ParentID) {
			recs = append(recs, r)
			continue
		}
		x, err := ss.indexOf(k)
		if err != nil {
			return nil, err
		}
		x = x.clone()
		full := *r
		full.full = true
		full.delta = logDelta{head: x.head, tr: x.tr, st: x.st}
		for l := range numLists {
			full.delta.lists[l] = listDelta{n: len(x.lists[l]), add: x.lists[l]}
		}
		recs = append(recs, &full)
	}
	var order []Addr
	seen := map[Addr]bool{}
	need := func(a Addr) {
		if !seen[a] {
			seen[a] = true
			order = append(order, a)
		}
	}
	for _, r := range recs {
		d := &r.delta
		for _, a := range []*Addr{&d.head, d.tr, d.st} {
			if a != nil {
				need(*a)
			}
		}
		for l := range numLists {
			for _, op := range d.lists[l].sets {
				need(op.a)
			}
			for _, a := range d.lists[l].add {
				need(a)
			}
		}
	}
	got, err := s.fetch(name, ss, order)
	if err != nil {
		return nil, err
	}
	frames := make([][]byte, 0, len(order)+len(recs))
	for _, a := range order {
		loc, ok := ss.blobs[a]
		if !ok {
			return nil, fmt.Errorf("%w: element %x is not stored", ErrCorrupt, a[:6])
		}
		data, ok := got[a]
		if !ok {
			if data, err = s.blobBytes(name, ss, a, loc); err != nil {
				return nil, err
			}
		}
		frames = append(frames, blobFrame(a, loc.kind, loc.codec, data))
	}
	for _, r := range recs {
		frames = append(frames, r.encode())
	}
	return frames, nil
}

// Recover implements the recovery of Recover: the log is rewritten up to
// the newest checkpoint that loads and verifies in full, with the
// checkpoints before it whose elements are all there, without the
// damage.
func (s *LogStore) Recover(ctx context.Context, session string) (*Checkpoint, error) {
	ss, err := s.locked(ctx, session)
	if err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	if len(ss.recs) == 0 && len(ss.damage) == 0 {
		if s.legacy == nil {
			return nil, fmt.Errorf("%w: session %s", ErrNotFound, session)
		}
		if c, err := s.legacy.latest(ctx, session); err == nil {
			return c, nil
		}
		return s.legacy.recover(ctx, session)
	}
	// Every checkpoint is tried: the newest that loads is the head, and
	// every one before it that loads is kept, whatever the damage cost
	// between them (QA-34); only those that do not load are dropped.
	var lockedErr error
	var keep []int
	var head *Checkpoint
	for i := len(ss.recs) - 1; i >= 0; i-- {
		x, err := ss.indexOf(i)
		if err != nil {
			continue
		}
		c, _, err := s.materialize(session, ss, ss.recs[i], x)
		if locked(err) && lockedErr == nil {
			// Without its key a checkpoint cannot be checked: not damage.
			lockedErr = err
		}
		if err != nil {
			continue
		}
		if head == nil {
			if i == len(ss.recs)-1 && len(ss.damage) == 0 && len(ss.bad) == 0 {
				return c, nil // nothing to recover
			}
			head = c
		}
		keep = append(keep, i)
	}
	if head != nil {
		slices.Reverse(keep)
		frames, err := s.rebuild(session, ss, keep)
		if err != nil {
			return nil, err
		}
		if _, err := s.b.RewriteLog(ctx, session, ss.pos, frames); err != nil {
			return nil, err
		}
		ss.reset(LogPos{})
		return head, nil
	}
	if lockedErr != nil {
		return nil, fmt.Errorf("%w; nothing was changed", lockedErr)
	}
	where := ""
	if len(ss.damage) > 0 {
		where = " (" + ss.damage[0] + ")"
	}
	return nil, fmt.Errorf("%w: session %s: no checkpoint of its log verifies%s; nothing was changed", ErrCorrupt, session, where)
}

// StartOver implements the starting over of StartOver.
func (s *LogStore) StartOver(ctx context.Context, session string) (string, error) {
	b, ok := s.b.(LogSetAsider)
	if !ok {
		return "", fmt.Errorf("%w: this store cannot set a log aside", ErrInvalid)
	}
	ss, err := s.locked(ctx, session)
	if err != nil {
		return "", err
	}
	defer ss.mu.Unlock()
	r, err := ss.headState(session)
	if err == nil {
		// A head record whose elements are damaged loads no better.
		_, _, err = s.materialize(session, ss, r, ss.head)
	}
	switch {
	case err == nil:
		return "", fmt.Errorf("%w: session %s has a readable head: nothing to start over", ErrInvalid, session)
	case !errors.Is(err, ErrCorrupt):
		return "", err
	}
	where, err := b.SetAsideLog(ctx, session)
	if err != nil {
		return "", fmt.Errorf("session %s: set the damaged log aside: %w", session, err)
	}
	ss.reset(LogPos{})
	return where, nil
}

// sweepTrash removes what an interrupted Delete left.
func (l *legacyFiles) sweepTrash() {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if len(e.Name()) > len(trashName) && e.Name()[:len(trashName)] == trashName {
			os.RemoveAll(filepath.Join(l.dir, e.Name()))
		}
	}
}
