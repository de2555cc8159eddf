package compactor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// Compactor compacts transcripts. It is safe for concurrent use. Keep one
// for the life of an agent loop: its LLM summarizer's circuit breaker then
// remembers a failing provider across compactions.
type Compactor struct {
	cfg      Config
	counter  Counter
	exact    bool
	redactor *redact.Redactor
	primary  compact.Summarizer // nil: the fallback is the only summarizer
}

// New returns a Compactor configured by cfg, or an error wrapping
// ErrConfig that names the first value that cannot work.
func New(cfg Config) (*Compactor, error) {
	m, known, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("compactor: %w", err)
	}
	c := &Compactor{cfg: cfg, counter: cfg.Counter, redactor: cfg.Redactor, exact: known && !m.Estimated}
	if c.counter == nil {
		tc, err := tokens.ForModel(cfg.Model, tokens.WithModels(cfg.Models))
		if err != nil {
			return nil, fmt.Errorf("compactor: token counter for %q: %w", cfg.Model, err)
		}
		c.counter, c.exact = tc, tc.Exact()
	} else if e, ok := cfg.Counter.(interface{ Exact() bool }); ok {
		c.exact = e.Exact()
	} else {
		c.exact = true // the caller's counter: trust it
	}
	if c.redactor == nil {
		if c.redactor, err = redact.New(redact.Config{}); err != nil {
			return nil, fmt.Errorf("compactor: redactor: %w", err)
		}
	}
	if cfg.Strategy == StrategyAuto || cfg.Strategy == StrategyLLM {
		c.primary = cfg.Summarizer
	}
	return c, nil
}

// Exact reports whether token counts are exact (the model's own
// tokenizer) rather than estimates, as they are for models the table knows
// only by name or not at all.
func (c *Compactor) Exact() bool { return c.exact }

// Config returns the configuration in use, derived values (window,
// reserve, target) filled in.
func (c *Compactor) Config() Config { return c.cfg }

// Result is the outcome of a compaction.
type Result struct {
	// Transcript is the compacted transcript, or the input itself when
	// nothing was done. Kept messages share memory with the input: Clone
	// before changing them in place.
	Transcript compact.Transcript
	// Record says what was done; Record.Method is MethodNone when nothing
	// changed, with Record.Reason saying why.
	Record compact.Compaction
	// Handoff is the handoff that replaced the dropped messages; nil for
	// MethodNone and MethodPrune.
	Handoff *compact.Handoff
	// Plan is the cut that was planned.
	Plan Plan
	// Ineffective is true when the compaction saves (or would save) less
	// than 10% of the tokens. Without Force such a compaction is not done
	// at all, so an agent loop calling Compact again does not churn.
	Ineffective bool
	// Fallback says why the deterministic fallback wrote the handoff
	// instead of the Summarizer; empty when it did not, or was asked for.
	Fallback FallbackCause
	// SummaryErr is the Summarizer's failure, with secrets masked, when
	// Fallback is FallbackSummaryFailed or FallbackInvalidHandoff. It
	// wraps ErrSummaryFailed and the Summarizer's own error.
	SummaryErr error
	// Fits is true when Transcript fits the usable window (Window −
	// OutputReserve): false when even the compacted transcript (or an
	// unchanged one with nothing to drop) would overflow the model.
	Fits bool
	// Usable is the usable window Fits compares with.
	Usable int
}

// Changed reports whether the transcript was changed.
func (r *Result) Changed() bool { return r.Record.Method != compact.MethodNone }

// Overflow returns nil when the result fits the usable window, else an
// error wrapping ErrOverWindow with the figures.
func (r *Result) Overflow() error {
	if r.Fits {
		return nil
	}
	return fmt.Errorf("%w: %d tokens, the usable window is %d", ErrOverWindow, r.Record.TokensAfter, r.Usable)
}

