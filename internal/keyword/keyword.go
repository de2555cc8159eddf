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
	"sync"
	"sync/atomic"
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
//
// A Matcher has two forms of one automaton. The trie with failure links
// (sparse: a few words per phrase byte) is built by New and reads texts
// until the Matcher has read denseAfter bytes; then the full transition
// table (dense: one word per state and byte class, 390 KB for the
// redactor's keywords) is built once and reads everything after. A short
// job (a command on a few bytes) never pays for the table; a long one
// pays for it once, after reading a few times what building it costs.
// Small automata get their table at once.
type Matcher struct {
	class [256]uint16 // input byte -> column
	shift uint        // columns per state = 1 << shift

	// The trie: state s's children are first[s], then sibling[child] on,
	// each entered on column col[child]; root[c] is the root's move on
	// column c, complete (0 where no phrase starts so). fail[s] is the
	// state of the longest proper suffix of s's path that is a trie path.
	first, sibling, fail []int32
	col                  []uint16
	root                 []int32
	// rows are complete moves (failures followed) of the states with many
	// children: the root's children, mostly, where a text's bytes usually
	// lead. rowOf[s] is state s's row, or -1.
	rows  []int32
	rowOf []int32

	dense     atomic.Pointer[denseTable]
	denseOnce sync.Once
	// scanned counts the bytes read without the table (up to denseAfter).
	scanned    atomic.Int64
	denseAfter int64

	// out[outAt[s]:outAt[s]+outLen[s]] are the phrases ending in state s, longest
	// first: one slice for all states, so a Matcher is a few allocations.
	out     []int32
	outAt   []int32
	outLen  []int32
	tags    []uint32 // per state: their tags, ORed
	phrases []Phrase
	maxLen  int // the longest phrase's length
}

// denseTable is the automaton as a table: delta[state<<shift|col] is the
// next state shifted left by shift, with hitFlag set when a phrase ends in
// the next state.
type denseTable struct{ delta []uint32 }

const hitFlag = 1 << 31

// Tuning of the lazy table (variables for tests): an automaton whose table
// has at most denseEager entries gets it in New; a larger one after
// reading denseAfterBytes without it. With rows for its busiest states the
// trie reads ordinary text at about three quarters of the table's speed
// (redactor keywords: ~340 vs ~450 MB/s); building the redactor's table
// (1,523 states x 64 columns, 390 KB) costs about 0.5 ms, what the trie
// loses against the table over a few hundred KiB.
var (
	denseEager      = 1 << 14
	denseAfterBytes = int64(256 << 10)
)

// rowChildren is the fewest children that get a state a row in the trie.
const rowChildren = 4

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
	m := compile(phrases, fold)
	if len(m.first)<<m.shift <= denseEager {
		m.buildDense()
	}
	return m
}

