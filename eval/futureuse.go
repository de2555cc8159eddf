package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/tokens"
)

// DefaultCuts are the cut points of a future-use measurement: shares of a
// session's converted messages.
var DefaultCuts = []float64{0.5, 0.7, 0.85}

// Options configures an Evaluator. The zero value works: the default cuts,
// the compactor's defaults (the deterministic fallback unless Config says
// otherwise), decay over four compactions.
type Options struct {
	// Cuts are the cut points, each a share in (0, 1) of the session's
	// messages (default DefaultCuts).
	Cuts []float64
	// Config is the compaction to measure (start from
	// compactor.DefaultConfig). Window, when zero, is set for each cut to
	// 90% of the prefix's tokens (at least 4,000), as the reference scorer
	// does; Force is always set. A target is best given as a share
	// (TargetShare), which follows each cut's window.
	Config compactor.Config
	// CountModel is the model whose counts size the windows (default
	// gpt-4o, what `compact count` counts with).
	CountModel string
	// Decay is how many compactions the decay replay runs to (default 4);
	// negative turns decay off.
	Decay int
	// DecayWindow is the window of the decay replay; zero sizes it to each
	// session (see decay).
	DecayWindow int
	// Read says how the measured sessions are read (damaged lines,
	// invalid UTF-8), as every command that reads a transcript does.
	Read format.ReadOptions
}

// Evaluator measures what compactions keep. It is safe for concurrent use
// by several goroutines, one file each.
type Evaluator struct {
	opts    Options
	counter *tokens.Counter
}

// ErrOptions is returned (wrapped) by New for options that cannot be used.
var ErrOptions = errors.New("invalid eval options")

// New checks opts and returns an Evaluator.
func New(opts Options) (*Evaluator, error) {
	if len(opts.Cuts) == 0 {
		opts.Cuts = DefaultCuts
	}
	for _, c := range opts.Cuts {
		if !(c > 0 && c < 1) {
			return nil, fmt.Errorf("%w: cut %g is not a share in (0, 1)", ErrOptions, c)
		}
	}
	if opts.DecayWindow < 0 {
		return nil, fmt.Errorf("%w: decay window %d is negative", ErrOptions, opts.DecayWindow)
	}
	if opts.Decay == 0 {
		opts.Decay = 4
	}
	if opts.CountModel == "" {
		opts.CountModel = "gpt-4o"
	}
	c, err := tokens.ForModel(opts.CountModel)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	// A compactor that cannot be built for these options fails here, once,
	// rather than on every cut.
	if _, err := compactor.New(withWindow(opts.Config, max(opts.Config.Window, 32000))); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return &Evaluator{opts: opts, counter: c}, nil
}

// Row is one cut of one session.
type Row struct {
	Cut float64 `json:"cut"`
	// Messages is how many converted messages precede the cut.
	Messages int `json:"messages"`
	Window   int `json:"window"`
	// DroppedFrom and DroppedTo delimit the dropped middle of the prefix.
	DroppedFrom int `json:"dropped_from"`
	DroppedTo   int `json:"dropped_to"`
	// Need counts the facts the agent used after the cut that only the
	// dropped middle held; Kept those the compacted output still has.
	Need int `json:"need"`
	Kept int `json:"kept"`
	// Baselines at the handoff's size: the newest dropped text cut to it
	// (recency), the newest whole dropped messages that fit in it (a
	// longer verbatim tail, head+tail), and the prune strategy's output
	// (its own size, PruneTokens).
	Recency  int `json:"recency"`
	HeadTail int `json:"head_tail"`
	Prune    int `json:"prune"`
	// HandoffChars is the rendered handoff's length in characters.
	HandoffChars int            `json:"handoff_chars"`
	TokensBefore int            `json:"tokens_before"`
	TokensAfter  int            `json:"tokens_after"`
	PruneTokens  int            `json:"prune_tokens,omitempty"`
	Method       compact.Method `json:"method"`
	// OverWindow marks a compaction whose output does not fit the usable
	// window (compact itself warns "over the window"). Such a row is still
	// measured and totalled, as the reference scorer counts it; the total
	// says how many there were.
	OverWindow bool `json:"over_window,omitempty"`
	// Missing lists the needed facts the output lost, sorted, with what
	// kind of name each is and where the dropped middle had it.
	Missing []Missing `json:"missing,omitempty"`
	Error   string    `json:"error,omitempty"`
	// Needed lists every needed fact, sorted.
	Needed []string `json:"needed,omitempty"`
	// Handoff is the rendered handoff (not in JSON: see compact eval
	// --handoffs).
	Handoff string `json:"-"`
}

