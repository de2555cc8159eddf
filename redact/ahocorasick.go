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
	ncols := uint8(0)
	for _, w := range keywords {
		for i := 0; i < len(w); i++ {
			c := lowerASCII(w[i])
			if col[c] == 0 {
				ncols++
				col[c] = ncols
			}
		}
	}
	k.ncol = uint32(ncols) + 1
	for b := 0; b < 256; b++ {
		k.class[b] = col[lowerASCII(byte(b))]
	}

	// Trie, as a table: trans[s*nc+c] is the child of s on column c, or -1.
	nc := int(k.ncol)
	trans := make([]int32, nc, nc*8*len(keywords)+nc)
	for c := range trans {
		trans[c] = -1
	}
	var outs [][]int32
	outs = append(outs, nil)
	for id, w := range keywords {
		k.lens[id] = len(w)
		s := 0
		for i := 0; i < len(w); i++ {
			c := int(k.class[w[i]])
			t := trans[s*nc+c]
			if t < 0 {
				t = int32(len(outs))
				outs = append(outs, nil)
				for j := 0; j < nc; j++ {
					trans = append(trans, -1)
				}
				trans[s*nc+c] = t
			}
			s = int(t)
		}
		outs[s] = append(outs[s], int32(id))
	}

	// Breadth-first: failure links, inherited outputs and the full
	// transition table (missing children become the failure's transition).
	n := len(outs)
	fail := make([]int32, n)
	queue := make([]int32, 0, n)
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
		if f := fail[s]; len(outs[f]) > 0 {
			outs[s] = append(outs[s][:len(outs[s]):len(outs[s])], outs[f]...)
		}
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
	k.delta = make([]uint32, len(trans))
	k.outs = outs
	for i, t := range trans {
		v := uint32(t) * k.ncol
		if len(outs[t]) > 0 {
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

// any reports whether s contains a keyword.
func (k *keywordSet) any(s string) bool {
	delta, class := k.delta, &k.class
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := delta[off+uint32(class[s[i]])]
		if v&hitFlag != 0 {
			return true
		}
		off = v
	}
	return false
}