// NeedsCompaction reports the size of t, the size that triggers a
// compaction and whether t has reached it, without planning anything. It
// counts through the Counter's cache (tokens.Counter keeps one), so a loop
// that calls it every turn pays only for the messages added since. Force
// does not change the answer; Compact with Force compacts regardless.
func (c *Compactor) NeedsCompaction(t compact.Transcript) (tokens, trigger int, over bool) {
	tokens, trigger = c.counter.Transcript(t), c.cfg.trigger()
	return tokens, trigger, tokens >= trigger
}

// Plan returns the cut Compact would make of t, without doing it.
func (c *Compactor) Plan(t compact.Transcript) Plan {
	return c.cfg.plan(newLayout(&t, c.counter, c.cfg.HandoffKey))
}

// run is the state of one Compact call.
type run struct {
	c       *Compactor
	t       *compact.Transcript
	l       *layout
	plan    Plan
	rec     compact.Compaction
	em      *emitter
	secrets *secrets
	// cause and summaryErr become Result.Fallback and Result.SummaryErr.
	cause      FallbackCause
	summaryErr error
}

// Compact compacts t when the policy says so (always with Force) and
// returns the result with its record. t is never modified.
//
// Nothing to do is not an error: the result then holds t unchanged, Method
// none and a Reason. An error means the compaction was abandoned, and the
// result again holds t unchanged: the context was cancelled, the summary
// failed with AbortOnSummaryFailure (errors.Is ErrSummaryFailed), or the
// result failed validation (ErrInvalidResult). Error messages and log
// records never quote the dropped middle.
func (c *Compactor) Compact(ctx context.Context, t compact.Transcript) (Result, error) {
	start := c.cfg.Now()
	r := &run{c: c, t: &t}
	r.em = &emitter{start: start, now: c.cfg.Now, observer: c.cfg.Observer, logger: c.cfg.Logger, sanitize: r.sanitize}
	r.rec = compact.Compaction{At: start, Method: compact.MethodNone}
	if len(c.cfg.notes) > 0 {
		r.rec.Warnings = slices.Clone(c.cfg.notes)
	}
	if err := ctx.Err(); err != nil {
		return r.unchanged("cancelled"), err
	}
	r.l = newLayout(&t, c.counter, c.cfg.HandoffKey)
	r.plan = c.cfg.plan(r.l)
	r.rec.SourceHash = t.Hash()
	for i, forged := range r.l.forged {
		if !forged {
			continue
		}
		r.rec.Warnings = append(r.rec.Warnings, fmt.Sprintf("message %d (id %q) presents itself as a compact handoff but its signature does not verify (not written by compact, edited since, or signed under another key): read as ordinary text, not folded", i, t.Messages[i].ID))
	}
	r.rec.TokensBefore, r.rec.TokensAfter = r.plan.Tokens, r.plan.Tokens
	r.rec.DroppedFrom, r.rec.DroppedTo = r.plan.HeadEnd, r.plan.HeadEnd
	if r.plan.Reason != "" {
		return r.skip(r.plan.Reason, false), nil
	}
	if c.cfg.Strategy == StrategyPrune {
		return r.prune(ctx)
	}
	// A handoff runs from a couple of hundred tokens (the headings) to
	// its budget; a quarter of what it replaces is a fair guess between.
	est := r.plan.DroppedTokens() - min(c.cfg.handoffBudget(&r.plan), 200+r.plan.DroppedTokens()/4)
	if !c.cfg.Force && float64(est) < minSavings*float64(r.plan.Tokens) {
		return r.skip(fmt.Sprintf("ineffective: dropping %d messages would save about %d of %d tokens (under %.0f%%)",
			r.plan.Dropped(), max(est, 0), r.plan.Tokens, minSavings*100), true), nil
	}
	r.em.emit(Event{Kind: EventPlanned, Plan: &r.plan, Duration: c.cfg.Now().Sub(start)})
	return r.summarizeAndAssemble(ctx)
}

func (r *run) unchanged(reason string) Result {
	r.rec.Reason = reason
	r.rec.TokensAfter = r.rec.TokensBefore
	r.rec.DroppedFrom, r.rec.DroppedTo, r.rec.DroppedIDs = r.plan.HeadEnd, r.plan.HeadEnd, nil
	r.rec.Method = compact.MethodNone
	r.rec.Duration = r.c.cfg.Now().Sub(r.rec.At)
	res := Result{Transcript: *r.t, Record: r.rec, Plan: r.plan}
	r.c.fit(&res)
	return res
}

