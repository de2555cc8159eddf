package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/internal/safeurl"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
)

// Defaults.
const (
	DefaultListen            = "127.0.0.1:8787"
	DefaultOpenAIUpstream    = "https://api.openai.com"
	DefaultAnthropicUpstream = "https://api.anthropic.com"
	// DefaultMaxBodyBytes bounds a request body: a 1M-token conversation
	// with a few images fits.
	DefaultMaxBodyBytes = 64 << 20
	// DefaultMaxSessions is how many conversations are held in memory.
	DefaultMaxSessions = 1024
)

// AuthHeader carries the proxy's own token (Config.AuthToken), so that it
// never mixes with the upstream's API key. "Proxy-Authorization: Bearer
// TOKEN" is accepted too. Both are removed before forwarding.
const AuthHeader = "X-Compact-Token"

// ErrAuthRequired is returned by CheckListen for a non-loopback address
// without an auth token.
var ErrAuthRequired = errors.New("listening beyond loopback requires an auth token")

// Config configures a Server. The zero value proxies to OpenAI and
// Anthropic, compacts with the deterministic fallback at 80% of each
// model's usable window, and keeps compacted prefixes in memory.
type Config struct {
	// OpenAIUpstream serves /v1/chat/completions, /v1/responses and every
	// other path not Anthropic's (default DefaultOpenAIUpstream); a
	// trailing /v1 is accepted, as in OPENAI_BASE_URL.
	OpenAIUpstream string
	// AnthropicUpstream serves /v1/messages, its sub-paths and requests
	// carrying Anthropic's headers (default DefaultAnthropicUpstream).
	AnthropicUpstream string

	// Compaction is the compaction every model gets: threshold, target,
	// head and tail, summarizer; start from compactor.DefaultConfig (the
	// zero value means it). Model, Counter, Models and Force are set per
	// request; Window and OutputReserve, when zero, come from the model
	// table. StrategyPrune is refused: it rewrites kept messages in place,
	// which the element-wise rewrite of a request does not do.
	Compaction compactor.Config
	// Models is the model table (default tokens.DefaultModels()).
	Models *tokens.Models

	// Store keeps compacted prefixes across restarts and proxies; nil
	// keeps them in memory only. The proxy writes each compaction to it
	// (the compacted transcript, redacted, and its record).
	Store checkpoint.Store
	// StoreTimeout bounds each store operation on a request's path
	// (default DefaultStoreTimeout); after a failure the store is skipped
	// for a while.
	StoreTimeout time.Duration
	// AuthToken, when set, is required of every request but /healthz, in
	// AuthHeader or Proxy-Authorization.
	AuthToken string
	// MaxBodyBytes bounds request bodies (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxBodyBytesInFlight bounds the request body bytes held in memory
	// by all requests at once (default 8 × MaxBodyBytes); a request that
	// would pass it is answered 503.
	MaxBodyBytesInFlight int64
	// BodyIdleTimeout fails a request whose body brings no byte for this
	// long (default DefaultBodyIdleTimeout), and BodyTimeout one whose
	// body takes longer than this in all (default DefaultBodyTimeout):
	// the client is answered 408 and its connection closed.
	BodyIdleTimeout, BodyTimeout time.Duration
	// MaxSessions bounds the conversations held in memory (default
	// DefaultMaxSessions).
	MaxSessions int
	// Logger receives one line per request; nil logs nothing.
	Logger *slog.Logger
	// Transport sends requests upstream (default a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
}

// Server is the compacting proxy. It is an http.Handler.
type Server struct {
	cfg       Config
	upstreams map[Provider]*url.URL
	proxy     *httputil.ReverseProxy
	sessions  *sessions
	metrics   *metrics
	log       *slog.Logger
	models    *tokens.Models
	store     checkpoint.Store

	envMu sync.Mutex
	envs  map[string]*modelEnv
	// counts caches the tokens of list elements, for the bound that
	// lets most requests through unread.
	counts *countCache
	// bodies bounds the request body bytes held at once.
	bodies *byteBudget
	// guard skips the store for a while after it failed.
	guard storeGuard
}

