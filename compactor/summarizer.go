package compactor

import (
	"context"
	"errors"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/redact"
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

// deterministic is the fallback summarizer: package fallback's handoff,
// built offline from the window. The same window always gives the same
// handoff.
type deterministic struct {
	redactor *redact.Redactor
	// kept are the messages kept verbatim around the window: names they
	// hold need no place in the handoff's index.
	kept []compact.Message
}

// Summarize builds the deterministic handoff of req.Window.
func (d deterministic) Summarize(ctx context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	if err := ctx.Err(); err != nil {
		return compact.Summary{Method: compact.MethodFallback}, err
	}
	// req.LatestAsk is not carried in: the fallback quotes the asks of the
	// window, and one outside it is kept verbatim beside the handoff.
	cfg := fallback.Config{MaxTokens: req.MaxTokens, Redactor: d.redactor, Count: req.Count, Redacted: req.Redacted, Kept: d.kept}
	h, err := fallback.Build(req.Window, cfg)
	if err != nil {
		return compact.Summary{Method: compact.MethodFallback}, err
	}
	return compact.Summary{Handoff: h, Method: compact.MethodFallback}, nil
}

// fallback is the deterministic summarizer for this compaction, told which
// messages stay verbatim around the window.
func (r *run) fallback() compact.Summarizer {
	return deterministic{redactor: r.c.redactor, kept: r.keptMessages()}
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
		Count: c.counter.Text, Redacted: true, Kept: r.keptMessages()})
	if err != nil {
		return h
	}
	return done
}
