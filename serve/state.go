package serve

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sync"
)

// prefix is the compacted start of a conversation as it was forwarded: the
// client's elements it kept and the handoff that replaced the rest. The next
// request of the same conversation repeats the elements prefix covers and
// adds new ones; it is forwarded as this prefix, rebuilt from the request's
// own elements and the stored handoff, plus the new elements, so the
// upstream sees the same bytes again and its prompt cache holds.
type prefix struct {
	// covered is how many of the client's list elements the prefix
	// replaces, and coveredHash the hash of those it dropped (see
	// view.hashDropped): the kept ones are taken from each request as it
	// comes, so a client may change them (Anthropic's moving cache
	// breakpoints, a last message it appends to) without voiding the
	// handoff, which depends only on the dropped ones.
	covered     int
	coveredHash string
	// items are the prefix's elements in order: an index into the client's
	// list (>= 0), or -1-k for lits[k].
	items []int
	lits  [][]byte
	// litTokens counts the literal elements' messages (the handoff).
	litTokens int
	// hash identifies the prefix's bytes (volatile members left out), to
	// tell a repeated prefix from a new one.
	hash string
}

// extends reports whether v repeats the elements p dropped, where it
// dropped them.
func (p *prefix) extends(sh *shape) bool {
	return sh.hasList && len(sh.elems) >= p.covered && sh.hashDropped(p.covered, p.items) == p.coveredHash
}

// kept reports which of the first covered elements p keeps.
func (p *prefix) kept() []bool {
	k := make([]bool, p.covered)
	for _, it := range p.items {
		if it >= 0 && it < p.covered {
			k[it] = true
		}
	}
	return k
}

// elements returns the prefix's elements, taking kept ones from sh.
func (p *prefix) elements(sh *shape) [][]byte {
	out := make([][]byte, 0, len(p.items)+len(sh.elems)-p.covered)
	for _, it := range p.items {
		if it >= 0 {
			out = append(out, sh.elem(it))
		} else {
			out = append(out, p.lits[-1-it])
		}
	}
	return out
}

// forward returns sh's body as it goes out with p: the prefix, then the
// elements sh adds after those p covers.
func (p *prefix) forward(sh *shape) []byte {
	elems := p.elements(sh)
	for k := p.covered; k < len(sh.elems); k++ {
		elems = append(elems, sh.elem(k))
	}
	return withList(sh.body, sh.list, elems)
}

// hashBytes hashes elements as prefix.hash does.
func hashBytes(a *api, elems [][]byte) string {
	h := sha256.New()
	var buf []byte
	for _, e := range elems {
		if len(a.volatile) > 0 && containsAny(e, a.volatile) {
			buf = writeWithout(buf[:0], e, a.volatile)
			e = buf
		}
		h.Write(e)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// session is what the proxy remembers of one conversation.
type session struct {
	key string
	// mu serializes compactions of the session, so concurrent requests of
	// one conversation do not each call the summarizer.
	mu sync.Mutex

	state sync.Mutex // guards the fields below
	p     *prefix
	// last is the hash of the compacted prefix the previous request was
	// forwarded with, "" when it was forwarded whole.
	last string
	// loaded is true once the store has been asked for the session.
	loaded bool
}

func (s *session) prefix() *prefix {
	s.state.Lock()
	defer s.state.Unlock()
	return s.p
}

func (s *session) setPrefix(p *prefix) {
	s.state.Lock()
	s.p = p
	s.state.Unlock()
}

// forwarded records the prefix hash a request went out with and reports
// whether there was a previous compacted request and whether its prefix was
// the same.
func (s *session) forwarded(hash string) (compared, same bool) {
	s.state.Lock()
	defer s.state.Unlock()
	compared, same = s.last != "" && hash != "", s.last == hash
	s.last = hash
	return compared, same
}

// sessions keeps the most recently used sessions in memory.
type sessions struct {
	mu  sync.Mutex
	max int
	m   map[string]*list.Element
	lru list.List
}

func newSessions(max int) *sessions {
	return &sessions{max: max, m: map[string]*list.Element{}}
}

// get returns the session called key, starting it if needed. The least
// recently used session is forgotten when there are too many: its next
// request is compacted afresh (or its prefix reloaded from the store).
func (ss *sessions) get(key string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if e, ok := ss.m[key]; ok {
		ss.lru.MoveToFront(e)
		return e.Value.(*session)
	}
	s := &session{key: key}
	ss.m[key] = ss.lru.PushFront(s)
	for ss.lru.Len() > ss.max {
		old := ss.lru.Back()
		ss.lru.Remove(old)
		delete(ss.m, old.Value.(*session).key)
	}
	return s
}

func (ss *sessions) len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.lru.Len()
}

// SessionHeader names a conversation explicitly. Without it a conversation
// is identified by its API, system messages and first user message.
const SessionHeader = "X-Compact-Session"

// sessionPattern is compiled on first use, not at start-up.
var sessionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`) })

// headerSession returns the session a client named, made safe as a store
// key: kept as given when it is a plain ID, hashed otherwise.
func headerSession(v string) string {
	if v == "" {
		return ""
	}
	if sessionPattern().MatchString(v) {
		return "s-" + v
	}
	h := sha256.Sum256([]byte(v))
	return "h-" + hex.EncodeToString(h[:12])
}
