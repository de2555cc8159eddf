package ranktable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// vocabulary returns n distinct random tokens of 1 to 40 bytes, among them
// all 256 single bytes and some two-byte ones, as BPE vocabularies have.
func vocabulary(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] && len(out) < n {
			seen[s] = true
			out = append(out, s)
		}
	}
	for b := 0; b < 256; b++ {
		add(string([]byte{byte(b)}))
	}
	for len(out) < n {
		k := 2 + rng.IntN(39)
		if rng.IntN(4) == 0 {
			k = 2
		}
		p := make([]byte, k)
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		add(string(p))
	}
	return out
}

func TestBuildThenRank(t *testing.T) {
	for _, n := range []int{256, 1000, 30000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			voc := vocabulary(n, uint64(n))
			b, err := Build(voc)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := Parse(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if tab.Len() != n {
				t.Fatalf("Len = %d, want %d", tab.Len(), n)
			}
			off := tab.Offsets()
			for r, tok := range voc {
				if got := tab.Rank(tok); got != uint32(r) {
					t.Fatalf("Rank(%q) = %d, want %d", tok, got, r)
				}
				if got := tab.Data()[off[r]:off[r+1]]; got != tok {
					t.Fatalf("token %d = %q, want %q", r, got, tok)
				}
				if len(tok) == 2 && tab.Pair(tok[0], tok[1]) != uint32(r) {
					t.Fatalf("Pair(%q) = %d, want %d", tok, tab.Pair(tok[0], tok[1]), r)
				}
			}
			known := map[string]bool{}
			for _, tok := range voc {
				known[tok] = true
			}
			for _, s := range vocabulary(n+2000, 99)[256:] {
				if !known[s] && tab.Rank(s) != NoRank {
					t.Fatalf("Rank(%q) = %d for no token", s, tab.Rank(s))
				}
			}
			for a := 0; a < 256; a++ {
				for c := 0; c < 256; c++ {
					s := string([]byte{byte(a), byte(c)})
					if r := tab.Pair(byte(a), byte(c)); (r != NoRank) != known[s] {
						t.Fatalf("Pair(%q) = %d, token %t", s, r, known[s])
					}
				}
			}
		})
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	voc := vocabulary(5000, 7)
	a, err := Build(voc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Build(voc)
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of one vocabulary differ")
	}
}

func TestBuildRefuses(t *testing.T) {
	for name, voc := range map[string][]string{
		"empty":     nil,
		"duplicate": {"a", "b", "a"},
		"long":      {string(make([]byte, 256))},
		"zero":      {"a", ""},
	} {
		if _, err := Build(voc); err == nil {
			t.Errorf("%s: Build accepted %q", name, voc)
		}
	}
}

func TestParseRefusesDamage(t *testing.T) {
	good, err := Build(vocabulary(1000, 3))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("CTR1"), good[4:]...),
		"truncated": good[:len(good)/2],
		"header":    good[:headerLen-1],
		"no tokens": append(append([]byte(Magic), 0, 0, 0, 0), good[8:]...),
	} {
		if _, err := Parse(string(b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Parse error = %v, want ErrCorrupt", name, err)
		}
	}
}

func BenchmarkRank(b *testing.B) {
	voc := vocabulary(50000, 1)
	tb, err := Build(voc)
	if err != nil {
		b.Fatal(err)
	}
	tab, _ := Parse(string(tb))
	keys := vocabulary(50000+4096, 2)[50000:]
	for i := 0; i < len(keys); i += 2 {
		keys[i] = voc[i*37%len(voc)]
	}
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		if tab.Rank(keys[i&4095]) != NoRank {
			n++
		}
	}
	_ = n
}
