package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/llm"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/serve"
)

const serveUsage = "compact serve [--listen ADDR] [--openai-upstream URL] [--anthropic-upstream URL] [--store DIR|redis://…] [flags]"

const serveExamples = `  compact serve
      listen on 127.0.0.1:8787, compact with the deterministic fallback,
      forward to api.openai.com and api.anthropic.com
  OPENAI_BASE_URL=http://127.0.0.1:8787/v1 my-agent
  ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude
      point an agent at it
  compact serve --openai-upstream http://localhost:11434/v1 --models models.toml
      in front of a local Ollama, with its models' windows
  OPENAI_API_KEY=… compact serve --base-url https://api.openai.com/v1 --summary-model gpt-4o-mini
      an LLM writes the handoffs (the deterministic fallback when it fails)
  COMPACT_SERVE_TOKEN=… compact serve --listen 0.0.0.0:8787 --store redis://cache:6379/0
      shared by a team: clients send X-Compact-Token, prefixes kept in Redis
`

type serveOptions struct {
	listen, openaiUp, anthropicUp, store, models, authToken, maxBody, logFormat string
	maxSessions                                                                 int
	threshold                                                                   float64
	target                                                                      string
	window, keepHead, keepTailTokens                                            int
	summarizer, baseURL, summaryModel, focus                                    string
	timeout                                                                     time.Duration
	retries                                                                     int
	bodyIdle, bodyTotal, storeTimeout                                           time.Duration
	maxBodyInFlight                                                             string
}

func serveFlags(e *env, o *serveOptions) *flag.FlagSet {
	fs := newFlags(e, "serve", serveUsage, serveExamples)
	fs.StringVar(&o.listen, "listen", serve.DefaultListen, "`ADDR` to listen on; beyond loopback it needs --auth-token")
	fs.StringVar(&o.openaiUp, "openai-upstream", serve.DefaultOpenAIUpstream, "`URL` of the OpenAI-compatible API (/v1/chat/completions, /v1/responses, other paths)")
	fs.StringVar(&o.anthropicUp, "anthropic-upstream", serve.DefaultAnthropicUpstream, "`URL` of the Anthropic API (/v1/messages)")
	fs.StringVar(&o.store, "store", "", "keep compacted prefixes in `STORE` (DIR or redis://HOST:PORT/DB), redacted; default: in memory")
	fs.StringVar(&o.models, "models", "", "model table overrides, a JSON or TOML `FILE` (default $COMPACT_MODELS)")
	fs.StringVar(&o.authToken, "auth-token", "", "token clients must send in X-Compact-Token (default $COMPACT_SERVE_TOKEN)")
	fs.StringVar(&o.maxBody, "max-body", "64MiB", "largest request body accepted (`SIZE`: bytes, KiB, MiB, GiB)")
	fs.StringVar(&o.maxBodyInFlight, "max-body-in-flight", "", "request body bytes held in memory by all requests at once, over which a request gets 503 (`SIZE`; default 8 × --max-body)")
	fs.DurationVar(&o.bodyIdle, "body-idle-timeout", serve.DefaultBodyIdleTimeout, "a request body that brings no byte for this long gets 408")
	fs.DurationVar(&o.bodyTotal, "body-timeout", serve.DefaultBodyTimeout, "a request body not read whole within this gets 408")
	fs.DurationVar(&o.storeTimeout, "store-timeout", serve.DefaultStoreTimeout, "bound of one --store operation on a request's path; after a failure the store is skipped for 30s")
	fs.IntVar(&o.maxSessions, "max-sessions", serve.DefaultMaxSessions, "conversations held in memory")
	fs.StringVar(&o.logFormat, "log-format", "json", "request log lines on stderr: json or text")
	fs.Float64Var(&o.threshold, "threshold", 0.8, "compact at this share of each model's (window - output reserve)")
	fs.StringVar(&o.target, "target", "50%", "size to compact to: a share of the model's window (40%) or tokens (40000)")
	fs.IntVar(&o.window, "window", 0, "context window in tokens for every model, overriding the model table")
	fs.IntVar(&o.keepHead, "keep-head", 1, "exchanges after the system messages kept verbatim")
	fs.IntVar(&o.keepTailTokens, "keep-tail-tokens", 0, "token budget of the verbatim tail (default 20% of the trigger budget)")
	fs.StringVar(&o.summarizer, "summarizer", "auto", "auto, llm or fallback (auto: llm when --base-url is set, else the deterministic fallback)")
	fs.StringVar(&o.baseURL, "base-url", "", "OpenAI-compatible API base URL of the LLM summarizer, key from $OPENAI_API_KEY (not the clients' upstream)")
	fs.StringVar(&o.summaryModel, "summary-model", llm.DefaultModel, "model that writes the handoff")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "timeout of one summarizer call")
	fs.IntVar(&o.retries, "retries", 1, "retries of a failed summarizer call")
	fs.StringVar(&o.focus, "focus", "", "topic handoffs should pay special attention to")
	return fs
}

