package compactor

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// Strategy chooses how the dropped middle is replaced.
type Strategy string

// Strategies. The zero value is StrategyAuto.
const (
	// StrategyAuto uses the LLM when one is configured (LLMConfig.APIKey or
	// LLMConfig.BaseURL is set), the deterministic fallback otherwise.
	StrategyAuto Strategy = "auto"
	// StrategyLLM always asks the LLM; on failure it falls back, or fails
	// with AbortOnSummaryFailure.
	StrategyLLM Strategy = "llm"
	// StrategyFallback builds the handoff deterministically, offline.
	StrategyFallback Strategy = "fallback"
	// StrategyPrune masks old tool outputs in place and writes no handoff.
	StrategyPrune Strategy = "prune"
)

// ParseStrategy returns the strategy called s ("" means auto).
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case "", StrategyAuto:
		return StrategyAuto, nil
	case StrategyLLM, StrategyFallback, StrategyPrune:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("unknown summarizer strategy %q (want auto, llm, fallback or prune)", s)
}

// Counter counts tokens. *tokens.Counter implements it; tests may inject
// exact counts. Transcript must equal the sum of Message over the messages
// plus a constant for the tool definitions and reply priming, which is how
// the compactor counts a result without recounting kept messages.
type Counter interface {
	Text(s string) int
	Message(m compact.Message) int
	Transcript(t compact.Transcript) int
}

// Observer receives the events of a compaction as they happen. It is called
// synchronously, from the goroutine running Compact; it must not block.
type Observer func(Event)

