package tokens

import "github.com/compactkit/compact/tokens/internal/ranktable"

// noRank marks a pair of parts that is no token.
const noRank = ranktable.NoRank

// smallPiece is the longest piece merged with the quadratic scan tiktoken
// uses; longer pieces (long runs of one character, blobs) go through a heap
// so that counting stays linear-logarithmic on hostile input.
const smallPiece = 128

type bpePart struct {
	start int32
	rank  uint32 // rank of this part joined with the next, or noRank
}

// merge runs byte-pair merging over p, which is not a token itself and is
// longer than one byte. It returns the number of tokens and, when out is
// not nil, appends their ranks to it. The result is tiktoken's: the pair of
// lowest rank merges first, the leftmost one among equals.
func (e *Encoding) merge(p string, out []int) (int, []int) {
	if len(p) > smallPiece {
		return e.mergeLarge(p, out)
	}
	var buf [smallPiece + 1]bpePart
	n := len(p)
	parts := buf[:n+1]
	for i := 0; i < n-1; i++ {
		parts[i] = bpePart{int32(i), e.pair(p[i], p[i+1])}
	}
	parts[n-1] = bpePart{int32(n - 1), noRank}
	parts[n] = bpePart{int32(n), noRank}
	for len(parts) > 2 {
		minRank, at := uint32(noRank), -1
		for i, pt := range parts[:len(parts)-2] {
			if pt.rank < minRank {
				minRank, at = pt.rank, i
			}
		}
		if at < 0 {
			break
		}
		// parts[at] absorbs parts[at+1]: re-rank it with its new right
		// neighbour, and its left neighbour with it.
		if at+3 < len(parts) {
			parts[at].rank = e.rank(p[parts[at].start:parts[at+3].start])
		} else {
			parts[at].rank = noRank
		}
		if at > 0 {
			parts[at-1].rank = e.rank(p[parts[at-1].start:parts[at+2].start])
		}
		copy(parts[at+1:], parts[at+2:])
		parts = parts[:len(parts)-1]
	}
	if out != nil {
		for i := 0; i < len(parts)-1; i++ {
			out = append(out, int(e.rank(p[parts[i].start:parts[i+1].start])))
		}
	}
	return len(parts) - 1, out
}

// mergeLarge is merge for long pieces: parts form a linked list and
// candidate pairs wait in a min-heap ordered by rank, then position, which
// is the order the quadratic scan picks them in. Stale heap entries (a pair
// that has since changed) are recognised by their rank no longer matching:
// a pair's start never moves, so a changed pair is a longer string and has
// another rank.
func (e *Encoding) mergeLarge(p string, out []int) (int, []int) {
	n := len(p)
	next := make([]int32, n) // next part's start, or n
	prev := make([]int32, n) // previous part's start, or -1
	rank := make([]uint32, n)
	h := make(pairHeap, 0, n)
	for i := 0; i < n; i++ {
		next[i], prev[i] = int32(i+1), int32(i-1)
		rank[i] = noRank
		if i+1 < n {
			rank[i] = e.pair(p[i], p[i+1])
			if rank[i] != noRank {
				h = append(h, uint64(rank[i])<<32|uint64(i))
			}
		}
	}
	h.init()
	count := n
	pairRank := func(a int32) uint32 {
		b := next[a]
		if int(b) >= n {
			return noRank
		}
		return e.rank(p[a:next[b]])
	}
	for len(h) > 0 {
		top := h.pop()
		a, r := int32(uint32(top)), uint32(top>>32)
		if rank[a] != r {
			continue // stale, or a was absorbed (its rank is noRank then)
		}
		b := next[a]
		next[a] = next[b]
		if int(next[b]) < n {
			prev[next[b]] = a
		}
		rank[b] = noRank
		count--
		if rank[a] = pairRank(a); rank[a] != noRank {
			h.push(uint64(rank[a])<<32 | uint64(a))
		}
		if pa := prev[a]; pa >= 0 {
			if rank[pa] = pairRank(pa); rank[pa] != noRank {
				h.push(uint64(rank[pa])<<32 | uint64(pa))
			}
		}
	}
	if out != nil {
		for a := int32(0); int(a) < n; a = next[a] {
			out = append(out, int(e.rank(p[a:next[a]])))
		}
	}
	return count, out
}

// pairHeap is a binary min-heap of rank<<32|position keys.
type pairHeap []uint64

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(x uint64) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if s[parent] <= s[i] {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
}

func (h *pairHeap) pop() uint64 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
