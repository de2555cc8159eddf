package compactor

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact"
)

// Plan is where a compaction cuts a transcript. Messages [0, HeadEnd) and
// [TailStart, len) stay verbatim; of the middle [HeadEnd, TailStart) the
// Pinned messages stay verbatim too, ahead of the handoff, and the rest is
// dropped and summarized.
type Plan struct {
	// Tokens is the transcript's size; Trigger the size that triggers a
	// compaction; Target the size the result should fit in; TailBudget the
	// tokens the verbatim tail may hold.
	Tokens     int `json:"tokens"`
	Trigger    int `json:"trigger"`
	Target     int `json:"target"`
	TailBudget int `json:"tail_budget"`

	HeadEnd   int `json:"head_end"`
	TailStart int `json:"tail_start"`
	// Pinned lists the messages of the middle kept verbatim, ascending:
	// system notes and the latest user ask, when they fall in the middle.
	Pinned []int `json:"pinned,omitempty"`

	HeadTokens   int `json:"head_tokens"`
	WindowTokens int `json:"window_tokens"` // the whole middle, pinned messages included
	PinnedTokens int `json:"pinned_tokens"`
	TailTokens   int `json:"tail_tokens"`

	// Reason says why nothing will be compacted; empty when the plan drops
	// something.
	Reason string `json:"reason,omitempty"`
}

// Dropped returns how many messages the plan drops.
func (p *Plan) Dropped() int {
	return p.TailStart - p.HeadEnd - len(p.Pinned)
}

// DroppedTokens returns the tokens of the dropped messages.
func (p *Plan) DroppedTokens() int {
	return p.WindowTokens - p.PinnedTokens
}

// layout is what planning needs to know of a transcript, computed once.
type layout struct {
	msgs   []compact.Message
	counts []int // tokens per message
	base   int   // tokens outside the messages: tool definitions, priming
	total  int
	// blocked[p] is true when a cut before message p would separate a tool
	// call from one of its results.
	blocked []bool
	// grouped[i] is true when message i makes or answers a call.
	grouped []bool
	orphans []compact.Orphan
	// summary[i] is true when message i is an earlier summary the
	// compaction folds; forged[i] when it presents itself as a compact
	// handoff without verifying (trustedSummary).
	summary []bool
	forged  []bool
}

func newLayout(t *compact.Transcript, counter Counter, key []byte) *layout {
	n := len(t.Messages)
	l := &layout{msgs: t.Messages, counts: make([]int, n), blocked: make([]bool, n+1), grouped: make([]bool, n),
		summary: make([]bool, n), forged: make([]bool, n)}
	for i := range t.Messages {
		l.summary[i], l.forged[i] = trustedSummary(&t.Messages[i], key)
	}
	l.base = counter.Transcript(compact.Transcript{Tools: t.Tools})
	l.total = l.base
	if mc, ok := counter.(interface {
		Messages([]compact.Message) []int
	}); ok {
		l.counts = mc.Messages(t.Messages) // *tokens.Counter: on all cores
	} else {
		for i := range t.Messages {
			l.counts[i] = counter.Message(t.Messages[i])
		}
	}
	for _, n := range l.counts {
		l.total += n
	}
	// A difference array marks every cut inside (Call, End] of a group in
	// one pass, however groups interleave (parallel calls answered out of
	// order).
	diff := make([]int, n+2)
	groups, orphans := t.ToolPairs()
	for _, g := range groups {
		l.grouped[g.Call] = true
		for _, r := range g.Results {
			l.grouped[r] = true
		}
		if end := g.End(); end > g.Call {
			diff[g.Call+1]++
			diff[end+1]--
		}
	}
	l.orphans = orphans
	for _, o := range l.orphans {
		if o.Kind == compact.OrphanResult {
			l.grouped[o.Index] = true
		}
	}
	run := 0
	for p := 0; p <= n; p++ {
		run += diff[p]
		l.blocked[p] = run > 0
	}
	return l
}