// Missing is a needed fact the compacted output lost.
type Missing struct {
	Fact string `json:"fact"`
	// Kind is the pattern that found it: path, call, snake, camel, url,
	// hex, version or number.
	Kind string `json:"kind"`
	// Source is who wrote it first in the dropped middle: "agent args"
	// (a tool call's arguments), "agent text", "tool output", "user" or
	// "system".
	Source string `json:"source"`
}

// FileResult is one session's measurement.
type FileResult struct {
	File string `json:"file"`
	// Messages is the length of the session converted to OpenAI Chat.
	Messages int    `json:"messages"`
	Rows     []Row  `json:"rows"`
	Decay    *Decay `json:"decay,omitempty"`
	// Error says why the file could not be measured at all;
	// Unrecognised that no format recognised it.
	Error        string `json:"error,omitempty"`
	Unrecognised bool   `json:"unrecognised,omitempty"`
}

// File measures one session read from r; name labels it.
func (e *Evaluator) File(ctx context.Context, name string, r io.Reader) FileResult {
	res := FileResult{File: name}
	s, err := readSession(name, r, e.opts.Read)
	if err != nil {
		res.Error = err.Error()
		res.Unrecognised = errors.Is(err, format.ErrUnknownFormat)
		return res
	}
	res.Messages = len(s.msgs)
	for _, cut := range e.opts.Cuts {
		if ctx.Err() != nil {
			res.Error = ctx.Err().Error()
			return res
		}
		if row, ok := e.cut(ctx, s, cut); ok {
			res.Rows = append(res.Rows, row)
		}
	}
	if e.opts.Decay > 0 && ctx.Err() == nil {
		res.Decay = e.decay(ctx, s)
	}
	return res
}

// cut measures one cut point. It reports false where the reference
// scorer has no row: a prefix under ten messages, nothing after the cut,
// or a compaction that dropped nothing.
func (e *Evaluator) cut(ctx context.Context, s *session, frac float64) (Row, bool) {
	row := Row{Cut: frac}
	k := int(float64(len(s.msgs)) * frac)
	for k > 1 && s.msgs[k].role == "tool" { // never cut between a call and its results
		k--
	}
	row.Messages = k
	if k < 10 || k >= len(s.msgs) {
		return row, false
	}
	t, err := s.prefix(k)
	if err != nil {
		row.Error = err.Error()
		return row, true
	}
	row.Window = e.opts.Config.Window
	if row.Window == 0 {
		row.Window = max(4000, int(float64(e.total(t))*0.9))
	}
	c, err := compactor.New(withWindow(e.opts.Config, row.Window))
	if err != nil {
		row.Error = err.Error()
		return row, true
	}
	res, err := c.Compact(ctx, t)
	if err != nil {
		row.Error = err.Error()
		return row, true
	}
	a, b := res.Record.DroppedFrom, res.Record.DroppedTo
	if b <= a {
		return row, false
	}
	row.DroppedFrom, row.DroppedTo, row.Method = a, b, res.Record.Method
	if err := fellBack(res); err != nil {
		// The figures would be the fallback's, not the summarizer's asked for.
		row.Error = err.Error()
		return row, true
	}
	row.OverWindow = res.Overflow() != nil
	row.TokensBefore, row.TokensAfter = res.Record.TokensBefore, res.Record.TokensAfter
	out, err := written(res.Transcript)
	if err != nil {
		row.Error = err.Error()
		return row, true
	}
	handoff := ""
	if res.Handoff != nil {
		handoff = res.Handoff.Render()
	}
	row.HandoffChars = pythonLen(handoff)
	row.Handoff = handoff

	need := s.needed(s.msgs[:k], a, b, s.msgs[k:])
	hay := newHaystack(out)
	recency := newHaystack(s.recency(a, b, row.HandoffChars))
	headTail := newHaystack(s.headTail(a, b, row.HandoffChars))
	var lost []int32
	for _, f := range need {
		fact := s.facts[f]
		if hay.has(fact) {
			row.Kept++
		} else {
			lost = append(lost, f)
		}
		if recency.has(fact) {
			row.Recency++
		}
		if headTail.has(fact) {
			row.HeadTail++
		}
	}
	row.Need = len(need)
	for _, f := range need {
		row.Needed = append(row.Needed, s.facts[f])
	}
	row.Missing = s.missing(lost, a, b)
	row.Prune, row.PruneTokens = e.prune(ctx, t, row.Window, need, s)
	return row, true
}

