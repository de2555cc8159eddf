// Package keyword finds many fixed phrases in a text in one pass: an
// Aho-Corasick automaton compiled into a DFA over byte classes, so a scan
// is one table lookup per input byte whatever the number of phrases.
//
// The redactor routes its rules by their keywords with it ("ghp_",
// "password", "-----BEGIN "), and the fallback handoff builder finds cue
// words and failure phrases with it. It is written here rather than
// imported: the scan loop is a dozen lines, the available libraries either
// allocate per match or lack case folding, and both callers' speed rests on
// this loop.
//
// A Matcher reports each phrase by its id (its index in the list given to
// New) and by its tag, a bit set the caller chooses: where several phrases
// end at one place their tags are ORed, so "which groups of phrases does
// this text contain" is one pass and one OR per hit.
package keyword

import (
	"math/bits"
	"slices"
	"strings"
)

// Phrase is one string to find and the tag reported where it is found.
type Phrase struct {
	Text string
	Tag  uint32
}

// Words returns the phrases of words, each with tag 0: for callers that
// only need ids.
func Words(words []string) []Phrase {
	ps := make([]Phrase, len(words))
	for i, w := range words {
		ps[i] = Phrase{Text: w}
	}
	return ps
}

// Tagged returns the phrases of a map from text to tag, sorted by text, so
// that ids and the automaton never depend on map order.
func Tagged(m map[string]uint32) []Phrase {
	ps := make([]Phrase, 0, len(m))
	for t, tag := range m {
		ps = append(ps, Phrase{Text: t, Tag: tag})
	}
	slices.SortFunc(ps, func(a, b Phrase) int { return strings.Compare(a.Text, b.Text) })
	return ps
}

// Matcher finds the phrases it was built with. It is immutable and safe
// for concurrent use. The zero value and a nil *Matcher find nothing.
type Matcher struct {
	class [256]uint16 // input byte -> column
	shift uint        // columns per state = 1 << shift
	// delta[state<<shift|col] is the next state shifted left by shift,
	// with hitFlag set when a phrase ends in the next state.
	delta []uint32
	// out[outAt[s]:outAt[s]+outLen[s]] are the phrases ending in state s, longest
	// first: one slice for all states, so a Matcher is a few allocations.
	out     []int32
	outAt   []int32
	outLen  []int32
	tags    []uint32 // per state: their tags, ORed
	phrases []Phrase
}

