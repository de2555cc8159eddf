package fallback

// matcher finds many fixed phrases in one pass over a text: an
// Aho-Corasick automaton compiled to a full transition table. The cue
// words of decisions and the failure words of errors are looked for in
// every sentence and output line of a window; one table lookup per byte
// costs far less than one search per phrase.
type matcher struct {
	next [][256]uint16
	// out holds, per state, the tags of the phrases that end there (its own
	// and those of its suffixes), ORed.
	out  []uint32
	fold bool // ASCII case-insensitive
}

// newMatcher compiles phrases, each with a tag bit set (tags are ORed when
// several phrases end at one place). With fold set, phrases and text are
// compared ignoring ASCII case.
func newMatcher(fold bool, phrases map[string]uint32) *matcher {
	m := &matcher{fold: fold, next: make([][256]uint16, 1), out: make([]uint32, 1)}
	// The trie, in sorted phrase order so state numbers never depend on map
	// order.
	keys := make([]string, 0, len(phrases))
	for p := range phrases {
		keys = append(keys, p)
	}
	sortStrings(keys)
	const none = 0xFFFF
	trie := [][256]uint16{{}}
	for i := range trie[0] {
		trie[0][i] = none
	}
	for _, p := range keys {
		s := 0
		for i := 0; i < len(p); i++ {
			c := m.foldByte(p[i])
			if trie[s][c] == none {
				var row [256]uint16
				for j := range row {
					row[j] = none
				}
				trie = append(trie, row)
				m.out = append(m.out, 0)
				trie[s][c] = uint16(len(trie) - 1)
			}
			s = int(trie[s][c])
		}
		m.out[s] |= phrases[p]
	}
	// Breadth first: fail links, inherited tags and the full table.
	m.next = make([][256]uint16, len(trie))
	fail := make([]uint16, len(trie))
	queue := []uint16{}
	for c := 0; c < 256; c++ {
		if t := trie[0][c]; t != none {
			m.next[0][c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] |= m.out[fail[s]]
		for c := 0; c < 256; c++ {
			t := trie[s][c]
			if t == none {
				m.next[s][c] = m.next[fail[s]][c]
				continue
			}
			m.next[s][c] = t
			fail[t] = m.next[fail[s]][c]
			queue = append(queue, t)
		}
	}
	if fold {
		// Upper-case bytes go where their lower case goes, so matching
		// needs no folding of its own.
		for s := range m.next {
			for c := 'A'; c <= 'Z'; c++ {
				m.next[s][c] = m.next[s][c+'a'-'A']
			}
		}
	}
	return m
}

func (m *matcher) foldByte(c byte) byte {
	if m.fold && c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// tags returns the tags of every phrase found in s, ORed.
func (m *matcher) tags(s string) uint32 {
	var t uint32
	state := uint16(0)
	for i := 0; i < len(s); i++ {
		state = m.next[state][s[i]]
		t |= m.out[state]
	}
	return t
}

// each calls fn with the end offset (exclusive) and tags of every place a
// phrase ends in s.
func (m *matcher) each(s string, fn func(end int, tags uint32)) {
	state := uint16(0)
	for i := 0; i < len(s); i++ {
		state = m.next[state][s[i]]
		if t := m.out[state]; t != 0 {
			fn(i+1, t)
		}
	}
}

// sortStrings sorts in place (insertion sort: phrase lists are short).
func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
