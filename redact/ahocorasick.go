package redact

// keywordSet finds every occurrence of a set of keywords in one pass, ASCII
// case-insensitively: an Aho-Corasick automaton compiled into a DFA over
// byte classes, so the scan is one table lookup per input byte.
//
// Written here rather than imported: the scan loop is a dozen lines, the
// available libraries either allocate per match or lack case folding, and
// the redactor's speed rests on this loop.
type keywordSet struct {
	class [256]uint8 // input byte -> column
	ncol  uint32
	// delta[state*ncol+col] is the next state times ncol, with hitFlag set
	// when the next state ends at least one keyword.
	delta []uint32
	outs  [][]int32 // per state: the keywords ending there
	lens  []int     // keyword lengths
}

const hitFlag = 1 << 31

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// newKeywordSet compiles the keywords. Keyword i is reported as i.
func newKeywordSet(keywords []string) *keywordSet {
	k := &keywordSet{lens: make([]int, len(keywords))}
	// Columns: one per distinct (lowercased) byte used by a keyword, plus
	// column 0 for every other byte.
	var col [256]uint8
	n := uint8(0)
	for _, w := range keywords {
		for i := 0; i < len(w); i++ {
			c := lowerASCII(w[i])
			if col[c] == 0 {
				n++
				col[c] = n
			}
		}
	}
	k.ncol = uint32(n) + 1
	for b := 0; b < 256; b++ {
		k.class[b] = col[lowerASCII(byte(b))]
	}

	// Trie.
	type node struct {
		next map[uint8]int
		out  []int32
	}
	nodes := []node{{next: map[uint8]int{}}}
	for id, w := range keywords {
		k.lens[id] = len(w)
		s := 0
		for i := 0; i < len(w); i++ {
			c := k.class[w[i]]
			t, ok := nodes[s].next[c]
			if !ok {
				t = len(nodes)
				nodes = append(nodes, node{next: map[uint8]int{}})
				nodes[s].next[c] = t
			}
			s = t
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}

	// Breadth-first: failure links, inherited outputs and the full
	// transition table.
	nc := int(k.ncol)
	trans := make([]int, len(nodes)*nc)
	fail := make([]int, len(nodes))
	queue := make([]int, 0, len(nodes))
	for c := 0; c < nc; c++ {
		if t, ok := nodes[0].next[uint8(c)]; ok {
			trans[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		nodes[s].out = append(nodes[s].out, nodes[fail[s]].out...)
		for c := 0; c < nc; c++ {
			if t, ok := nodes[s].next[uint8(c)]; ok {
				fail[t] = trans[fail[s]*nc+c]
				trans[s*nc+c] = t
				queue = append(queue, t)
			} else {
				trans[s*nc+c] = trans[fail[s]*nc+c]
			}
		}
	}
	k.delta = make([]uint32, len(trans))
	k.outs = make([][]int32, len(nodes))
	for s := range nodes {
		k.outs[s] = nodes[s].out
	}
	for i, t := range trans {
		v := uint32(t) * k.ncol
		if len(nodes[t].out) > 0 {
			v |= hitFlag
		}
		k.delta[i] = v
	}
	return k
}

// scan calls hit for each keyword occurrence in s, in order of its end, with
// the keyword's start offset and id.
func (k *keywordSet) scan(s string, hit func(start int, id int32)) {
	delta, class, ncol := k.delta, &k.class, k.ncol
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := delta[off+uint32(class[s[i]])]
		off = v &^ hitFlag
		if v&hitFlag != 0 {
			for _, id := range k.outs[off/ncol] {
				hit(i+1-k.lens[id], id)
			}
		}
	}
}