// New returns a Server configured by cfg.
func New(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, metrics: newMetrics(), envs: map[string]*modelEnv{}, store: cfg.Store, models: cfg.Models,
		counts: newCountCache(maxCachedCounts)}
	if s.models == nil {
		s.models = tokens.DefaultModels()
	}
	if s.cfg.MaxBodyBytes <= 0 {
		s.cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.cfg.MaxBodyBytesInFlight <= 0 {
		s.cfg.MaxBodyBytesInFlight = 8 * s.cfg.MaxBodyBytes
	}
	s.bodies = &byteBudget{max: s.cfg.MaxBodyBytesInFlight}
	if s.cfg.BodyIdleTimeout <= 0 {
		s.cfg.BodyIdleTimeout = DefaultBodyIdleTimeout
	}
	if s.cfg.BodyTimeout <= 0 {
		s.cfg.BodyTimeout = DefaultBodyTimeout
	}
	if s.cfg.MaxSessions <= 0 {
		s.cfg.MaxSessions = DefaultMaxSessions
	}
	if s.cfg.StoreTimeout <= 0 {
		s.cfg.StoreTimeout = DefaultStoreTimeout
	}
	s.sessions = newSessions(s.cfg.MaxSessions)
	s.log = cfg.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	s.upstreams = map[Provider]*url.URL{}
	for p, raw := range map[Provider]string{ProviderOpenAI: cfg.OpenAIUpstream, ProviderAnthropic: cfg.AnthropicUpstream} {
		if s.upstreams[p], err = upstreamURL(p, raw); err != nil {
			return nil, err
		}
	}
	if err := s.setupCompaction(); err != nil {
		return nil, err
	}
	transport := cfg.Transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		transport = t
	}
	s.proxy = &httputil.ReverseProxy{
		Rewrite:       s.rewriteRequest,
		Transport:     &retryTransport{base: transport},
		FlushInterval: -1, // every chunk goes to the client as it arrives
		ErrorHandler:  s.upstreamError,
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BufferPool:    copyBuffers{},
	}
	return s, nil
}

// copyBuffers lends the proxy the buffers it copies answers through
// (32 KiB each, one per request otherwise).
type copyBuffers struct{}

var copyBufferPool = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

func (copyBuffers) Get() []byte { return *copyBufferPool.Get().(*[]byte) }

func (copyBuffers) Put(b []byte) {
	if cap(b) == 32<<10 {
		copyBufferPool.Put(&b)
	}
}

// setupCompaction checks the compaction template and fills in its
// defaults. Every compaction gets a fresh redactor (unless the template
// has one): a redactor remembers each secret it masked for as long as it
// lives, which in a server would be forever.
func (s *Server) setupCompaction() error {
	c := &s.cfg.Compaction
	if reflect.ValueOf(*c).IsZero() {
		*c = compactor.DefaultConfig()
	}
	st, err := compactor.ParseStrategy(string(c.Strategy))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if st == compactor.StrategyPrune {
		return errors.New("serve: the prune strategy is not supported (it rewrites kept messages); use auto, llm or fallback")
	}
	c.Models = s.models
	// Build one model's compactor now, so that a configuration that
	// cannot work is reported at start-up rather than on every request.
	e, err := s.env(compactor.DefaultModel)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	_, err = e.compactor(false)
	return err
}

// upstreamURL parses an upstream, dropping a trailing /v1: request paths
// carry their own.
func upstreamURL(p Provider, raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultOpenAIUpstream
		if p == ProviderAnthropic {
			raw = DefaultAnthropicUpstream
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("serve: %s upstream %q: want an http(s) URL", p, safeurl.String(raw))
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawPath = ""
	return u, nil
}

// modelEnv is what compacting for one model needs.
type modelEnv struct {
	counter *tokens.Counter
	cfg     compactor.Config
	trigger int
	// salt tells the model's cached counts from another's.
	salt uint64
}

// compactor returns a compactor for one compaction, forced or not, with a
// redactor of its own.
func (e *modelEnv) compactor(force bool) (*compactor.Compactor, error) {
	cfg := e.cfg
	cfg.Force = force
	if cfg.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return nil, err
		}
		cfg.Redactor = r
	}
	return compactor.New(cfg)
}

// maxCachedCounts bounds the element counts cached (about 40 bytes each).
const maxCachedCounts = 1 << 18

// maxEnvs bounds the models whose settings are kept: model names come
// from clients.
const maxEnvs = 256

