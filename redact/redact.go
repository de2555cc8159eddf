// Package redact finds secrets in text and transcripts and masks them with
// labelled, non-reusable placeholders such as [REDACTED:github-token#1].
//
// Detection runs in one pass. An Aho-Corasick automaton finds every keyword
// of every rule (vendor prefixes such as "ghp_" and "AKIA", names such as
// "password" and "token", markers such as "-----BEGIN " and "://"); only
// the rules whose keywords occur run, and only around the occurrence.
// Built-in patterns use Go's regexp package (RE2: linear time, whatever the
// input); checksums, entropy, boundaries and placeholders are checked in Go
// after a match (a GitHub or npm token whose CRC32 fails is not one, and
// is masked only if its context says it is secret). Vendor formats cover
// more than a hundred token types; context detectors find values assigned
// to secret-like names in env files, YAML, JSON, TOML, INI, source code,
// HTTP headers, command-line flags and URLs, and the data of Kubernetes
// Secrets. The scan is linear in the input, whatever it holds.
//
// What is not a secret survives: git SHAs, UUIDs, digests, lockfile
// hashes, public keys and certificates, LLM object ids, variable references
// and documented placeholders.
//
// Masks are numbered by content, never by history: within one call (or a
// Scope of calls) one secret gets one mask wherever it appears, numbered in
// the order secrets are first met, after the masks the input already
// holds; the same input gets the same output from a fresh Redactor and a
// used one. They contain no quote or backslash, are never re-detected
// (Redact(Redact(x)) == Redact(x)), and in JSON input they only ever
// replace bytes inside string literals, so JSON stays valid.
package redact

import (
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
	"github.com/compactkit/compact/internal/keyword"
)

// Config configures a Redactor. The zero value uses the built-in rules.
type Config struct {
	// Rules are custom rules, run beside the built-in ones (see LoadRules).
	Rules []Rule
	// Allowlists exempt matches of every rule, built-in or custom; values
	// registered with AddValue are always masked.
	Allowlists []Allowlist
	// Disable lists built-in rule ids to turn off (see BuiltinRules).
	Disable []string
	// NoBuiltin turns off every built-in rule: only Rules and values
	// registered with AddValue are masked.
	NoBuiltin bool
	// MatchTimeout bounds one match of a custom rule that needs the
	// backtracking engine (lookarounds, backreferences). Zero means 250ms.
	MatchTimeout time.Duration
}

