package tokens

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"sync"
	"unicode/utf8"
)

//go:generate go run gen_ranks.go

// The BPE rank tables, written by gen_ranks.go from the tiktoken files that
// github.com/pkoukk/tiktoken-go-loader embeds. They are compiled into the
// binary: nothing is ever downloaded.
var (
	//go:embed o200k_base.ranks
	o200kRanks string
	//go:embed cl100k_base.ranks
	cl100kRanks string
)

// Names of the exact encodings.
const (
	O200kBase  = "o200k_base"  // GPT-4o, GPT-4.1, GPT-5, o-series
	Cl100kBase = "cl100k_base" // GPT-4, GPT-3.5-turbo, text-embedding-3
)

// ErrUnknownEncoding is returned (wrapped) for an encoding name compact has
// no tables for.
var ErrUnknownEncoding = errors.New("unknown encoding")

// Encoding is an exact, offline tiktoken encoding: o200k_base or
// cl100k_base. Its methods are safe for concurrent use.
//
// Counts and tokens equal tiktoken's ordinary encoding (encode_ordinary):
// special-token text such as "<|endoftext|>" is counted as plain text, as
// chat APIs do with message content. Invalid UTF-8 is read as U+FFFD, one
// per invalid byte.
type Encoding struct {
	name string
	next func(t []uint8, s string, i int) int

	data  string   // token bytes back to back, in rank order
	off   []uint32 // token r is data[off[r]:off[r+1]]
	table []uint64 // open addressing, see packEntry; 0 is empty
	mask  uint64
	seed  maphash.Seed
	// pairs holds the rank of every two-byte token, noRank for the other
	// pairs: every merge starts by ranking all adjacent byte pairs.
	pairs []uint32
}

type encodingSlot struct {
	once sync.Once
	enc  *Encoding
	err  error
}

var (
	o200kSlot  encodingSlot
	cl100kSlot encodingSlot
)

// GetEncoding returns the named encoding (O200kBase or Cl100kBase), building
// it on first use: a few milliseconds, once per process.
func GetEncoding(name string) (*Encoding, error) {
	var slot *encodingSlot
	var data string
	var next func([]uint8, string, int) int
	switch name {
	case O200kBase:
		slot, data, next = &o200kSlot, o200kRanks, nextO200k
	case Cl100kBase:
		slot, data, next = &cl100kSlot, cl100kRanks, nextCL100k
	default:
		return nil, fmt.Errorf("%w %q (known: %s, %s)", ErrUnknownEncoding, name, O200kBase, Cl100kBase)
	}
	slot.once.Do(func() {
		slot.enc, slot.err = buildEncoding(name, data, next)
	})
	return slot.enc, slot.err
}

// buildEncoding indexes the embedded rank table of one encoding.
func buildEncoding(name, data string, next func([]uint8, string, int) int) (*Encoding, error) {
	if len(data) < 8 || data[:4] != "CTR1" {
		return nil, fmt.Errorf("%s: corrupt rank table", name)
	}
	n := int(binary.LittleEndian.Uint32([]byte(data[4:8])))
	if len(data) < 8+n {
		return nil, fmt.Errorf("%s: truncated rank table", name)
	}
	lens, toks := data[8:8+n], data[8+n:]
	e := &Encoding{name: name, next: next, data: toks, off: make([]uint32, n+1), seed: maphash.MakeSeed()}
	pos := 0
	for r := 0; r < n; r++ {
		e.off[r] = uint32(pos)
		pos += int(lens[r])
	}
	e.off[n] = uint32(pos)
	if pos != len(toks) {
		return nil, fmt.Errorf("%s: rank table holds %d bytes of tokens, lengths say %d", name, len(toks), pos)
	}
	if n > 1<<rankBits || pos > 1<<offsetBits {
		return nil, fmt.Errorf("%s: %d tokens in %d bytes do not fit the index", name, n, pos)
	}
	// A table at most ~40% full keeps linear probes short.
	size := 1 << bits.Len(uint(n*2))
	e.table = make([]uint64, size)
	e.mask = uint64(size - 1)
	for r := 0; r < n; r++ {
		h := maphash.String(e.seed, e.token(uint32(r)))
		i := h & e.mask
		for e.table[i] != 0 {
			i = (i + 1) & e.mask
		}
		e.table[i] = packEntry(h, e.off[r], int(lens[r]), uint32(r))
	}
	e.pairs = make([]uint32, 1<<16)
	for i := range e.pairs {
		e.pairs[i] = noRank
	}
	for r := 0; r < n; r++ {
		if tok := e.token(uint32(r)); len(tok) == 2 {
			e.pairs[int(tok[0])<<8|int(tok[1])] = uint32(r)
		}
	}
	classes() // shared by both encodings; built here so the first count is not slower
	return e, nil
}