// Config configures a Compactor. The zero value works: it compacts for the
// tokens package's default model with the defaults below. DefaultConfig shows
// every default filled in.
type Config struct {
	// Model is the model the transcript is sent to. It sets the window, the
	// output reserve and, unless Counter is set, the tokenizer.
	Model string
	// Window and OutputReserve override the model table (tokens).
	Window        int
	OutputReserve int

	// Threshold is the share of (Window − OutputReserve) at which a
	// transcript is compacted (default 0.8).
	Threshold float64
	// TriggerTokens, when set, is the absolute token count that triggers a
	// compaction, overriding Threshold.
	TriggerTokens int
	// TargetTokens is the size a compacted transcript should fit in
	// (default half the window). A result above it carries a warning.
	TargetTokens int
	// Force compacts whatever the size. Below the trigger the tail budget is
	// taken from the transcript's own size, so a forced compaction of a
	// small transcript still drops its middle.
	Force bool

	// KeepHead is how many exchanges after the system messages stay
	// verbatim (default 1); negative keeps none, only the leading system
	// messages.
	KeepHead int
	// KeepTailTokens is the token budget of the verbatim tail (default 20%
	// of the trigger budget).
	KeepTailTokens int
	// MinTailMessages is the fewest messages the tail keeps, budget or not
	// (default 4).
	MinTailMessages int
	// SummarizeSystemNotes folds system and developer messages found in the
	// middle into the handoff instead of keeping them verbatim ahead of it.
	SummarizeSystemNotes bool

	// Strategy picks the summarizer (default StrategyAuto).
	Strategy Strategy
	// Summarizer, when set, replaces the LLM as the primary summarizer (any
	// Strategy but prune and fallback); its failures are handled like the
	// LLM's.
	Summarizer Summarizer
	// LLM configures the OpenAI-compatible summarizer.
	LLM LLMConfig
	// AbortOnSummaryFailure makes a failed LLM summary an error that leaves
	// the transcript unchanged, instead of falling back.
	AbortOnSummaryFailure bool
	// Focus asks the summarizer to pay special attention to a topic.
	Focus string
	// HandoffTokens caps the handoff. Zero sizes it to each compaction:
	// half the room the kept messages leave under the target, at least 2,000
	// and at most 8,000 tokens, so a handoff replacing a long middle in a
	// large window is not squeezed into the budget of a small one.
	HandoffTokens int
	// Prune tunes the shortening of tool outputs.
	Prune PruneConfig

	// Counter counts tokens (default tokens.ForModel(Model)).
	Counter Counter
	// Redactor masks secrets in the middle before it is summarized, and
	// checks the handoff (default redact.New with the built-in rules).
	Redactor *redact.Redactor
	// Observer, when set, receives every event.
	Observer Observer
	// Logger receives one record per event; nil logs nothing. Records hold
	// counts, durations and redacted errors, never transcript content.
	Logger *slog.Logger
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// PruneConfig tunes how tool outputs are shortened, for the summarizer's
// input and for StrategyPrune.
type PruneConfig struct {
	// MinTokens is the size under which a tool output is left whole
	// (default 400).
	MinTokens int
	// HeadLines and TailLines are the lines kept at each end of a shortened
	// output (defaults 20 and 10).
	HeadLines int
	TailLines int
	// MinDuplicateBytes is the size from which identical tool outputs are
	// deduplicated, only the latest kept (default 200).
	MinDuplicateBytes int
}

// LLMConfig configures the OpenAI-compatible summarizer, in the manner of
// go-openai's ClientConfig. The zero value talks to api.openai.com with no
// key; callers pass the key and base URL (cmd/compact reads them from
// OPENAI_API_KEY and OPENAI_BASE_URL).
type LLMConfig struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1",
	// "https://openrouter.ai/api/v1", "http://localhost:11434/v1" (Ollama).
	BaseURL string
	APIKey  string
	// Azure selects Azure OpenAI's deployment URLs and api-key header;
	// APIVersion is its api-version (default "2024-10-21").
	Azure      bool
	APIVersion string
	// Model is the summarizer's model (default "gpt-4o-mini").
	Model string
	// HTTPClient sends the requests (default an http.Client).
	HTTPClient HTTPDoer

	// Timeout bounds one call (default 2m); TotalTimeout bounds the whole
	// summary, retries and chunks included (default 10m).
	Timeout      time.Duration
	TotalTimeout time.Duration
	// Retries is how many times a failed call is retried (default 3);
	// negative disables retries.
	Retries int
	// BackoffBase and BackoffMax shape the exponential backoff with jitter
	// between retries (defaults 1s and 30s). A Retry-After from the server
	// overrides the backoff.
	BackoffBase time.Duration
	BackoffMax  time.Duration

	// ContextTokens is the summarizer model's context (default from the
	// model table). Windows larger than half of it are summarized in
	// chunks, each folded into the handoff of the chunks before.
	ContextTokens int
	// MaxInputTokens caps the whole input (default three chunks); beyond
	// it the middle of the window is left out, keeping its start and end.
	MaxInputTokens int
	// MaxMessageTokens caps each message of the input (default 2000),
	// keeping its start and end.
	MaxMessageTokens int
	// MaxOutputTokens caps the answer (default 4096).
	MaxOutputTokens int

	// BreakerFailures consecutive failed calls open the circuit breaker
	// (default 5); while open, for BreakerCooldown (default 1m), the
	// provider is not called at all.
	BreakerFailures int
	BreakerCooldown time.Duration
}

// HTTPDoer sends HTTP requests; *http.Client implements it.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// Defaults.
const (
	defaultThreshold       = 0.8
	defaultTargetShare     = 0.5
	defaultTailShare       = 0.2
	defaultMinTail         = 4
	minHandoffTokens       = 2000
	maxHandoffTokens       = 8000
	defaultSummaryModel    = "gpt-4o-mini"
	defaultAzureAPIVersion = "2024-10-21"
	// minSavings is the share of tokens a compaction must save to count as
	// effective.
	minSavings = 0.10
)

// DefaultConfig returns the configuration for model with every default
// filled in, for callers who want to see or adjust them.
func DefaultConfig(model string) Config {
	c := Config{Model: model}
	c.fill()
	return c
}