// envFor returns the compaction settings of a model for a request that
// sets its answer's token limit to maxOutput: when that is more than the
// model's output reserve (Claude Code asks for 32000-64000), it is the
// reserve, so that the prompt and the answer fit the window together. A
// limit of half the window or more is left to the upstream to refuse.
func (s *Server) envFor(model string, maxOutput int) (*modelEnv, error) {
	e, err := s.env(model)
	if err != nil || maxOutput <= e.cfg.OutputReserve || maxOutput >= e.cfg.Window/2 {
		return e, err
	}
	key := model + "\x00max_output=" + strconv.Itoa(maxOutput)
	s.envMu.Lock()
	r, ok := s.envs[key]
	s.envMu.Unlock()
	if ok {
		return r, nil
	}
	cfg := e.cfg
	cfg.OutputReserve = maxOutput
	if cfg.TriggerTokens > cfg.Window-cfg.OutputReserve {
		cfg.TriggerTokens = 0
	}
	c, err := compactor.New(cfg)
	if err != nil {
		return e, nil // the model's own reserve then
	}
	r = &modelEnv{counter: e.counter, cfg: cfg, salt: e.salt}
	_, r.trigger, _ = c.NeedsCompaction(compact.Transcript{})
	s.envMu.Lock()
	if len(s.envs) < maxEnvs {
		s.envs[key] = r
	}
	s.envMu.Unlock()
	return r, nil
}

// env returns the compaction settings and counter of a model: the
// template with the model's window and reserve from the table (the
// defaults for a model the table does not know, counted by estimate).
func (s *Server) env(model string) (*modelEnv, error) {
	s.envMu.Lock()
	e, ok := s.envs[model]
	s.envMu.Unlock()
	if ok {
		return e, nil
	}
	counter, err := tokens.ForModel(model, tokens.WithModels(s.models))
	if err != nil {
		return nil, err
	}
	cfg := s.cfg.Compaction
	m := counter.Model()
	cfg.Model, cfg.Counter, cfg.Models = model, counter, s.models
	cfg.Observer, cfg.Logger = nil, nil
	if cfg.Window == 0 {
		cfg.Window, cfg.OutputReserve = m.Window, m.OutputReserve
	}
	// Token figures meant for large windows give way to the share of a
	// small one.
	if cfg.TargetTokens > cfg.Window {
		cfg.TargetTokens = 0
	}
	if cfg.TriggerTokens > cfg.Window-cfg.OutputReserve {
		cfg.TriggerTokens = 0
	}
	c, err := compactor.New(cfg) // checks the settings once
	if err != nil {
		return nil, err
	}
	e = &modelEnv{counter: counter, cfg: cfg, salt: rand.Uint64()}
	_, e.trigger, _ = c.NeedsCompaction(compact.Transcript{})
	s.envMu.Lock()
	if len(s.envs) < maxEnvs {
		s.envs[model] = e
	}
	s.envMu.Unlock()
	return e, nil
}

// ServeHTTP serves /healthz and /metrics, compacts requests to the three
// chat APIs and passes everything else through.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`+"\n")
		return
	}
	if !s.authorized(r) {
		s.metrics.unauthorized.Add(1)
		writeError(w, http.StatusUnauthorized, "authentication_error", "compact serve: missing or wrong "+AuthHeader)
		return
	}
	if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		s.metrics.write(w, s.sessions.len(), s.bodies.used.Load())
		return
	}
	s.metrics.inFlight.Add(1)
	defer s.metrics.inFlight.Add(-1)
	a := apiFor(r)
	switch {
	case a != nil && r.Method == http.MethodPost && (r.Header.Get("Content-Encoding") == "" || gzipped(r.Header.Get("Content-Encoding"))):
		s.serveCompacting(w, r, a)
	case a != nil && r.Method == http.MethodPost:
		s.metrics.warnings.Add(1)
		s.passThrough(w, r, "a "+r.Header.Get("Content-Encoding")+"-encoded body is forwarded as is, not compacted")
	default:
		s.passThrough(w, r, "")
	}
}