// runServe runs the compacting proxy until interrupted.
func runServe(ctx context.Context, e *env, args []string) error {
	var o serveOptions
	pos, err := parseFlags(serveFlags(e, &o), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("serve takes no arguments, got %q", pos[0])
	}
	cfg, err := o.config(ctx, e)
	if err != nil {
		return err
	}
	if cfg.Store != nil {
		defer cfg.Store.Close()
	}
	if err := serve.CheckListen(o.listen, cfg.AuthToken); err != nil {
		return usageErrorf("%w", err)
	}
	s, err := serve.New(cfg)
	if err != nil {
		return usageErrorf("%w", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "compact serve: listening on http://%s (OpenAI → %s, Anthropic → %s)\n", ln.Addr(), shownURL(o.openaiUp), shownURL(o.anthropicUp))
	return s.Serve(ctx, ln, 30*time.Second)
}

// config turns the flags and the environment into a serve.Config.
func (o *serveOptions) config(ctx context.Context, e *env) (serve.Config, error) {
	var cfg serve.Config
	switch {
	case o.threshold <= 0 || o.threshold > 1:
		return cfg, usageErrorf("--threshold %g: want a share of the window in (0, 1]", o.threshold)
	case o.keepHead < 0 || o.keepTailTokens < 0 || o.window < 0 || o.retries < 0 || o.maxSessions <= 0:
		return cfg, usageErrorf("--keep-head, --keep-tail-tokens, --window, --retries and --max-sessions take positive numbers")
	case o.logFormat != "json" && o.logFormat != "text":
		return cfg, usageErrorf("--log-format %q: want json or text", o.logFormat)
	}
	st, err := compactor.ParseStrategy(o.summarizer)
	if err != nil || st == compactor.StrategyPrune {
		return cfg, usageErrorf("--summarizer %q: want auto, llm or fallback", o.summarizer)
	}
	maxBody, err := parseSize(o.maxBody)
	if err != nil {
		return cfg, usageErrorf("--max-body: %w", err)
	}
	var inFlight int64
	if o.maxBodyInFlight != "" {
		if inFlight, err = parseSize(o.maxBodyInFlight); err != nil {
			return cfg, usageErrorf("--max-body-in-flight: %w", err)
		}
	}
	cfg = serve.Config{
		OpenAIUpstream: o.openaiUp, AnthropicUpstream: o.anthropicUp,
		AuthToken: o.authToken, MaxBodyBytes: maxBody, MaxSessions: o.maxSessions,
		MaxBodyBytesInFlight: inFlight, BodyIdleTimeout: o.bodyIdle, BodyTimeout: o.bodyTotal,
		StoreTimeout: o.storeTimeout,
		Compaction:   compactor.DefaultConfig(),
	}
	c := &cfg.Compaction
	c.Window, c.Threshold, c.KeepHead, c.KeepTailTokens = o.window, o.threshold, o.keepHead, o.keepTailTokens
	c.Strategy, c.Focus = st, o.focus
	if c.TargetTokens, c.TargetShare, err = parseTarget(o.target); err != nil {
		return cfg, err
	}
	if c.HandoffKey, err = handoffKey(e); err != nil {
		return cfg, err
	}
	if cfg.AuthToken == "" {
		cfg.AuthToken = e.getenv("COMPACT_SERVE_TOKEN")
	}
	if c.Summarizer, err = o.summarizerOf(e, st); err != nil {
		return cfg, err
	}
	if cfg.Models, err = modelTable(e, o.models); err != nil {
		return cfg, err
	}
	handler := slog.Handler(slog.NewJSONHandler(e.stderr, nil))
	if o.logFormat == "text" {
		handler = slog.NewTextHandler(e.stderr, nil)
	}
	cfg.Logger = slog.New(handler)
	if o.store != "" {
		red, err := redact.New(redact.Config{})
		if err != nil {
			return cfg, err
		}
		if cfg.Store, err = openStore(ctx, e, o.store, red, false); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// summarizerOf builds the LLM summarizer the flags ask for: always with
// --summarizer llm, with auto only when --base-url names an endpoint. Unlike
// the compact command, serve does not take OPENAI_BASE_URL: in the shell an
// agent is started from it often points at this very proxy.
func (o *serveOptions) summarizerOf(e *env, st compactor.Strategy) (compact.Summarizer, error) {
	if st == compactor.StrategyFallback || (st == compactor.StrategyAuto && o.baseURL == "") {
		return nil, nil
	}
	lc := llm.DefaultConfig(e.getenv("OPENAI_API_KEY"))
	lc.BaseURL, lc.Model, lc.Timeout, lc.Retries = o.baseURL, o.summaryModel, o.timeout, o.retries
	if lc.APIKey == "" && lc.BaseURL == "" {
		return nil, usageErrorf("--summarizer llm needs an API key or a base URL (OPENAI_API_KEY or --base-url)")
	}
	s, err := llm.New(lc)
	if err != nil {
		return nil, usageErrorf("%w", err)
	}
	return s, nil
}

// parseSize reads "64MiB", "512KiB", "1GiB", "10MB" or plain bytes.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if p, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(p), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, errors.New("want a positive size: bytes, or a number with KiB, MiB or GiB")
	}
	return n * mult, nil
}