// fill sets every zero field to its default. It needs no I/O except
// creating the default counter and redactor.
func (c *Config) fill() {
	m, _ := tokens.LookupModel(c.Model)
	if c.Window <= 0 {
		c.Window = m.Window
	}
	if c.OutputReserve <= 0 {
		c.OutputReserve = m.OutputReserve
	}
	if c.OutputReserve >= c.Window {
		c.OutputReserve = 0
	}
	if c.Threshold <= 0 {
		c.Threshold = defaultThreshold
	}
	if c.TargetTokens <= 0 {
		c.TargetTokens = int(float64(c.Window) * defaultTargetShare)
	}
	if c.KeepHead == 0 {
		c.KeepHead = 1
	}
	if c.MinTailMessages <= 0 {
		c.MinTailMessages = defaultMinTail
	}
	if c.Strategy == "" {
		c.Strategy = StrategyAuto
	}
	c.Prune.fill()
	c.LLM.fill()
	if c.Now == nil {
		c.Now = time.Now
	}
}

func (p *PruneConfig) fill() {
	if p.MinTokens <= 0 {
		p.MinTokens = 400
	}
	if p.HeadLines <= 0 {
		p.HeadLines = 20
	}
	if p.TailLines <= 0 {
		p.TailLines = 10
	}
	if p.MinDuplicateBytes <= 0 {
		p.MinDuplicateBytes = 200
	}
}

func (l *LLMConfig) fill() {
	if l.Model == "" {
		l.Model = defaultSummaryModel
	}
	if l.Azure && l.APIVersion == "" {
		l.APIVersion = defaultAzureAPIVersion
	}
	if l.Timeout <= 0 {
		l.Timeout = 2 * time.Minute
	}
	if l.TotalTimeout <= 0 {
		l.TotalTimeout = 10 * time.Minute
	}
	if l.Retries == 0 {
		l.Retries = 3
	}
	if l.BackoffBase <= 0 {
		l.BackoffBase = time.Second
	}
	if l.BackoffMax <= 0 {
		l.BackoffMax = 30 * time.Second
	}
	if l.ContextTokens <= 0 {
		m, _ := tokens.LookupModel(l.Model)
		l.ContextTokens = m.Window
	}
	if l.MaxInputTokens <= 0 {
		l.MaxInputTokens = 3 * l.chunkTokens()
	}
	if l.MaxMessageTokens <= 0 {
		l.MaxMessageTokens = 2000
	}
	if l.MaxOutputTokens <= 0 {
		l.MaxOutputTokens = 4096
	}
	if l.BreakerFailures <= 0 {
		l.BreakerFailures = 5
	}
	if l.BreakerCooldown <= 0 {
		l.BreakerCooldown = time.Minute
	}
}

// chunkTokens is how much transcript one call carries: half the context,
// leaving room for the instructions, the previous handoff and the answer.
func (l *LLMConfig) chunkTokens() int {
	return max(l.ContextTokens/2, 1000)
}

// attempts is the number of calls one request may make.
func (l *LLMConfig) attempts() int {
	if l.Retries < 0 {
		return 1
	}
	return 1 + l.Retries
}

// configured reports whether the caller pointed the LLM anywhere: with
// neither a key nor a base URL there is nothing to call.
func (l *LLMConfig) configured() bool {
	return l.APIKey != "" || l.BaseURL != ""
}

// handoffFloor is the handoff room a plan sets aside before the handoff's
// own budget is known.
func (c *Config) handoffFloor() int {
	if c.HandoffTokens > 0 {
		return c.HandoffTokens
	}
	return minHandoffTokens
}

// handoffBudget is the cap of the handoff replacing p's middle.
func (c *Config) handoffBudget(p *Plan) int {
	if c.HandoffTokens > 0 {
		return c.HandoffTokens
	}
	room := p.Target - p.HeadTokens - p.PinnedTokens - p.TailTokens
	return min(max(room/2, minHandoffTokens), maxHandoffTokens)
}