// authorized checks the proxy's token, when one is configured, and removes
// it from the request.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.AuthToken == "" {
		return true
	}
	got := r.Header.Get(AuthHeader)
	if got == "" {
		got, _ = strings.CutPrefix(r.Header.Get("Proxy-Authorization"), "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.AuthToken)) == 1
}

// exchange is one compacting request on its way upstream: what was done to
// its body, and how to compact it harder if the upstream says it is too
// long.
type exchange struct {
	s        *Server
	api      *api
	header   http.Header
	original []byte
	// encoded is true when the client's body came gzip-encoded: a body
	// the proxy rewrote goes upstream decoded.
	encoded bool

	mu      sync.Mutex
	out     outcome
	added   time.Duration
	retried bool
}

type exchangeKey struct{}

// force compacts the original body whatever its size; ok is false when
// that changes nothing, so the upstream's answer stands.
func (x *exchange) force(ctx context.Context) ([]byte, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.retried {
		return nil, false
	}
	x.retried = true
	t0 := time.Now()
	o := x.s.rewrite(ctx, x.api, x.header, x.original, true)
	x.added += time.Since(t0)
	if o.method == methodNone || bytes.Equal(o.body, x.out.body) {
		// The first compaction's outcome stands; the warning is the
		// retry's.
		what := "the upstream said the prompt is too long and the forced retry changed nothing"
		switch {
		case o.failed:
			what = "the upstream said the prompt is too long and the forced retry failed: " + o.cause
		case o.cause != "":
			what += ": " + o.cause
		case o.method != methodNone:
			what += ": it gave the body already sent"
		}
		x.out.warning, x.out.cause, x.out.failed = what, o.cause, o.failed
		if o.fallbackCause != "" {
			x.out.fallbackCause = o.fallbackCause
		}
		return nil, false
	}
	o.tokensBefore = x.out.tokensBefore
	x.out = o
	return o.body, true
}

func (s *Server) serveCompacting(w http.ResponseWriter, r *http.Request, a *api) {
	start := time.Now()
	buf := &bodyBuffer{budget: s.bodies}
	defer buf.release()
	wire, err := s.readBody(w, r, buf)
	if err != nil {
		s.bodyError(w, r, a, err, start)
		return
	}
	read := time.Now()
	body, encoded := wire, gzipped(r.Header.Get("Content-Encoding"))
	if encoded {
		if body, err = buf.gunzip(wire, s.cfg.MaxBodyBytes); err != nil && !errors.Is(err, errBadGzip) {
			s.bodyError(w, r, a, err, start)
			return
		}
	}
	x := &exchange{s: s, api: a, header: r.Header, original: body, encoded: encoded}
	if err != nil {
		// Not ours to refuse: the upstream answers it as it would.
		x.out = outcome{body: wire, method: methodNone}
		x.out.fail("request not read, forwarded as is", err.Error())
	} else {
		x.out = s.rewrite(r.Context(), a, r.Header, body, false)
	}
	x.added = time.Since(read)
	s.metrics.added.observe(x.added)

	out := r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
	send := x.out.body
	switch {
	case !encoded:
	case sameBytes(send, body) || err != nil:
		send = wire // unchanged: the client's bytes, encoded as they came
	default:
		// Compacted: sent decoded; every API accepts an identity body.
		out.Header = r.Header.Clone()
		out.Header.Del("Content-Encoding")
	}
	out.Body = io.NopCloser(bytes.NewReader(send))
	out.ContentLength = int64(len(send))
	rw := &recorder{ResponseWriter: w}
	defer rw.repanic()
	s.forward(rw, out)

	x.mu.Lock()
	o, added, retried := x.out, x.added, x.retried
	x.mu.Unlock()
	if o.warning != "" && o.method == methodNone {
		s.metrics.warnings.Add(1)
	}
	if retried && o.method != methodNone {
		s.metrics.overflowRetries.Add(1)
	}
	s.metrics.request(a.name, o.method, rw.code())
	s.metrics.tokensBefore.Add(uint64(max(o.tokensBefore, 0)))
	s.metrics.tokensAfter.Add(uint64(max(o.tokensAfter, 0)))
	if o.compared {
		s.metrics.prefixCompared.Add(1)
		if o.stable {
			s.metrics.prefixStable.Add(1)
		}
	}
	forwarded := len(o.body)
	if encoded && (sameBytes(o.body, body) || body == nil) {
		forwarded = len(wire)
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("api", a.name),
		slog.String("session", o.session), slog.String("model", o.model), slog.Int("status", rw.code()),
		slog.Int("tokens_before", o.tokensBefore), slog.Int("tokens_after", o.tokensAfter),
		slog.String("counted", o.counted()), slog.String("compaction", o.method),
	}
	if o.opaque > 0 && !o.bounded {
		attrs = append(attrs, slog.Int("opaque_estimated", o.opaque))
	}
	if o.prefix != "" {
		attrs = append(attrs, slog.String("prefix", o.prefix))
	}
	if o.compared {
		attrs = append(attrs, slog.Bool("prefix_stable", o.stable))
	}
	if retried {
		attrs = append(attrs, slog.Bool("overflow_retry", true))
	}
	if o.fallbackCause != "" {
		s.metrics.fallback(o.fallbackCause)
		attrs = append(attrs, slog.String("fallback_cause", o.fallbackCause))
	}
	if rw.aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	attrs = append(attrs,
		slog.Float64("added_ms", ms(added)), slog.Float64("duration_ms", ms(time.Since(start))),
		slog.Int("bytes_in", len(wire)), slog.Int("bytes_forwarded", forwarded), slog.Int64("bytes_out", rw.n))
	if encoded {
		attrs = append(attrs, slog.Int("bytes_decoded", len(body)))
	}
	level := slog.LevelInfo
	if w := joinWarnings(o.warning, fallbackWarning(o), rw.upstreamErr); w != "" {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("warning", w))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// fallbackWarning says why an LLM summarizer's handoff was replaced by the
// fallback's.
func fallbackWarning(o outcome) string {
	switch o.fallbackCause {
	case "":
		return ""
	case "circuit-open":
		return "the LLM summarizer's circuit is open (it failed repeatedly): used the deterministic fallback"
	}
	return "the LLM summary failed (" + o.fallbackCause + "): used the deterministic fallback"
}

// joinWarnings joins the non-empty warnings of one request.
func joinWarnings(ws ...string) string {
	var out []string
	for _, w := range ws {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, "; ")
}

// passThrough forwards r as it is; warning, when set, goes in its log line.
func (s *Server) passThrough(w http.ResponseWriter, r *http.Request, warning string) {
	start := time.Now()
	if r.ContentLength > s.cfg.MaxBodyBytes {
		s.bodyError(w, r, nil, &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes}, start)
		return
	}
	rw := &recorder{ResponseWriter: w}
	if r.Body != nil && r.Body != http.NoBody {
		rw.body = newDeadlineBody(w, http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.cfg.BodyIdleTimeout, s.cfg.BodyTimeout)
		r.Body = rw.body
	}
	defer rw.repanic()
	s.forward(rw, r)
	if rw.body != nil {
		rw.body.done()
	}
	if rw.bodyErr != nil {
		s.bodyLogged(r, nil, rw.code(), rw.bodyErr, start)
		return
	}
	s.metrics.request("passthrough", methodNone, rw.code())
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("api", "passthrough"),
		slog.Int("status", rw.code()), slog.Float64("duration_ms", ms(time.Since(start))), slog.Int64("bytes_out", rw.n)}
	if rw.aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	level := slog.LevelInfo
	if w := joinWarnings(warning, rw.upstreamErr); w != "" {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("warning", w))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// forward proxies r. When the answer is cut short (the client went away,
// or the upstream did mid-answer), the ReverseProxy aborts the handler
// with http.ErrAbortHandler; forward catches it so the request is still
// logged and counted, and the recorder raises it again once that is done.
func (s *Server) forward(rw *recorder, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			rw.aborted = true
		}
	}()
	s.proxy.ServeHTTP(rw, r)
}

