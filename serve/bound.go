package serve

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
	"github.com/compactkit/compact/tokens"
)

// Most requests are under the threshold, and most of what an agent sends
// it sent before: each request repeats the conversation so far and adds a
// turn. Reading a request with package format costs about a millisecond per
// 100 KB, more than a proxy may add. So the proxy first bounds the request's
// tokens without reading it: each list element it has counted before (by a
// hash of its bytes) counts what it counted then, and each new one counts
// at most its length in bytes (a token is at least one byte of text, and
// JSON only adds bytes to the text it carries) plus a message's overhead,
// or an image's price for each image in it. A request whose bound is under
// the threshold is forwarded as it came, unread; any other is read and
// counted exactly, which teaches the cache its elements.

// Bounds of what the bytes of an element do not show.
const (
	// elemOverhead is more than the chat format adds to a message (3, a
	// role and a name's 1; Chat Completions' tool results count one message
	// each, and an element holds at least one).
	elemOverhead = 8
	// imagePrice is more than a provider charges for one image: OpenAI's
	// high detail is at most 85 + 170 × 16 tiles after scaling to 2048 ×
	// 768, Anthropic's about 1,600 for the largest image it takes.
	imagePrice = 3000
)

// countCache remembers the tokens of list elements and of the members
// beside the list, by model and bytes. It is bounded: when full it starts
// over, which costs one exact read per request until it has learnt the
// conversations again.
type countCache struct {
	seed maphash.Seed
	mu   sync.Mutex
	m    map[uint64]int32
	max  int
}

func newCountCache(max int) *countCache {
	return &countCache{seed: maphash.MakeSeed(), m: make(map[uint64]int32), max: max}
}

func (c *countCache) get(k uint64) (int, bool) {
	c.mu.Lock()
	n, ok := c.m[k]
	c.mu.Unlock()
	return int(n), ok
}

func (c *countCache) put(k uint64, n int) {
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = int32(min(n, 1<<31-1))
	c.mu.Unlock()
}

// key hashes b for the model whose salt is given.
func (c *countCache) key(salt uint64, b []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var s [8]byte
	for i := range s {
		s[i] = byte(salt >> (8 * i))
	}
	h.Write(s[:])
	h.Write(b)
	return h.Sum64()
}

// besideKey hashes the members beside the list that the prompt holds
// (tools, system, instructions), keys included, in order.
func (c *countCache) besideKey(salt uint64, body []byte, beside []jsonscan.Member) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var s [8]byte
	for i := range s {
		s[i] = byte(salt >> (8 * i))
	}
	h.Write(s[:])
	for _, m := range beside {
		h.WriteString(m.Key)
		h.WriteByte(0)
		h.Write(body[m.Value.Start:m.Value.End])
		h.WriteByte(0)
	}
	return h.Sum64()
}

// bound is a quick look at a request: its model and an upper bound of its
// tokens. ok is false when the body is not what the bound needs (then the
// request is read in full).
type bound struct {
	model  string
	tokens int
	env    *modelEnv
}

// boundOf bounds the tokens of a request of a without reading it.
func (s *Server) boundOf(a *api, body []byte) (bound, bool) {
	members, complete := jsonscan.Members(body)
	if !complete {
		return bound{}, false
	}
	var b bound
	var list jsonscan.Span
	lists := 0
	var beside []jsonscan.Member
	for _, m := range members {
		switch {
		case m.Key == "model":
			b.model, _ = jsonscan.Unquote(body[m.Value.Start:m.Value.End])
		case m.Key == a.list:
			lists++
			list = m.Value
		case a.beside(m.Key):
			beside = append(beside, m)
		}
	}
	if lists != 1 || body[list.Start] != '[' {
		return bound{}, false
	}
	env, err := s.env(b.model)
	if err != nil {
		return bound{}, false
	}
	b.env = env
	scale := 1.0
	if !env.counter.Exact() {
		scale = max(1, tokens.CalibrationFactor(b.model))
	}
	if n, ok := s.counts.get(s.counts.besideKey(env.salt, body, beside)); ok {
		b.tokens += n
	} else {
		for _, m := range beside {
			b.tokens += int(scale * float64(m.Value.End-m.Value.Start+elemOverhead))
		}
		b.tokens += elemOverhead // the reply's priming
	}
	elems, complete := jsonscan.Elements(body[list.Start:list.End])
	if !complete {
		return bound{}, false
	}
	for _, e := range elems {
		raw := body[list.Start+e.Start : list.Start+e.End]
		if n, ok := s.counts.get(s.counts.key(env.salt, raw)); ok {
			b.tokens += n
			continue
		}
		b.tokens += int(scale*float64(len(raw)+elemOverhead)) + imagePrice*bytes.Count(raw, []byte("image"))
		if b.tokens >= env.trigger {
			return b, true // no need to look further
		}
	}
	return b, true
}

// learn remembers the counts of a request read in full: each message's
// tokens spread over its elements by their sizes, and what lies beside the
// list (tool definitions, system messages outside it, the reply's priming).
func (s *Server) learn(env *modelEnv, v *view) {
	if v.place() != nil {
		return
	}
	outside := env.counter.Transcript(compact.Transcript{Tools: v.t.Tools})
	for i, g := range v.groups {
		n := env.counter.Message(v.t.Messages[i])
		if g[0] < 0 {
			outside += n
			continue
		}
		size := 0
		for e := g[0]; e < g[1]; e++ {
			size += len(v.elem(e))
		}
		for e := g[0]; e < g[1]; e++ {
			share := 1 + n*len(v.elem(e))/max(size, 1)
			s.counts.put(s.counts.key(env.salt, v.elem(e)), share)
		}
	}
	s.counts.put(s.counts.besideKey(env.salt, v.body, v.beside), outside)
}
