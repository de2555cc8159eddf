package compactor

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/tokens"
)

// Every value that cannot work is an error from New that names it, never
// a silent replacement.
func TestNewRejectsValuesThatCannotWork(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"handoff budget too small", func(c *Config) { c.HandoffTokens = 10 }, "HandoffTokens 10"},
		{"handoff key too short", func(c *Config) { c.HandoffKey = []byte("short") }, "HandoffKey of 5 bytes"},
		{"negative threshold", func(c *Config) { c.Threshold = -1 }, "Threshold is -1"},
		{"threshold above 1", func(c *Config) { c.Threshold = 1.5 }, "Threshold is 1.5"},
		{"NaN threshold", func(c *Config) { c.Threshold = math.NaN() }, "Threshold"},
		{"negative window", func(c *Config) { c.Window = -5 }, "Window is -5"},
		{"reserve above the window", func(c *Config) { c.Window, c.OutputReserve = 8000, 9000 }, "OutputReserve 9000"},
		{"explicit reserve at the window", func(c *Config) { c.Window, c.OutputReserve = 16000, 16000 }, "OutputReserve 16000"},
		{"misspelt model", func(c *Config) { c.Model = "gpt4o" }, `unknown model "gpt4o"`},
		{"negative keep-head", func(c *Config) { c.KeepHead = -1 }, "KeepHead is -1"},
		{"negative tail", func(c *Config) { c.KeepTailTokens = -3 }, "KeepTailTokens"},
		{"negative min tail", func(c *Config) { c.MinTailMessages = -1 }, "MinTailMessages"},
		{"trigger beyond the window", func(c *Config) { c.TriggerTokens = 200_000 }, "TriggerTokens 200000"},
		{"target beyond the window", func(c *Config) { c.TargetTokens = 200_000 }, "TargetTokens 200000"},
		{"target share above 1", func(c *Config) { c.TargetShare = 2 }, "TargetShare is 2"},
		{"negative prune size", func(c *Config) { c.Prune.MinTokens = -1 }, "Prune.MinTokens"},
		{"unknown strategy", func(c *Config) { c.Strategy = "magic" }, "unknown summarizer strategy"},
		{"llm without a summarizer", func(c *Config) { c.Strategy = StrategyLLM }, "needs a Summarizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.change(&cfg)
			_, err := New(cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v; want ErrConfig mentioning %q", err, tt.want)
			}
		})
	}
}

// An unknown model is fine with a window, and then says it estimates;
// values are taken as they are.
func TestNewTakesValuesAsTheyAre(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model, cfg.Window, cfg.OutputReserve = "my-local-model", 32000, 4000
	c, err := New(cfg)
	if err != nil || c.Exact() {
		t.Fatalf("unknown model with a window: %v, exact %v", err, c != nil && c.Exact())
	}
	cfg = DefaultConfig()
	cfg.KeepHead, cfg.MinTailMessages, cfg.Window = 0, 0, 100_000
	c = mustNew(t, cfg)
	got := c.Config()
	if got.KeepHead != 0 || got.MinTailMessages != 0 || got.Window != 100_000 || got.OutputReserve != 16384 || !c.Exact() {
		t.Fatalf("config in use %+v", got)
	}
	// The zero Config works: gpt-4o, the documented default.
	c = mustNew(t, Config{})
	if got := c.Config(); got.Model != DefaultModel || got.Window != 128_000 || got.Threshold != DefaultThreshold ||
		got.TargetTokens != 64_000 || got.Strategy != StrategyAuto {
		t.Fatalf("zero config resolved to %+v", got)
	}
}

// TargetShare sets the target as a share of the window; TargetTokens
// overrides it.
func TestTargetShare(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TargetShare = 0.4
	if got := mustNew(t, cfg).Config().TargetTokens; got != 51_200 {
		t.Fatalf("40%% of 128000 = %d", got)
	}
	cfg.TargetTokens = 30_000
	if got := mustNew(t, cfg).Config().TargetTokens; got != 30_000 {
		t.Fatalf("TargetTokens 30000 gave %d", got)
	}
}

