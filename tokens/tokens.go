// Package tokens counts the tokens of text and transcripts: exactly for
// OpenAI's o200k_base and cl100k_base encodings, offline, and by a
// content-aware estimate for other models.
//
// The exact encodings are compiled into the binary as rank tables laid out
// for lookups in place, so getting one builds nothing and allocates nothing:
// a first count maps in only the pages of the table it reads. Nothing is
// ever downloaded. Counts equal tiktoken's. A Counter adds the chat format's
// overhead per message, prices tool calls, tool definitions and images,
// and caches per-message counts by content, so that re-counting a
// transcript that grew by one message costs one tokenization.
//
// Models are looked up in a table (DefaultModels) by prefix; a name the
// table does not know gets the estimator, and its Model says so (Unknown,
// Estimated). Estimates converge to a provider's counts through
// Calibrate.
package tokens

import (
	"fmt"
	"math"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/parallel"
)

// Counter counts tokens for one model. It is safe for concurrent use.
type Counter struct {
	model    Model
	enc      *Encoding // nil: the estimator
	cache    *Cache    // nil: no cache
	thinking bool
	scheme   string // what counts depend on besides content
	calKey   string
}

type options struct {
	models   *Models
	encoding string
	cache    *Cache
	thinking bool
}

// Option configures a Counter.
type Option func(*options)

// WithModels looks the model up in t instead of DefaultModels.
func WithModels(t *Models) Option { return func(o *options) { o.models = t } }

// WithEncoding counts exactly with the named encoding whatever the model's
// table entry says: for a model served with an OpenAI tokenizer under
// another name, or to compare encodings.
func WithEncoding(name string) Option { return func(o *options) { o.encoding = name } }

// WithCache keeps per-message counts in c instead of the cache counters
// share (DefaultCacheSize entries). WithCache(nil) turns caching off.
func WithCache(c *Cache) Option { return func(o *options) { o.cache = c } }

// WithThinking counts thinking parts as prompt tokens. By default they are
// left out: OpenAI, Anthropic and DeepSeek drop earlier turns' reasoning
// from the prompt, so it does not take room in the window.
func WithThinking() Option { return func(o *options) { o.thinking = true } }

// ForModel returns a counter for the named model. An unknown model gets the
// estimator (Model().Unknown and Estimated are true); an error means an
// unusable option, such as an unknown encoding.
func ForModel(name string, opts ...Option) (*Counter, error) {
	o := options{cache: sharedCache}
	for _, opt := range opts {
		opt(&o)
	}
	if o.models == nil {
		o.models = defaultModels()
	}
	m, _ := o.models.Lookup(name)
	if o.encoding != "" {
		m.Encoding, m.Estimated = o.encoding, false
	}
	c := &Counter{model: m, cache: o.cache, thinking: o.thinking, calKey: normalizeModel(m.Name)}
	scheme := "estimate"
	if m.Encoding != "" {
		enc, err := GetEncoding(m.Encoding)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", name, err)
		}
		c.enc, scheme = enc, m.Encoding
	}
	c.scheme = fmt.Sprintf("%s|%s|thinking=%t", scheme, m.Provider, o.thinking)
	return c, nil
}

// Model returns the model the counter counts for.
func (c *Counter) Model() Model { return c.model }

// Exact reports whether counts come from the model's own encoding rather
// than the estimator.
func (c *Counter) Exact() bool { return c.enc != nil }

// Encoding returns the exact encoding the counter uses, or nil when it
// estimates.
func (c *Counter) Encoding() *Encoding { return c.enc }

// Text counts the tokens of s with no chat overhead.
func (c *Counter) Text(s string) int { return c.scale(c.raw(s)) }

// raw counts s exactly, or estimates it before calibration.
func (c *Counter) raw(s string) int {
	if s == "" {
		return 0
	}
	if c.enc != nil {
		return c.enc.Count(s)
	}
	return Estimate(s)
}

// scale applies the model's calibration to a raw estimate.
func (c *Counter) scale(n int) int {
	if c.enc != nil || n == 0 {
		return n
	}
	f := calibrationFactor(c.calKey)
	if f == 1 {
		return n
	}
	return int(math.Round(float64(n) * f))
}

