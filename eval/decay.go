package eval

import (
	"bytes"
	"cmp"
	"context"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/tokens"
)

// Decay is a session replayed as it grew, compacted each time it reached
// the window, each handoff folding the one before: what the agent can
// still find after one compaction, after two, after four.
type Decay struct {
	Window int          `json:"window"`
	Points []DecayPoint `json:"points"`
	Error  string       `json:"error,omitempty"`
}

// DecayPoint is the state right after one compaction of the replay.
type DecayPoint struct {
	// Compaction counts the compactions so far, from 1.
	Compaction int `json:"compaction"`
	// At is how many of the session's messages had been replayed.
	At int `json:"at"`
	// Need counts the facts the agent used after At that the compactions
	// so far dropped and no verbatim message kept; Kept those the
	// compacted transcript still has.
	Need         int `json:"need"`
	Kept         int `json:"kept"`
	HandoffChars int `json:"handoff_chars"`
	TokensAfter  int `json:"tokens_after"`
}

// Decay windows: a quarter of the session, so that a long session is
// compacted several times, and never under minDecayWindow, under which the
// handoff's own floor (2,000 tokens) and the kept head leave no room for
// turns between compactions.
const (
	minDecayWindow = 32000
	decayShare     = 4
)

// decay replays s message by message into a growing transcript and
// compacts it whenever the compactor's trigger is reached, up to
// e.opts.Decay compactions, measuring future-use recall after each.
func (e *Evaluator) decay(ctx context.Context, s *session) *Decay {
	d := &Decay{}
	all, err := s.transcript()
	if err != nil {
		d.Error = err.Error()
		return d
	}
	cfg := e.opts.Config
	if cfg.Counter == nil {
		c, err := tokens.ForModel(cmp.Or(cfg.Model, compactor.DefaultModel), tokens.WithModels(cfg.Models))
		if err != nil {
			d.Error = err.Error()
			return d
		}
		cfg.Counter = c
	}
	d.Window = e.opts.DecayWindow
	if d.Window == 0 {
		d.Window = max(minDecayWindow, cfg.Counter.Transcript(all)/decayShare)
	}
	cfg = withWindow(cfg, d.Window)
	cfg.Force = false
	c, err := compactor.New(cfg)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	trigger := c.Plan(compact.Transcript{}).Trigger
	// A compaction is tried again only once the transcript grew by a tenth
	// of the trigger since the last try, so a session whose kept head and
	// tail alone reach the trigger is not compacted at every message.
	step := max(trigger/10, 1)

	live := compact.Transcript{Format: all.Format, Tools: all.Tools}
	var origin []int // each live message's index in s.msgs; -1 for a handoff
	base := cfg.Counter.Transcript(compact.Transcript{Tools: all.Tools})
	running, lastTry := base, 0
	for i, m := range all.Messages {
		if ctx.Err() != nil {
			d.Error = ctx.Err().Error()
			return d
		}
		live.Messages = append(live.Messages, m)
		origin = append(origin, i)
		running += cfg.Counter.Message(m)
		last := i+1 == len(all.Messages)
		if running < trigger || running-lastTry < step || last || s.msgs[i+1].role == "tool" {
			continue
		}
		lastTry = running
		res, err := c.Compact(ctx, live)
		if err != nil {
			d.Error = fmt.Sprintf("compaction %d at message %d: %v", len(d.Points)+1, i+1, err)
			return d
		}
		if err := fellBack(res); err != nil {
			d.Error = fmt.Sprintf("compaction %d at message %d: %v", len(d.Points)+1, i+1, err)
			return d
		}
		if res.Handoff == nil {
			continue
		}
		origin = remapOrigin(origin, res)
		live = res.Transcript
		running = res.Record.TokensAfter
		lastTry = running
		p, err := s.decayPoint(live, origin, i+1)
		if err != nil {
			d.Error = err.Error()
			return d
		}
		p.Compaction = len(d.Points) + 1
		p.HandoffChars = pythonLen(res.Handoff.Render())
		p.TokensAfter = res.Record.TokensAfter
		d.Points = append(d.Points, p)
		if len(d.Points) == e.opts.Decay {
			break
		}
	}
	return d
}

// remapOrigin maps a compaction's output messages to the session's
// messages: head, pinned messages, the handoff (-1), tail.
func remapOrigin(origin []int, res compactor.Result) []int {
	p := res.Plan
	out := make([]int, 0, len(res.Transcript.Messages))
	out = append(out, origin[:p.HeadEnd]...)
	for _, k := range p.Pinned {
		out = append(out, origin[k])
	}
	out = append(out, -1)
	out = append(out, origin[p.TailStart:]...)
	return out
}

// decayPoint measures the live transcript after at messages: the facts the
// agent used after at that only dropped messages held, and how many of
// them the live transcript (as written) still has.
func (s *session) decayPoint(live compact.Transcript, origin []int, at int) (DecayPoint, error) {
	p := DecayPoint{At: at}
	verbatim := make([]bool, at)
	for _, o := range origin {
		if o >= 0 {
			verbatim[o] = true
		}
	}
	var kept, dropped []chatMsg
	for i := 0; i < at; i++ {
		if verbatim[i] {
			kept = append(kept, s.msgs[i])
		} else {
			dropped = append(dropped, s.msgs[i])
		}
	}
	// needed takes the dropped messages as a range of its prefix.
	prefix := append(append([]chatMsg(nil), dropped...), kept...)
	need := s.needed(prefix, 0, len(dropped), s.msgs[at:])
	out, err := written(live)
	if err != nil {
		return p, err
	}
	hay := newHaystack(out)
	for _, f := range need {
		if hay.has(s.facts[f]) {
			p.Kept++
		}
	}
	p.Need = len(need)
	return p, nil
}

// transcript reads the whole converted session back, one message per
// converted message.
func (s *session) transcript() (compact.Transcript, error) {
	var b bytes.Buffer
	b.WriteString(`{"messages": [`)
	for i, m := range s.msgs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(m.raw)
	}
	b.WriteString("]}")
	t, err := format.Read(&b, s.name, format.OpenAIChat)
	if err != nil {
		return t, err
	}
	if len(t.Messages) != len(s.msgs) {
		return t, fmt.Errorf("%d converted messages read back as %d", len(s.msgs), len(t.Messages))
	}
	return t, nil
}
