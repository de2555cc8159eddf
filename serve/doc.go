// Package serve is compact as an HTTP proxy: any agent that talks to the
// OpenAI Chat Completions, OpenAI Responses or Anthropic Messages API gets
// its context compacted in flight, without importing a package.
//
// For each POST to /v1/chat/completions, /v1/responses or /v1/messages the
// proxy reads the conversation with package format, counts it with package
// tokens (exactly for OpenAI encodings, estimated otherwise) and, when it
// passes the compactor's threshold of the model's window, compacts it with
// package compactor as the compact command would: head and tail verbatim,
// tool calls and their results kept together, the middle replaced by a
// handoff. Only the conversation list of the body changes: the new list is
// spliced between the body's other bytes, so model, tools, stream and every
// provider-specific field reach the upstream as the client wrote them.
// Responses, streamed or not, are passed back as they arrive, flushed chunk
// by chunk. Every other path is passed through.
//
// A conversation is identified by the X-Compact-Session header or by a hash
// of its API, system messages and first user message. Its compacted prefix
// (the kept elements and the handoff) is remembered, in memory and in an
// optional checkpoint store; the next request of the same growing
// conversation is forwarded as that same prefix, byte for byte, followed
// only by the new turns, with no summarizer call, until it fills the window
// again and the handoff is folded into a new one. This keeps providers'
// prompt caches warm.
//
// The proxy is never the reason a request fails: a request it cannot read
// or compact is forwarded as it came, with a warning in its log line, and
// an upstream answer saying the prompt is too long is retried once with a
// forced compaction. Clients' API keys are forwarded to the upstream and
// nowhere else: they are not logged, not stored and not used for the
// summarizer, which has its own configuration.
package serve
