package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/keyword"
)

// Priorities decide the label when candidates overlap: the merged span is
// their union, labelled by the most specific rule.
const (
	prioContext = 10 // a value under a secret-like name
	prioHeader  = 15
	prioURL     = 20
	prioVendor  = 30 // a vendor's token format
	prioCustom  = 35
	prioPEM     = 40
	prioValue   = 50 // registered with AddValue
)

// rule is one detector. Exactly one of prefix, window and detect is set.
type rule struct {
	id          string
	label       string // id as a mask label
	description string
	keywords    []string
	// caseSensitive: the keyword must occur exactly as written (the keyword
	// pass itself folds case).
	caseSensitive bool
	prio          int

	// prefix is anchored (^) and matched at the keyword's start, over at most
	// maxLen bytes.
	prefix *lazyRegexp
	// anchor, if set, moves the start of a prefix match from the keyword
	// to where the token begins (the keyword sits inside the token).
	anchor func(t string, kw int) int
	// window is matched anywhere in [kw-before, kw+after].
	window        *lazyRegexp
	before, after int
	// group is the capture group holding the secret (0: the whole match).
	group int
	// detect is a detector written in Go, called at each keyword hit.
	detect func(sc *scan, kwStart, kwEnd int)

	maxLen     int
	minEntropy float64
	// validate checks a candidate secret (checksums, structure).
	validate func(secret string) bool
	// noBoundary disables the check that the secret is not glued to
	// letters or digits on either side.
	noBoundary bool
	// keepPlaceholders disables the placeholder check (formats whose
	// random body may legitimately contain marker-like runs).
	keepPlaceholders bool
	custom           *customRule
	idx              int // unique among the rules of a Redactor: built-ins first, then custom rules
}

// lazyRegexp is a built-in rule's pattern, compiled the first time a
// keyword calls on it: compiling all of them costs milliseconds that a
// short text with no keyword hit should not pay.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func lazyCompile(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

// get returns the compiled pattern. Built-in patterns are constants that
// TestBuiltinPatternsCompile compiles, so MustCompile cannot fail here.
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// cand is a candidate secret: a byte span of the scanned text and the rule
// that found it.
type cand struct {
	start, end int
	rule       *rule
	// key, when set, numbers the mask instead of the span's text (a value
	// registered with AddValue, found in one of its escaped spellings).
	key string
}

// scan is the state of one pass over one text.
type scan struct {
	eng   *engine
	text  string
	cands []cand
	// masks are the spans of masks already in the text: never re-detected,
	// which makes redaction idempotent.
	masks [][2]int
	// lastName dedupes the context detector across keywords of one name.
	lastName int
	windows  map[*rule][][2]int
	// pemNoEndFrom is where the PEM detector last found no END line after:
	// later BEGIN lines do not search again (-1: not yet known).
	pemNoEndFrom int
	// pemEnd is where the last END line found starts (-1: none).
	pemEnd int
	// skip[i] is where rule i may next look: hits before it fall inside text
	// the rule already read (a token run, a value, a manifest). With it,
	// every detector reads each byte a bounded number of times, whatever
	// the input: the scan stays linear on adversarial text.
	skip []int
	nidx int // len(skip) once allocated
	// skipBuf keeps skip's array for the next text a pooled scan reads.
	skipBuf []int
	// runStart, runEnd cache the token run last measured.
	runStart, runEnd int
	// curRule is the idx of the Go detector running, for its skip.
	curRule  int
	allow    *allowlist
	timeouts int
	// depth counts the decodings that led to this text (see decodeScan),
	// and decBuf is their scratch space.
	depth  int
	decBuf []byte
}

// secretKey is what numbers the candidate's mask.
func (c cand) secretKey(text string) string {
	if c.key != "" {
		return c.key
	}
	return text[c.start:c.end]
}

func (sc *scan) add(start, end int, r *rule) {
	if start < 0 || end > len(sc.text) || start >= end {
		return
	}
	if r.prio != prioValue && sc.allow.allows(sc.text, start, end) {
		return
	}
	sc.cands = append(sc.cands, cand{start: start, end: end, rule: r})
}

