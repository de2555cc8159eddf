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

// saltedKey is the key of an element of identity ident (shape.ident)
// for the model whose salt is given.
func (c *countCache) saltedKey(salt, ident uint64) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var s [16]byte
	for i := range 8 {
		s[i] = byte(salt >> (8 * i))
		s[8+i] = byte(ident >> (8 * i))
	}
	h.Write(s[:])
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

// elemKey is element k's key in the count cache for env's model: its
// identity (shape.ident, the one pass over its bytes) with the model's
// salt.
func (s *Server) elemKey(env *modelEnv, sh *shape, k int) uint64 {
	if sh.keys == nil || sh.keySalt != env.salt {
		sh.keys, sh.keySalt = make([]uint64, len(sh.elems)), env.salt
		for i := range sh.elems {
			sh.keys[i] = s.counts.saltedKey(env.salt, sh.ident(i))
		}
	}
	return sh.keys[k]
}

// boundScale is what a byte bound is multiplied by: 1 for exact counts,
// the model's calibration factor for estimates when it is above 1.
func boundScale(env *modelEnv, model string) float64 {
	if env.counter.Exact() {
		return 1
	}
	return max(1, tokens.CalibrationFactor(model))
}

// besideBound bounds what lies beside the list: the prompt's other members
// and the reply's priming.
func (s *Server) besideBound(env *modelEnv, sh *shape, scale float64) int {
	if n, ok := s.counts.get(s.counts.besideKey(env.salt, sh.body, sh.beside)); ok {
		return n
	}
	n := elemOverhead // the reply's priming
	for _, m := range sh.beside {
		n += int(scale * float64(m.Value.End-m.Value.Start+elemOverhead))
	}
	return n
}

// elemBound bounds element k: its cached count, or its bytes. A request
// is bounded twice when the first bound is over the threshold (before and
// while it is counted): the byte bounds are kept in sh.
func (s *Server) elemBound(env *modelEnv, sh *shape, k int, scale float64) int {
	if n, ok := s.counts.get(s.elemKey(env, sh, k)); ok {
		return n
	}
	if sh.byteBounds == nil || sh.boundScale != scale {
		sh.byteBounds, sh.boundScale = make([]int, len(sh.elems)), scale
	}
	if sh.byteBounds[k] == 0 {
		raw := sh.elem(k)
		sh.byteBounds[k] = int(scale*float64(len(raw)+elemOverhead)) + imagePrice*bytes.Count(raw, []byte("image"))
	}
	return sh.byteBounds[k]
}

// boundPlain bounds the tokens of a request as it came; ok is false when
// it has no list to bound.
func (s *Server) boundPlain(env *modelEnv, sh *shape) (n int, ok bool) {
	if !sh.hasList {
		return 0, false
	}
	scale := boundScale(env, sh.model)
	n = s.besideBound(env, sh, scale)
	for k := range sh.elems {
		n += s.elemBound(env, sh, k, scale)
	}
	return n, true
}

// boundWith bounds the tokens of a request as it would go out with prefix
// p, which it extends: the handoff, the elements p keeps and the new ones.
func (s *Server) boundWith(env *modelEnv, sh *shape, p *prefix) int {
	scale := boundScale(env, sh.model)
	n := s.besideBound(env, sh, scale) + p.litTokens
	for _, it := range p.items {
		if it >= 0 {
			n += s.elemBound(env, sh, it, scale)
		}
	}
	for k := p.covered; k < len(sh.elems); k++ {
		n += s.elemBound(env, sh, k, scale)
	}
	return n
}

// learn remembers the counts of a request read in full: each message's
// tokens spread over its elements by their sizes, and what lies beside the
// list (tool definitions, system messages outside it, the reply's priming).
func (s *Server) learn(env *modelEnv, v *view) {
	if v.place() != nil {
		return
	}
	outside := env.counter.Transcript(compact.Transcript{Tools: v.t.Tools})
	groups := make([][2]int, 0, len(v.groups))
	counts := make([]int, 0, len(v.groups))
	for i, g := range v.groups {
		n := env.counter.Message(v.t.Messages[i])
		if g[0] < 0 {
			outside += n
			continue
		}
		groups, counts = append(groups, g), append(counts, n)
	}
	s.remember(env, v.shape, groups, counts, outside)
}

// remember caches the counts of a request's messages, counts[i] spread
// over the elements groups[i] by their sizes, and outside, the count of
// what lies beside the list.
func (s *Server) remember(env *modelEnv, sh *shape, groups [][2]int, counts []int, outside int) {
	for i, g := range groups {
		n := counts[i]
		size := 0
		for e := g[0]; e < g[1]; e++ {
			size += len(sh.elem(e))
		}
		for e := g[0]; e < g[1]; e++ {
			share := 1 + n*len(sh.elem(e))/max(size, 1)
			s.counts.put(s.elemKey(env, sh, e), share)
		}
	}
	s.counts.put(s.counts.besideKey(env.salt, sh.body, sh.beside), outside)
}