const hitFlag = 1 << 31

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// New compiles phrases; phrase i is reported with id i. With fold set,
// phrases and text are compared ignoring ASCII case (other bytes,
// including those of UTF-8 sequences, compare exactly). Empty phrases are
// never reported.
func New(phrases []Phrase, fold bool) *Matcher {
	m := &Matcher{phrases: slices.Clone(phrases)}
	key := func(c byte) byte {
		if fold {
			return lowerASCII(c)
		}
		return c
	}
	// Columns: one per distinct (folded) byte of a phrase, and column 0 for
	// every other byte. A power of two, so a state's row is a shift away.
	var col [256]uint16
	ncols, size := 0, 1 // size bounds the number of states: the root and one per phrase byte
	for _, p := range phrases {
		size += len(p.Text)
		for i := 0; i < len(p.Text); i++ {
			if c := key(p.Text[i]); col[c] == 0 {
				ncols++
				col[c] = uint16(ncols)
			}
		}
	}
	m.shift = uint(bits.Len(uint(ncols))) // 1<<shift > ncols
	for b := 0; b < 256; b++ {
		m.class[b] = col[key(byte(b))]
	}
	nc := 1 << m.shift

	// The trie, as a table: trans[s*nc+c] is the child of s on column c,
	// or -1.
	trans := make([]int32, nc, nc*size)
	for c := range trans {
		trans[c] = -1
	}
	// own[s] is the first phrase whose last byte leads to s (-1: none), and
	// sameEnd[id] the next phrase with the same text.
	own := append(make([]int32, 0, size), -1)
	sameEnd := make([]int32, len(phrases))
	tags := make([]uint32, 1, size)
	for id, p := range phrases {
		if p.Text == "" {
			continue
		}
		s := 0
		for i := 0; i < len(p.Text); i++ {
			c := int(m.class[p.Text[i]])
			t := trans[s*nc+c]
			if t < 0 {
				t = int32(len(own))
				own = append(own, -1)
				tags = append(tags, 0)
				for j := 0; j < nc; j++ {
					trans = append(trans, -1)
				}
				trans[s*nc+c] = t
			}
			s = int(t)
		}
		sameEnd[id] = -1
		if own[s] < 0 {
			own[s] = int32(id)
		} else {
			last := own[s]
			for sameEnd[last] >= 0 {
				last = sameEnd[last]
			}
			sameEnd[last] = int32(id)
		}
		tags[s] |= p.Tag
	}

	// Breadth first: failure links, inherited phrases and tags, and the
	// full transition table (a missing child becomes the failure's
	// transition). A state's failure is shallower, so its list of phrases
	// is complete when the state is reached.
	n := len(own)
	fail := make([]int32, n)
	queue := make([]int32, 0, n)
	outAt := make([]int32, n)
	outLen := make([]int32, n)
	var out []int32
	for c := 0; c < nc; c++ {
		if t := trans[c]; t >= 0 {
			queue = append(queue, t)
		} else {
			trans[c] = 0
		}
	}
	for len(queue) > 0 {
		s := int(queue[0])
		queue = queue[1:]
		f := fail[s]
		outAt[s] = int32(len(out))
		for id := own[s]; id >= 0; id = sameEnd[id] {
			out = append(out, id)
		}
		out = append(out, out[outAt[f]:outAt[f]+outLen[f]]...)
		outLen[s] = int32(len(out)) - outAt[s]
		tags[s] |= tags[f]
		for c := 0; c < nc; c++ {
			f := trans[int(fail[s])*nc+c]
			if t := trans[s*nc+c]; t >= 0 {
				fail[t] = f
				queue = append(queue, t)
			} else {
				trans[s*nc+c] = f
			}
		}
	}
	m.delta = make([]uint32, len(trans))
	for i, t := range trans {
		v := uint32(t) << m.shift
		if outLen[t] > 0 {
			v |= hitFlag
		}
		m.delta[i] = v
	}
	m.out, m.outAt, m.tags = out, outAt, tags
	m.outLen = outLen
	return m
}

// Len returns the number of phrases.
func (m *Matcher) Len() int {
	if m == nil {
		return 0
	}
	return len(m.phrases)
}

// Phrase returns phrase id as given to New.
func (m *Matcher) Phrase(id int) Phrase { return m.phrases[id] }

// Find calls hit for each occurrence of a phrase in s, in order of the
// occurrences' ends (longest first where several end at one byte), with
// the occurrence's start offset and the phrase's id. Occurrences may
// overlap.
func (m *Matcher) Find(s string, hit func(start, id int)) {
	if m == nil || m.delta == nil {
		return
	}
	delta, class, shift := m.delta, &m.class, m.shift
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := delta[off|uint32(class[s[i]])]
		off = v &^ hitFlag
		if v&hitFlag != 0 {
			st := off >> shift
			for _, id := range m.out[m.outAt[st] : m.outAt[st]+m.outLen[st]] {
				hit(i+1-len(m.phrases[id].Text), int(id))
			}
		}
	}
}

// Ends calls fn for each offset of s where at least one phrase ends (the
// offset just past it), with the tags of the phrases ending there, ORed.
func (m *Matcher) Ends(s string, fn func(end int, tags uint32)) {
	if m == nil || m.delta == nil {
		return
	}
	delta, class, shift := m.delta, &m.class, m.shift
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := delta[off|uint32(class[s[i]])]
		off = v &^ hitFlag
		if v&hitFlag != 0 {
			fn(i+1, m.tags[off>>shift])
		}
	}
}

// Tags returns the tags of every phrase occurring in s, ORed.
func (m *Matcher) Tags(s string) uint32 {
	if m == nil || m.delta == nil {
		return 0
	}
	delta, class, shift := m.delta, &m.class, m.shift
	off := uint32(0)
	var t uint32
	for i := 0; i < len(s); i++ {
		v := delta[off|uint32(class[s[i]])]
		off = v &^ hitFlag
		if v&hitFlag != 0 {
			t |= m.tags[off>>shift]
		}
	}
	return t
}

// Contains reports whether a phrase occurs in s. It stops at the first.
func (m *Matcher) Contains(s string) bool {
	if m == nil || m.delta == nil {
		return false
	}
	delta, class := m.delta, &m.class
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := delta[off|uint32(class[s[i]])]
		if v&hitFlag != 0 {
			return true
		}
		off = v
	}
	return false
}