// engine holds compiled rules and the keyword automaton that routes hits
// to them. It is immutable after construction.
type engine struct {
	rules []*rule
	kw    *keyword.Matcher
	// kwRules[i] lists the rules keyword i triggers, and kwText[i] the
	// keyword as written (for case-sensitive rules).
	kwRules [][]*rule
	kwText  []string
	// always lists rules with no keyword: run over the whole text.
	always []*rule
	// structural detectors run on every text, without a keyword.
	structural bool
	// nidx bounds the rules' idx.
	nidx int
	// labels holds the rules that stand for labels of Go detectors that
	// report under more than one name.
	labels map[string]*rule
}

// labelRule returns the rule standing for a detector label.
func (e *engine) labelRule(label string) *rule {
	if r, ok := e.labels[label]; ok {
		return r
	}
	return e.labels["secret"]
}

const maskKeyword = "[REDACTED"

// detectorLabels are the labels Go detectors report, with their priority.
var detectorLabels = map[string]int{
	"password": prioContext, "secret": prioContext, "token": prioContext, "api-key": prioContext,
	"secret-key": prioContext, "private-key": prioPEM, "auth": prioContext, "authorization": prioHeader,
	"credential": prioContext, "signature": prioContext, "docker-config": prioContext,
	"aws-secret-access-key": prioContext + 1, "aws-session-token": prioContext + 1, "bearer-token": prioHeader,
	"url-password": prioURL, "basic-auth-password": prioURL, "secret-file": prioContext,
	"discord-bot-token": prioVendor, "azure-account-key": prioVendor, "session": prioContext, "kubernetes-secret": prioContext,
	"private-key-id": prioContext, "terraform-variable": prioContext, "secret-command": prioContext,
}

func newEngine(rules []*rule, structural bool) *engine {
	e := &engine{rules: rules, structural: structural, labels: map[string]*rule{}}
	for l, p := range detectorLabels {
		e.labels[l] = &rule{id: l, label: l, prio: p}
	}
	index := map[string]int{}
	var words []string
	addKW := func(w string, r *rule) {
		lw := strings.ToLower(w)
		key := lw
		if r != nil && r.caseSensitive {
			key = "=" + w
		}
		i, ok := index[key]
		if !ok {
			i = len(words)
			index[key] = i
			words = append(words, lw)
			e.kwRules = append(e.kwRules, nil)
			e.kwText = append(e.kwText, w)
		}
		if r != nil {
			e.kwRules[i] = append(e.kwRules[i], r)
		}
	}
	addKW(maskKeyword, nil)
	for _, r := range rules {
		if r.label == "" {
			r.label = sanitizeLabel(r.id) // set before the rules are shared
		}
		e.nidx = max(e.nidx, r.idx+1)
		if len(r.keywords) == 0 {
			e.always = append(e.always, r)
			continue
		}
		for _, w := range r.keywords {
			addKW(w, r)
		}
	}
	e.kw = keyword.New(keyword.Words(words), true)
	return e
}

// run finds the candidates in text.
func (e *engine) run(sc *scan) {
	text := sc.text
	sc.lastName = -1
	sc.skip, sc.nidx = nil, e.nidx // allocated by the first rule that skips: most texts have none
	e.kw.Find(text, func(start, id int) {
		rules := e.kwRules[id]
		if rules == nil {
			sc.noteMask(start)
			return
		}
		if n := len(sc.masks); n > 0 && start < sc.masks[n-1][1] {
			return // a keyword inside a mask ("password" in [REDACTED:password#1])
		}
		end := start + len(e.kwText[id])
		for _, r := range rules {
			if start < sc.skipFrom(r.idx) || (r.caseSensitive && text[start:end] != e.kwText[id]) {
				continue
			}
			sc.hit(r, start, end)
		}
	})
	if len(sc.windows) > 0 {
		// In rule order, not the map's: candidates keep the order found.
		rules := make([]*rule, 0, len(sc.windows))
		for r := range sc.windows {
			rules = append(rules, r)
		}
		slices.SortFunc(rules, func(a, b *rule) int { return a.idx - b.idx })
		for _, r := range rules {
			sc.runWindows(r, sc.windows[r])
		}
	}
	for _, r := range e.always {
		sc.runWhole(r)
	}
	if e.structural {
		structuralScan(sc)
	}
	decodeScan(sc)
}