// readBody reads a request body up to the limit, with the body deadlines,
// into buf's share of the budget.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, buf *bodyBuffer) ([]byte, error) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes}
	}
	rd := newDeadlineBody(w, r.Body, s.cfg.BodyIdleTimeout, s.cfg.BodyTimeout)
	body, err := buf.readAll(rd, r.ContentLength, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	rd.done()
	return body, nil
}

// bodyStatus maps an error reading a request body to the answer's status,
// error type and message.
func bodyStatus(err error) (int, string, string) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("compact serve: request body over the %d-byte limit (--max-body)", tooLarge.Limit)
	case errors.Is(err, ErrBodyTimeout):
		return http.StatusRequestTimeout, "request_timeout", "compact serve: reading the request body: " + err.Error()
	case errors.Is(err, errBusy):
		return http.StatusServiceUnavailable, "overloaded_error", "compact serve: " + err.Error() + "; retry shortly"
	}
	return http.StatusBadRequest, "invalid_request_error", "compact serve: reading the request body: " + err.Error()
}

// bodyError answers a request whose body could not be read.
func (s *Server) bodyError(w http.ResponseWriter, r *http.Request, a *api, err error, start time.Time) {
	status, typ, msg := bodyStatus(err)
	switch status {
	case http.StatusRequestTimeout:
		w.Header().Set("Connection", "close")
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, status, typ, msg)
	s.bodyLogged(r, a, status, err, start)
}

