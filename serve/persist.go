package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/redact"
)

// This file keeps prefixes in the checkpoint store, so that a restarted
// proxy, or another one sharing a Redis store, forwards a conversation with
// the same compacted prefix instead of compacting it afresh. The checkpoint
// holds what `compact --checkpoint` stores (the compacted transcript and
// the compaction records) and one step, prefixStep, holding the prefix: which
// of the client's elements it keeps and the handoff element. The
// transcript is redacted here, whatever the store's mode; the prefix holds
// no client content but the handoff, which was written from redacted input.

// prefixStep is the ID of the checkpoint step that holds a prefix.
const prefixStep = "serve-prefix"

// Store defaults. The store is best-effort on the request path: a slow or
// unreachable store delays a request by at most DefaultStoreTimeout, once,
// and is then left alone for storeBackoff, never failing a request.
const (
	// DefaultStoreTimeout bounds one store operation (a load, or a save
	// with its compare-and-set retries).
	DefaultStoreTimeout = 500 * time.Millisecond
	// storeBackoff is how long the store is skipped after it failed.
	storeBackoff = 30 * time.Second
)

// storeGuard skips the store for a while after it failed, so that a store
// that is down costs one timeout per storeBackoff rather than one per
// request, and says so once.
type storeGuard struct {
	mu    sync.Mutex
	until time.Time
}

// usable reports whether the store may be asked now.
func (g *storeGuard) usable() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Now().After(g.until)
}

// failed notes a store failure; it reports true when the store was in
// use until now, so the caller logs the failure once.
func (g *storeGuard) failed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	was := time.Now().After(g.until)
	g.until = time.Now().Add(storeBackoff)
	return was
}

// bounded runs one store operation within the store timeout. A store that
// does not honour its context's deadline is left to finish on its own: the
// request goes on without it.
func (s *Server) bounded(ctx context.Context, op func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- op(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// The goroutine's own cancel closes ctx.Done right after a finished
		// op sent its answer, and select picks among ready cases at random:
		// an answer that is there wins over the deadline.
		select {
		case err := <-done:
			return err
		default:
		}
		return fmt.Errorf("checkpoint store: no answer within %s: %w", s.cfg.StoreTimeout, ctx.Err())
	}
}

// storeOutage reports whether err says the store itself failed (down,
// slow, refusing), as opposed to an answer about the data.
func storeOutage(err error) bool {
	return err != nil && !errors.Is(err, checkpoint.ErrNotFound) && !errors.Is(err, checkpoint.ErrConflict) &&
		!errors.Is(err, checkpoint.ErrCorrupt) && !errors.Is(err, context.Canceled)
}

// storeError counts and logs a store failure, and skips the store for a
// while when it is an outage.
func (s *Server) storeError(op, session string, err error) {
	s.metrics.storeErrors.Add(1)
	if !storeOutage(err) {
		s.log.Warn("store: "+op+" failed", "session", session, "error", s.clean(err))
		return
	}
	if s.guard.failed() {
		s.log.Warn("store unavailable: not used for "+storeBackoff.String(), "op", op, "session", session, "error", s.clean(err))
	}
}

// storedPrefix is a prefix as the checkpoint step's Args hold it.
type storedPrefix struct {
	API     string   `json:"api"`
	Covered int      `json:"covered"`
	Items   []int    `json:"items"`
	Lits    []string `json:"lits"`
	// LitTokens counts the handoff's tokens.
	LitTokens int    `json:"lit_tokens"`
	Hash      string `json:"hash"`
}

