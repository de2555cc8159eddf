package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// storeTimeout bounds one store operation: a slow store delays a
// compaction by at most this much, and a failing one never fails a request.
const storeTimeout = 5 * time.Second

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

// prefixOf returns the session's prefix if v repeats what it covers: the
// one in memory, or, the first time a session is seen, the one in the
// store.
func (s *Server) prefixOf(ctx context.Context, sess *session, v *view) *prefix {
	if p := sess.prefix(); p != nil && p.extends(v.shape) {
		return p
	}
	if s.store == nil || sess.loaded {
		return nil
	}
	sess.loaded = true
	p, err := s.loadPrefix(ctx, sess.key, v.api)
	if err != nil || p == nil || !p.extends(v.shape) {
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			s.log.Warn("prefix not loaded", "session", sess.key, "error", s.clean(err))
		}
		return nil
	}
	sess.setPrefix(p)
	return p
}

func (s *Server) loadPrefix(ctx context.Context, session string, a *api) (*prefix, error) {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	c, err := s.store.Latest(ctx, session)
	if err != nil {
		return nil, err
	}
	st := c.Step(prefixStep)
	if st == nil {
		return nil, nil
	}
	var sp storedPrefix
	if err := json.Unmarshal(st.Args, &sp); err != nil {
		return nil, fmt.Errorf("session %s: step %s: %w", session, prefixStep, err)
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
			return nil, fmt.Errorf("session %s: step %s: %w: item %d out of range", session, prefixStep, checkpoint.ErrCorrupt, it)
		}
	}
	return p, nil
}

// savePrefix stores p as the session's latest checkpoint, with the
// compacted transcript and the compaction's record, compare-and-set on the
// latest (retried when another writer got in between).
func (s *Server) savePrefix(ctx context.Context, session string, a *api, p *prefix, res compactor.Result) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	sp := storedPrefix{API: a.name, Covered: p.covered, Items: p.items, LitTokens: p.litTokens, Hash: p.hash}
	for _, l := range p.lits {
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
		c.Transcript = &t
		c.Compactions = append(c.Compactions, res.Record)
		c.Steps = []checkpoint.Step{{ID: prefixStep, Status: checkpoint.StepCompleted, InputHash: p.coveredHash, Args: args}}
		if err = s.store.Save(ctx, c, parent); !errors.Is(err, checkpoint.ErrConflict) {
			return err
		}
	}
	return err
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
