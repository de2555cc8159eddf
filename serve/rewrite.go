package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/llm"
	"github.com/compactkit/compact/tokens"
)

// Compaction methods as logs and metrics name them: compact.Method values,
// plus "prefix" for a request forwarded with a stored compacted prefix.
const (
	methodNone   = string(compact.MethodNone)
	methodPrefix = "prefix"
)

// Prefix outcomes, for logs: a compaction made a new prefix, a stored one
// was reused, or a stored one was folded into a new handoff.
const (
	prefixNew      = "new"
	prefixReused   = "reused"
	prefixRefolded = "refolded"
)

// outcome is what the rewrite did to one request body.
type outcome struct {
	body         []byte // what to forward
	session      string
	model        string
	tokensBefore int
	tokensAfter  int
	estimated    bool
	// opaque is the part of tokensBefore that is a provider's own
	// compaction (compact.PartOpaque), estimated whatever the tokenizer.
	opaque int
	// bounded is true when the request was let through on a bound of its
	// tokens, unread; the token figures are then that bound.
	bounded bool
	method  string
	prefix  string
	// compared is true when the request went out with a compacted prefix
	// and so did the session's previous one; stable when the two prefixes
	// were the same bytes.
	compared, stable bool
	warning          string
	// cause is the warning's reason alone (a compaction's error, or why
	// the compactor left the transcript as it was); failed is true when
	// it was an error.
	cause  string
	failed bool
	// fallbackCause says why the deterministic fallback wrote the handoff
	// although an LLM summarizer is configured: timeout, circuit-open,
	// summary-failed, invalid-handoff; "" when it did not.
	fallbackCause string
}

// fail notes an error that left the body as it came (or with the stored
// prefix): what was done, then why.
func (o *outcome) fail(done string, cause string) {
	o.warning, o.cause, o.failed = done+": "+cause, cause, true
}

// counted says how the token figures were had: "exact" (the model's own
// tokenizer), "exact+estimate" (exact but for a provider's own compaction,
// which only the provider can read and so is estimated, as `compact count`
// says), "estimate", or "bound" (an upper bound; the request was not read).
func (o *outcome) counted() string {
	switch {
	case o.bounded:
		return "bound"
	case o.estimated:
		return "estimate"
	case o.opaque > 0:
		return "exact+estimate"
	}
	return "exact"
}

// opaqueTokens is the estimate the counter gives the provider-native
// compaction items of t (tokens.OpaqueTokens), the part of its count that
// is never exact.
func opaqueTokens(t compact.Transcript) int {
	n := 0
	for i := range t.Messages {
		for _, p := range t.Messages[i].Parts {
			if p.Type == compact.PartOpaque {
				n += tokens.OpaqueTokens(p.Text)
			}
		}
	}
	return n
}

// errUnexpected marks a compaction result the rewrite cannot map back to
// the request's elements.
var errUnexpected = errors.New("unexpected compaction result")

// rewrite returns the body to forward for a request of a: the body itself
// when it fits, or its list compacted. It never fails: whatever goes wrong
// leaves the body as it came, with a warning saying why. force compacts
// whatever the size (after the upstream said the prompt was too long).
func (s *Server) rewrite(ctx context.Context, a *api, hdr http.Header, body []byte, force bool) outcome {
	out := outcome{body: body, method: methodNone}
	sh, err := shapeOf(a, body)
	if err != nil {
		out.fail("request not read, forwarded as is", s.clean(err))
		return out
	}
	out.model = sh.model
	env, err := s.envFor(sh.model, sh.maxOutput)
	if err != nil {
		out.fail("forwarded as is", s.clean(err))
		return out
	}
	out.estimated = !env.counter.Exact()
	key := headerSession(hdr.Get(SessionHeader))
	if key == "" {
		key = sh.sessionKey()
	}
	out.session = key
	sess := s.sessions.get(key)
	if !force && s.letThrough(env, sess, sh, &out) {
		return out
	}
	// A request that extends a prefix is read whatever its count as it
	// came: that count cannot let it through.
	if !force && sess.match(sh) == nil {
		if n, exact, ok := s.countUnread(env, sh, env.trigger); ok && n < env.trigger {
			out.bounded = !exact
			out.tokensBefore, out.tokensAfter = n, n
			return out
		}
	}

	v, err := sh.read()
	if err != nil {
		out.fail("request not read, forwarded as is", s.clean(err))
		return out
	}
	out.bounded = false
	out.tokensBefore = env.counter.Transcript(v.t)
	out.tokensAfter = out.tokensBefore
	out.opaque = opaqueTokens(v.t)
	s.learn(env, v)
	if !force && out.tokensBefore < env.trigger {
		if sess.match(sh) == nil {
			return out
		}
	}

	sess.mu.Lock()
	defer sess.mu.Unlock()
	if err := v.place(); err != nil {
		out.fail("not compacted, forwarded as is", s.clean(err))
		return out
	}
	p := s.prefixOf(ctx, sess, v)
	if p == nil {
		return s.compactNew(ctx, env, sess, v, force, out)
	}
	tokens := p.forwardedTokens(env, v)
	// A request with nothing new (a client's retry) goes out as it did,
	// whatever its size: folding again what was just folded is churn.
	if !force && (tokens < env.trigger || len(v.elems) == p.covered) {
		out.body = p.forward(sh)
		out.method, out.prefix, out.tokensAfter = methodPrefix, prefixReused, tokens
		out.compared, out.stable = sess.forwarded(p)
		return out
	}
	return s.refold(ctx, env, sess, v, p, force, out)
}