// compile builds the trie of phrases.
func compile(phrases []Phrase, fold bool) *Matcher {
	m := &Matcher{phrases: slices.Clone(phrases), denseAfter: denseAfterBytes}
	key := func(c byte) byte {
		if fold {
			return lowerASCII(c)
		}
		return c
	}
	// Columns: one per distinct (folded) byte of a phrase, and column 0 for
	// every other byte. A power of two, so a state's row is a shift away.
	var colOf [256]uint16
	ncols, size := 0, 1 // size bounds the number of states: the root and one per phrase byte
	for _, p := range phrases {
		size += len(p.Text)
		m.maxLen = max(m.maxLen, len(p.Text))
		for i := 0; i < len(p.Text); i++ {
			if c := key(p.Text[i]); colOf[c] == 0 {
				ncols++
				colOf[c] = uint16(ncols)
			}
		}
	}
	m.shift = uint(bits.Len(uint(ncols))) // 1<<shift > ncols
	for b := 0; b < 256; b++ {
		m.class[b] = colOf[key(byte(b))]
	}
	nc := 1 << m.shift

	// The trie. own[s] is the first phrase whose last byte leads to s (-1:
	// none), and sameEnd[id] the next phrase with the same text.
	m.root = make([]int32, nc)
	first := append(make([]int32, 0, size), -1)
	sibling := append(make([]int32, 0, size), -1)
	col := append(make([]uint16, 0, size), 0)
	own := append(make([]int32, 0, size), -1)
	tags := append(make([]uint32, 0, size), 0)
	sameEnd := make([]int32, len(phrases))
	child := func(s int, c uint16) int32 {
		if s == 0 {
			if t := m.root[c]; t > 0 {
				return t
			}
			return -1
		}
		for t := first[s]; t >= 0; t = sibling[t] {
			if col[t] == c {
				return t
			}
		}
		return -1
	}
	for id, p := range phrases {
		if p.Text == "" {
			continue
		}
		s := 0
		for i := 0; i < len(p.Text); i++ {
			c := m.class[p.Text[i]]
			t := child(s, c)
			if t < 0 {
				t = int32(len(own))
				own = append(own, -1)
				tags = append(tags, 0)
				col = append(col, c)
				first = append(first, -1)
				sibling = append(sibling, first[s])
				first[s] = t
				if s == 0 {
					m.root[c] = t
				}
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
	m.first, m.sibling, m.col = first, sibling, col

	// Breadth first: failure links, inherited phrases and tags. A state's
	// failure is shallower, so its list of phrases is complete when the
	// state is reached.
	n := len(own)
	m.fail = make([]int32, n)
	m.rowOf = make([]int32, n)
	for s := range m.rowOf {
		m.rowOf[s] = -1
	}
	outAt := make([]int32, n)
	outLen := make([]int32, n)
	var out []int32
	m.breadthFirst(func(s int32) {
		f := m.fail[s]
		outAt[s] = int32(len(out))
		for id := own[s]; id >= 0; id = sameEnd[id] {
			out = append(out, id)
		}
		if s != 0 {
			out = append(out, out[outAt[f]:outAt[f]+outLen[f]]...)
			tags[s] |= tags[f]
		}
		outLen[s] = int32(len(out)) - outAt[s]
		for t := first[s]; t >= 0; t = sibling[t] {
			if s != 0 {
				m.fail[t] = m.next(f, col[t])
			}
		}
	})
	m.out, m.outAt, m.outLen, m.tags = out, outAt, outLen, tags

	// Rows for states of many children, parents first, so that a row's
	// failure moves are there when it is filled.
	m.breadthFirst(func(s int32) {
		if s == 0 {
			return
		}
		k := 0
		for t := first[s]; t >= 0 && k < rowChildren; t = sibling[t] {
			k++
		}
		if k < rowChildren {
			return
		}
		row := make([]int32, nc)
		for c := range row {
			row[c] = m.next(m.fail[s], uint16(c))
		}
		for t := first[s]; t >= 0; t = sibling[t] {
			row[col[t]] = t
		}
		m.rowOf[s] = int32(len(m.rows) >> m.shift)
		m.rows = append(m.rows, row...)
	})
	return m
}

// breadthFirst calls fn for each state, the root first, parents before
// children.
func (m *Matcher) breadthFirst(fn func(s int32)) {
	queue := make([]int32, 1, len(m.first))
	for i := 0; i < len(queue); i++ {
		s := queue[i]
		fn(s)
		for t := m.first[s]; t >= 0; t = m.sibling[t] {
			queue = append(queue, t)
		}
	}
}

// next is the trie's move from state s on column c.
func (m *Matcher) next(s int32, c uint16) int32 {
	for s != 0 {
		if r := m.rowOf[s]; r >= 0 {
			return m.rows[int(r)<<m.shift|int(c)]
		}
		for t := m.first[s]; t >= 0; t = m.sibling[t] {
			if m.col[t] == c {
				return t
			}
		}
		s = m.fail[s]
	}
	return m.root[c]
}

// buildDense builds the transition table, once.
func (m *Matcher) buildDense() {
	m.denseOnce.Do(func() {
		nc := 1 << m.shift
		// State ids first: a missing child's move is its failure's, whose
		// row is complete when a state is reached.
		delta := make([]uint32, len(m.first)*nc)
		for c, t := range m.root {
			delta[c] = uint32(t)
		}
		m.breadthFirst(func(s int32) {
			if s != 0 {
				copy(delta[int(s)*nc:int(s+1)*nc], delta[int(m.fail[s])*nc:])
			}
			for t := m.first[s]; t >= 0; t = m.sibling[t] {
				delta[int(s)*nc+int(m.col[t])] = uint32(t)
			}
		})
		for i, t := range delta {
			v := t << m.shift
			if m.outLen[t] > 0 {
				v |= hitFlag
			}
			delta[i] = v
		}
		m.dense.Store(&denseTable{delta: delta})
	})
}

// table returns the transition table, building it if the Matcher has now
// read enough without it, or nil: read n bytes with the trie.
func (m *Matcher) table(n int) []uint32 {
	if d := m.dense.Load(); d != nil {
		return d.delta
	}
	if m.scanned.Add(int64(n)) < m.denseAfter {
		return nil
	}
	m.buildDense()
	return m.dense.Load().delta
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
	if m == nil || m.first == nil {
		return
	}
	delta := m.table(len(s))
	switch {
	case delta == nil:
		st := int32(0)
		for i := 0; i < len(s); i++ {
			if st = m.next(st, m.class[s[i]]); m.outLen[st] > 0 {
				m.hits(uint32(st), i, hit)
			}
		}
	case len(s) < lanes*laneMin:
		m.findRange(delta, s, 0, 0, len(s), hit)
	default:
		m.findLanes(delta, s, hit)
	}
}

// findRange calls hit for the occurrences that end in s[from:to], reading
// s from start (start <= from) in state 0.
func (m *Matcher) findRange(delta []uint32, s string, start, from, to int, hit func(start, id int)) {
	class, shift := &m.class, m.shift
	off := uint32(0)
	for i := start; i < to; i++ {
		v := delta[off|uint32(class[s[i]])]
		off = v &^ hitFlag
		if v&hitFlag != 0 && i >= from {
			m.hits(off>>shift, i, hit)
		}
	}
}

func (m *Matcher) hits(st uint32, i int, hit func(start, id int)) {
	for _, id := range m.out[m.outAt[st] : m.outAt[st]+m.outLen[st]] {
		hit(i+1-len(m.phrases[id].Text), int(id))
	}
}

// A long text is read as lanes stretches, one automaton step of each in
// turn: the steps of one stretch depend on each other (each is a table
// lookup at the state the last one gave), those of different stretches do
// not, so the processor overlaps their lookups instead of waiting for
// each. The automaton's state after a byte depends only on the last
// maxLen bytes read (its state is the longest suffix of them that begins
// a phrase), so a stretch read from maxLen bytes before its own start is
// in the state one long scan would be in by then, and reports exactly
// the occurrences that end in it. Hits of the later stretches wait in a
// buffer so that hit still sees every occurrence in order.
const lanes = 4

// laneMin is the shortest stretch worth a lane (a variable for tests).
var laneMin = 128

type laneHit struct {
	i  int
	st uint32
}

func (m *Matcher) findLanes(delta []uint32, s string, hit func(start, id int)) {
	class, shift := &m.class, m.shift
	maxLen := m.maxLen
	var from, start, end [lanes]int
	for k := range lanes {
		from[k] = k * len(s) / lanes
		start[k] = max(0, from[k]-maxLen)
		end[k] = (k + 1) * len(s) / lanes
	}
	// Every lane takes n steps together; then each finishes on its own.
	n := end[0] - start[0]
	for k := range lanes {
		n = min(n, end[k]-start[k])
	}
	var buf [lanes][]laneHit
	var o0, o1, o2, o3 uint32
	i0, i1, i2, i3 := start[0], start[1], start[2], start[3]
	for j := 0; j < n; j++ {
		v0 := delta[o0|uint32(class[s[i0]])]
		v1 := delta[o1|uint32(class[s[i1]])]
		v2 := delta[o2|uint32(class[s[i2]])]
		v3 := delta[o3|uint32(class[s[i3]])]
		o0, o1, o2, o3 = v0&^hitFlag, v1&^hitFlag, v2&^hitFlag, v3&^hitFlag
		if (v0|v1|v2|v3)&hitFlag != 0 {
			if v0&hitFlag != 0 {
				m.hits(o0>>shift, i0, hit)
			}
			if v1&hitFlag != 0 && i1 >= from[1] {
				buf[1] = append(buf[1], laneHit{i1, o1 >> shift})
			}
			if v2&hitFlag != 0 && i2 >= from[2] {
				buf[2] = append(buf[2], laneHit{i2, o2 >> shift})
			}
			if v3&hitFlag != 0 && i3 >= from[3] {
				buf[3] = append(buf[3], laneHit{i3, o3 >> shift})
			}
		}
		i0, i1, i2, i3 = i0+1, i1+1, i2+1, i3+1
	}
	offs := [lanes]uint32{o0, o1, o2, o3}
	at := [lanes]int{i0, i1, i2, i3}
	for k := range lanes {
		for _, h := range buf[k] {
			m.hits(h.st, h.i, hit)
		}
		off := offs[k]
		for i := at[k]; i < end[k]; i++ {
			v := delta[off|uint32(class[s[i]])]
			off = v &^ hitFlag
			if v&hitFlag != 0 && i >= from[k] {
				m.hits(off>>shift, i, hit)
			}
		}
	}
}

// Ends calls fn for each offset of s where at least one phrase ends (the
// offset just past it), with the tags of the phrases ending there, ORed.
func (m *Matcher) Ends(s string, fn func(end int, tags uint32)) {
	if m == nil || m.first == nil {
		return
	}
	delta := m.table(len(s))
	if delta == nil {
		st := int32(0)
		for i := 0; i < len(s); i++ {
			if st = m.next(st, m.class[s[i]]); m.outLen[st] > 0 {
				fn(i+1, m.tags[st])
			}
		}
		return
	}
	class, shift := &m.class, m.shift
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
	if m == nil || m.first == nil {
		return 0
	}
	var t uint32
	delta := m.table(len(s))
	if delta == nil {
		st := int32(0)
		for i := 0; i < len(s); i++ {
			st = m.next(st, m.class[s[i]])
			t |= m.tags[st]
		}
		return t
	}
	class, shift := &m.class, m.shift
	off := uint32(0)
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
	if m == nil || m.first == nil {
		return false
	}
	delta := m.table(len(s))
	if delta == nil {
		st := int32(0)
		for i := 0; i < len(s); i++ {
			if st = m.next(st, m.class[s[i]]); m.outLen[st] > 0 {
				return true
			}
		}
		return false
	}
	class := &m.class
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
