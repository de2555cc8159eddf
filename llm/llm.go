// Package llm is a compact.Summarizer that asks a chat model behind any
// OpenAI-compatible API (OpenAI, Azure OpenAI, OpenRouter, vLLM, Ollama,
// ...) for the handoff. It is the one package that imports go-openai.
//
// It retries transient failures with backoff, honours Retry-After, bounds
// each call and the whole summary in time, bounds what it reads of an
// answer, stops calling a provider that keeps failing (circuit breaker),
// and masks the API key and secrets in every error it returns. It never
// reads the environment: callers pass the key and base URL.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/clip"
	"github.com/compactkit/compact/internal/safeurl"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// Config configures a Summarizer, in the manner of go-openai's
// ClientConfig: start from DefaultConfig, which fills in every default,
// and change what you need. Values are taken as they are (zero Retries
// means no retry, a zero Timeout no timeout); only the fields whose zero
// could not work say what their zero means.
type Config struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1",
	// "https://openrouter.ai/api/v1", "http://localhost:11434/v1" (Ollama);
	// "" means api.openai.com.
	BaseURL string
	APIKey  string
	// Azure selects Azure OpenAI's deployment URLs and api-key header;
	// APIVersion is its api-version ("" means DefaultAzureAPIVersion).
	Azure      bool
	APIVersion string
	// Model is the summarizer's model ("" means DefaultModel).
	Model string
	// HTTPClient sends the requests (nil means an http.Client).
	HTTPClient HTTPDoer

	// Timeout bounds one call; TotalTimeout bounds the whole summary,
	// retries and chunks included. Zero means no bound.
	Timeout      time.Duration
	TotalTimeout time.Duration
	// Retries is how many times a failed call is retried.
	Retries int
	// BackoffBase and BackoffMax shape the exponential backoff with jitter
	// between retries. A Retry-After from the server overrides it.
	BackoffBase time.Duration
	BackoffMax  time.Duration

	// ContextTokens is the summarizer model's context (0 means the model
	// table's). Windows larger than half of it are summarized in chunks,
	// each folded into the handoff of the chunks before.
	ContextTokens int
	// MaxInputTokens caps the whole input (0 means three chunks); beyond
	// it the middle of the window is left out, keeping its start and end.
	MaxInputTokens int
	// MaxMessageTokens caps each message of the input, keeping its start
	// and end (0 means 2,000).
	MaxMessageTokens int
	// MaxOutputTokens caps the answer (0 means 4,096).
	MaxOutputTokens int
	// MaxAnswerBytes caps what is read of one HTTP answer (0 means 32
	// bytes per output token, at least 256 KiB and at most 4 MiB). A
	// larger answer fails the attempt, and is not retried, without being
	// read further.
	MaxAnswerBytes int64

	// BreakerFailures consecutive failed calls open the circuit breaker
	// (0: it never opens); while open, for BreakerCooldown, the provider
	// is not called at all.
	BreakerFailures int
	BreakerCooldown time.Duration

	// Redactor masks secrets in what the provider sends back before it is
	// put in an error (nil means the built-in rules). The APIKey is always
	// masked as an exact value, and so is any run of 12 or more of its
	// characters.
	Redactor *redact.Redactor
}

// HTTPDoer sends HTTP requests; *http.Client implements it.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// Defaults.
const (
	DefaultModel           = "gpt-4o-mini"
	DefaultAzureAPIVersion = "2024-10-21"
)

const (
	defaultMaxMessageTokens = 2000
	defaultMaxOutputTokens  = 4096
	// An answer of MaxOutputTokens tokens is at most about 4 bytes a token,
	// up to 12 where JSON escapes every character (\u00e9); 32 leaves room
	// for the envelope and reasoning fields some servers add.
	answerBytesPerToken = 32
	minAnswerBytes      = 256 << 10
	maxAnswerBytes      = 4 << 20
)

// DefaultConfig returns the configuration for apiKey with every default
// filled in: DefaultModel, a 2-minute call timeout and a 10-minute overall
// one, 3 retries backing off from 1s to 30s, and a breaker that opens
// after 5 failures in a row for a minute.
func DefaultConfig(apiKey string) Config {
	return Config{
		APIKey:          apiKey,
		Model:           DefaultModel,
		Timeout:         2 * time.Minute,
		TotalTimeout:    10 * time.Minute,
		Retries:         3,
		BackoffBase:     time.Second,
		BackoffMax:      30 * time.Second,
		BreakerFailures: 5,
		BreakerCooldown: time.Minute,
	}
}