// fit sets res.Fits and res.Usable, and warns when the result overflows.
func (c *Compactor) fit(res *Result) {
	res.Usable = c.cfg.Window - c.cfg.OutputReserve
	res.Fits = res.Record.TokensAfter <= res.Usable
	if !res.Fits {
		res.Record.Warnings = append(res.Record.Warnings, fmt.Sprintf("over the window: %d tokens, the usable window is %d (%d − %d reserved for the answer)",
			res.Record.TokensAfter, res.Usable, c.cfg.Window, c.cfg.OutputReserve))
	}
}

func (r *run) skip(reason string, ineffective bool) Result {
	res := r.unchanged(reason)
	res.Ineffective = ineffective
	r.em.emit(Event{Kind: EventSkipped, Plan: &r.plan, Reason: reason})
	r.em.emit(Event{Kind: EventDone, Method: compact.MethodNone, TokensBefore: r.rec.TokensBefore,
		TokensAfter: r.rec.TokensAfter, Duration: res.Record.Duration, Reason: reason})
	return res
}

func (r *run) summarizeAndAssemble(ctx context.Context) (Result, error) {
	c, p := r.c, &r.plan
	digests := keptDigests(r.t.Messages, p)
	t0 := c.cfg.Now()
	window := r.ordinary(p.HeadEnd, p.TailStart)
	// The summarizers read the window's parts, never its source records:
	// those are neither masked (the window is dropped from the output) nor
	// handed on. Only the messages holding a secret are copied, masked:
	// the window itself is shared with the transcript, not copied.
	masked, found := c.redactor.MaskedCopies(window)
	r.secrets = secretValues(window, found)
	// Pruning shapes only what a Summarizer is sent; the deterministic
	// handoff reads the real window, so that it reports what happened.
	// Without a Summarizer nothing is pruned, nor copied.
	in := summaryInput{window: window, masked: masked, latestAsk: r.latestAsk()}
	var st pruneStats
	if c.primary != nil {
		in.pruned, st = c.cfg.Prune.prune(in.plain(), c.counter.Text)
	}
	r.em.emit(Event{Kind: EventPruned, Pruned: st.total(), Duration: c.cfg.Now().Sub(t0)})

	sum, err := r.summarize(ctx, &in)
	if err != nil {
		return r.unchanged(r.rec.Reason), err
	}
	h, msg, out, err := r.build(sum.Handoff, digests)
	if err != nil && sum.Method != compact.MethodFallback && !c.cfg.AbortOnSummaryFailure {
		// A primary summarizer's handoff that fails validation is a
		// summary failure like any other.
		reason := "the LLM handoff failed validation, used the deterministic fallback: " + err.Error()
		r.rec.Reason, r.rec.Model = reason, ""
		r.rec.Warnings = append(r.rec.Warnings, reason)
		r.cause, r.summaryErr = FallbackInvalidHandoff, r.sanitize(fmt.Errorf("%w: %w", ErrSummaryFailed, err))
		r.em.emit(Event{Kind: EventFallback, Err: err, Reason: reason})
		if sum, err = r.fallbackSummary(ctx, &in); err != nil {
			err = r.sanitize(fmt.Errorf("%w: fallback: %w", ErrSummaryFailed, err))
			return r.unchanged(err.Error()), err
		}
		h, msg, out, err = r.build(sum.Handoff, digests)
	} else if err != nil && sum.Method != compact.MethodFallback {
		err = fmt.Errorf("%w: %w", ErrSummaryFailed, err)
	}
	if err != nil {
		return r.unchanged(err.Error()), err
	}
	handoffTokens := c.counter.Message(msg)
	if handoffTokens >= p.DroppedTokens() {
		// Even forced, a compaction that grows the transcript helps no one.
		return r.skip(fmt.Sprintf("ineffective: the handoff (%d tokens) is no smaller than the %d messages (%d tokens) it would replace",
			handoffTokens, p.Dropped(), p.DroppedTokens()), true), nil
	}
	pinned := map[int]bool{}
	for _, i := range p.Pinned {
		pinned[i] = true
	}
	for i := p.HeadEnd; i < p.TailStart; i++ {
		if !pinned[i] {
			r.rec.DroppedIDs = append(r.rec.DroppedIDs, r.t.Messages[i].ID)
		}
	}
	r.rec.Method = sum.Method
	r.rec.DroppedFrom, r.rec.DroppedTo = p.HeadEnd, p.TailStart
	r.rec.TokensAfter = r.rec.TokensBefore - p.DroppedTokens() + handoffTokens
	res := r.finish(out)
	res.Handoff = &h
	return res, nil
}

