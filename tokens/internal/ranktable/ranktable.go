// Package ranktable is the layout of the BPE rank tables package tokens
// embeds: written once by Build (at go generate time), read in place by
// Parse and Rank with no building at run time.
//
// A table maps every token of an encoding (a byte string) to its rank
// through a minimal perfect hash laid out when the table is generated
// (PTHash: keys fall into buckets, each bucket has a 16-bit pilot chosen so
// that its keys land on free slots). Looking a string up hashes it once,
// reads its bucket's pilot and one 8-byte slot, and compares the bytes: one
// slot per lookup whatever the input, so no input can make lookups slow.
// Loading a table is slicing the embedded string: the pages of the table
// that lookups touch are mapped from the binary as they are touched, and
// the heap holds nothing.
//
// Layout (integers little endian):
//
//	"CTR2"
//	n      uint32     tokens (ranks 0..n-1)
//	nb     uint32     buckets
//	m      uint32     slots (m >= n; the free ones are 0)
//	seed   uint64     the hash seed Build settled on
//	maxLen uint32     the longest token, in bytes
//	pad    uint32
//	slots  [m]uint64  see packSlot
//	pairs  [65536]uint32  the rank of each two-byte token, NoRank elsewhere
//	pilots [nb]uint16
//	lens   [n]uint8   token lengths in rank order
//	data   the tokens' bytes back to back, in rank order
package ranktable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Magic opens every table.
const Magic = "CTR2"

// NoRank is what Rank returns for a string that is no token.
const NoRank = ^uint32(0)

const headerLen = 32

// A slot packs, from the low bits up, the token's rank, its length, its
// offset in data and a tag of its hash, so that a lookup rejects almost
// every non-token on the slot alone and compares bytes only on a match.
const (
	rankBits   = 18
	lenBits    = 8
	offsetBits = 21
	tagShift   = rankBits + lenBits + offsetBits
	tagBits    = 64 - tagShift

	// MaxTokens and MaxData bound what a table can index.
	MaxTokens = 1 << rankBits
	MaxData   = 1 << offsetBits
)

func packSlot(h uint64, off uint32, n int, r uint32) uint64 {
	return (h&(1<<tagBits-1))<<tagShift | uint64(off)<<(rankBits+lenBits) | uint64(n)<<rankBits | uint64(r)
}

// Table is a parsed rank table. Its methods only read the bytes it was
// parsed from, so it is safe for concurrent use.
type Table struct {
	n, maxLen int
	nb, m     uint64
	seed      uint64
	slots     string
	pairs     string
	pilots    string
	lens      string
	data      string
}

// ErrCorrupt is returned (wrapped) by Parse for bytes that are not a table.
var ErrCorrupt = errors.New("corrupt rank table")

// Parse reads a table in place: it checks the header and the sizes of the
// sections, and copies nothing.
func Parse(b string) (*Table, error) {
	if len(b) < headerLen || b[:4] != Magic {
		return nil, fmt.Errorf("%w: no %s header", ErrCorrupt, Magic)
	}
	t := &Table{
		n:      int(le32(b, 4)),
		nb:     uint64(le32(b, 8)),
		m:      uint64(le32(b, 12)),
		seed:   le64(b, 16),
		maxLen: int(le32(b, 24)),
	}
	fixed := uint64(headerLen) + 8*t.m + 4*(1<<16) + 2*t.nb + uint64(t.n)
	switch {
	case t.n == 0 || t.n > MaxTokens || t.nb == 0 || t.m < uint64(t.n) || t.maxLen > 1<<lenBits-1:
		return nil, fmt.Errorf("%w: header says %d tokens, %d buckets, %d slots, longest %d", ErrCorrupt, t.n, t.nb, t.m, t.maxLen)
	case uint64(len(b)) < fixed || uint64(len(b))-fixed > MaxData:
		return nil, fmt.Errorf("%w: %d bytes do not fit the header's sizes", ErrCorrupt, len(b))
	}
	at := uint64(headerLen)
	cut := func(n uint64) string {
		s := b[at : at+n]
		at += n
		return s
	}
	t.slots = cut(8 * t.m)
	t.pairs = cut(4 << 16)
	t.pilots = cut(2 * t.nb)
	t.lens = cut(uint64(t.n))
	t.data = b[at:]
	return t, nil
}

