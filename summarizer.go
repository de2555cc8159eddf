package compact

import (
	"context"
	"time"
)

// Summarizer writes the handoff that replaces the dropped middle of a
// transcript. Package llm has one that asks an OpenAI-compatible model;
// package compactor falls back on package fallback's deterministic handoff
// when a Summarizer fails or none is configured.
type Summarizer interface {
	// Summarize turns req.Window into a handoff. On failure it may still
	// return a Summary whose Attempts and Model say what it tried.
	Summarize(ctx context.Context, req SummaryRequest) (Summary, error)
}

// SummaryRequest is what a Summarizer summarizes.
type SummaryRequest struct {
	// Window is the dropped middle, in order, its long tool outputs
	// shortened. It may hold earlier handoffs (Summary messages), which the
	// new handoff must fold in. Its messages carry no source records, and
	// share their parts with the transcript being compacted: a Summarizer
	// reads them, never changes them.
	Window []Message
	// Redacted says Window, LatestAsk and Focus have been through a redactor
	// (the compactor always does this first), so a summarizer need not mask
	// them again.
	Redacted bool
	// LatestAsk is the user's most recent request, verbatim, wherever it is
	// in the transcript: in Window, or in the messages kept around it (the
	// protected head, a pinned ask, the tail). Empty when the transcript
	// holds no ask. The handoff's task snapshot quotes it.
	LatestAsk string
	// Focus is a topic the summary should pay special attention to.
	Focus string
	// MaxTokens caps the handoff.
	MaxTokens int
	// Count counts the tokens of a string; nil means an estimate.
	Count func(string) int
	// Notify, when set, receives an event as each call starts and as a
	// failed call is retried.
	Notify func(SummaryEvent)
}

// Summary is a Summarizer's answer.
type Summary struct {
	Handoff Handoff
	// Method is MethodLLM (the default when empty) or MethodFallback.
	Method Method
	// Model is the model that wrote the handoff.
	Model string
	// Attempts counts the calls made to a remote summarizer, retries
	// included.
	Attempts int
}

// SummaryEventKind names what a SummaryEvent reports.
type SummaryEventKind string

// Summary event kinds.
const (
	SummaryCall  SummaryEventKind = "call"  // a call starts
	SummaryRetry SummaryEventKind = "retry" // a call failed and is retried after Delay
)

// SummaryEvent reports the progress of a Summarizer: counts, durations and
// errors, never transcript content.
type SummaryEvent struct {
	Kind SummaryEventKind
	// Attempt counts the calls of the current chunk from 1; Chunk and
	// Chunks number the chunks of a window summarized in several calls.
	Attempt int
	Chunk   int
	Chunks  int
	// Delay is the wait before the next attempt (retry).
	Delay time.Duration
	// Err is the failure that is retried; Duration how long the failed
	// call took.
	Err      error
	Duration time.Duration
}