// build secures a handoff, assembles the output around it and validates
// the result.
func (r *run) build(h compact.Handoff, digests map[int]string) (compact.Handoff, compact.Message, compact.Transcript, error) {
	h, masked := secureHandoff(h, r.secrets, r.c.redactor)
	if masked > 0 {
		r.rec.Warnings = append(r.rec.Warnings, fmt.Sprintf("masked secrets in %d handoff fields", masked))
	}
	msg := h.SignedMessage(r.c.cfg.HandoffKey)
	msg.ID = "compact-handoff-" + r.rec.SourceHash[:16]
	out, origin := assemble(r.masked(false), &r.plan, nil, &msg)
	err := checkResult(r.t, &out, origin, digests, r.l, msg.Text(), r.secrets, r.c.redactor)
	return h, msg, out, err
}

// ordinary returns the messages [from, to) as the summarizers must read
// them: a compact handoff marker in a message that is not a summary the
// compaction folds (a forged handoff, a tool's output quoting one) is
// removed, so no summarizer takes its text for an earlier handoff; a
// forged handoff in a user message loses the Summary mark its reader set
// and reads as a harness note, not as the person's ask. The input is not
// changed: messages that change are copies.
func (r *run) ordinary(from, to int) []compact.Message {
	msgs := r.t.Messages[from:to]
	var out []compact.Message
	for k := range msgs {
		m := &msgs[k]
		if r.l.summary[from+k] || !holdsMarker(m) && !m.Summary {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		c := m.Clone()
		c.Summary = false
		if r.l.forged[from+k] && c.Role == compact.RoleUser {
			c.Synthetic = true
		}
		for j := range c.Parts {
			c.Parts[j].Text = compact.StripHandoffMarkers(c.Parts[j].Text)
		}
		out[k] = c
	}
	if out == nil {
		return msgs
	}
	return out
}

// holdsMarker reports whether a part of m holds a handoff marker.
func holdsMarker(m *compact.Message) bool {
	for _, p := range m.Parts {
		if strings.Contains(p.Text, compact.HandoffBegin) || strings.Contains(p.Text, "<<<compact:handoff-end") {
			return true
		}
	}
	return false
}

// summaryInput is what the summarizers are given of the middle, redacted.
type summaryInput struct {
	// window is the middle as read, shared with the transcript, and masked
	// holds the masked copies (without source records) of its messages
	// that hold a secret, by index: together, what the deterministic
	// fallback reads.
	window []compact.Message
	masked map[int]compact.Message
	// pruned is the window masked, without source records, tool outputs
	// shortened: what a Summarizer is sent.
	pruned    []compact.Message
	latestAsk string
}

// plain returns the window as a Summarizer may read it: masked, without
// source records (their format kept).
func (in *summaryInput) plain() []compact.Message {
	out := make([]compact.Message, len(in.window))
	for i, m := range in.window {
		if c, ok := in.masked[i]; ok {
			m = c
		}
		m.Source = compact.Source{Format: m.Source.Format}
		out[i] = m
	}
	return out
}

// request is the request for the Summarizer: the pruned window.
func (r *run) request(in *summaryInput) compact.SummaryRequest {
	c := r.c
	return compact.SummaryRequest{Window: in.pruned, Redacted: true, LatestAsk: in.latestAsk, Focus: r.focus(),
		MaxTokens: c.cfg.handoffBudget(&r.plan), Count: c.counter.Text, Notify: r.notify}
}

// latestAsk returns the user's most recent request anywhere in the
// transcript, redacted: a Summarizer must quote it even when it sits in
// the kept head or tail, outside the window it is shown.
func (r *run) latestAsk() string {
	for i := len(r.t.Messages) - 1; i >= 0; i-- {
		if r.l.isAsk(i) {
			return r.c.redactor.String(r.secrets.mask(compact.StripHandoffMarkers(r.t.Messages[i].Text())))
		}
	}
	return ""
}

// focus is Config.Focus, redacted: it leaves the process with the request.
func (r *run) focus() string {
	if r.c.cfg.Focus == "" {
		return ""
	}
	return r.c.redactor.String(r.secrets.mask(r.c.cfg.Focus))
}

// notify turns a summarizer's progress into the compaction's events.
func (r *run) notify(ev compact.SummaryEvent) {
	kind := EventSummarizing
	if ev.Kind == compact.SummaryRetry {
		kind = EventRetry
	}
	r.em.emit(Event{Kind: kind, Attempt: ev.Attempt, Chunk: ev.Chunk, Chunks: ev.Chunks, Delay: ev.Delay,
		Err: ev.Err, Duration: ev.Duration})
}

// summarize runs the primary summarizer, then the fallback where the
// primary is missing or failed.
func (r *run) summarize(ctx context.Context, in *summaryInput) (compact.Summary, error) {
	c := r.c
	if c.primary != nil {
		t0 := c.cfg.Now()
		sum, err := c.primary.Summarize(ctx, r.request(in))
		r.rec.LLMAttempts = sum.Attempts
		if err == nil {
			r.rec.Model = sum.Model
			if sum.Method == "" {
				sum.Method = compact.MethodLLM
			}
			sum.Handoff = r.complete(sum.Handoff, in)
			return sum, nil
		}
		if ctx.Err() != nil {
			r.rec.Reason = "cancelled"
			return sum, ctx.Err()
		}
		err = r.sanitize(fmt.Errorf("%w: %w", ErrSummaryFailed, err))
		if c.cfg.AbortOnSummaryFailure {
			r.rec.Reason = err.Error()
			return sum, err
		}
		r.rec.Reason = "the LLM summary failed, used the deterministic fallback: " + err.Error()
		r.rec.Warnings = append(r.rec.Warnings, r.rec.Reason)
		r.cause, r.summaryErr = FallbackSummaryFailed, err
		r.em.emit(Event{Kind: EventFallback, Err: err, Reason: r.rec.Reason, Duration: c.cfg.Now().Sub(t0)})
	} else if c.cfg.Strategy == StrategyAuto {
		r.rec.Reason = "no LLM configured: used the deterministic fallback"
		r.cause = FallbackNoSummarizer
	}
	r.em.emit(Event{Kind: EventSummarizing, Attempt: 1, Chunk: 1, Chunks: 1})
	sum, err := r.fallbackSummary(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			r.rec.Reason = "cancelled"
			return sum, ctx.Err()
		}
		err = r.sanitize(fmt.Errorf("%w: fallback: %w", ErrSummaryFailed, err))
		r.rec.Reason = err.Error()
		return sum, err
	}
	return sum, nil
}