// check reports the first value that cannot work.
func (c *Config) check() error {
	neg := func(name string, v int64) error {
		if v < 0 {
			return fmt.Errorf("llm: %s is %d; want 0 or more", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Timeout", int64(c.Timeout)}, {"TotalTimeout", int64(c.TotalTimeout)}, {"Retries", int64(c.Retries)},
		{"BackoffBase", int64(c.BackoffBase)}, {"BackoffMax", int64(c.BackoffMax)},
		{"ContextTokens", int64(c.ContextTokens)}, {"MaxInputTokens", int64(c.MaxInputTokens)},
		{"MaxMessageTokens", int64(c.MaxMessageTokens)}, {"MaxOutputTokens", int64(c.MaxOutputTokens)},
		{"MaxAnswerBytes", c.MaxAnswerBytes}, {"BreakerFailures", int64(c.BreakerFailures)},
		{"BreakerCooldown", int64(c.BreakerCooldown)},
	} {
		if err := neg(f.name, f.v); err != nil {
			return err
		}
	}
	if c.Azure && c.BaseURL == "" {
		return errors.New("llm: Azure OpenAI needs a base URL (https://RESOURCE.openai.azure.com)")
	}
	if c.BaseURL != "" {
		// Said once here rather than on every call; masked, as a base
		// URL may carry a password.
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("llm: base URL %q: want http(s)://HOST[:PORT][/PATH]", safeurl.String(c.BaseURL))
		}
	}
	return nil
}

// fill sets the fields whose zero means "derive it".
func (c *Config) fill() {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Azure && c.APIVersion == "" {
		c.APIVersion = DefaultAzureAPIVersion
	}
	if c.ContextTokens == 0 {
		m, _ := tokens.LookupModel(c.Model)
		c.ContextTokens = m.Window
	}
	if c.MaxInputTokens == 0 {
		c.MaxInputTokens = 3 * c.chunkTokens()
	}
	if c.MaxMessageTokens == 0 {
		c.MaxMessageTokens = defaultMaxMessageTokens
	}
	if c.MaxOutputTokens == 0 {
		c.MaxOutputTokens = defaultMaxOutputTokens
	}
	if c.MaxAnswerBytes == 0 {
		c.MaxAnswerBytes = min(max(int64(c.MaxOutputTokens)*answerBytesPerToken, minAnswerBytes), maxAnswerBytes)
	}
}

// chunkTokens is how much transcript one call carries: half the context,
// leaving room for the instructions, the previous handoff and the answer.
func (c *Config) chunkTokens() int {
	return max(c.ContextTokens/2, 1000)
}

// Summarizer summarizes with a chat model behind an OpenAI-compatible API.
// It is safe for concurrent use; keep one per provider so that its circuit
// breaker sees every call.
type Summarizer struct {
	cfg     Config
	client  *openai.Client
	breaker *breaker
	masker  *masker
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
	rnd     func(int64) int64
}

// New returns a Summarizer configured by cfg, or an error naming a value
// that cannot work.
func New(cfg Config) (*Summarizer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.fill()
	var oc openai.ClientConfig
	if cfg.Azure {
		oc = openai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		oc.APIVersion = cfg.APIVersion
	} else {
		oc = openai.DefaultConfig(cfg.APIKey)
		if cfg.BaseURL != "" {
			oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
		}
	}
	var doer HTTPDoer = &http.Client{}
	if cfg.HTTPClient != nil {
		doer = cfg.HTTPClient
	}
	r := cfg.Redactor
	if r == nil {
		var err error
		if r, err = redact.New(redact.Config{}); err != nil {
			return nil, fmt.Errorf("llm: redactor: %w", err)
		}
	}
	s := &Summarizer{cfg: cfg, breaker: newBreaker(cfg.BreakerFailures, cfg.BreakerCooldown), masker: newMasker(cfg.APIKey, cfg.BaseURL, r),
		now: time.Now, sleep: sleepCtx, rnd: randInt64N}
	oc.HTTPClient = tracingDoer{next: doer, now: func() time.Time { return s.now() }, limit: cfg.MaxAnswerBytes}
	s.client = openai.NewClientWithConfig(oc)
	return s, nil
}

// Model returns the summarizer's model.
func (s *Summarizer) Model() string { return s.cfg.Model }

// Config returns the configuration in use, derived defaults filled in.
func (s *Summarizer) Config() Config { return s.cfg }

// Summarize asks the model for a handoff of req.Window, folding in any
// earlier handoff the window holds. A window larger than half the model's
// context is summarized chunk by chunk, each chunk updating the handoff of
// the ones before. The returned Summary carries the attempts made even on
// failure; its error never holds the API key or a secret the Redactor
// finds.
func (s *Summarizer) Summarize(ctx context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	sum, err := s.summarize(ctx, &req)
	if err != nil && ctx.Err() == nil {
		err = s.masker.wrap(err)
	}
	return sum, err
}

func (s *Summarizer) summarize(ctx context.Context, req *compact.SummaryRequest) (compact.Summary, error) {
	sum := compact.Summary{Method: compact.MethodLLM, Model: s.cfg.Model}
	total, cancel := ctx, context.CancelFunc(func() {})
	if s.cfg.TotalTimeout > 0 {
		total, cancel = context.WithTimeout(ctx, s.cfg.TotalTimeout)
	}
	defer cancel()

	count := req.Count
	if count == nil {
		count = estimate
	}
	previous, items := renderWindow(req.Window, count, s.cfg.MaxMessageTokens, s.cfg.chunkTokens()/4)
	items = capTotal(items, s.cfg.MaxInputTokens)
	chunks := chunkItems(items, s.cfg.chunkTokens())
	ask := req.LatestAsk
	if n := count(ask); n > s.cfg.MaxMessageTokens {
		ask = clip.Ends(ask, max(len(ask)*s.cfg.MaxMessageTokens/n, 200), clip.BytesMarker)
	}
	var h compact.Handoff
	for k, chunk := range chunks {
		prompt := buildPrompt(promptInput{previous: previous, latestAsk: ask, focus: req.Focus,
			chunk: chunk, part: k + 1, parts: len(chunks), maxTokens: req.MaxTokens})
		var n int
		var err error
		h, n, err = s.complete(ctx, total, prompt, req, k+1, len(chunks))
		sum.Attempts += n
		if err != nil {
			if len(chunks) > 1 {
				err = fmt.Errorf("chunk %d of %d: %w", k+1, len(chunks), err)
			}
			return sum, err
		}
		previous = h.Render()
	}
	sum.Handoff = h
	return sum, nil
}

func estimate(s string) int { return (len(s) + 3) / 4 }

func notify(req *compact.SummaryRequest, ev compact.SummaryEvent) {
	if req.Notify != nil {
		req.Notify(ev)
	}
}

// complete makes one chat completion, retrying what is worth retrying. It
// returns the handoff, the number of calls made and the last error.
func (s *Summarizer) complete(caller, total context.Context, prompt []openai.ChatCompletionMessage, req *compact.SummaryRequest, chunk, chunks int) (compact.Handoff, int, error) {
	var last error
	attempts := 1 + s.cfg.Retries
	for attempt := 1; attempt <= attempts; attempt++ {
		if !s.breaker.allow(s.now()) {
			err := fmt.Errorf("%w: not calling %s for %s", ErrCircuitOpen, s.cfg.Model, s.breaker.retryIn(s.now()).Round(time.Second))
			if last != nil {
				err = fmt.Errorf("%w (last failure: %w)", err, last)
			}
			return compact.Handoff{}, attempt - 1, err
		}
		notify(req, compact.SummaryEvent{Kind: compact.SummaryCall, Attempt: attempt, Chunk: chunk, Chunks: chunks})
		start := s.now()
		h, err := s.call(caller, total, prompt, req.MaxTokens)
		if err == nil {
			s.breaker.success()
			return h, attempt, nil
		}
		s.breaker.failure(s.now())
		last = err
		var ce *callError
		if !errors.As(err, &ce) || !ce.retryable || attempt == attempts {
			return compact.Handoff{}, attempt, err
		}
		delay := backoff(attempt, s.cfg.BackoffBase, s.cfg.BackoffMax, s.rnd)
		if ce.retryAfter > 0 {
			delay = ce.retryAfter
		}
		if dl, ok := total.Deadline(); ok && s.now().Add(delay).After(dl) {
			return compact.Handoff{}, attempt, fmt.Errorf("%w; the next retry (in %s) would pass the overall timeout", err, delay.Round(time.Millisecond))
		}
		notify(req, compact.SummaryEvent{Kind: compact.SummaryRetry, Attempt: attempt, Chunk: chunk, Chunks: chunks,
			Delay: delay, Err: s.masker.wrap(err), Duration: s.now().Sub(start)})
		if err := s.sleep(total, delay); err != nil {
			if caller.Err() != nil {
				return compact.Handoff{}, attempt, caller.Err()
			}
			return compact.Handoff{}, attempt, fmt.Errorf("%w (last failure: %w)", errTotalTimeout, last)
		}
	}
	return compact.Handoff{}, attempts, last
}

// call makes one request and checks the answer.
func (s *Summarizer) call(caller, total context.Context, prompt []openai.ChatCompletionMessage, handoffTokens int) (compact.Handoff, error) {
	tr := &callTrace{}
	cctx, cancel := total, context.CancelFunc(func() {})
	if s.cfg.Timeout > 0 {
		cctx, cancel = context.WithTimeout(total, s.cfg.Timeout)
	}
	defer cancel()
	cctx = context.WithValue(cctx, traceKey{}, tr)
	req := openai.ChatCompletionRequest{Model: s.cfg.Model, Messages: prompt}
	limit := s.cfg.MaxOutputTokens
	if usesCompletionTokens(s.cfg.Model) {
		req.MaxCompletionTokens = limit
	} else {
		// vLLM, Ollama and older Azure deployments take only max_tokens.
		//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers other than OpenAI understand
		req.MaxTokens = limit
	}
	resp, err := s.client.CreateChatCompletion(cctx, req)
	if err != nil {
		return compact.Handoff{}, classify(err, tr, caller, total, cctx, s.cfg.Timeout, s.masker.clean)
	}
	return checkAnswer(resp, limit)
}

// usesCompletionTokens reports whether a model takes max_completion_tokens
// instead of max_tokens (OpenAI's reasoning models reject the latter).
func usesCompletionTokens(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // "openai/o3-mini" on OpenRouter
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// checkAnswer turns a completion into a handoff, or says why it is not
// one. Empty answers and missing sections are worth a retry; refusals and
// answers cut off by the length limit are not.
func checkAnswer(resp openai.ChatCompletionResponse, limit int) (compact.Handoff, error) {
	bad := func(retry bool, format string, a ...any) error {
		return &callError{msg: fmt.Sprintf(format, a...), retryable: retry, cause: ErrBadResponse}
	}
	if len(resp.Choices) == 0 {
		return compact.Handoff{}, bad(true, "the answer has no choices")
	}
	c := resp.Choices[0]
	switch {
	case c.Message.Refusal != "":
		return compact.Handoff{}, bad(false, "the model refused: %s", snippet(c.Message.Refusal))
	case c.FinishReason == openai.FinishReasonContentFilter:
		return compact.Handoff{}, bad(false, "the answer was stopped by the provider's content filter")
	case c.FinishReason == openai.FinishReasonLength:
		return compact.Handoff{}, bad(false, "the answer was cut off at the length limit (%d tokens)", limit)
	}
	text := unfence(c.Message.Content)
	if strings.TrimSpace(text) == "" {
		return compact.Handoff{}, bad(true, "the answer is empty")
	}
	h, err := compact.ParseHandoff(compact.StripHandoffMarkers(text))
	if err != nil {
		if h.IsEmpty() && looksLikeRefusal(text) {
			return compact.Handoff{}, bad(false, "the model refused: %s", snippet(text))
		}
		return compact.Handoff{}, &callError{msg: "the answer is not a complete handoff: " + err.Error(),
			retryable: true, cause: fmt.Errorf("%w: %w", ErrBadResponse, err)}
	}
	return h, nil
}

// unfence removes a code fence wrapping the whole answer, as some models
// write ("```markdown ... ```").
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return s
	}
	inner := strings.TrimSuffix(t[nl+1:], "```")
	return strings.TrimRight(inner, "\n")
}

func looksLikeRefusal(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"i'm sorry", "i am sorry", "i can't", "i cannot", "i can’t", "i’m sorry", "sorry,", "i won't", "i will not", "i'm unable", "i am unable"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
