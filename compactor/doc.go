// Package compactor decides when a transcript needs compacting and compacts
// it without ever breaking the session: the head (system messages and the
// first exchange) and a recent tail stay byte for byte, and the middle is
// replaced by one handoff message written by an LLM or built
// deterministically by package fallback.
//
// One compaction runs in steps, each reported to an Observer and to slog:
//
//  1. Policy: compact when the transcript reaches Threshold × (window −
//     output reserve), or always with Force. Below that, or when the
//     protected head and tail leave nothing worth dropping, the transcript is
//     returned unchanged with a reason.
//  2. Plan: the cut protects the head and keeps a tail by token budget
//     that holds the last assistant reply and, when it costs at most twice
//     the budget, the latest user ask; an ask farther back, and system
//     notes found in the middle, are pinned: kept verbatim ahead of the
//     handoff. A cut never separates a tool call from its results, and never
//     leaves an earlier handoff outside the dropped middle, so handoffs fold
//     instead of nesting. An earlier handoff is one signed under
//     Config.HandoffKey (compact.VerifyHandoff): a message that only looks
//     like one (a tool's output, pasted or forged text) is summarized as
//     text and named in a warning, so it cannot plant a goal, constraints
//     or decisions that every later handoff would carry.
//  3. Redact and prune the middle: secrets are masked before anything is
//     summarized; duplicate tool outputs are dropped, long ones shortened
//     to their first and last lines, images replaced by a placeholder.
//  4. Summarize: the configured compact.Summarizer (package llm asks an
//     OpenAI-compatible model, with retries, timeouts and a circuit
//     breaker), or the deterministic fallback. A Summarizer's failure falls
//     back to the deterministic handoff unless AbortOnSummaryFailure is set;
//     Result.Fallback says why it was used.
//  5. Assemble head + pinned messages + handoff + tail, validate it (tool
//     pairs, byte-identical head and tail, no secret from the middle in the
//     handoff, the target size) and return it with its compact.Compaction
//     record.
//
// The Prune strategy skips summarizing: it masks old tool outputs in place,
// the observation masking that halves the cost of SWE-bench-style agents.
//
// The package never reads the environment and imports no LLM client: callers
// build a Summarizer (package llm) and pass it in Config.
package compactor
