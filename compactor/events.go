package compactor

import (
	"context"
	"log/slog"
	"time"

	"github.com/compactkit/compact"
)

// EventKind names a step of a compaction.
type EventKind string

// Event kinds, in the order a compaction emits them. Retry and Fallback
// appear only when the summarizer has trouble; Skipped replaces the rest
// when nothing is compacted.
const (
	EventPlanned     EventKind = "planned"     // the cut is decided
	EventSkipped     EventKind = "skipped"     // nothing to do; Reason says why
	EventPruned      EventKind = "pruned"      // the middle is redacted and pruned
	EventSummarizing EventKind = "summarizing" // a summarizer call starts
	EventRetry       EventKind = "retry"       // a call failed and will be retried after Delay
	EventFallback    EventKind = "fallback"    // the LLM failed; the deterministic handoff is used
	EventDone        EventKind = "done"        // the result is assembled and validated
)

// Event reports one step of a compaction. Which fields are set depends on
// Kind. Events carry counts, durations and redacted error text, never
// transcript content.
type Event struct {
	Kind EventKind
	// Elapsed is the time since the compaction started; Duration is how
	// long the step that just ended took.
	Elapsed  time.Duration
	Duration time.Duration
	// Plan is set on EventPlanned and EventSkipped.
	Plan *Plan
	// Attempt counts calls of the current chunk from 1 (summarizing,
	// retry); Chunk and Chunks number the chunks of a large window.
	Attempt int
	Chunk   int
	Chunks  int
	// Delay is the wait before the next attempt (retry).
	Delay time.Duration
	// Err is the failure that caused a retry or a fallback, with any secret
	// masked.
	Err error
	// Method, TokensBefore and TokensAfter are set on EventDone; Reason on
	// EventSkipped and EventFallback.
	Method       compact.Method
	TokensBefore int
	TokensAfter  int
	Reason       string
	// Pruned counts the tool outputs deduplicated or shortened and the
	// images replaced (pruned).
	Pruned int
}

// emitter fans events out to the observer and the logger, stamping the
// elapsed time and masking secrets in errors first.
type emitter struct {
	start    time.Time
	now      func() time.Time
	observer Observer
	logger   *slog.Logger
	sanitize func(error) error
}

func (e *emitter) emit(ev Event) {
	ev.Elapsed = e.now().Sub(e.start)
	if ev.Err != nil && e.sanitize != nil {
		ev.Err = e.sanitize(ev.Err)
	}
	if e.observer != nil {
		e.observer(ev)
	}
	if e.logger != nil {
		e.log(ev)
	}
}

func (e *emitter) log(ev Event) {
	level := slog.LevelInfo
	if ev.Kind == EventRetry || ev.Kind == EventFallback {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("event", string(ev.Kind)), slog.Duration("elapsed", ev.Elapsed)}
	if ev.Duration > 0 {
		attrs = append(attrs, slog.Duration("duration", ev.Duration))
	}
	if p := ev.Plan; p != nil {
		attrs = append(attrs, slog.Int("tokens", p.Tokens), slog.Int("trigger", p.Trigger),
			slog.Int("target", p.Target), slog.Int("head_end", p.HeadEnd),
			slog.Int("tail_start", p.TailStart), slog.Int("pinned", len(p.Pinned)),
			slog.Int("window_tokens", p.WindowTokens))
	}
	if ev.Attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", ev.Attempt))
	}
	if ev.Chunks > 1 {
		attrs = append(attrs, slog.Int("chunk", ev.Chunk), slog.Int("chunks", ev.Chunks))
	}
	if ev.Delay > 0 {
		attrs = append(attrs, slog.Duration("delay", ev.Delay))
	}
	if ev.Pruned > 0 {
		attrs = append(attrs, slog.Int("pruned", ev.Pruned))
	}
	if ev.Method != "" {
		attrs = append(attrs, slog.String("method", string(ev.Method)),
			slog.Int("tokens_before", ev.TokensBefore), slog.Int("tokens_after", ev.TokensAfter))
	}
	if ev.Reason != "" {
		attrs = append(attrs, slog.String("reason", ev.Reason))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("error", ev.Err.Error()))
	}
	e.logger.LogAttrs(context.Background(), level, "compact "+string(ev.Kind), attrs...)
}