// Calibrate records a provider's count of a prompt this counter estimated;
// see the package function Calibrate. Exact counters ignore it.
func (c *Counter) Calibrate(reported, estimated int) {
	if c.enc == nil {
		calibrate(c.calKey, reported, estimated)
	}
}

// Message counts one message, chat overhead included (see CountMessages).
func (c *Counter) Message(m compact.Message) int {
	if c.cache == nil {
		return c.scale(c.countMessage(m))
	}
	var ch contentHasher
	ch.init(c.scheme)
	ch.message(m)
	key := ch.sum()
	if n, ok := c.cache.get(key); ok {
		return c.scale(n)
	}
	n := c.countMessage(m)
	c.cache.put(key, n)
	return c.scale(n)
}

// Messages counts each message as Message does, on all cores, and returns
// the counts in order: for counting a long transcript at once.
func (c *Counter) Messages(msgs []compact.Message) []int {
	counts := make([]int, len(msgs))
	parallel.Each(len(msgs), func(i int) error {
		counts[i] = c.Message(msgs[i])
		return nil
	})
	return counts
}

// CountMessages counts a prompt: its messages, the tool definitions offered
// with them, and the priming of the reply.
//
// The rule for messages is OpenAI's published one (the cookbook's "How to
// count tokens with tiktoken", num_tokens_from_messages, which matches the
// API's prompt_tokens for gpt-3.5-turbo, gpt-4, gpt-4o and gpt-4o-mini): 3
// tokens per message, the tokens of its role and content, 1 more per name,
// and 3 for the reply's priming (<|start|>assistant<|message|>). Tool
// definitions follow the same notebook's num_tokens_for_tools. For the
// parts the notebook does not cover, the rule is the one
// openai-chat-tokens (github.com/hmarr/openai-chat-tokens) fitted to the
// API: a tool call costs 3 tokens plus its name and arguments; a tool
// result costs its text, and each result beyond the first of a message
// costs a message of its own (3 plus the role "tool"), since Chat
// Completions sends one tool message per result. Images are priced by the
// provider's rule (see Model.Provider); thinking parts only WithThinking.
func (c *Counter) CountMessages(msgs []compact.Message, tools []compact.ToolDef) int {
	n := replyPriming
	for _, k := range c.Messages(msgs) {
		n += k
	}
	return n + c.Tools(tools)
}

// Transcript counts a whole prompt: every message, the tool definitions and
// the reply priming.
func (c *Counter) Transcript(t compact.Transcript) int {
	return c.CountMessages(t.Messages, t.Tools)
}

// OpaqueTokens estimates the tokens of content only its provider can read
// (compact.PartOpaque): a quarter of its length, the size of text of that
// many bytes. Nothing better is known of encrypted compaction items; the
// estimate errs high, so a window is not overrun, and callers that report
// counts say that this part is estimated.
func OpaqueTokens(payload string) int { return (len(payload) + 3) / 4 }

// Chat format overheads, from OpenAI's cookbook (see CountMessages).
const (
	perMessage   = 3
	perName      = 1
	replyPriming = 3
	perToolCall  = 3
)

func (c *Counter) countMessage(m compact.Message) int {
	n := perMessage + c.raw(string(m.Role))
	if m.Name != "" {
		n += c.raw(m.Name) + perName
	}
	results, text := 0, false
	for _, p := range m.Parts {
		switch p.Type {
		case compact.PartThinking:
			if c.thinking {
				n += c.raw(p.Text)
			}
		case compact.PartToolCall:
			if tc := p.ToolCall; tc != nil {
				n += perToolCall + c.raw(tc.Name) + c.raw(string(tc.Arguments))
			}
		case compact.PartToolResult:
			n += c.raw(p.Text)
			results++
		case compact.PartImage:
			if p.Image != nil {
				n += imageTokens(p.Image, c.model.Provider)
			}
		case compact.PartOpaque:
			n += OpaqueTokens(p.Text)
		default:
			n += c.raw(p.Text)
			text = text || p.Text != ""
		}
	}
	if text && results > 0 {
		results++
	}
	if results > 1 {
		n += (results - 1) * (perMessage + c.raw(string(compact.RoleTool)))
	}
	return n
}
