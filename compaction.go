package compact

import "time"

// Method is how a compaction replaced the dropped messages.
type Method string

// Compaction methods.
const (
	MethodLLM      Method = "llm"      // an LLM wrote the handoff
	MethodFallback Method = "fallback" // the deterministic handoff
	MethodPrune    Method = "prune"    // old tool outputs masked, no handoff
	MethodNone     Method = "none"     // nothing was changed
)

// Compaction is the record of one compaction: what went in, what was
// dropped, how it was replaced, and what it cost and saved.
type Compaction struct {
	// SourceHash is Transcript.Hash of the input.
	SourceHash string `json:"source_hash"`
	// DroppedFrom and DroppedTo delimit the dropped messages of the input,
	// [DroppedFrom, DroppedTo); equal when nothing was dropped.
	DroppedFrom int      `json:"dropped_from"`
	DroppedTo   int      `json:"dropped_to"`
	DroppedIDs  []string `json:"dropped_ids,omitempty"`
	Method      Method   `json:"method"`
	// Reason says why nothing was done (Method none), or why the method
	// differs from the one asked for (an LLM failure that fell back).
	Reason       string `json:"reason,omitempty"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	// Model is the summarizer's model, for MethodLLM.
	Model string `json:"model,omitempty"`
	// LLMAttempts counts calls made to the summarizer, retries included.
	LLMAttempts int           `json:"llm_attempts,omitempty"`
	At          time.Time     `json:"at"`
	Duration    time.Duration `json:"duration_ns,omitempty"`
	Warnings    []string      `json:"warnings,omitempty"`
}

// Saved returns the share of tokens the compaction removed, from 0 to 1.
func (c *Compaction) Saved() float64 {
	if c.TokensBefore <= 0 {
		return 0
	}
	return float64(c.TokensBefore-c.TokensAfter) / float64(c.TokensBefore)
}
