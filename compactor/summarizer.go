package compactor

import (
	"context"
	"errors"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/redact"
)

// Summarizer writes the handoff that replaces the dropped middle.
type Summarizer interface {
	// Summarize turns req.Window into a handoff. On failure it may still
	// return a Summary whose Attempts and Model say what it tried.
	Summarize(ctx context.Context, req Request) (Summary, error)
}

// Request is what a Summarizer summarizes.
type Request struct {
	// Window is the dropped middle, pruned, in order. It may hold earlier
	// handoffs (Summary messages), which the new handoff must fold in.
	Window []compact.Message
	// Redacted says Window has already been through the Redactor (Compact
	// always does this first), so a summarizer need not mask it again.
	Redacted bool
	// Focus is a topic the summary should pay special attention to.
	Focus string
	// MaxTokens caps the handoff.
	MaxTokens int
	// Count counts the tokens of a string; nil means an estimate.
	Count func(string) int
	// Notify, when set, receives summarizing and retry events.
	Notify func(Event)
}

func (r *Request) count(s string) int {
	if r.Count != nil {
		return r.Count(s)
	}
	return (len(s) + 3) / 4
}

func (r *Request) notify(ev Event) {
	if r.Notify != nil {
		r.Notify(ev)
	}
}

// Summary is a summarizer's answer.
type Summary struct {
	Handoff compact.Handoff
	// Method is MethodLLM or MethodFallback.
	Method compact.Method
	// Model is the model that wrote the handoff (LLM).
	Model string
	// Attempts counts the calls made to a remote summarizer, retries
	// included.
	Attempts int
}

// Sentinel errors callers branch on.
var (
	// ErrSummaryFailed wraps every failure of the primary summarizer that
	// Compact returns (with AbortOnSummaryFailure) or reports in a fallback.
	ErrSummaryFailed = errors.New("summary failed")
	// ErrBadResponse marks an LLM answer that is not a usable handoff:
	// empty, refused, cut off by the length limit, or missing sections
	// (then it also wraps compact.ErrIncompleteHandoff).
	ErrBadResponse = errors.New("unusable summarizer response")
	// ErrCircuitOpen is returned without calling the provider while the
	// circuit breaker is open after repeated failures.
	ErrCircuitOpen = errors.New("summarizer circuit breaker open")
	// ErrInvalidResult means a compaction failed its own validation; the
	// transcript is returned unchanged.
	ErrInvalidResult = errors.New("compaction result failed validation")
)

// Fallback is the deterministic summarizer: package fallback's handoff,
// built offline from the window. The same window always gives the same
// handoff.
type Fallback struct {
	// Redactor masks secrets before anything is extracted; nil means the
	// built-in rules.
	Redactor *redact.Redactor
}

// Summarize builds the deterministic handoff of req.Window.
func (f Fallback) Summarize(ctx context.Context, req Request) (Summary, error) {
	if err := ctx.Err(); err != nil {
		return Summary{Method: compact.MethodFallback}, err
	}
	h, err := fallback.Build(req.Window, fallback.Config{MaxTokens: req.MaxTokens, Redactor: f.Redactor,
		Count: req.Count, Redacted: req.Redacted})
	if err != nil {
		return Summary{Method: compact.MethodFallback}, err
	}
	return Summary{Handoff: h, Method: compact.MethodFallback}, nil
}
