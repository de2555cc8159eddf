package main

import (
	"flag"
	"time"
)

// compactionFlags registers the flags that configure a compaction on fs:
// the ones the main command and "compact batch" share, so both parse them
// the same way. Output flags (-o, --report, --handoff) are each command's own.
func compactionFlags(fs *flag.FlagSet, o *compactOptions) {
	fs.StringVar(&o.model, "model", "", "model the transcript is sent to; sets the window, output reserve and tokenizer")
	fs.IntVar(&o.window, "window", 0, "context window in tokens, overriding the model table")
	fs.Float64Var(&o.threshold, "threshold", 0.8, "compact at this share of (window - output reserve)")
	fs.StringVar(&o.target, "target", "50%", "size to compact to: tokens (40000) or a share of the window (40%)")
	fs.IntVar(&o.keepHead, "keep-head", 1, "exchanges after the system messages kept verbatim")
	fs.IntVar(&o.keepTailTokens, "keep-tail-tokens", 0, "token budget of the verbatim tail (default 20% of the trigger budget, at least 4 messages)")
	fs.StringVar(&o.summarizer, "summarizer", "auto", "auto, llm, fallback or prune (auto: llm when an API key or base URL is set)")
	fs.StringVar(&o.baseURL, "base-url", "", "OpenAI-compatible API base URL (default $OPENAI_BASE_URL, else https://api.openai.com/v1)")
	fs.StringVar(&o.summaryModel, "summary-model", "gpt-4o-mini", "model that writes the handoff")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "timeout of one LLM call")
	fs.IntVar(&o.retries, "retries", 3, "retries of a failed LLM call")
	fs.BoolVar(&o.abort, "abort-on-summary-failure", false, "when the LLM fails, exit 1 and write nothing instead of using the fallback")
	fs.StringVar(&o.focus, "focus", "", "topic the handoff should pay special attention to")
	fs.BoolVar(&o.force, "force", false, "compact even below the threshold")
}
