package main

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/llm"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// compactionFlags registers the flags that configure a compaction on fs:
// the ones the main command and "compact batch" share, so both parse them
// the same way. Output flags (-o, --report, --handoff) are each command's own.
func compactionFlags(fs *flag.FlagSet, o *compactOptions) {
	o.read = addReadFlags(fs)
	fs.StringVar(&o.model, "model", compactor.DefaultModel, "model the transcript is sent to; sets the window, output reserve and tokenizer")
	fs.IntVar(&o.window, "window", 0, "context window in tokens, overriding the model table")
	fs.Float64Var(&o.threshold, "threshold", compactor.DefaultThreshold, "compact at this share of (window - output reserve)")
	fs.StringVar(&o.target, "target", "50%", "size to compact to: tokens (40000) or a share of the window (40%)")
	fs.IntVar(&o.keepHead, "keep-head", compactor.DefaultKeepHead, "exchanges after the system messages kept verbatim")
	fs.IntVar(&o.keepTailTokens, "keep-tail-tokens", 0, "token budget of the verbatim tail (default 20% of the trigger budget, at least 4 messages)")
	fs.StringVar(&o.summarizer, "summarizer", "auto", "auto, llm, fallback or prune (auto: llm when an API key or base URL is set)")
	fs.StringVar(&o.baseURL, "base-url", "", "OpenAI-compatible API base URL (default $OPENAI_BASE_URL, else https://api.openai.com/v1)")
	fs.StringVar(&o.summaryModel, "summary-model", llm.DefaultModel, "model that writes the handoff")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "timeout of one LLM call")
	fs.IntVar(&o.retries, "retries", 3, "retries of a failed LLM call")
	fs.BoolVar(&o.abort, "abort-on-summary-failure", false, "when the LLM fails, exit 1 and write nothing instead of using the fallback")
	fs.StringVar(&o.focus, "focus", "", "topic the handoff should pay special attention to")
	fs.BoolVar(&o.force, "force", false, "compact even below the threshold")
}

// config turns the flags and the environment into a compactor.Config,
// with the LLM summarizer built and handed in when the strategy may use
// it and an API key or base URL is set.
func (o *compactOptions) config(e *env) (compactor.Config, error) {
	cfg := compactor.DefaultConfig()
	cfg.Model = o.model
	cfg.Window = o.window
	cfg.Threshold = o.threshold
	cfg.Force = o.force
	cfg.KeepHead = o.keepHead
	cfg.KeepTailTokens = o.keepTailTokens
	cfg.AbortOnSummaryFailure = o.abort
	cfg.Focus = o.focus
	cfg.Strategy, _ = compactor.ParseStrategy(o.summarizer)
	var err error
	if cfg.TargetTokens, cfg.TargetShare, err = parseTarget(o.target); err != nil {
		return cfg, err
	}
	if cfg.HandoffKey, err = handoffKey(e); err != nil {
		return cfg, err
	}
	if cfg.Models, err = modelTable(e, ""); err != nil {
		return cfg, err
	}
	table := cfg.Models
	if table == nil {
		table = tokens.DefaultModels()
	}
	if _, known := table.Lookup(o.model); !known && o.window == 0 {
		return cfg, usageErrorf("--model %q: the model table does not know it; give --window N (counts are then estimated) or add the model with COMPACT_MODELS", o.model)
	}
	// One redactor for the compaction and the LLM's errors, which masks the
	// API key wherever it turns up: a provider may echo it.
	if cfg.Redactor, err = newRedactor(e); err != nil {
		return cfg, err
	}
	lc, configured := o.llmConfig(e)
	lc.Redactor = cfg.Redactor
	switch {
	case cfg.Strategy == compactor.StrategyLLM && !configured:
		return cfg, usageErrorf("--summarizer llm needs an API key or a base URL (OPENAI_API_KEY, OPENAI_BASE_URL or --base-url)")
	case configured && (cfg.Strategy == compactor.StrategyAuto || cfg.Strategy == compactor.StrategyLLM):
		s, err := llm.New(lc)
		if err != nil {
			return cfg, usageErrorf("%w", err)
		}
		cfg.Summarizer = s
	}
	return cfg, nil
}

// handoffKeyEnv holds the key that signs the handoffs compact writes and
// verifies the ones it folds; unset, compact.DefaultHandoffKey.
const handoffKeyEnv = "COMPACT_HANDOFF_KEY"

// handoffKey returns the handoff signing key of the environment, nil for
// the documented default. A key too short to be secret is a usage error,
// not a silent fallback to the public default.
func handoffKey(e *env) ([]byte, error) {
	v := e.getenv(handoffKeyEnv)
	if v == "" {
		return nil, nil
	}
	if len(v) < 16 {
		return nil, usageErrorf("$%s holds %d bytes; a handoff key needs 16 or more", handoffKeyEnv, len(v))
	}
	return []byte(v), nil
}

// llmConfig is the LLM summarizer's configuration from the flags and the
// environment; configured is false when neither a key nor a base URL is
// set, so there is nothing to call.
func (o *compactOptions) llmConfig(e *env) (cfg llm.Config, configured bool) {
	cfg = llm.DefaultConfig(e.getenv("OPENAI_API_KEY"))
	cfg.BaseURL = o.baseURL
	if cfg.BaseURL == "" {
		cfg.BaseURL = e.getenv("OPENAI_BASE_URL")
	}
	cfg.Model = o.summaryModel
	cfg.Timeout = o.timeout
	cfg.Retries = o.retries
	return cfg, cfg.APIKey != "" || cfg.BaseURL != ""
}

// modelTable loads the model table overrides of path, or of
// $COMPACT_MODELS when path is empty; nil when there are none.
func modelTable(e *env, path string) (*tokens.Models, error) {
	if path == "" {
		path = e.getenv("COMPACT_MODELS")
	}
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("model table: %w", err)
	}
	defer f.Close()
	models := tokens.NewModels()
	if err := models.Load(f, path); err != nil {
		return nil, usageErrorf("model table: %w", err)
	}
	return models, nil
}

// parseTarget reads "40000" (tokens) or "40%" (a share of the window).
func parseTarget(s string) (tokens int, share float64, err error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, 0, usageErrorf("--target %q: want tokens (40000) or a share of the window (40%%)", s)
		}
		return 0, f / 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, 0, usageErrorf("--target %q: want tokens (40000) or a share of the window (40%%)", s)
	}
	return n, 0, nil
}

// newRedactor returns a redactor with the built-in rules that also masks
// the configured API key as an exact value.
func newRedactor(e *env) (*redact.Redactor, error) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		return nil, err
	}
	if key := e.getenv("OPENAI_API_KEY"); key != "" {
		r.AddValue(key)
	}
	return r, nil
}