// Len returns the number of tokens.
func (t *Table) Len() int { return t.n }

// Rank returns the rank of the token whose bytes are p, or NoRank.
func (t *Table) Rank(p string) uint32 {
	if len(p) > t.maxLen || len(p) == 0 {
		return NoRank
	}
	h := hash(p, t.seed)
	v := le64(t.slots, 8*int(t.slot(h)))
	const match = (1<<tagBits-1)<<tagShift | (1<<lenBits-1)<<rankBits
	if v&match != (h&(1<<tagBits-1))<<tagShift|uint64(len(p))<<rankBits {
		return NoRank
	}
	off := int(v>>(rankBits+lenBits)) & (1<<offsetBits - 1)
	if t.data[off:off+len(p)] != p {
		return NoRank
	}
	return uint32(v) & (1<<rankBits - 1)
}

// Pair returns the rank of the two-byte token ab, or NoRank.
func (t *Table) Pair(a, b byte) uint32 { return le32(t.pairs, 4*(int(a)<<8|int(b))) }

// Offsets returns where each token starts in Data, with a last entry for
// the end: token r is Data()[off[r]:off[r+1]]. It allocates; callers that
// decode keep the result.
func (t *Table) Offsets() []uint32 {
	off := make([]uint32, t.n+1)
	pos := uint32(0)
	for r := 0; r < t.n; r++ {
		off[r] = pos
		pos += uint32(t.lens[r])
	}
	off[t.n] = pos
	return off
}

// Data returns the tokens' bytes back to back, in rank order.
func (t *Table) Data() string { return t.data }

// slot returns the slot of a key of hash h: its bucket's pilot moves it.
func (t *Table) slot(h uint64) uint64 {
	b := fastrange(h, t.nb)
	return place(h, uint64(le16(t.pilots, 2*int(b))), t.m)
}

// place returns where a key of hash h lands under pilot p. The pilot is
// mixed in before the high bits are taken, so that keys of one bucket
// (which share the high bits of h) spread over all slots.
func place(h, p, m uint64) uint64 {
	x := h ^ (p+1)*0x9e3779b97f4a7c15
	x ^= x >> 32
	x *= 0xd6e8feb86659fd93
	x ^= x >> 32
	return fastrange(x, m)
}