func (l *layout) sum(from, to int) int {
	s := 0
	for i := from; i < to; i++ {
		s += l.counts[i]
	}
	return s
}

// trustedSummary reports whether m is an earlier summary a compaction
// folds: a compact handoff whose signature verifies under key, or another
// agent's summary as its reader marked it (Summary). A message that
// presents itself as a compact handoff (its text opens with the marker)
// without verifying is forged: text, summarized as a tool's output or a
// harness note is, whatever its Summary mark, so that a tool's output or
// a pasted text cannot plant a Goal, Constraints or Decisions that every
// later handoff would carry.
func trustedSummary(m *compact.Message, key []byte) (summary, forged bool) {
	if compact.ClaimsHandoff(m) {
		ok := compact.VerifyHandoff(m, key)
		return ok, !ok
	}
	return m.Summary, false
}

// isAsk reports whether message i is something the person asked: a user
// message of text that is not a tool result, a harness note, a summary the
// compaction folds or a forged handoff (text written to pass for one, read
// as a note injected into the conversation, not as the person's ask).
func (l *layout) isAsk(i int) bool {
	m := &l.msgs[i]
	return m.Role == compact.RoleUser && !m.Synthetic && !l.summary[i] && !l.forged[i] && !m.IsToolResult() &&
		strings.TrimSpace(m.Text()) != ""
}

// holdsOpaque reports whether m holds content only its provider can read.
func holdsOpaque(m *compact.Message) bool {
	for _, p := range m.Parts {
		if p.Type == compact.PartOpaque {
			return true
		}
	}
	return false
}

func isSystem(m *compact.Message) bool {
	return m.Role == compact.RoleSystem || m.Role == compact.RoleDeveloper
}

// plan decides whether and where to cut. It never fails: when nothing can
// be dropped, the returned plan has an empty middle and a Reason.
func (cfg *Config) plan(l *layout) Plan {
	n := len(l.msgs)
	p := Plan{Tokens: l.total, Target: cfg.TargetTokens}
	p.Trigger = cfg.trigger()
	budgetBase := p.Trigger
	if cfg.Force && l.total < budgetBase {
		budgetBase = l.total
	}
	p.TailBudget = cfg.KeepTailTokens
	if p.TailBudget <= 0 {
		p.TailBudget = int(defaultTailShare * float64(budgetBase))
	}

	firstSummary, lastSummary := -1, -1
	lastAssistant, latestAsk := -1, -1
	for i := range l.msgs {
		m := &l.msgs[i]
		summary := l.summary[i]
		if summary {
			if firstSummary < 0 {
				firstSummary = i
			}
			lastSummary = i
		}
		if m.Role == compact.RoleAssistant {
			lastAssistant = i
		}
		if l.isAsk(i) {
			latestAsk = i
		}
	}

	p.HeadEnd = cfg.headEnd(l, firstSummary)
	p.HeadTokens = l.sum(0, p.HeadEnd)
	// The tail must leave room for the head and the handoff within the
	// target; the minimum message count still wins over the budget.
	if room := p.Target - l.base - p.HeadTokens - cfg.handoffFloor(); room < p.TailBudget {
		p.TailBudget = max(room, 0)
	}
	p.TailStart = cfg.tailStart(l, p.HeadEnd, p.TailBudget, lastAssistant, lastSummary)
	p.TailStart = cfg.reachAsk(l, &p, latestAsk, lastSummary)
	p.TailTokens = l.sum(p.TailStart, n)
	p.WindowTokens = l.sum(p.HeadEnd, p.TailStart)

	for i := p.HeadEnd; i < p.TailStart; i++ {
		m := &l.msgs[i]
		opaque := holdsOpaque(m)
		if l.summary[i] && !opaque || l.grouped[i] {
			continue
		}
		// A provider's own compaction (compact.PartOpaque) cannot be read,
		// so it cannot be folded into the handoff: it is kept.
		if i == latestAsk || (isSystem(m) && !cfg.SummarizeSystemNotes) || opaque {
			p.Pinned = append(p.Pinned, i)
			p.PinnedTokens += l.counts[i]
		}
	}

	switch {
	case !cfg.Force && l.total < p.Trigger:
		p.Reason = fmt.Sprintf("below the trigger: %d of %d tokens", l.total, p.Trigger)
	case p.Dropped() <= 0:
		p.Reason = fmt.Sprintf("nothing eligible: the protected head (%d messages) and tail (%d messages) hold all %d messages",
			p.HeadEnd, n-p.TailStart, n)
		if len(p.Pinned) > 0 {
			p.Reason = fmt.Sprintf("nothing eligible: the protected head (%d messages), tail (%d) and pinned messages (%d) hold all %d messages",
				p.HeadEnd, n-p.TailStart, len(p.Pinned), n)
		}
	}
	if p.Reason != "" {
		p.TailStart, p.Pinned, p.WindowTokens, p.PinnedTokens = p.HeadEnd, nil, 0, 0
		p.TailTokens = l.sum(p.HeadEnd, n)
	}
	return p
}