// finish fills the record's closing fields, adds the size warnings and
// emits done.
func (r *run) finish(out compact.Transcript) Result {
	c := r.c
	res := Result{Transcript: out, Plan: r.plan, Fallback: r.cause, SummaryErr: r.summaryErr}
	if r.rec.TokensAfter > r.plan.Target {
		r.rec.Warnings = append(r.rec.Warnings, fmt.Sprintf("over target: %d tokens after compaction, target %d",
			r.rec.TokensAfter, r.plan.Target))
	}
	res.Record = r.rec
	if res.Record.Saved() < minSavings {
		res.Ineffective = true
		res.Record.Warnings = append(res.Record.Warnings, fmt.Sprintf("ineffective: saved %.1f%% of the tokens (under %.0f%%)",
			100*res.Record.Saved(), minSavings*100))
	}
	res.Record.Duration = c.cfg.Now().Sub(r.rec.At)
	c.fit(&res)
	r.em.emit(Event{Kind: EventDone, Method: res.Record.Method, TokensBefore: res.Record.TokensBefore,
		TokensAfter: res.Record.TokensAfter, Duration: res.Record.Duration, Reason: res.Record.Reason})
	return res
}

// prune masks the middle in place (StrategyPrune).
func (r *run) prune(ctx context.Context) (Result, error) {
	c := r.c
	p := r.plan
	p.Pinned, p.PinnedTokens = nil, 0
	r.plan = p
	digests := keptDigests(r.t.Messages, &p)
	t0 := c.cfg.Now()
	window := r.t.Messages[p.HeadEnd:p.TailStart]
	pruned, st := c.cfg.Prune.prune(window, c.counter.Text)
	// The middle stays in the output: its secrets are masked, as a handoff
	// would mask them, in the messages and the source records writers use.
	red, found := c.redactor.Transcript(compact.Transcript{Messages: pruned})
	middle := red.Messages
	r.secrets = secretValues(pruned, found)
	changed := map[int]bool{}
	for _, k := range st.Changed {
		changed[k] = true
	}
	for _, f := range found {
		changed[f.Message] = true
	}
	after := r.rec.TokensBefore
	for k := range changed {
		after += c.counter.Message(middle[k]) - r.l.counts[p.HeadEnd+k]
	}
	r.em.emit(Event{Kind: EventPruned, Pruned: st.total(), Duration: c.cfg.Now().Sub(t0)})
	if st.total() == 0 {
		return r.skip("nothing to prune: no tool output or image in the middle is long, repeated or an image", false), nil
	}
	saved := float64(r.rec.TokensBefore-after) / float64(max(r.rec.TokensBefore, 1))
	if !c.cfg.Force && saved < minSavings {
		return r.skip(fmt.Sprintf("ineffective: pruning would save %.1f%% of the tokens (under %.0f%%)", 100*saved, minSavings*100), true), nil
	}
	if err := ctx.Err(); err != nil {
		return r.unchanged("cancelled"), err
	}
	out, origin := assemble(r.masked(true), &p, middle, nil)
	if err := checkResult(r.t, &out, origin, digests, r.l, "", nil, c.redactor); err != nil {
		return r.unchanged(err.Error()), err
	}
	r.rec.Method = compact.MethodPrune
	r.rec.TokensAfter = after
	r.rec.Reason = fmt.Sprintf("masked %d tool outputs (%d deduplicated, %d shortened) and %d images in messages %d to %d",
		st.Deduped+st.Shortened, st.Deduped, st.Shortened, st.Images, p.HeadEnd, p.TailStart)
	return r.finish(out), nil
}

// masked returns the transcript with the records that stand among the
// dropped or pruned middle masked: those kept in the output (state records
// carried to the handoff; every record with the prune strategy, all) must
// not bring the middle's secrets with them.
func (r *run) masked(all bool) *compact.Transcript {
	p := &r.plan
	var recs []compact.Record
	for i, rec := range r.t.Records {
		if rec.At < p.HeadEnd || rec.At >= p.TailStart || !all && !rec.State {
			continue // outside the middle, or dropped with it
		}
		if recs == nil {
			recs = slices.Clone(r.t.Records)
		}
		masked, _ := r.c.redactor.Transcript(compact.Transcript{Records: []compact.Record{rec}})
		recs[i] = masked.Records[0]
	}
	if recs == nil {
		return r.t
	}
	t := *r.t
	t.Records = recs
	return &t
}

// sanitize masks secrets in an error's message, keeping it unwrappable:
// the middle's secrets by value, then whatever the redactor finds.
func (r *run) sanitize(err error) error {
	if err == nil {
		return nil
	}
	return redact.MaskedError(err, r.c.redactor.String(r.secrets.mask(err.Error())))
}
