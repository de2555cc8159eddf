package keyword

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// occurrence is one phrase found: where it starts and ends, and its id.
type occurrence struct{ start, end, id int }

// naive finds every occurrence by comparing each phrase at each offset: the
// reference the automaton must agree with.
func naive(phrases []Phrase, fold bool, s string) []occurrence {
	eq := func(a, b string) bool {
		if fold {
			return foldASCII(a) == foldASCII(b)
		}
		return a == b
	}
	var out []occurrence
	for end := 1; end <= len(s); end++ {
		var here []occurrence
		for id, p := range phrases {
			n := len(p.Text)
			if n == 0 || n > end {
				continue
			}
			if eq(s[end-n:end], p.Text) {
				here = append(here, occurrence{end - n, end, id})
			}
		}
		// Longest first, then by id (the automaton's order for phrases of
		// one length is the order they were given in).
		slices.SortStableFunc(here, func(a, b occurrence) int { return a.start - b.start })
		out = append(out, here...)
	}
	return out
}

func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}

func found(m *Matcher, s string) []occurrence {
	var out []occurrence
	m.Find(s, func(start, id int) { out = append(out, occurrence{start, start + len(m.Phrase(id).Text), id}) })
	return out
}

func TestFindAgreesWithNaive(t *testing.T) {
	// Texts of a few bytes are read in lanes too.
	defer func(n int) { laneMin = n }(laneMin)
	laneMin = 1
	testFindAgreesWithNaive(t)
	laneMin = 1 << 30
	testFindAgreesWithNaive(t)
}

// TestTrieAgreesWithNaive reads every text with the trie (no table), and
// with a table built after a few bytes: a Matcher switches forms between
// calls, its answers do not.
func TestTrieAgreesWithNaive(t *testing.T) {
	defer func(e int, a int64) { denseEager, denseAfterBytes = e, a }(denseEager, denseAfterBytes)
	denseEager, denseAfterBytes = 0, 1<<62
	t.Run("trie", testFindAgreesWithNaive)
	denseAfterBytes = 40
	t.Run("switching", testFindAgreesWithNaive)
}

// TestTableBuiltLazily shows that a large automaton reads short jobs
// without its table and builds the table once a job proves long, and that
// goroutines racing over the switch all get the same answers (go test
// -race).
func TestTableBuiltLazily(t *testing.T) {
	var words []string
	for i := range 300 {
		words = append(words, fmt.Sprintf("kw%03d_%c", i, 'a'+i%26))
	}
	m := New(Words(words), true)
	if m.dense.Load() != nil {
		t.Fatal("a 300-phrase automaton built its table in New")
	}
	m.denseAfter = 100 << 10
	text := strings.Repeat("x kw007_h y KW299_n z kw30 ", 40) // 1 KiB
	want := naive(m.phrases, true, text)
	if got := found(m, text); !equalIgnoringIDOrder(got, want) {
		t.Fatalf("trie: %v, want %v", got, want)
	}
	if m.dense.Load() != nil {
		t.Fatal("the table was built after 1 KiB")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := found(m, text); !equalIgnoringIDOrder(got, want) {
					t.Errorf("concurrent: %v, want %v", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m.dense.Load() == nil {
		t.Fatalf("no table after %d bytes read", 8*20*len(text))
	}
	if got := found(m, text); !equalIgnoringIDOrder(got, want) {
		t.Fatalf("table: %v, want %v", got, want)
	}
}

func testFindAgreesWithNaive(t *testing.T) {
	// Small alphabets make overlaps, shared prefixes and suffix chains
	// likely.
	alpha := rapid.SampledFrom([]byte("abAB-_é\x00"))
	word := rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(alpha, 0, 6).Draw(t, "w"))
	})
	rapid.Check(t, func(t *rapid.T) {
		texts := rapid.SliceOfN(word, 0, 12).Draw(t, "phrases")
		fold := rapid.Bool().Draw(t, "fold")
		phrases := make([]Phrase, len(texts))
		for i, w := range texts {
			phrases[i] = Phrase{Text: w, Tag: 1 << (i % 32)}
		}
		s := string(rapid.SliceOfN(alpha, 0, 64).Draw(t, "text"))
		m := New(phrases, fold)

		want := naive(phrases, fold, s)
		got := found(m, s)
		if !equalIgnoringIDOrder(got, want) {
			t.Fatalf("Find(%q) = %v, want %v", s, got, want)
		}
		var tags uint32
		ends := map[int]uint32{}
		for _, o := range want {
			tags |= phrases[o.id].Tag
			ends[o.end] |= phrases[o.id].Tag
		}
		if got := m.Tags(s); got != tags {
			t.Fatalf("Tags(%q) = %b, want %b", s, got, tags)
		}
		if got := m.Contains(s); got != (len(want) > 0) {
			t.Fatalf("Contains(%q) = %v with %d occurrences", s, got, len(want))
		}
		gotEnds := map[int]uint32{}
		prev := 0
		m.Ends(s, func(end int, tags uint32) {
			if end <= prev {
				t.Fatalf("Ends: %d after %d", end, prev)
			}
			prev = end
			gotEnds[end] = tags
		})
		if fmt.Sprint(gotEnds) != fmt.Sprint(ends) {
			t.Fatalf("Ends(%q) = %v, want %v", s, gotEnds, ends)
		}
	})
}