// withWindow returns cfg compacting, forced, at window tokens. (A window
// the model's output reserve does not fit gets the reserve scaled to it by
// compactor.New itself, as the CLI's --window does.)
func withWindow(cfg compactor.Config, window int) compactor.Config {
	cfg.Window = window
	cfg.Force = true
	return cfg
}

// total counts t as `compact count` does: every message with its chat
// overhead, and the reply priming.
func (e *Evaluator) total(t compact.Transcript) int {
	n := e.counter.CountMessages(nil, nil)
	for _, m := range t.Messages {
		n += e.counter.Message(m)
	}
	return n
}

// prune scores the prune strategy's output of t on the same needed facts
// and returns how many it keeps and its tokens.
func (e *Evaluator) prune(ctx context.Context, t compact.Transcript, window int, need []int32, s *session) (kept, tokensAfter int) {
	cfg := withWindow(e.opts.Config, window)
	cfg.Strategy, cfg.Summarizer = compactor.StrategyPrune, nil
	c, err := compactor.New(cfg)
	if err != nil {
		return 0, 0
	}
	res, err := c.Compact(ctx, t)
	if err != nil {
		return 0, 0
	}
	out, err := written(res.Transcript)
	if err != nil {
		return 0, 0
	}
	hay := newHaystack(out)
	for _, f := range need {
		if hay.has(s.facts[f]) {
			kept++
		}
	}
	return kept, res.Record.TokensAfter
}

// prefix returns the session's first k messages read back as the
// reference's prefix file, {"messages": [...]}, is read by the CLI.
func (s *session) prefix(k int) (compact.Transcript, error) {
	var b bytes.Buffer
	b.WriteString(`{"messages": [`)
	for i, m := range s.msgs[:k] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(m.raw)
	}
	b.WriteString("]}")
	t, err := format.Read(&b, s.name+" (prefix)", "")
	if err != nil {
		return t, fmt.Errorf("reading the prefix of %d messages back: %w", k, err)
	}
	if len(t.Messages) != k {
		return t, fmt.Errorf("the prefix of %d converted messages reads back as %d messages", k, len(t.Messages))
	}
	return t, nil
}

// written is t as the CLI writes it (-o), in its own format.
func written(t compact.Transcript) (string, error) {
	var b bytes.Buffer
	if err := format.Write(&b, t, format.Name(t.Format)); err != nil {
		return "", fmt.Errorf("writing the compacted transcript: %w", err)
	}
	return b.String(), nil
}

// pythonLen is the length in characters Python gives s read from a file in
// text mode (universal newlines: \r\n and \r read as \n).
func pythonLen(s string) int {
	return utf8.RuneCountInString(s) - strings.Count(s, "\r\n")
}