// skipFrom returns where rule idx may next look.
func (sc *scan) skipFrom(idx int) int {
	if sc.skip == nil {
		return 0
	}
	return sc.skip[idx]
}

// skipTo makes rule idx look no earlier than at.
func (sc *scan) skipTo(idx, at int) {
	if sc.skip == nil {
		if cap(sc.skipBuf) >= sc.nidx {
			sc.skip = sc.skipBuf[:sc.nidx]
			clear(sc.skip)
		} else {
			sc.skip = make([]int, sc.nidx)
			sc.skipBuf = sc.skip
		}
	}
	sc.skip[idx] = at
}

// noteMask records a mask already present at start.
func (sc *scan) noteMask(start int) {
	if end, ok := maskAt(sc.text, start); ok {
		sc.masks = append(sc.masks, [2]int{start, end})
	}
}

func (sc *scan) hit(r *rule, start, end int) {
	if start < sc.skipFrom(r.idx) {
		return
	}
	switch {
	case r.detect != nil:
		sc.curRule = r.idx
		r.detect(sc, start, end)
	case r.prefix != nil:
		if r.anchor != nil {
			if start = r.anchor(sc.text, start); start < 0 || start < sc.skipFrom(r.idx) {
				return
			}
		}
		sc.matchPrefix(r, start)
	default:
		ws := max(0, start-r.before)
		we := min(len(sc.text), end+r.after)
		if sc.windows == nil {
			sc.windows = map[*rule][][2]int{}
		}
		sc.windows[r] = append(sc.windows[r], [2]int{ws, we})
	}
}

func (sc *scan) matchPrefix(r *rule, start int) {
	t := sc.text
	if !r.noBoundary && (!leftBoundary(t, start) || (start > 0 && t[start-1] == '.')) {
		return // glued to a word, or the tail of a file or host name
	}
	// A token never reaches past its run of token bytes: the pattern reads
	// no further, and later keywords inside the run are not looked at again.
	end := min(sc.tokenRunEnd(start), start+r.maxLen)
	m := r.prefix.get().FindStringSubmatchIndex(t[start:end])
	if m == nil {
		sc.skipTo(r.idx, end)
		return
	}
	// After a match, the next token of this format may follow in the same
	// run ("ghp_a:ghp_b"): look again from the match's end.
	sc.skipTo(r.idx, start+m[1])
	s, e := m[2*r.group], m[2*r.group+1]
	if s < 0 {
		return
	}
	sc.accept(r, start+s, start+e, start+m[0], start+m[1])
}

// isRunByte reports bytes a vendor token may contain.
func isRunByte(c byte) bool {
	return isTokenByte(c) || c == '~' || c == '%' || c == '@' || c == '|' || c == ':' || c == '#'
}

// tokenRunEnd returns the end of the run of token bytes holding t[i].
func (sc *scan) tokenRunEnd(i int) int {
	if i >= sc.runStart && i < sc.runEnd {
		return sc.runEnd
	}
	t := sc.text
	e := i
	for e < len(t) && isRunByte(t[e]) {
		e++
	}
	sc.runStart, sc.runEnd = i, e
	return e
}

// accept runs the post-match checks and records the candidate. ms and me
// delimit the whole match, for the boundary check.
func (sc *scan) accept(r *rule, s, e, ms, me int) {
	t := sc.text
	if !r.noBoundary {
		if ms == s && !leftBoundary(t, ms) {
			return
		}
		if me == e && (!rightBoundary(t, me) || (r.prefix != nil && me < len(t) && (t[me] == '-' || t[me] == '_'))) {
			return // the token goes on: not this format
		}
	}
	secret := t[s:e]
	if !r.keepPlaceholders && isPlaceholder(secret) {
		return
	}
	if r.minEntropy > 0 && entropy(secret) < r.minEntropy {
		return
	}
	if r.validate != nil && !r.validate(secret) {
		return
	}
	sc.add(s, e, r)
}