// Name returns the encoding's name.
func (e *Encoding) Name() string { return e.name }

// Vocabulary returns the number of mergeable tokens (special tokens aside).
func (e *Encoding) Vocabulary() int { return len(e.off) - 1 }

func (e *Encoding) token(r uint32) string { return e.data[e.off[r]:e.off[r+1]] }

// An index entry packs, from the low bits up, the token's rank, its length,
// its offset in data and the top bits of its hash: a probe compares the tag
// and the length, then the bytes, without a detour through off.
const (
	rankBits   = 18
	lenBits    = 8
	offsetBits = 21
	tagShift   = rankBits + lenBits + offsetBits
)

func packEntry(h uint64, off uint32, n int, r uint32) uint64 {
	return h>>tagShift<<tagShift | uint64(off)<<(rankBits+lenBits) | uint64(n)<<rankBits | uint64(r)
}

// rank returns the rank of the token whose bytes are p, or noRank.
func (e *Encoding) rank(p string) uint32 {
	h := maphash.String(e.seed, p)
	want := h>>tagShift<<tagShift | uint64(len(p))<<rankBits
	const match = ^uint64(0)>>tagShift<<tagShift | (1<<lenBits-1)<<rankBits
	for i := h & e.mask; ; i = (i + 1) & e.mask {
		v := e.table[i]
		if v == 0 {
			return noRank
		}
		if v&match == want {
			off := int(v>>(rankBits+lenBits)) & (1<<offsetBits - 1)
			if e.data[off:off+len(p)] == p {
				return uint32(v) & (1<<rankBits - 1)
			}
		}
	}
}

// Count returns the number of tokens in s.
func (e *Encoding) Count(s string) int {
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	t := classes()
	n := 0
	for i := 0; i < len(s); {
		j := e.next(t, s, i)
		n += e.pieceCount(s[i:j])
		i = j
	}
	return n
}

// Encode returns the tokens of s, as tiktoken's encode_ordinary does.
func (e *Encoding) Encode(s string) []int {
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	t := classes()
	out := make([]int, 0, len(s)/3+1)
	for i := 0; i < len(s); {
		j := e.next(t, s, i)
		p := s[i:j]
		if r := e.rank(p); r != noRank {
			out = append(out, int(r))
		} else {
			_, out = e.merge(p, out)
		}
		i = j
	}
	return out
}

// Decode returns the text of tokens. Tokens outside the vocabulary (special
// tokens among them) are skipped. A token sequence cut inside a multi-byte
// rune decodes to invalid UTF-8, as tiktoken's decode_bytes does.
func (e *Encoding) Decode(tokens []int) string {
	var b []byte
	for _, r := range tokens {
		if r >= 0 && r < e.Vocabulary() {
			b = append(b, e.token(uint32(r))...)
		}
	}
	return string(b)
}

func (e *Encoding) pieceCount(p string) int {
	switch {
	case len(p) == 1:
		return 1
	case len(p) == 2:
		if e.pairs[int(p[0])<<8|int(p[1])] != noRank {
			return 1
		}
		return 2
	case e.rank(p) != noRank:
		return 1
	}
	n, _ := e.merge(p, nil)
	return n
}

// validUTF8 replaces each invalid byte of s by U+FFFD, as a conversion to
// []rune does (and so as tiktoken-go and its regex engine read such text).
func validUTF8(s string) string {
	return string([]rune(s))
}