// letThrough decides a request without reading it, from bounds of its
// tokens: under the threshold as it came (and not extending the session's
// prefix), it goes out unchanged; extending the prefix and under the
// threshold with it (or bringing nothing new), it goes out as the prefix
// and its new elements. It reports whether it decided; the token figures
// it leaves in out are bounds.
func (s *Server) letThrough(env *modelEnv, sess *session, sh *shape, out *outcome) bool {
	raw, ok := s.boundPlain(env, sh)
	if !ok {
		return false
	}
	out.tokensBefore, out.tokensAfter, out.bounded = raw, raw, true
	p := sess.match(sh)
	if p == nil {
		return raw < env.trigger
	}
	var body []byte
	n := s.boundWith(env, sh, p)
	if n >= env.trigger && len(sh.elems) > p.covered {
		// The bound is loose by the new elements' bytes: count the body as
		// it would go out, which teaches the cache the new elements for
		// the requests after this one.
		if body, n = s.countForwarded(env, sh, p); body == nil || n >= env.trigger {
			return false
		}
	}
	if body == nil {
		body = p.forward(sh)
	}
	out.body = body
	out.method, out.prefix, out.tokensAfter = methodPrefix, prefixReused, n
	out.compared, out.stable = sess.forwarded(p)
	return true
}

// countForwarded counts sh as it would go out with p, and returns that
// body: by the counting pass when it can (see countUnread), or read in full
// with the API's reader, which costs what the forwarded body's bytes cost,
// not what the request's do. Either way the cache learns what was counted.
// The body is nil when it cannot be counted.
func (s *Server) countForwarded(env *modelEnv, sh *shape, p *prefix) ([]byte, int) {
	body := p.forward(sh)
	fsh, err := shapeOf(sh.api, body)
	if err != nil {
		return nil, 0
	}
	if n, _, ok := s.countUnread(env, fsh, env.trigger); ok {
		return body, n
	}
	v, err := fsh.read()
	if err != nil {
		return nil, 0
	}
	s.learn(env, v)
	return body, env.counter.Transcript(v.t)
}

// compactNew compacts a request of a conversation the proxy holds no prefix
// for.
func (s *Server) compactNew(ctx context.Context, env *modelEnv, sess *session, v *view, force bool, out outcome) outcome {
	np, res, err := s.compactView(ctx, env, v, func(e int) (int, []byte) { return e, nil }, force)
	out.fallbackCause = fallbackCause(res)
	if err != nil {
		out.fail("compaction failed, forwarded as is", s.clean(err))
		return out
	}
	if np == nil {
		out.unchanged(res)
		return out
	}
	out.prefix = prefixNew
	return s.adopt(ctx, sess, v, nil, np, res, out)
}

// refold compacts the request as it would be forwarded (the stored prefix
// and the new elements), folding the prefix's handoff into a new one.
func (s *Server) refold(ctx context.Context, env *modelEnv, sess *session, v *view, p *prefix, force bool, out outcome) outcome {
	fallbackBody := p.forward(v.shape)
	src := func(e int) (int, []byte) {
		if e >= len(p.items) {
			return p.covered + e - len(p.items), nil
		}
		if it := p.items[e]; it >= 0 {
			return it, nil
		}
		return -1, p.lits[-1-p.items[e]]
	}
	cv, err := readView(v.api, fallbackBody)
	if err == nil {
		err = cv.place()
	}
	var np *prefix
	var res compactor.Result
	if err == nil {
		np, res, err = s.compactView(ctx, env, cv, src, force)
		out.fallbackCause = fallbackCause(res)
	}
	if err != nil || np == nil {
		// The stored prefix still holds: send it with the new elements.
		out.body = fallbackBody
		out.method, out.prefix = methodPrefix, prefixReused
		out.tokensAfter = p.forwardedTokens(env, v)
		out.compared, out.stable = sess.forwarded(p)
		if err != nil {
			out.fail("refold failed, forwarded with the stored prefix", s.clean(err))
		} else {
			out.unchanged(res)
		}
		return out
	}
	out.prefix = prefixRefolded
	out = s.adopt(ctx, sess, v, p, np, res, out)
	out.tokensAfter = res.Record.TokensAfter
	return out
}

