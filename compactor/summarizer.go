package compactor

import (
	"context"
	"errors"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
)

// Sentinel errors callers branch on.
var (
	// ErrSummaryFailed wraps every failure of the Summarizer that Compact
	// returns (with AbortOnSummaryFailure) or reports in Result.SummaryErr
	// when it fell back.
	ErrSummaryFailed = errors.New("summary failed")
	// ErrInvalidResult means a compaction failed its own validation; the
	// transcript is returned unchanged.
	ErrInvalidResult = errors.New("compaction result failed validation")
	// ErrOverWindow is wrapped by Result.Overflow when a transcript does
	// not fit the usable window (Window − OutputReserve), compacted or not.
	ErrOverWindow = errors.New("transcript over the usable window")
)

// FallbackCause says why the deterministic fallback wrote a handoff.
type FallbackCause string

// Fallback causes. The zero value means the fallback did not write the
// handoff, or was the strategy asked for.
const (
	// FallbackNoSummarizer: StrategyAuto with no Summarizer configured.
	FallbackNoSummarizer FallbackCause = "no-summarizer"
	// FallbackSummaryFailed: the Summarizer failed (Result.SummaryErr says
	// how).
	FallbackSummaryFailed FallbackCause = "summary-failed"
	// FallbackInvalidHandoff: the Summarizer's handoff failed validation
	// (Result.SummaryErr says how).
	FallbackInvalidHandoff FallbackCause = "invalid-handoff"
)

// fallbackSummary builds the deterministic handoff of the window (package
// fallback), offline, told which messages stay verbatim around it. The same
// window always gives the same handoff. The latest ask is not carried in:
// the fallback quotes the asks of the window, and one outside it is kept
// verbatim beside the handoff.
func (r *run) fallbackSummary(ctx context.Context, in *summaryInput) (compact.Summary, error) {
	if err := ctx.Err(); err != nil {
		return compact.Summary{Method: compact.MethodFallback}, err
	}
	c := r.c
	cfg := fallback.Config{MaxTokens: c.cfg.handoffBudget(&r.plan), Redactor: c.redactor, Count: c.counter.Text,
		Redacted: true, Masked: in.masked, Kept: r.keptMessages()}
	h, err := fallback.Build(in.window, cfg)
	if err != nil {
		return compact.Summary{Method: compact.MethodFallback}, err
	}
	return compact.Summary{Handoff: h, Method: compact.MethodFallback}, nil
}

// keptMessages are the head, the pinned messages and the tail: what the
// compacted transcript keeps verbatim around the handoff.
func (r *run) keptMessages() []compact.Message {
	p := &r.plan
	kept := make([]compact.Message, 0, p.HeadEnd+len(p.Pinned)+len(r.t.Messages)-p.TailStart)
	kept = append(kept, r.t.Messages[:p.HeadEnd]...)
	for _, i := range p.Pinned {
		kept = append(kept, r.t.Messages[i])
	}
	return append(kept, r.t.Messages[p.TailStart:]...)
}

// complete adds to a Summarizer's handoff the highest-ranked names and
// files of the window that it left out (package fallback's index), within
// the handoff's budget: LLM summaries keep the story and lose the exact
// names. On any error the handoff is kept as written.
func (r *run) complete(h compact.Handoff, in *summaryInput) compact.Handoff {
	c := r.c
	done, err := fallback.Complete(h, in.window, fallback.Config{MaxTokens: c.cfg.handoffBudget(&r.plan), Redactor: c.redactor,
		Count: c.counter.Text, Redacted: true, Masked: in.masked, Kept: r.keptMessages()})
	if err != nil {
		return h
	}
	return done
}
