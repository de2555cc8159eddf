package compactor

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// Strategy chooses how the dropped middle is replaced.
type Strategy string

// Strategies. The zero value is StrategyAuto.
const (
	// StrategyAuto uses Config.Summarizer when one is set, the
	// deterministic fallback otherwise.
	StrategyAuto Strategy = "auto"
	// StrategyLLM requires Config.Summarizer (an LLM, package llm); on
	// failure it falls back, or fails with AbortOnSummaryFailure.
	StrategyLLM Strategy = "llm"
	// StrategyFallback builds the handoff deterministically, offline.
	StrategyFallback Strategy = "fallback"
	// StrategyPrune masks old tool outputs in place, redacts the middle,
	// and writes no handoff.
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

// Config configures a Compactor. Start from DefaultConfig, which holds
// every default, and change what you need; New says what is wrong with a
// value that cannot work. Values are taken as they are: KeepHead 0 keeps
// no exchange, MinTailMessages 0 sets no minimum. Only fields whose zero
// could not work say what their zero means (Window 0 is the model's).
type Config struct {
	// Model is the model the transcript is sent to ("" means
	// DefaultModel). It sets the window, the output reserve and, unless
	// Counter is set, the tokenizer. A model the table does not know is an
	// error unless Window is set; its counts are then estimates, as every
	// record's warnings and Compactor.Exact say.
	Model string
	// Models is the model table (nil means tokens.DefaultModels()).
	Models *tokens.Models
	// Window and OutputReserve override the model table's (tokens; 0 means
	// the model's). The reserve must be below the window. A Window set
	// without OutputReserve, too small to leave half of itself beside the
	// model's reserve, gets the model's share of it instead (gpt-4o's
	// 16,384 of 128,000 is 1,024 of an 8,000-token window), and every
	// record says so in a warning.
	Window        int
	OutputReserve int

	// Threshold is the share of (Window − OutputReserve) at which a
	// transcript is compacted, in (0, 1] (0 means DefaultThreshold).
	Threshold float64
	// TriggerTokens, when positive, is the absolute token count that
	// triggers a compaction, overriding Threshold.
	TriggerTokens int
	// TargetShare is the share of Window a compacted transcript should fit
	// in, in (0, 1] (0 means DefaultTargetShare). A result above the
	// target carries a warning.
	TargetShare float64
	// TargetTokens, when positive, is the target in tokens, overriding
	// TargetShare.
	TargetTokens int
	// Force compacts whatever the size. Below the trigger the tail budget is
	// taken from the transcript's own size, so a forced compaction of a
	// small transcript still drops its middle.
	Force bool

	// KeepHead is how many exchanges after the system messages stay
	// verbatim; 0 keeps only the leading system messages.
	KeepHead int
	// KeepTailTokens, when positive, is the token budget of the verbatim
	// tail; 0 means 20% of the trigger budget.
	KeepTailTokens int
	// MinTailMessages is the fewest messages the tail keeps, budget or not.
	MinTailMessages int
	// SummarizeSystemNotes folds system and developer messages found in the
	// middle into the handoff instead of keeping them verbatim ahead of it.
	SummarizeSystemNotes bool

	// Strategy picks the summarizer ("" means StrategyAuto).
	Strategy Strategy
	// Summarizer writes the handoff (any Strategy but prune and
	// fallback); package llm has one for OpenAI-compatible APIs. Its
	// failures fall back on the deterministic handoff.
	Summarizer compact.Summarizer
	// AbortOnSummaryFailure makes a failed summary an error that leaves
	// the transcript unchanged, instead of falling back.
	AbortOnSummaryFailure bool
	// Focus asks the summarizer to pay special attention to a topic. It
	// is redacted before it is sent.
	Focus string
	// HandoffTokens caps the handoff. Zero sizes it to each compaction:
	// half the room the kept messages leave under the target, at least 2,000
	// and at most 8,000 tokens, so a handoff replacing a long middle in a
	// large window is not squeezed into the budget of a small one.
	HandoffTokens int
	// Prune tunes the shortening of tool outputs.
	Prune PruneConfig

	// Counter counts tokens (nil means tokens.ForModel(Model)).
	Counter Counter
	// Redactor masks secrets in the middle before it is summarized, and
	// checks the handoff (nil means redact.New with the built-in rules).
	Redactor *redact.Redactor
	// HandoffKey signs the handoffs this Compactor writes and verifies the
	// earlier ones it folds (nil means compact.DefaultHandoffKey, which is
	// public). A message that presents itself as a handoff but does not
	// verify (pasted, fetched, edited, or signed under another key) is
	// ordinary text: it is summarized, never folded. Give a secret key of
	// 16 bytes or more, one per checkpoint store or deployment, when
	// someone who knows the default could write whole user messages.
	HandoffKey []byte
	// Observer, when set, receives every event.
	Observer Observer
	// Logger receives one record per event; nil logs nothing. Records hold
	// counts, durations and redacted errors, never transcript content.
	Logger *slog.Logger
	// Now returns the current time (nil means time.Now).
	Now func() time.Time

	// notes are the warnings every record carries: a reserve scaled to a
	// small Window, counts estimated for a model the table does not know.
	notes []string
}

// PruneConfig tunes how tool outputs are shortened, for the summarizer's
// input and for StrategyPrune. A zero field means its default.
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

// Defaults.
const (
	// DefaultModel is the model a Config with no Model compacts for; it
	// is also compact count's default, so both count the same.
	DefaultModel       = "gpt-4o"
	DefaultThreshold   = 0.8
	DefaultTargetShare = 0.5
	DefaultKeepHead    = 1
	DefaultMinTail     = 4
)

const (
	defaultTailShare = 0.2
	minHandoffTokens = 2000
	maxHandoffTokens = 8000
	// minSavings is the share of tokens a compaction must save to count as
	// effective.
	minSavings = 0.10
)

// ErrConfig is wrapped by every error New returns for a value that cannot
// work.
var ErrConfig = errors.New("invalid compactor config")

// DefaultConfig returns the configuration with every default filled in:
// DefaultModel (its window and output reserve from the model table),
// compaction at DefaultThreshold of the usable window down to
// DefaultTargetShare of the window, one exchange kept at the head, a tail
// of 20% of the trigger budget and at least DefaultMinTail messages, the
// auto strategy (the deterministic fallback until a Summarizer is set).
func DefaultConfig() Config {
	c := Config{
		Model:           DefaultModel,
		Threshold:       DefaultThreshold,
		TargetShare:     DefaultTargetShare,
		KeepHead:        DefaultKeepHead,
		MinTailMessages: DefaultMinTail,
		Strategy:        StrategyAuto,
	}
	c.Prune.fill()
	return c
}

// resolve checks every value and fills in those whose zero means "derive
// it". It returns the model table entry and whether the table knows the
// model.
func (c *Config) resolve() (tokens.Model, bool, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	c.notes = nil
	if c.Model == "" {
		c.Model = DefaultModel
	}
	models := c.Models
	if models == nil {
		models = tokens.DefaultModels()
	}
	m, known := models.Lookup(c.Model)
	st, err := ParseStrategy(string(c.Strategy))
	if err != nil {
		return m, known, bad("%v", err)
	}
	c.Strategy = st
	for _, f := range []struct {
		name string
		v    int
	}{
		{"Window", c.Window}, {"OutputReserve", c.OutputReserve}, {"TriggerTokens", c.TriggerTokens},
		{"TargetTokens", c.TargetTokens}, {"KeepHead", c.KeepHead}, {"KeepTailTokens", c.KeepTailTokens},
		{"MinTailMessages", c.MinTailMessages}, {"HandoffTokens", c.HandoffTokens},
		{"Prune.MinTokens", c.Prune.MinTokens}, {"Prune.HeadLines", c.Prune.HeadLines},
		{"Prune.TailLines", c.Prune.TailLines}, {"Prune.MinDuplicateBytes", c.Prune.MinDuplicateBytes},
	} {
		if f.v < 0 {
			return m, known, bad("%s is %d; want 0 or more", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Threshold", c.Threshold}, {"TargetShare", c.TargetShare}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return m, known, bad("%s is %g; want a share of the window in (0, 1]", f.name, f.v)
		}
	}
	if !known && c.Window == 0 {
		return m, known, bad("unknown model %q: set Window (counts are then estimated), or a model the table knows (tokens.Models)", c.Model)
	}
	if c.Window == 0 {
		c.Window = m.Window
	}
	if !known && c.Counter == nil {
		c.notes = append(c.notes, fmt.Sprintf("unknown model %q: counts are estimates", c.Model))
	}
	if c.OutputReserve == 0 {
		var scaled bool
		c.OutputReserve, scaled = m.ReserveFor(c.Window)
		if scaled {
			c.notes = append(c.notes, fmt.Sprintf("output reserve scaled to %d tokens: %s's %d does not fit a %d-token window",
				c.OutputReserve, c.Model, m.OutputReserve, c.Window))
		}
	}
	if c.OutputReserve >= c.Window {
		return m, known, bad("OutputReserve %d leaves no room in a %d-token window", c.OutputReserve, c.Window)
	}
	usable := c.Window - c.OutputReserve
	if c.TriggerTokens > usable {
		return m, known, bad("TriggerTokens %d is beyond the usable window (%d − %d = %d tokens)", c.TriggerTokens, c.Window, c.OutputReserve, usable)
	}
	if c.TargetTokens > c.Window {
		return m, known, bad("TargetTokens %d is larger than the %d-token window", c.TargetTokens, c.Window)
	}
	if c.HandoffTokens > 0 && c.HandoffTokens < minHandoffBudget {
		return m, known, bad("HandoffTokens %d cannot hold a handoff's headings and a task; want at least %d", c.HandoffTokens, minHandoffBudget)
	}
	if c.HandoffTokens > c.Window {
		return m, known, bad("HandoffTokens %d is larger than the %d-token window", c.HandoffTokens, c.Window)
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.TargetShare == 0 {
		c.TargetShare = DefaultTargetShare
	}
	if c.TargetTokens == 0 {
		c.TargetTokens = int(c.TargetShare * float64(c.Window))
	}
	if c.HandoffKey != nil && len(c.HandoffKey) < minHandoffKey {
		return m, known, bad("HandoffKey of %d bytes is too short to be secret; want %d or more (nil uses compact.DefaultHandoffKey)", len(c.HandoffKey), minHandoffKey)
	}
	if c.Strategy == StrategyLLM && c.Summarizer == nil {
		return m, known, bad("the llm strategy needs a Summarizer (package llm has one for OpenAI-compatible APIs)")
	}
	c.Prune.fill()
	if c.Now == nil {
		c.Now = time.Now
	}
	return m, known, nil
}

// minHandoffBudget is the smallest HandoffTokens New accepts: the
// headings of an empty handoff take about 60 tokens, and the deterministic
// fallback needs room for a task and a few items besides.
const minHandoffBudget = 200

// minHandoffKey is the shortest HandoffKey New accepts.
const minHandoffKey = 16

func (p *PruneConfig) fill() {
	if p.MinTokens == 0 {
		p.MinTokens = 400
	}
	if p.HeadLines == 0 {
		p.HeadLines = 20
	}
	if p.TailLines == 0 {
		p.TailLines = 10
	}
	if p.MinDuplicateBytes == 0 {
		p.MinDuplicateBytes = 200
	}
}

// trigger is the size that triggers a compaction.
func (c *Config) trigger() int {
	if c.TriggerTokens > 0 {
		return c.TriggerTokens
	}
	return int(c.Threshold * float64(c.Window-c.OutputReserve))
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