// fastrange maps x onto [0, n) by its high bits.
func fastrange(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// hash is wyhash (final version 4) over s: fixed, so that the slots laid
// out at generate time hold at run time. A fixed hash cannot be turned
// against the table: every lookup reads one slot.
func hash(s string, seed uint64) uint64 {
	const (
		p0 = 0xa0761d6478bd642f
		p1 = 0xe7037ed1a0b428db
		p2 = 0x8ebc6af09c88c6e3
		p3 = 0x589965cc75374cc3
	)
	n := len(s)
	seed ^= mix(seed^p0, p1)
	var a, b uint64
	switch {
	case n == 0:
	case n < 4:
		a = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	case n <= 16:
		q := (n >> 3) << 2
		a = uint64(le32(s, 0))<<32 | uint64(le32(s, q))
		b = uint64(le32(s, n-4))<<32 | uint64(le32(s, n-4-q))
	default:
		i := 0
		for ; n-i > 16; i += 16 {
			seed = mix(le64(s, i)^p1, le64(s, i+8)^seed)
		}
		a, b = le64(s, n-16), le64(s, n-8)
	}
	a ^= p1
	b ^= seed
	hi, lo := bits.Mul64(a, b)
	return mix(lo^p0^uint64(n), hi^p1)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// The loads below read from strings; the compiler fuses each into one
// load.
func le16(s string, i int) uint16 {
	s = s[i : i+2]
	return uint16(s[0]) | uint16(s[1])<<8
}

func le32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func le64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Build lays out the table of the tokens byRank (token r is byRank[r]):
// it is what go generate runs. It is deterministic: the same tokens give
// the same bytes.
func Build(byRank []string) ([]byte, error) {
	n := len(byRank)
	if n == 0 || n > MaxTokens {
		return nil, fmt.Errorf("%d tokens: want 1 to %d", n, MaxTokens)
	}
	maxLen, size := 0, 0
	seen := make(map[string]bool, n)
	for r, tok := range byRank {
		if len(tok) == 0 || len(tok) > 1<<lenBits-1 {
			return nil, fmt.Errorf("token of rank %d has length %d", r, len(tok))
		}
		if seen[tok] {
			return nil, fmt.Errorf("token %q of rank %d appears twice", tok, r)
		}
		seen[tok] = true
		maxLen, size = max(maxLen, len(tok)), size+len(tok)
	}
	if size > MaxData {
		return nil, fmt.Errorf("%d bytes of tokens do not fit the %d bytes slots can address", size, MaxData)
	}
	// About four keys a bucket and 3% of the slots free keep every pilot
	// search short.
	nb := uint64(max(1, n/4))
	m := uint64(n + n/32 + 1)
	for seed := uint64(0); seed < 64; seed++ {
		pilots, slots, ok := layout(byRank, seed, nb, m)
		if !ok {
			continue
		}
		return encode(byRank, seed, nb, m, maxLen, pilots, slots), nil
	}
	return nil, errors.New("no seed gives every bucket a pilot")
}

// layout assigns pilots to buckets, largest buckets first, and returns the
// pilots and, for each slot, the rank it holds plus one (0 = free).
func layout(byRank []string, seed, nb, m uint64) ([]uint16, []uint32, bool) {
	hashes := make([]uint64, len(byRank))
	buckets := make([][]uint32, nb)
	for r, tok := range byRank {
		h := hash(tok, seed)
		hashes[r] = h
		b := fastrange(h, nb)
		buckets[b] = append(buckets[b], uint32(r))
	}
	order := make([]int, nb)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(buckets[b]) - len(buckets[a]) })
	pilots := make([]uint16, nb)
	slots := make([]uint32, m)
	var tried []uint64
	for _, b := range order {
		keys := buckets[b]
		if len(keys) == 0 {
			break
		}
		found := false
	pilot:
		for p := uint64(0); p < 1<<16; p++ {
			tried = tried[:0]
			for _, r := range keys {
				s := place(hashes[r], p, m)
				if slots[s] != 0 || slices.Contains(tried, s) {
					continue pilot
				}
				tried = append(tried, s)
			}
			for i, r := range keys {
				slots[tried[i]] = r + 1
			}
			pilots[b] = uint16(p)
			found = true
			break
		}
		if !found {
			return nil, nil, false
		}
	}
	return pilots, slots, true
}

func encode(byRank []string, seed, nb, m uint64, maxLen int, pilots []uint16, slots []uint32) []byte {
	le := binary.LittleEndian
	out := []byte(Magic)
	out = le.AppendUint32(out, uint32(len(byRank)))
	out = le.AppendUint32(out, uint32(nb))
	out = le.AppendUint32(out, uint32(m))
	out = le.AppendUint64(out, seed)
	out = le.AppendUint32(out, uint32(maxLen))
	out = le.AppendUint32(out, 0)
	offs := make([]uint32, len(byRank))
	pos := uint32(0)
	for r, tok := range byRank {
		offs[r] = pos
		pos += uint32(len(tok))
	}
	for _, s := range slots {
		var v uint64
		if s != 0 {
			r := s - 1
			v = packSlot(hash(byRank[r], seed), offs[r], len(byRank[r]), r)
		}
		out = le.AppendUint64(out, v)
	}
	pairs := make([]uint32, 1<<16)
	for i := range pairs {
		pairs[i] = NoRank
	}
	for r, tok := range byRank {
		if len(tok) == 2 {
			pairs[int(tok[0])<<8|int(tok[1])] = uint32(r)
		}
	}
	for _, p := range pairs {
		out = le.AppendUint32(out, p)
	}
	for _, p := range pilots {
		out = le.AppendUint16(out, p)
	}
	for _, tok := range byRank {
		out = append(out, byte(len(tok)))
	}
	for _, tok := range byRank {
		out = append(out, tok...)
	}
	return out
}