// equalIgnoringIDOrder compares occurrences ending at one byte as sets of
// (start, id), in order of their ends, longest first.
func equalIgnoringIDOrder(got, want []occurrence) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].end != want[i].end || got[i].start != want[i].start {
			return false
		}
	}
	key := func(o []occurrence) []string {
		var k []string
		for _, x := range o {
			k = append(k, fmt.Sprint(x))
		}
		slices.Sort(k)
		return k
	}
	return slices.Equal(key(got), key(want))
}

func TestExamples(t *testing.T) {
	m := New(Tagged(map[string]uint32{"he": 1, "she": 2, "his": 4, "hers": 8}), true)
	if got := m.Tags("uSHErs"); got != 1|2|8 {
		t.Errorf("Tags = %b", got)
	}
	var ends []string
	m.Ends("ushers", func(end int, tags uint32) { ends = append(ends, fmt.Sprintf("%d:%b", end, tags)) })
	if got := strings.Join(ends, " "); got != "4:11 6:1000" {
		t.Errorf("Ends = %s", got)
	}
	exact := New(Words([]string{"Key", "key"}), false)
	var ids []int
	exact.Find("a Key and a key", func(start, id int) { ids = append(ids, start, id) })
	if !slices.Equal(ids, []int{2, 0, 12, 1}) {
		t.Errorf("Find = %v", ids)
	}
	var none *Matcher
	if none.Contains("x") || none.Tags("x") != 0 || none.Len() != 0 {
		t.Error("nil Matcher found something")
	}
	if (&Matcher{}).Contains("x") {
		t.Error("zero Matcher found something")
	}
	if New(nil, true).Contains("anything") {
		t.Error("empty Matcher found something")
	}
}

// TestAllBytes builds a Matcher whose phrases use every byte value: no
// byte is left for the column of bytes outside the phrases.
func TestAllBytes(t *testing.T) {
	var words []string
	for b := 0; b < 256; b++ {
		words = append(words, string([]byte{byte(b), byte(255 - b)}))
	}
	m := New(Words(words), false)
	s := "\x00\xff\x10\xef"
	var got []int
	m.Find(s, func(start, id int) { got = append(got, start, id) })
	want := []int{0, 0, 2, 16} // "\x00\xff" and "\x10\xef"; "\xff\x10" is no phrase
	if !slices.Equal(got, want) {
		t.Errorf("Find = %v, want %v", got, want)
	}
}

func FuzzFind(f *testing.F) {
	f.Add("he\x00she\x00hers", "ushers and HIS")
	f.Add("a\x00aa\x00aaa", "aaaaab")
	laneMin = 16 // texts over 64 bytes are read in lanes
	f.Fuzz(func(t *testing.T, list, s string) {
		if len(list) > 200 || len(s) > 500 {
			return
		}
		words := strings.Split(list, "\x00")
		for _, fold := range []bool{false, true} {
			phrases := Words(words)
			want := naive(phrases, fold, s)
			if got := found(New(phrases, fold), s); !equalIgnoringIDOrder(got, want) {
				t.Fatalf("fold=%v Find(%q) = %v, want %v", fold, s, got, want)
			}
			trie := compile(phrases, fold)
			trie.denseAfter = 1 << 62
			if got := found(trie, s); !equalIgnoringIDOrder(got, want) {
				t.Fatalf("trie: fold=%v Find(%q) = %v, want %v", fold, s, got, want)
			}
		}
	})
}

func BenchmarkFind(b *testing.B) {
	words := []string{"password", "secret", "token", "key", "auth", "ghp_", "akia", "-----begin ", "://", "bearer"}
	m := New(Words(words), true)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; func main() { fmt.Println(x) }\n", 1<<14)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		n := 0
		m.Find(text, func(int, int) { n++ })
	}
}