func (sc *scan) runWindows(r *rule, ws [][2]int) {
	slices.SortFunc(ws, func(a, b [2]int) int { return a[0] - b[0] })
	cur := ws[0]
	flush := func(w [2]int) {
		if r.custom != nil {
			r.custom.find(sc, r, w[0], w[1])
			return
		}
		for _, m := range r.window.get().FindAllStringSubmatchIndex(sc.text[w[0]:w[1]], -1) {
			s, e := m[2*r.group], m[2*r.group+1]
			if s < 0 {
				continue
			}
			sc.accept(r, w[0]+s, w[0]+e, w[0]+m[0], w[0]+m[1])
		}
	}
	for _, w := range ws[1:] {
		if w[0] <= cur[1] {
			cur[1] = max(cur[1], w[1])
			continue
		}
		flush(cur)
		cur = w
	}
	flush(cur)
}

func (sc *scan) runWhole(r *rule) {
	if r.custom != nil {
		r.custom.find(sc, r, 0, len(sc.text))
		return
	}
	for _, m := range r.window.get().FindAllStringSubmatchIndex(sc.text, -1) {
		s, e := m[2*r.group], m[2*r.group+1]
		if s >= 0 {
			sc.accept(r, s, e, m[0], m[1])
		}
	}
}

// resolve turns the candidates into disjoint spans: overlapping candidates
// merge into their union, labelled by the rule of highest priority; spans
// touching an existing mask are dropped; span edges are moved off escape
// sequences and UTF-8 continuation bytes so masking never breaks a JSON
// string or a character.
func (sc *scan) resolve() []cand {
	cs := sc.cands
	if len(cs) == 0 {
		return nil
	}
	// Stable: candidates of one span and priority keep the order they
	// were found in (the first labels the span), which depends on the
	// text around them no more than the span does: the label must not
	// change with the length of the text (RedactTextTo).
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return b.rule.prio - a.rule.prio
	})
	out := cs[:0:0]
	for _, c := range cs {
		if n := len(out); n > 0 && c.start < out[n-1].end {
			last := &out[n-1]
			last.end = max(last.end, c.end)
			if c.rule.prio > last.rule.prio {
				last.rule = c.rule
			}
			continue
		}
		out = append(out, c)
	}
	// Masks were noted in text order; so are the candidates now: one merge
	// pass drops the candidates that touch a mask.
	final := out[:0]
	mi := 0
	for _, c := range out {
		c.start, c.end = safeSpan(sc.text, c.start, c.end)
		if c.start >= c.end {
			continue
		}
		for mi < len(sc.masks) && sc.masks[mi][1] <= c.start {
			mi++
		}
		if mi < len(sc.masks) && sc.masks[mi][0] < c.end {
			continue
		}
		final = append(final, c)
	}
	return final
}

// safeSpan shrinks [s, e) so that it neither starts inside a backslash
// escape nor ends on a dangling backslash, and cuts no UTF-8 sequence.
func safeSpan(t string, s, e int) (int, int) {
	for s < e && escapedAt(t, s) {
		if t[s] == 'u' && s+5 <= e {
			s += 5
		} else {
			s++
		}
	}
	for s < e && !utf8.RuneStart(t[s]) {
		s++
	}
	for e > s {
		// A span must not end inside \uXXXX nor on the backslash of an escape.
		cut := false
		for k := 1; k <= 5 && e-k >= s; k++ {
			if t[e-k] == '\\' && !escapedAt(t, e-k) {
				if k == 1 || (t[e-k+1] == 'u' && k <= 5) {
					e -= k
					cut = true
				}
				break
			}
		}
		if !cut {
			break
		}
	}
	for e > s && e < len(t) && !utf8.RuneStart(t[e]) {
		e--
	}
	return s, e
}
