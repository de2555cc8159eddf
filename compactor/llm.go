package compactor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact"
)

// LLM summarizes with a chat model behind any OpenAI-compatible API
// (OpenAI, Azure OpenAI, OpenRouter, vLLM, Ollama, ...). It retries
// transient failures with backoff, honours Retry-After, bounds each call and
// the whole summary in time, and stops calling a provider that keeps failing
// (circuit breaker). It is safe for concurrent use; keep one per provider so
// the breaker sees every call.
type LLM struct {
	cfg     LLMConfig
	client  *openai.Client
	breaker *breaker
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
	rnd     func(int64) int64
}

// NewLLM returns an LLM summarizer configured by cfg (zero fields get their
// defaults).
func NewLLM(cfg LLMConfig) (*LLM, error) {
	cfg.fill()
	var oc openai.ClientConfig
	if cfg.Azure {
		if cfg.BaseURL == "" {
			return nil, errors.New("compactor: Azure OpenAI needs a base URL (https://RESOURCE.openai.azure.com)")
		}
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
	l := &LLM{cfg: cfg, breaker: newBreaker(cfg.BreakerFailures, cfg.BreakerCooldown),
		now: time.Now, sleep: sleepCtx, rnd: randInt64N}
	oc.HTTPClient = tracingDoer{next: doer, now: func() time.Time { return l.now() }}
	l.client = openai.NewClientWithConfig(oc)
	return l, nil
}

// Model returns the summarizer's model.
func (l *LLM) Model() string { return l.cfg.Model }

// Summarize asks the model for a handoff of req.Window, folding in any
// earlier handoff the window holds. A window larger than half the model's
// context is summarized chunk by chunk, each chunk updating the handoff of
// the ones before. The returned Summary carries the attempts made even on
// failure.
func (l *LLM) Summarize(ctx context.Context, req Request) (Summary, error) {
	sum := Summary{Method: compact.MethodLLM, Model: l.cfg.Model}
	total, cancel := context.WithTimeout(ctx, l.cfg.TotalTimeout)
	defer cancel()

	previous, items := renderWindow(req.Window, req.count, l.cfg.MaxMessageTokens, l.cfg.chunkTokens()/4)
	items = capTotal(items, l.cfg.MaxInputTokens)
	chunks := chunkItems(items, l.cfg.chunkTokens())
	var h compact.Handoff
	for k, chunk := range chunks {
		prompt := buildPrompt(previous, req.Focus, chunk, k+1, len(chunks), req.MaxTokens)
		var n int
		var err error
		h, n, err = l.complete(ctx, total, prompt, &req, k+1, len(chunks))
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

// complete makes one chat completion, retrying what is worth retrying. It
// returns the handoff, the number of calls made and the last error.
func (l *LLM) complete(caller, total context.Context, prompt []openai.ChatCompletionMessage, req *Request, chunk, chunks int) (compact.Handoff, int, error) {
	var last error
	attempts := l.cfg.attempts()
	for attempt := 1; attempt <= attempts; attempt++ {
		if !l.breaker.allow(l.now()) {
			err := fmt.Errorf("%w: not calling %s for %s", ErrCircuitOpen, l.cfg.Model, l.breaker.retryIn(l.now()).Round(time.Second))
			if last != nil {
				err = fmt.Errorf("%w (last failure: %w)", err, last)
			}
			return compact.Handoff{}, attempt - 1, err
		}
		req.notify(Event{Kind: EventSummarizing, Attempt: attempt, Chunk: chunk, Chunks: chunks})
		start := l.now()
		h, err := l.call(caller, total, prompt, req.MaxTokens)
		if err == nil {
			l.breaker.success()
			return h, attempt, nil
		}
		l.breaker.failure(l.now())
		last = err
		var ce *callError
		if !errors.As(err, &ce) || !ce.retryable || attempt == attempts {
			return compact.Handoff{}, attempt, err
		}
		delay := backoff(attempt, l.cfg.BackoffBase, l.cfg.BackoffMax, l.rnd)
		if ce.retryAfter > 0 {
			delay = ce.retryAfter
		}
		if dl, ok := total.Deadline(); ok && l.now().Add(delay).After(dl) {
			return compact.Handoff{}, attempt, fmt.Errorf("%w; the next retry (in %s) would pass the overall timeout", err, delay.Round(time.Millisecond))
		}
		req.notify(Event{Kind: EventRetry, Attempt: attempt, Chunk: chunk, Chunks: chunks,
			Delay: delay, Err: err, Duration: l.now().Sub(start)})
		if err := l.sleep(total, delay); err != nil {
			if caller.Err() != nil {
				return compact.Handoff{}, attempt, caller.Err()
			}
			return compact.Handoff{}, attempt, fmt.Errorf("%w (last failure: %w)", errTotalTimeout, last)
		}
	}
	return compact.Handoff{}, attempts, last
}

// call makes one request and checks the answer.
func (l *LLM) call(caller, total context.Context, prompt []openai.ChatCompletionMessage, handoffTokens int) (compact.Handoff, error) {
	tr := &callTrace{}
	cctx, cancel := context.WithTimeout(total, l.cfg.Timeout)
	defer cancel()
	cctx = context.WithValue(cctx, traceKey{}, tr)
	req := openai.ChatCompletionRequest{Model: l.cfg.Model, Messages: prompt}
	limit := l.cfg.MaxOutputTokens
	if usesCompletionTokens(l.cfg.Model) {
		req.MaxCompletionTokens = limit
	} else {
		// vLLM, Ollama and older Azure deployments take only max_tokens.
		//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers other than OpenAI understand
		req.MaxTokens = limit
	}
	resp, err := l.client.CreateChatCompletion(cctx, req)
	if err != nil {
		return compact.Handoff{}, classify(err, tr, caller, total, cctx, l.cfg.Timeout)
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
	h, err := compact.ParseHandoff(stripMarkers(text))
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

// stripMarkers removes handoff markers an answer may echo from the
// previous handoff, so handoffs never nest.
func stripMarkers(s string) string {
	if !strings.Contains(s, "<<<compact:") {
		return s
	}
	s = strings.ReplaceAll(s, compact.HandoffBegin, "")
	s = strings.ReplaceAll(s, compact.HandoffEnd, "")
	return strings.ReplaceAll(s, compact.HandoffPreamble, "")
}
