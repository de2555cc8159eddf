package tokens

import (
	"hash/maphash"
	"math/bits"
	"sync"

	"github.com/compactkit/compact"
)

// Cache remembers per-message counts by a hash of the message's content, so
// that re-counting a transcript that grew by one message tokenizes only the
// new one. It holds at most its capacity in entries (two generations:
// when the current one fills, it becomes the old one and the older is
// dropped, so recently used counts survive). It is safe for concurrent use.
//
// Keys are 64-bit hashes of everything a count depends on (the counting
// scheme and the message's role, name, parts), built from maphash with a
// seed drawn per process. Two different messages share a key with a
// probability near 2^-64 per pair.
type Cache struct {
	mu       sync.Mutex
	capacity int
	cur, old map[uint64]int32
	hits     uint64
	misses   uint64
}

// DefaultCacheSize is the capacity of the cache counters share unless given
// another: at most about 3 MB.
const DefaultCacheSize = 1 << 16

// NewCache returns a cache holding at most capacity counts (at least 2).
func NewCache(capacity int) *Cache {
	capacity = max(capacity, 2)
	return &Cache{capacity: capacity, cur: make(map[uint64]int32)}
}

var sharedCache = NewCache(DefaultCacheSize)

// Len returns the number of counts held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

// Stats returns how many lookups found a count and how many did not.
func (c *Cache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

func (c *Cache) get(k uint64) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[k]; ok {
		c.hits++
		return int(v), true
	}
	if v, ok := c.old[k]; ok {
		c.hits++
		c.putLocked(k, v)
		return int(v), true
	}
	c.misses++
	return 0, false
}

func (c *Cache) put(k uint64, v int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, int32(min(v, 1<<31-1)))
}

func (c *Cache) putLocked(k uint64, v int32) {
	if len(c.cur) >= c.capacity/2 {
		c.old, c.cur = c.cur, make(map[uint64]int32, c.capacity/2)
	}
	c.cur[k] = v
}

var cacheSeed = maphash.MakeSeed()

// contentHasher hashes a sequence of fields: each field with one
// maphash.String call (the runtime's AES hash at full speed; hash/maphash's
// streaming Hash costs a call per 128 bytes), folded in order into an
// accumulator together with its length, so that field boundaries count.
type contentHasher struct {
	acc uint64
}

func (ch *contentHasher) init(scheme string) {
	ch.acc = 0x9E3779B97F4A7C15
	ch.str(scheme)
}

func (ch *contentHasher) fold(h uint64, n int) {
	ch.acc = bits.RotateLeft64(ch.acc^h, 29)*0xBF58476D1CE4E5B9 + uint64(n)
}

func (ch *contentHasher) str(s string) { ch.fold(maphash.String(cacheSeed, s), len(s)) }

func (ch *contentHasher) bytes(b []byte) { ch.fold(maphash.Bytes(cacheSeed, b), len(b)) }

func (ch *contentHasher) num(n int) { ch.fold(uint64(n), 8) }

func (ch *contentHasher) sum() uint64 {
	x := ch.acc
	x ^= x >> 31
	x *= 0x94D049BB133111EB
	return x ^ x>>29
}

// message hashes what Counter.Message reads of m. Inline image data is
// hashed by its length and first bytes only: its price depends on the
// dimensions in its header, and hashing megabytes would cost more than
// pricing it again.
func (ch *contentHasher) message(m compact.Message) {
	ch.str(string(m.Role))
	ch.str(m.Name)
	for _, id := range m.ToolCallIDs {
		ch.str(id)
	}
	for _, p := range m.Parts {
		ch.str(string(p.Type))
		ch.str(p.Text)
		ch.str(p.CallID)
		if tc := p.ToolCall; tc != nil {
			ch.str(tc.Name)
			ch.bytes(tc.Arguments)
		}
		if img := p.Image; img != nil {
			ch.str(img.URL[:min(len(img.URL), imageHeadBytes)])
			ch.str(img.MediaType)
			ch.str(img.Data[:min(len(img.Data), imageHeadBytes)])
			ch.num(len(img.URL))
			ch.num(len(img.Data))
		}
	}
}

// imageHeadBytes of an inline image's base64 are enough for the dimensions
// of PNG and GIF, and of most JPEG files.
const imageHeadBytes = 8192
