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
	// dropped holds the same as coveredHash in memory, element by element,
	// to tell a request that repeats the dropped elements without hashing
	// their bytes again: for each of the first covered elements, its
	// shape.droppedIdent when the prefix drops it, 0 when it keeps it. It is
	// nil for a prefix read from the store until a request matches it by
	// coveredHash. Guarded by its session's state lock.
	dropped []uint64
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
// dropped them. Called with its session's state lock held.
func (p *prefix) extends(sh *shape) bool {
	if !sh.hasList || len(sh.elems) < p.covered {
		return false
	}
	if p.dropped == nil {
		if sh.hashDropped(p.covered, p.items) != p.coveredHash {
			return false
		}
		p.dropped = sh.droppedIdents(p.covered, p.items)
		return true
	}
	for k, id := range p.dropped {
		if id != 0 && id != sh.ident(k) && id != sh.droppedIdent(k) {
			return false
		}
	}
	return true
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

// maxLines bounds the compacted prefixes kept under one conversation key.
const maxLines = 8

// session is what the proxy remembers of the conversations under one key.
// Usually that is one conversation; runs of one task started alike (an
// evaluation harness's attempts, two people starting with the same
// command) share the key without X-Compact-Session and part ways after
// their first messages. Each keeps a line of its own: its compacted prefix,
// found again by the dropped elements a request repeats.
type session struct {
	key string
	// mu serializes compactions of the session, so concurrent requests of
	// one conversation do not each call the summarizer.
	mu sync.Mutex

	state sync.Mutex // guards the fields below
	// lines are the session's prefixes, the most recently used first.
	lines []*line
	// loaded is true once the store has been asked for the session.
	loaded bool
}

// line is one conversation's compacted prefix and the hash of the prefix
// its previous request was forwarded with ("" before the first).
type line struct {
	p    *prefix
	last string
}

// match returns the prefix of the session that sh repeats the dropped
// elements of (the one covering most when several do), nil when none.
func (s *session) match(sh *shape) *prefix {
	s.state.Lock()
	defer s.state.Unlock()
	best := -1
	for i, l := range s.lines {
		if (best < 0 || l.p.covered > s.lines[best].p.covered) && l.p.extends(sh) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	s.touch(best)
	return s.lines[0].p
}

// touch moves line i to the front.
func (s *session) touch(i int) {
	l := s.lines[i]
	copy(s.lines[1:i+1], s.lines[:i])
	s.lines[0] = l
}

// adopt makes np a prefix of the session: in place of from, the prefix it
// was folded from, or as a new line (replacing one that drops the same
// elements), the least recently used line forgotten beyond maxLines.
func (s *session) adopt(from, np *prefix) {
	s.state.Lock()
	defer s.state.Unlock()
	for i, l := range s.lines {
		if (from != nil && l.p == from) || (l.p.covered == np.covered && l.p.coveredHash == np.coveredHash) {
			l.p = np
			s.touch(i)
			return
		}
	}
	s.lines = append([]*line{{p: np}}, s.lines...)
	if len(s.lines) > maxLines {
		s.lines = s.lines[:maxLines]
	}
}

// add adds prefixes read from the store behind those in memory, skipping
// any that drop the same elements as one held.
func (s *session) add(ps []*prefix) {
	s.state.Lock()
	defer s.state.Unlock()
next:
	for _, p := range ps {
		for _, l := range s.lines {
			if l.p.covered == p.covered && l.p.coveredHash == p.coveredHash {
				continue next
			}
		}
		if len(s.lines) < maxLines {
			s.lines = append(s.lines, &line{p: p})
		}
	}
}

// forwarded records that a request went out with p and reports whether
// p's line had forwarded a compacted request before and whether its prefix
// was the same bytes.
func (s *session) forwarded(p *prefix) (compared, same bool) {
	s.state.Lock()
	defer s.state.Unlock()
	for _, l := range s.lines {
		if l.p == p {
			compared, same = l.last != "" && p.hash != "", l.last == p.hash
			l.last = p.hash
			return compared, same
		}
	}
	return false, false
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