// bodyLogged counts and logs a request refused for its body.
func (s *Server) bodyLogged(r *http.Request, a *api, status int, err error, start time.Time) {
	_, _, msg := bodyStatus(err)
	switch status {
	case http.StatusRequestEntityTooLarge:
		s.metrics.tooLarge.Add(1)
	case http.StatusRequestTimeout:
		s.metrics.bodyTimeouts.Add(1)
	case http.StatusServiceUnavailable:
		s.metrics.busy.Add(1)
	}
	name := "passthrough"
	if a != nil {
		name = a.name
	}
	s.metrics.request(name, methodNone, status)
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("api", name),
		slog.Int("status", status), slog.Float64("duration_ms", ms(time.Since(start))), slog.String("warning", msg))
}

// sameBytes reports whether a and b are the same slice.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// rewriteRequest points an outgoing request at its upstream and removes
// what only the proxy reads.
func (s *Server) rewriteRequest(pr *httputil.ProxyRequest) {
	pr.SetURL(s.upstreams[providerFor(pr.In)])
	h := pr.Out.Header
	h.Del(SessionHeader)
	h.Del(AuthHeader)
	h.Del("Proxy-Authorization")
}

// upstreamError answers a request whose upstream could not be reached.
func (s *Server) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if rw, ok := w.(*recorder); ok && rw.body != nil && rw.body.failure() != nil {
		// The client's body failed, not the upstream (a failed read of the
		// connection also cancels the request's context): answer as the
		// compacting paths do.
		rw.bodyErr = rw.body.failure()
		status, typ, msg := bodyStatus(rw.bodyErr)
		if status == http.StatusRequestTimeout {
			w.Header().Set("Connection", "close")
		}
		writeError(w, status, typ, msg)
		return
	}
	if errors.Is(err, context.Canceled) {
		w.WriteHeader(499) // the client went away; nobody reads this
		return
	}
	s.metrics.upstreamErrors.Add(1)
	msg := "upstream: " + s.clean(err)
	if rw, ok := w.(*recorder); ok {
		rw.upstreamErr = msg
	}
	writeError(w, http.StatusBadGateway, "api_error", "compact serve: "+msg)
}

// writeError writes an error in the shape both OpenAI's and Anthropic's
// SDKs read: {"type": "error", "error": {"type", "message"}}.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(mustJSON(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}))
}

// clean makes an error fit for a log line or an answer: secrets masked,
// long messages cut.
func (s *Server) clean(err error) string {
	msg := err.Error()
	for _, u := range s.upstreams {
		if u.User != nil {
			msg = safeurl.Text(msg, u.String())
		}
	}
	if r, rerr := redact.New(redact.Config{}); rerr == nil {
		msg = r.String(msg)
	}
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	return msg
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// recorder notes the status and size of a response, passing flushes on.
type recorder struct {
	http.ResponseWriter
	status  int
	n       int64
	aborted bool
	// body is a pass-through request's body, and bodyErr its failure
	// when that failed the request.
	body    *deadlineBody
	bodyErr error
	// upstreamErr says why the upstream could not be reached (502).
	upstreamErr string
}

// repanic aborts the response, as the ReverseProxy meant to, when it was
// cut short.
func (r *recorder) repanic() {
	if r.aborted {
		panic(http.ErrAbortHandler)
	}
}

// WriteHeader records the first final status: an informational answer
// passed on before it (100 Continue to a client that sent "Expect:
// 100-continue", 103 Early Hints) is not the request's status. 101
// Switching Protocols is final.
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.n += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// CheckListen reports whether addr may be listened on with token: a
// loopback address always, any other only with a token.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: listen address %q: %w", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("serve: %s: %w (--auth-token)", addr, ErrAuthRequired)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Serve serves on ln until ctx ends, then lets requests in flight finish
// for up to grace before closing their connections.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	<-done
	return nil
}