// needed returns the facts that the dropped messages prefix[a:b] held, no
// kept message of the prefix held, and the agent used after the cut before
// any later tool output or user message showed them again.
func (s *session) needed(prefix []chatMsg, a, b int, future []chatMsg) []int32 {
	mark := make([]uint8, len(s.facts))
	const (
		dropped = 1 << iota
		kept
		seen
		used
	)
	for i, m := range prefix {
		bit := uint8(kept)
		if i >= a && i < b {
			bit = dropped
		}
		for _, f := range m.facts {
			mark[f] |= bit
		}
	}
	for _, m := range future {
		if m.role == "assistant" {
			for _, f := range m.facts {
				if mark[f]&seen == 0 {
					mark[f] |= used
				}
			}
			continue
		}
		for _, f := range m.facts {
			mark[f] |= seen
		}
	}
	var need []int32
	for f, bits := range mark {
		if bits&dropped != 0 && bits&used != 0 && bits&kept == 0 {
			need = append(need, int32(f))
		}
	}
	slices.SortFunc(need, func(x, y int32) int { return strings.Compare(s.facts[x], s.facts[y]) })
	return need
}

// recency is the reference's baseline: the newest dropped messages' text,
// newest first, cut to room characters.
func (s *session) recency(a, b, room int) string {
	var buf []string
	for i := b - 1; i >= a && room > 0; i-- {
		m := s.msgs[i]
		buf = append(buf, prefixRunes(m.text, room))
		room -= m.runes
	}
	return strings.Join(buf, "\n")
}

// headTail is a longer verbatim tail in place of the handoff: the newest
// whole dropped messages whose text fits in room characters.
func (s *session) headTail(a, b, room int) string {
	var buf []string
	for i := b - 1; i >= a; i-- {
		m := s.msgs[i]
		if m.runes > room {
			break
		}
		buf = append(buf, m.text)
		room -= m.runes
	}
	return strings.Join(buf, "\n")
}

// prefixRunes returns s's first n characters.
func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// missing describes the lost facts: their kind, and who wrote them first
// in the dropped middle [a, b).
func (s *session) missing(lost []int32, a, b int) []Missing {
	var out []Missing
	for _, f := range lost {
		out = append(out, Missing{Fact: s.facts[f], Kind: FactKind(s.facts[f]), Source: s.source(f, a, b)})
	}
	return out
}

// source says who first wrote fact f in messages [a, b).
func (s *session) source(f int32, a, b int) string {
	for i := a; i < b; i++ {
		m := s.msgs[i]
		if !containsID(m.facts, f) {
			continue
		}
		switch {
		case m.role == "assistant" && containsID(m.argFacts, f):
			return "agent args"
		case m.role == "assistant":
			return "agent text"
		case m.role == "tool":
			return "tool output"
		case m.role == "user":
			return "user"
		default:
			return m.role
		}
	}
	return ""
}

// FactKind names the pattern that finds fact: path, url, call, version,
// hex, number, snake or camel.
func FactKind(fact string) string {
	switch {
	case strings.Contains(fact, "://"):
		return "url"
	case strings.ContainsAny(fact, `/\`):
		return "path"
	case strings.HasSuffix(fact, "("):
		return "call"
	case isHexID(fact) && strings.IndexFunc(fact, func(r rune) bool { return r < '0' || r > '9' }) >= 0:
		return "hex"
	case strings.Count(fact, ".") >= 2 && strings.Trim(fact, "0123456789.") == "":
		return "version"
	case strings.Trim(fact, "0123456789") == "":
		return "number"
	case strings.Contains(fact, "_"):
		return "snake"
	}
	return "camel"
}

// ErrFellBack is returned (wrapped) for a compaction whose handoff the
// deterministic fallback wrote because the Summarizer asked for (an LLM)
// failed: measuring it would report the fallback's figures as the LLM's.
var ErrFellBack = errors.New("the handoff fell back to the deterministic one")

// fellBack is nil unless res's handoff was written by the fallback in place
// of a Summarizer that failed; then it names the failure. A fallback asked
// for, or chosen by StrategyAuto because no LLM is configured, is not one.
func fellBack(res compactor.Result) error {
	if res.SummaryErr == nil {
		return nil
	}
	cause := strings.TrimPrefix(res.SummaryErr.Error(), compactor.ErrSummaryFailed.Error()+": ")
	if res.Fallback == compactor.FallbackInvalidHandoff {
		return fmt.Errorf("the LLM's handoff failed validation: %s; %w", cause, ErrFellBack)
	}
	return fmt.Errorf("the LLM failed: %s; %w", cause, ErrFellBack)
}