// prefixOf returns the session's prefix that v repeats the dropped
// elements of: one in memory, or, the first time a session is seen, one in
// the store.
func (s *Server) prefixOf(ctx context.Context, sess *session, v *view) *prefix {
	if p := sess.match(v.shape); p != nil {
		return p
	}
	if s.store == nil || sess.loaded {
		return nil
	}
	if !s.guard.usable() {
		s.metrics.storeSkipped.Add(1)
		return nil // asked again once the store is back
	}
	ps, err := s.loadPrefixes(ctx, sess.key, v.api)
	sess.loaded = !storeOutage(err)
	if err != nil {
		if !errors.Is(err, checkpoint.ErrNotFound) {
			s.storeError("load", sess.key, err)
		}
		return nil
	}
	sess.add(ps)
	return sess.match(v.shape)
}

// isPrefixStep reports whether a checkpoint step holds a prefix: one per
// line of the session, named by the elements it drops.
func isPrefixStep(id string) bool {
	return id == prefixStep || strings.HasPrefix(id, prefixStep+"/")
}

func prefixStepID(p *prefix) string {
	return prefixStep + "/" + p.coveredHash[:min(len(p.coveredHash), 16)]
}

// loadPrefixes returns the prefixes of the session's latest checkpoint
// for API a.
func (s *Server) loadPrefixes(ctx context.Context, session string, a *api) ([]*prefix, error) {
	var c *checkpoint.Checkpoint
	err := s.bounded(ctx, func(ctx context.Context) (err error) {
		c, err = s.store.Latest(ctx, session)
		return err
	})
	if err != nil {
		return nil, err
	}
	var ps []*prefix
	for i := range c.Steps {
		st := &c.Steps[i]
		if !isPrefixStep(st.ID) {
			continue
		}
		p, err := decodePrefix(st, a)
		if err != nil {
			return nil, fmt.Errorf("session %s: step %s: %w", session, st.ID, err)
		}
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// decodePrefix reads a prefix step; nil when it is another API's.
func decodePrefix(st *checkpoint.Step, a *api) (*prefix, error) {
	var sp storedPrefix
	if err := json.Unmarshal(st.Args, &sp); err != nil {
		return nil, err
	}
	if sp.API != a.name {
		return nil, nil
	}
	p := &prefix{covered: sp.Covered, coveredHash: st.InputHash, items: sp.Items, litTokens: sp.LitTokens, hash: sp.Hash}
	for _, l := range sp.Lits {
		p.lits = append(p.lits, []byte(l))
	}
	for _, it := range p.items {
		if it >= p.covered || -1-it >= len(p.lits) {
			return nil, fmt.Errorf("%w: item %d out of range", checkpoint.ErrCorrupt, it)
		}
	}
	return p, nil
}

// savePrefix stores np as a prefix of the session's latest checkpoint, in
// place of from (the prefix it was folded from) and of any that drops the
// same elements, with the compacted transcript and the compaction's
// record, compare-and-set on the latest (retried when another writer got
// in between). The other lines' prefixes stay, the most recent first.
func (s *Server) savePrefix(ctx context.Context, session string, a *api, from, np *prefix, res compactor.Result) error {
	sp := storedPrefix{API: a.name, Covered: np.covered, Items: np.items, LitTokens: np.litTokens, Hash: np.hash}
	for _, l := range np.lits {
		sp.Lits = append(sp.Lits, string(l))
	}
	args, err := json.Marshal(sp)
	if err != nil {
		return err
	}
	t, err := storedTranscript(res.Transcript)
	if err != nil {
		return err
	}
	step := checkpoint.Step{ID: prefixStepID(np), Status: checkpoint.StepCompleted, InputHash: np.coveredHash, Args: args}
	return s.bounded(context.WithoutCancel(ctx), func(ctx context.Context) error {
		return s.casPrefix(ctx, session, a, from, np, step, t, res.Record)
	})
}

// casPrefix writes step into the session's latest checkpoint, as
// savePrefix says.
func (s *Server) casPrefix(ctx context.Context, session string, a *api, from, np *prefix, step checkpoint.Step, t compact.Transcript, rec compact.Compaction) error {
	var err error
	for range 5 {
		c, lerr := s.store.Latest(ctx, session)
		parent := ""
		switch {
		case errors.Is(lerr, checkpoint.ErrNotFound):
			c = &checkpoint.Checkpoint{Session: session, Status: checkpoint.StatusRunning, Task: "compact serve: " + a.path}
		case lerr != nil:
			return lerr
		default:
			parent = c.ID
		}
		steps := []checkpoint.Step{step}
		for _, st := range c.Steps {
			replaced := st.InputHash == np.coveredHash || (from != nil && st.InputHash == from.coveredHash)
			if isPrefixStep(st.ID) && !replaced && len(steps) < maxLines {
				steps = append(steps, st)
			}
		}
		c.Transcript = &t
		c.Compactions = appendRecord(c.Compactions, rec)
		c.Steps = steps
		if err = s.store.Save(ctx, c, parent); !errors.Is(err, checkpoint.ErrConflict) {
			return err
		}
	}
	return err
}

// maxRecords bounds the compaction records a conversation's checkpoint
// keeps. A long-running proxy compacts one conversation again and again:
// unbounded, every save would carry (and every load decode) each record
// since the conversation began.
const maxRecords = 32

// foldedReason starts the Reason of the record that stands for the
// records folded out (see appendRecord).
const foldedReason = "compact serve: folded "

// appendRecord returns recs with rec appended, keeping at most maxRecords:
// the newest, after one record that stands for all the older ones (its
// Reason counts them; tokens before the first of them and after the last,
// the time and source hash of the last), so the count of compactions and
// where the conversation started stay known.
func appendRecord(recs []compact.Compaction, rec compact.Compaction) []compact.Compaction {
	recs = append(recs, rec)
	if len(recs) <= maxRecords {
		return recs
	}
	old := recs[:len(recs)-(maxRecords-1)]
	n := 0
	for _, r := range old {
		n += foldedCount(r)
	}
	last := old[len(old)-1]
	fold := compact.Compaction{SourceHash: last.SourceHash, Method: compact.MethodNone,
		Reason:       fmt.Sprintf("%s%d earlier compactions (only the newest %d records are kept)", foldedReason, n, maxRecords-1),
		TokensBefore: old[0].TokensBefore, TokensAfter: last.TokensAfter, At: last.At}
	out := make([]compact.Compaction, 0, maxRecords)
	return append(append(out, fold), recs[len(old):]...)
}

// foldedCount is how many compactions a record stands for: a folded
// record's count, else 1.
func foldedCount(r compact.Compaction) int {
	var n int
	if rest, ok := strings.CutPrefix(r.Reason, foldedReason); ok {
		if _, err := fmt.Sscanf(rest, "%d ", &n); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// storedTranscript is the compacted transcript as the store gets it,
// redacted here whatever the store's mode: its messages without the
// source bytes of the request (which the prefix does not need: kept
// elements come from each request), and none of the request's other
// fields.
func storedTranscript(t compact.Transcript) (compact.Transcript, error) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		return t, err
	}
	out := compact.Transcript{Format: t.Format, Messages: make([]compact.Message, len(t.Messages))}
	for i, m := range t.Messages {
		m = m.Clone()
		m.Source = compact.Source{Format: m.Source.Format}
		out.Messages[i] = m
	}
	out, _ = r.Transcript(out)
	for i := range out.Messages {
		m := &out.Messages[i]
		m.Name = r.String(m.Name)
		for j := range m.Parts {
			p := &m.Parts[j]
			p.Text = r.String(p.Text)
			if p.Image != nil {
				p.Image.URL, p.Image.Data = r.String(p.Image.URL), ""
			}
			if p.ToolCall != nil {
				args := r.String(string(p.ToolCall.Arguments))
				if !json.Valid([]byte(args)) {
					args = string(mustJSON(args))
				}
				p.ToolCall.Arguments = json.RawMessage(args)
			}
		}
	}
	return out, nil
}