// The documented default model is true: a Config with no Model counts
// exactly as tokens.ForModel("gpt-4o"), which is what compact count uses.
func TestDefaultModelCountsLikeCount(t *testing.T) {
	in := agentRun(40, 800)
	in.Tools = []compact.ToolDef{{Name: "bash", Description: "run a command", Parameters: []byte(`{"type":"object"}`)}}
	counter, err := tokens.ForModel("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	want := counter.Transcript(in)
	cfg := DefaultConfig()
	cfg.Model, cfg.Force, cfg.Strategy = "", true, StrategyFallback
	c := mustNew(t, cfg)
	res, err := c.Compact(context.Background(), in)
	if err != nil || res.Record.TokensBefore != want || res.Plan.Tokens != want {
		t.Fatalf("before %d (plan %d), tokens.ForModel(gpt-4o) %d: %v", res.Record.TokensBefore, res.Plan.Tokens, want, err)
	}
	if n, _, _ := c.NeedsCompaction(in); n != want {
		t.Fatalf("NeedsCompaction counts %d, want %d", n, want)
	}
}

// countingCounter counts the messages it is asked to count.
type countingCounter struct {
	byteCounter
	messages int
}

func (c *countingCounter) Message(m compact.Message) int {
	c.messages++
	return c.byteCounter.Message(m)
}

func (c *countingCounter) Transcript(t compact.Transcript) int {
	n := 3
	for _, m := range t.Messages {
		n += c.Message(m)
	}
	return n
}

func TestNeedsCompaction(t *testing.T) {
	cfg := testConfig() // trigger 0.8 × (10000 − 1000) = 7200
	small, big := agentRun(5, 200), agentRun(60, 600)
	c := mustNew(t, cfg)
	n, trigger, over := c.NeedsCompaction(small)
	if trigger != 7200 || over || n != (byteCounter{}).Transcript(small) {
		t.Fatalf("small: %d tokens, trigger %d, over %v", n, trigger, over)
	}
	n, _, over = c.NeedsCompaction(big)
	if !over || n != c.Plan(big).Tokens {
		t.Fatalf("big: %d tokens (plan %d), over %v", n, c.Plan(big).Tokens, over)
	}
	// It counts each message once and plans nothing: Compact on the same
	// transcript would also walk its tool pairs, cut and validate.
	cc := &countingCounter{}
	cfg.Counter = cc
	if _, _, over := mustNew(t, cfg).NeedsCompaction(big); !over || cc.messages != len(big.Messages) {
		t.Fatalf("counted %d messages of %d", cc.messages, len(big.Messages))
	}
}

// A result still over the window is a typed signal, not only a warning.
func TestResultOverTheWindow(t *testing.T) {
	in := agentRun(60, 600)
	cfg := testConfig()
	cfg.KeepHead = 50 // keeps almost everything: the result cannot fit
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fits || !errors.Is(res.Overflow(), ErrOverWindow) || res.Usable != 9000 || res.Record.TokensAfter <= 9000 {
		t.Fatalf("fits %v, overflow %v, usable %d, after %d", res.Fits, res.Overflow(), res.Usable, res.Record.TokensAfter)
	}
	cfg.KeepHead = 1
	res, err = mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || !res.Changed() || !res.Fits || res.Overflow() != nil {
		t.Fatalf("default head: %v, changed %v, fits %v (%d tokens)", err, res.Changed(), res.Fits, res.Record.TokensAfter)
	}
	// Unchanged below the trigger: it fits.
	res, _ = mustNew(t, cfg).Compact(context.Background(), agentRun(3, 100))
	if res.Changed() || !res.Fits {
		t.Fatalf("small: changed %v, fits %v", res.Changed(), res.Fits)
	}
}

// A Window too small for the model's reserve gets the model's share of it
// as the reserve, and every record says so.
func TestSmallWindowScalesTheReserve(t *testing.T) {
	for _, tt := range []struct{ window, reserve int }{{8000, 1024}, {16000, 2048}, {40000, 16384}} {
		cfg := DefaultConfig()
		cfg.Window, cfg.Strategy, cfg.Force = tt.window, StrategyFallback, true
		c := mustNew(t, cfg)
		if got := c.Config().OutputReserve; got != tt.reserve {
			t.Errorf("window %d: reserve %d, want %d", tt.window, got, tt.reserve)
		}
		res, err := c.Compact(context.Background(), agentRun(60, 600))
		if err != nil {
			t.Fatal(err)
		}
		scaled := slices.ContainsFunc(res.Record.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "output reserve scaled to ") && strings.Contains(w, "gpt-4o's 16384 does not fit")
		})
		if scaled != (tt.reserve != 16384) {
			t.Errorf("window %d: warnings %q", tt.window, res.Record.Warnings)
		}
	}
}

// An unknown model with a Window estimates, and every record says so.
func TestUnknownModelSaysItEstimates(t *testing.T) {
	cfg := testConfig()
	cfg.Counter, cfg.Model = nil, "my-local-model"
	c := mustNew(t, cfg)
	res, err := c.Compact(context.Background(), agentRun(60, 600))
	if err != nil || c.Exact() || !slices.Contains(res.Record.Warnings, `unknown model "my-local-model": counts are estimates`) {
		t.Fatalf("%v, exact %v, warnings %q", err, c.Exact(), res.Record.Warnings)
	}
	// New on the config in use does not repeat the note.
	res, _ = mustNew(t, c.Config()).Compact(context.Background(), agentRun(60, 600))
	if n := len(slices.DeleteFunc(slices.Clone(res.Record.Warnings), func(w string) bool { return !strings.HasPrefix(w, "unknown model") })); n != 1 {
		t.Fatalf("warnings %q", res.Record.Warnings)
	}
}