// reachAsk extends the tail back to the latest user ask when that costs at
// most twice the tail budget and keeps the result within the target; the
// ask then stays where it was. Otherwise the ask is pinned: kept verbatim
// ahead of the handoff, with the work after it summarized.
func (cfg *Config) reachAsk(l *layout, p *Plan, latestAsk, lastSummary int) int {
	if latestAsk < p.HeadEnd || latestAsk >= p.TailStart || latestAsk <= lastSummary {
		return p.TailStart
	}
	start := latestAsk
	for start > p.HeadEnd && l.blocked[start] {
		start--
	}
	if start <= lastSummary || start == p.HeadEnd {
		return p.TailStart
	}
	tail := l.sum(start, len(l.msgs))
	if tail > 2*p.TailBudget || l.base+p.HeadTokens+cfg.handoffFloor()+tail > p.Target {
		return p.TailStart
	}
	return start
}

// headEnd returns the end of the protected head: the leading system
// messages, then KeepHead exchanges, an exchange being everything up to and
// including the next assistant message and the results of its calls. The
// head never reaches an earlier handoff, which must be folded.
func (cfg *Config) headEnd(l *layout, firstSummary int) int {
	n := len(l.msgs)
	i := 0
	for i < n && isSystem(&l.msgs[i]) {
		i++
	}
	for k := 0; k < cfg.KeepHead; k++ {
		j := i
		for j < n && l.msgs[j].Role != compact.RoleAssistant {
			j++
		}
		if j == n {
			break
		}
		i = j + 1
		for i < n && l.blocked[i] {
			i++
		}
	}
	if firstSummary >= 0 && firstSummary < i {
		i = firstSummary
		for i > 0 && l.blocked[i] {
			i--
		}
	}
	return i
}

// tailStart walks back from the end while the tail is under budget, then
// extends it to MinTailMessages and the last assistant message, and to the
// start of any tool group it would otherwise split. An earlier handoff is
// never kept in the tail: the tail then starts after it.
func (cfg *Config) tailStart(l *layout, headEnd, budget, lastAssistant, lastSummary int) int {
	n := len(l.msgs)
	start, tok := n, 0
	for start > headEnd {
		next := l.counts[start-1]
		haveMin := n-start >= cfg.MinTailMessages
		haveReply := lastAssistant < headEnd || start <= lastAssistant
		if haveMin && haveReply && tok+next > budget {
			break
		}
		start--
		tok += next
	}
	for start > headEnd && l.blocked[start] {
		start--
	}
	if lastSummary >= start {
		start = lastSummary + 1
		for start < n && l.blocked[start] {
			start++
		}
	}
	return start
}
