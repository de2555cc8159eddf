package tokens

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/compactkit/compact/tokens/internal/ranktable"
)

//go:generate go run gen_ranks.go

// The BPE rank tables, written by gen_ranks.go from the tiktoken files that
// github.com/pkoukk/tiktoken-go-loader embeds and laid out for lookups in
// place (package ranktable). They are compiled into the binary: nothing is
// ever downloaded, and nothing is built from them at run time.
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
	name  string
	next  func(t []uint8, s string, i int) int
	table *ranktable.Table // read in place from the embedded bytes

	offOnce sync.Once
	off     []uint32 // token r is table.Data()[off[r]:off[r+1]]; for Decode
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

// GetEncoding returns the named encoding (O200kBase or Cl100kBase). The
// rank tables were laid out when compact was built: getting an encoding
// reads their header and allocates nothing else, and counting maps in only
// the pages of the table it touches.
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
		slot.enc, slot.err = loadEncoding(name, data, next)
	})
	return slot.enc, slot.err
}

// loadEncoding reads the embedded rank table of one encoding in place.
func loadEncoding(name, data string, next func([]uint8, string, int) int) (*Encoding, error) {
	t, err := ranktable.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Encoding{name: name, next: next, table: t}, nil
}

// Name returns the encoding's name.
func (e *Encoding) Name() string { return e.name }

// Vocabulary returns the number of mergeable tokens (special tokens aside).
func (e *Encoding) Vocabulary() int { return e.table.Len() }

// token returns the bytes of the token of rank r (r < Vocabulary()).
func (e *Encoding) token(r uint32) string {
	e.offOnce.Do(func() { e.off = e.table.Offsets() })
	return e.table.Data()[e.off[r]:e.off[r+1]]
}

// rank returns the rank of the token whose bytes are p, or noRank.
func (e *Encoding) rank(p string) uint32 { return e.table.Rank(p) }

// pair returns the rank of the two-byte token ab, or noRank.
func (e *Encoding) pair(a, b byte) uint32 { return e.table.Pair(a, b) }

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
		if e.pair(p[0], p[1]) != noRank {
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