// adopt makes np a prefix of the session, in place of from when it was
// folded from that one, and the body to forward.
func (s *Server) adopt(ctx context.Context, sess *session, v *view, from, np *prefix, res compactor.Result, out outcome) outcome {
	np.covered = len(v.elems)
	np.coveredHash = v.hashDropped(np.covered, np.items)
	np.dropped = v.droppedIdents(np.covered, np.items)
	elems := np.elements(v.shape)
	np.hash = hashBytes(v.api, elems)
	out.body = withList(v.body, v.list, elems)
	out.method = string(res.Record.Method)
	out.tokensAfter = res.Record.TokensAfter
	sess.adopt(from, np)
	out.compared, out.stable = sess.forwarded(np)
	switch {
	case s.store == nil:
	case !s.guard.usable():
		s.metrics.storeSkipped.Add(1)
	default:
		if err := s.savePrefix(ctx, sess.key, v.api, from, np, res); err != nil {
			s.storeError("save", sess.key, err)
		}
	}
	return out
}

// compactView compacts v's transcript and maps the result back to
// elements: src says where element e of v comes from, an element of the
// client's list or a literal. It returns a nil prefix when the compactor
// left the transcript unchanged.
func (s *Server) compactView(ctx context.Context, env *modelEnv, v *view, src func(e int) (int, []byte), force bool) (*prefix, compactor.Result, error) {
	c, err := env.compactor(force)
	if err != nil {
		return nil, compactor.Result{}, err
	}
	res, err := c.Compact(ctx, v.t)
	if err != nil {
		return nil, res, err
	}
	if !res.Changed() {
		return nil, res, nil
	}
	order := outputOrder(&res.Plan, len(v.t.Messages))
	msgs := res.Transcript.Messages
	if len(order) != len(msgs) {
		return nil, res, fmt.Errorf("%w: %d messages out, the plan accounts for %d", errUnexpected, len(msgs), len(order))
	}
	kept := make([]bool, len(v.t.Messages))
	np := &prefix{}
	lit := func(b []byte) {
		np.lits = append(np.lits, b)
		np.items = append(np.items, -len(np.lits))
	}
	for k, i := range order {
		m := &msgs[k]
		if i < 0 {
			// The compactor's own handoff, signed under its key: format
			// marks any handoff-shaped message Summary, a client's too.
			if !compact.VerifyHandoff(m, env.cfg.HandoffKey) {
				return nil, res, fmt.Errorf("%w: message %d is neither kept nor the compactor's handoff", errUnexpected, k)
			}
			lit(v.api.handoff(m.Text()))
			continue
		}
		if m.ID != v.t.Messages[i].ID || !m.Unchanged() {
			return nil, res, fmt.Errorf("%w: kept message %d differs from the request's", errUnexpected, i)
		}
		kept[i] = true
		g := v.groups[i]
		for e := g[0]; e < g[1] && g[0] >= 0; e++ {
			if orig, b := src(e); b != nil {
				lit(b)
			} else {
				np.items = append(np.items, orig)
			}
		}
	}
	for i, g := range v.groups {
		if g[0] < 0 && !kept[i] {
			return nil, res, fmt.Errorf("%w: message %d, outside the list, was dropped", errUnexpected, i)
		}
	}
	for k, i := range order {
		if i < 0 {
			np.litTokens += env.counter.Message(msgs[k])
		}
	}
	return np, res, nil
}

// forwardedTokens counts v as it goes out with p: the handoff, the
// messages of the elements p keeps and of the new ones (as the request has
// them now), the messages beside the list, the tool definitions and the
// reply's priming.
func (p *prefix) forwardedTokens(env *modelEnv, v *view) int {
	kept := p.kept()
	n := env.counter.Transcript(compact.Transcript{Tools: v.t.Tools}) + p.litTokens
	for i, g := range v.groups {
		in := g[0] < 0 || g[1] > p.covered // beside the list, or new
		for e := g[0]; !in && e < g[1]; e++ {
			in = kept[e]
		}
		if in {
			n += env.counter.Message(v.t.Messages[i])
		}
	}
	return n
}

// outputOrder lists, for each message the compactor returns, the input
// message it is (-1 for the handoff): head, pinned messages, handoff, tail.
func outputOrder(p *compactor.Plan, n int) []int {
	order := make([]int, 0, p.HeadEnd+len(p.Pinned)+1+n-p.TailStart)
	for i := 0; i < p.HeadEnd; i++ {
		order = append(order, i)
	}
	order = append(order, p.Pinned...)
	order = append(order, -1)
	for i := p.TailStart; i < n; i++ {
		order = append(order, i)
	}
	return order
}

// unchanged notes that the compactor left the transcript as it was, and
// why.
func (o *outcome) unchanged(res compactor.Result) {
	o.cause = res.Record.Reason
	if o.cause != "" {
		o.warning = "over the threshold but not compacted: " + o.cause
	}
}

// fallbackCause names why the fallback wrote a compaction's handoff in
// place of the configured LLM, "" when it did not.
func fallbackCause(res compactor.Result) string {
	switch res.Fallback {
	case compactor.FallbackSummaryFailed:
		switch {
		case errors.Is(res.SummaryErr, llm.ErrCircuitOpen):
			return "circuit-open"
		case errors.Is(res.SummaryErr, llm.ErrTimeout), errors.Is(res.SummaryErr, context.DeadlineExceeded):
			return "timeout"
		}
		return "summary-failed"
	case compactor.FallbackInvalidHandoff:
		return "invalid-handoff"
	}
	return ""
}