// Finding is one secret found: the rule that matched and where. It never
// holds the secret itself.
type Finding struct {
	Rule  string `json:"rule"`
	Start int    `json:"start"` // byte offsets into the text that was scanned
	End   int    `json:"end"`
	// Message and Part locate the finding in a transcript (Transcript only);
	// Field names what was scanned there: "text", "thinking", "arguments",
	// "target" (the tool call's tag, ToolCall.Target), "result", "image",
	// "source" (the message's raw source records), "record" (a
	// non-message record), "envelope", "tool" (a tool's description) or
	// "tool-parameters" (its parameters' JSON Schema; Part is the tool's
	// index).
	// Line and Column locate it in a stream (RedactTextTo only): from 1,
	// the column in bytes.
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message int    `json:"message,omitempty"`
	Part    int    `json:"part,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Stats counts a Redactor's work since it was created.
type Stats struct {
	Bytes    int64 // bytes scanned
	Findings int64 // secrets masked
	// Timeouts counts custom-rule matches abandoned at MatchTimeout: the
	// text they ran on may hold a secret that rule did not see.
	Timeouts int64
}

// Redactor finds and masks secrets. It is safe for concurrent use. Its
// masks depend on what it is given, never on what it saw before (see
// Scope).
type Redactor struct {
	eng    *engine
	allow  *allowlist
	values atomic.Pointer[valueSet]
	valMu  sync.Mutex // serialises AddValue

	bytes, findings, timeouts atomic.Int64
}

// New returns a Redactor configured by cfg. Errors name the custom rule or
// allowlist entry at fault and wrap ErrRule.
func New(cfg Config) (*Redactor, error) {
	timeout := cfg.MatchTimeout
	if timeout <= 0 {
		timeout = 250 * time.Millisecond
	}
	allow, err := compileAllowlist(cfg.Allowlists, timeout, "allowlist")
	if err != nil {
		return nil, err
	}
	var eng *engine
	if len(cfg.Rules) == 0 && len(cfg.Disable) == 0 && !cfg.NoBuiltin {
		eng = defaultEngine()
	} else {
		var rules []*rule
		if !cfg.NoBuiltin {
			off := set(cfg.Disable...)
			for _, r := range builtinRules() {
				if !off[r.id] {
					rules = append(rules, r)
				}
			}
		}
		for i, cr := range cfg.Rules {
			r, err := compileRule(cr, timeout)
			if err != nil {
				return nil, err
			}
			r.idx = len(builtinRules()) + i
			rules = append(rules, r)
		}
		structural := !cfg.NoBuiltin && !slices.Contains(cfg.Disable, "discord-bot-token") && !slices.Contains(cfg.Disable, "azure-account-key")
		eng = newEngine(rules, structural)
	}
	r := &Redactor{eng: eng, allow: allow}
	r.values.Store(&valueSet{})
	return r, nil
}

var builtinRules = sync.OnceValue(func() []*rule {
	var rules []*rule
	rules = append(rules, vendorRules()...)
	rules = append(rules, goRules()...)
	rules = append(rules, contextRules()...)
	for i, r := range rules {
		r.idx = i
		r.label = sanitizeLabel(r.id)
	}
	return rules
})

var defaultEngine = sync.OnceValue(func() *engine { return newEngine(builtinRules(), true) })

// RuleInfo describes a rule.
type RuleInfo struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// BuiltinRules lists the built-in rules. Several formats may share an id
// (the id is what a mask and a Finding report).
func BuiltinRules() []RuleInfo {
	var out []RuleInfo
	for _, r := range builtinRules() {
		out = append(out, RuleInfo{ID: r.id, Description: r.description})
	}
	out = append(out,
		RuleInfo{"discord-bot-token", "Discord bot token, recognised by its structure (base64 user id . timestamp . HMAC)"},
		RuleInfo{"azure-account-key", "64-byte base64 account key (Azure Storage, Cosmos DB, Service Bus) standing alone"},
	)
	return out
}

// Stats returns the Redactor's counters.
func (r *Redactor) Stats() Stats {
	return Stats{Bytes: r.bytes.Load(), Findings: r.findings.Load(), Timeouts: r.timeouts.Load()}
}

// minValueLen is the shortest value AddValue registers: shorter literals
// would mask ordinary words.
const minValueLen = 4

// AddValue registers a literal that is always masked, wherever it appears,
// whatever the rules say: for example the values of the secrets in the
// user's environment. Its JSON-escaped and URL-escaped forms are masked too.
// Values shorter than 4 bytes are ignored.
func (r *Redactor) AddValue(secret string) {
	if len(secret) < minValueLen || strings.TrimSpace(secret) == "" {
		return
	}
	r.valMu.Lock()
	defer r.valMu.Unlock()
	old := r.values.Load()
	for _, v := range old.canon {
		if v == secret {
			return
		}
	}
	vs := &valueSet{
		canon:  append(append([]string(nil), old.canon...), secret),
		texts:  append([]string(nil), old.texts...),
		canonI: append([]int(nil), old.canonI...),
	}
	ci := len(vs.canon) - 1
	for _, form := range valueForms(secret) {
		if !slices.Contains(vs.texts, form) {
			vs.texts = append(vs.texts, form)
			vs.canonI = append(vs.canonI, ci)
		}
	}
	vs.kw = keyword.New(keyword.Words(vs.texts), false)
	r.values.Store(vs)
}

// valueForms returns the spellings of a value that text may hold.
func valueForms(v string) []string {
	forms := []string{v}
	q := jsonscan.Quote(v)
	forms = append(forms, q[1:len(q)-1])
	forms = append(forms, url.QueryEscape(v), url.PathEscape(v))
	var out []string
	for _, f := range forms {
		if len(f) >= minValueLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// valueSet is an immutable set of registered values.
type valueSet struct {
	canon  []string // the values as registered
	texts  []string // their spellings
	canonI []int    // texts[i] spells canon[canonI[i]]
	kw     *keyword.Matcher
}

var valueRule = &rule{id: "value", label: "value", description: "value registered with AddValue", prio: prioValue}

func (vs *valueSet) find(sc *scan) {
	if vs.kw == nil {
		return
	}
	t := sc.text
	vs.kw.Find(t, func(start, id int) {
		v := vs.texts[id]
		sc.cands = append(sc.cands, cand{start: start, end: start + len(v), rule: valueRule, key: vs.canon[vs.canonI[id]]})
	})
}

// scanOnce runs every detector over text and returns the spans to mask.
// rescan is set for a text already masked once: its encoded runs were
// decoded then (masking elsewhere changes no run), so they are not again.
func (r *Redactor) scanOnce(text string, rescan bool) []cand {
	sc := newScan(r.eng, text, r.allow)
	defer sc.release()
	if rescan {
		sc.depth = maxDecodeDepth
	}
	r.eng.run(sc)
	r.values.Load().find(sc)
	if sc.timeouts > 0 {
		r.timeouts.Add(int64(sc.timeouts))
	}
	r.bytes.Add(int64(len(text)))
	return sc.resolve()
}

// scans are the top-level scans scanOnce reuses, with their buffers: a
// compaction scans each of a window's texts, and a scan and its skip
// list for every one came to a quarter of all it allocated.
var scans = sync.Pool{New: func() any { return new(scan) }}

// newScan returns a pooled scan of text, as new.
func newScan(eng *engine, text string, allow *allowlist) *scan {
	sc := scans.Get().(*scan)
	cands, masks, skipBuf, decBuf, windows := sc.cands[:0], sc.masks[:0], sc.skipBuf, sc.decBuf, sc.windows
	clear(windows)
	*sc = scan{eng: eng, text: text, pemNoEndFrom: -1, pemEnd: -1, allow: allow,
		cands: cands, masks: masks, skipBuf: skipBuf, decBuf: decBuf, windows: windows}
	return sc
}

// release returns sc to the pool, holding no text. resolve's result is a
// slice of its own, so nothing returned shares the scan's buffers.
func (sc *scan) release() {
	clear(sc.cands)
	clear(sc.windows)
	sc.cands, sc.text, sc.skip = sc.cands[:0], "", nil
	scans.Put(sc)
}

// maxRounds bounds the rescans of find.
const maxRounds = 4

// find returns the spans to mask in text. When it finds something it looks
// again at the text as masked, until nothing new turns up: masking can
// change what a detector sees (a name or a value that got shorter), and
// Redact must be idempotent. clip, if set, restricts spans given in text's
// offsets (to JSON string literals). The masks of the rescans are drafts:
// m numbers nothing until the spans are applied.
func (r *Redactor) find(text string, clip func(spans []cand) []cand, m *masker) []cand {
	spans := r.scanOnce(text, false)
	if clip != nil {
		spans = clip(spans)
	}
	var draft *masker
	for round := 1; round < maxRounds && len(spans) > 0; round++ {
		if draft == nil {
			draft = m.draft()
		}
		masked, starts, ends := r.render(text, spans, draft)
		more := r.scanOnce(masked, true)
		if len(more) == 0 {
			break
		}
		// Map the new spans back into text: they lie between masks.
		for i := range more {
			more[i].start = unmask(more[i].start, spans, starts, ends)
			more[i].end = unmask(more[i].end, spans, starts, ends)
		}
		if clip != nil {
			if more = clip(more); len(more) == 0 {
				break
			}
		}
		spans = append(spans, more...)
		slices.SortFunc(spans, func(a, b cand) int { return a.start - b.start })
	}
	return spans
}

// render writes text with spans masked, and where each mask starts and
// ends in the result.
func (r *Redactor) render(text string, spans []cand, m *masker) (string, []int, []int) {
	var b strings.Builder
	b.Grow(len(text))
	starts, ends := make([]int, len(spans)), make([]int, len(spans))
	prev := 0
	for i, c := range spans {
		b.WriteString(text[prev:c.start])
		starts[i] = b.Len()
		b.WriteString(m.mask(c.rule.label, c.secretKey(text)))
		ends[i] = b.Len()
		prev = c.end
	}
	b.WriteString(text[prev:])
	return b.String(), starts, ends
}

// unmask maps offset p of the rendered text, which lies outside every
// mask, back to the original text.
func unmask(p int, spans []cand, starts, ends []int) int {
	i := sort.SearchInts(ends, p+1) - 1 // the last mask ending at or before p
	if i < 0 {
		return p
	}
	return spans[i].end + (p - ends[i])
}

// apply writes text with spans masked, and the findings.
func (r *Redactor) apply(text string, spans []cand, m *masker) (string, []Finding) {
	if len(spans) == 0 {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	found := make([]Finding, 0, len(spans))
	prev := 0
	for _, c := range spans {
		b.WriteString(text[prev:c.start])
		b.WriteString(m.mask(c.rule.label, c.secretKey(text)))
		prev = c.end
		found = append(found, Finding{Rule: c.rule.label, Start: c.start, End: c.end})
	}
	b.WriteString(text[prev:])
	r.findings.Add(int64(len(spans)))
	return b.String(), found
}

// Redact returns s with every secret masked, and what was found: each
// finding's span is in s. JSON in s (all of it, its lines, or lines of JSON
// among other text) is read with its string literals decoded, so an escape
// hides nothing, and masks replace bytes inside its literals only: JSON
// stays valid. Masks are numbered within s (see Scope).
func (r *Redactor) Redact(s string) (string, []Finding) {
	return r.NewScope(s).Redact(s)
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	out, _ := r.Redact(s)
	return out
}

// RedactBytes masks secrets in a document of any format, as Redact does. A
// JSON document, JSON Lines, and lines of JSON among other text stay
// valid: masks only ever replace bytes inside string literals, and every
// other byte is kept as is.
func (r *Redactor) RedactBytes(b []byte) ([]byte, []Finding) {
	s := string(b)
	out, found := r.NewScope(s).Redact(s)
	return []byte(out), found
}

// Transcript returns a copy of t with secrets masked in every text,
// thinking and tool-result part, every tool call's arguments (inside the
// JSON, which stays valid) and image URLs; in the raw source records kept
// for byte-exact rewriting (Message.Source.Records), in non-message
// records, in the envelope and in tool descriptions. t is not modified.
//
// A message whose content changed no longer matches its source fingerprint,
// so writers re-encode it instead of copying its records; its records are
// masked all the same, so the copy holds the secret nowhere and a
// checkpoint of it never stores it. Records that cannot be masked safely
// (not JSON) are dropped from the copy.
func (r *Redactor) Transcript(t compact.Transcript) (compact.Transcript, []Finding) {
	sc := r.NewScope()
	sc.m.reserveTranscript(t)
	return r.transcript(t, sc.m)
}

// Scope numbers masks over several calls: one secret gets one mask
// wherever it appears in the scope, and numbers follow the order in which
// secrets are first met, after the numbers of the masks the scope's texts
// already hold. The same calls in the same order give the same masks,
// whatever the Redactor did before: a compaction resumed from a
// checkpoint writes what an uninterrupted run writes. The Redactor's own
// methods each open a scope of their own.
//
// A Scope is safe for concurrent use, though masks then follow the order
// the calls happen to run in.
type Scope struct {
	r *Redactor
	m *masker
}

// NewScope opens a scope. Masks already in texts (earlier output of a
// redactor, a handoff folded in) are reserved up front, so no new secret
// takes one of their numbers; texts passed to the scope's methods later
// are reserved as they come.
func (r *Redactor) NewScope(texts ...string) *Scope {
	s := &Scope{r: r, m: newMasker()}
	for _, t := range texts {
		s.m.reserve(t)
	}
	return s
}

// Redact is Redactor.Redact within the scope.
func (s *Scope) Redact(text string) (string, []Finding) {
	s.m.reserve(text)
	return s.r.redactDoc(text, s.m)
}

// String is Redactor.String within the scope.
func (s *Scope) String(text string) string {
	out, _ := s.Redact(text)
	return out
}

// RedactBytes is Redactor.RedactBytes within the scope.
func (s *Scope) RedactBytes(b []byte) ([]byte, []Finding) {
	out, found := s.Redact(string(b))
	return []byte(out), found
}

// Transcript is Redactor.Transcript within the scope.
func (s *Scope) Transcript(t compact.Transcript) (compact.Transcript, []Finding) {
	s.m.reserveTranscript(t)
	return s.r.transcript(t, s.m)
}
