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
}

// Summarize builds the deterministic handoff of req.Window.
func (d deterministic) Summarize(ctx context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	if err := ctx.Err(); err != nil {
		return compact.Summary{Method: compact.MethodFallback}, err
	}
	// req.LatestAsk is not carried in: the fallback quotes the asks of the
	// window, and one outside it is kept verbatim beside the handoff.
	cfg := fallback.Config{MaxTokens: req.MaxTokens, Redactor: d.redactor, Count: req.Count, Redacted: req.Redacted}
	h, err := fallback.Build(req.Window, cfg)
	if err != nil {
		return compact.Summary{Method: compact.MethodFallback}, err
	}
	return compact.Summary{Handoff: h, Method: compact.MethodFallback}, nil
}
