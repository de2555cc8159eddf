package tokens

// The pre-tokenizers below cut text into the pieces that tiktoken's split
// regexes match, without a regex engine. Each next function returns the end
// of the piece that starts at i. They reproduce the backtracking semantics of
// the patterns exactly: alternatives are tried in order, quantifiers are
// greedy and give back only what the rest of their alternative needs.
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Every position matches one of the alternatives (every rune is a letter, a
// number, whitespace or "punct"), so pieces tile the text.

// contraction returns the end of a contraction ('s 't 're 've 'm 'll 'd, in
// either case) starting at s[i], or i when there is none. Only ASCII letters
// lower-case to these letters, so the case-insensitive match is an ASCII one.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return i
}

// runOf returns the end of the run of runes starting at i whose class has
// any of bits.
func runOf(t []uint8, s string, i int, bits uint8) int {
	for i < len(s) {
		if b := s[i]; b < 0x80 {
			if t[b]&bits == 0 {
				return i
			}
			i++
			continue
		}
		c, n := classAt(t, s, i)
		if c&bits == 0 {
			return i
		}
		i += n
	}
	return i
}

// punctRun returns the end of the run of [^\s\p{L}\p{N}] starting at i.
func punctRun(t []uint8, s string, i int) int {
	for i < len(s) {
		c, n := classAt(t, s, i)
		if !isPunct(c) {
			return i
		}
		i += n
	}
	return i
}

// digits returns the end of \p{N}{1,3} at i (c0, n0: the first rune).
func digits(t []uint8, s string, i int, n0 int) int {
	i += n0
	for k := 1; k < 3 && i < len(s); k++ {
		c, n := classAt(t, s, i)
		if c&clsN == 0 {
			break
		}
		i += n
	}
	return i
}

// whitespace resolves \s*[\r\n]+|\s+(?!\S)|\s+ at i, where s[i] is
// whitespace: up to the last newline of the run if it has one; the whole run
// at the end of the text; otherwise all but the run's last rune, or the one
// rune when that is all there is.
func whitespace(t []uint8, s string, i int) int {
	lastNL, lastStart, j := -1, i, i
	for j < len(s) {
		c, n := classAt(t, s, j)
		if c&clsSpace == 0 {
			break
		}
		if c&clsNL != 0 {
			lastNL = j + n
		}
		lastStart = j
		j += n
	}
	switch {
	case lastNL >= 0:
		return lastNL
	case j == len(s) || lastStart == i:
		return j
	default:
		return lastStart
	}
}

// nextCL100k returns the end of the cl100k_base piece starting at i.
func nextCL100k(t []uint8, s string, i int) int {
	b := s[i]
	if b == '\'' {
		if e := contraction(s, i); e > i {
			return e
		}
	}
	c0, n0 := classAt(t, s, i)
	if c0&clsL != 0 {
		return runOf(t, s, i+n0, clsL)
	}
	if isPrefix(c0) && i+n0 < len(s) {
		if c1, n1 := classAt(t, s, i+n0); c1&clsL != 0 {
			return runOf(t, s, i+n0+n1, clsL)
		}
	}
	if c0&clsN != 0 {
		return digits(t, s, i, n0)
	}
	// " ?[^\s\p{L}\p{N}]+[\r\n]*"
	start := i
	if b == ' ' {
		start = i + 1
	}
	if start < len(s) {
		if c, _ := classAt(t, s, start); isPunct(c) {
			return runOf(t, s, punctRun(t, s, start), clsNL)
		}
	}
	return whitespace(t, s, i)
}

// nextO200k returns the end of the o200k_base piece starting at i.
func nextO200k(t []uint8, s string, i int) int {
	c0, n0 := classAt(t, s, i)
	if c0&(clsL|clsM) != 0 {
		if e := o200kWord(t, s, i, c0, n0); e > 0 {
			return e
		}
	} else if isPrefix(c0) && i+n0 < len(s) {
		if c1, _ := classAt(t, s, i+n0); c1&(clsL|clsM) != 0 {
			if e := o200kWord(t, s, i, c0, n0); e > 0 {
				return e
			}
		}
	}
	if c0&clsN != 0 {
		return digits(t, s, i, n0)
	}
	// " ?[^\s\p{L}\p{N}]+[\r\n/]*"
	start := i
	if s[i] == ' ' {
		start = i + 1
	}
	if start < len(s) {
		if c, _ := classAt(t, s, start); isPunct(c) {
			return runOf(t, s, punctRun(t, s, start), clsNL|clsSlash)
		}
	}
	return whitespace(t, s, i)
}

// o200kWord tries o200k's two word alternatives at i in the order the regex
// engine does: the first with its optional prefix rune taken, then without
// it; then the second the same way. It returns the end of the match, or -1.
func o200kWord(t []uint8, s string, i int, c0 uint8, n0 int) int {
	pre := isPrefix(c0)
	if pre {
		if e := o200kLowerWord(t, s, i+n0); e > 0 {
			return e
		}
	}
	if c0&(clsUpper|clsLower) != 0 {
		if e := o200kLowerWord(t, s, i); e > 0 {
			return e
		}
	}
	if pre {
		if e := o200kUpperWord(t, s, i+n0); e > 0 {
			return e
		}
	}
	return o200kUpperWord(t, s, i)
}

// o200kLowerWord matches Upper*Lower+ contraction? at i (Upper and Lower
// being o200k's two letter classes, which share Lm, Lo and marks), or
// returns -1. Upper* is greedy: when the rune after the Upper run is not
// Lower, it gives back runes until the last Lower-capable one of the run,
// which then forms Lower+ by itself.
func o200kLowerWord(t []uint8, s string, i int) int {
	lastLower := -1
	j := i
	for j < len(s) {
		c, n := classAt(t, s, j)
		if c&clsUpper == 0 {
			if c&clsLower != 0 {
				return contraction(s, runOf(t, s, j+n, clsLower))
			}
			break
		}
		j += n
		if c&clsLower != 0 {
			lastLower = j
		}
	}
	if lastLower < 0 {
		return -1
	}
	return contraction(s, lastLower)
}

// o200kUpperWord matches Upper+Lower* contraction? at i, or returns -1.
func o200kUpperWord(t []uint8, s string, i int) int {
	if i >= len(s) {
		return -1
	}
	j := runOf(t, s, i, clsUpper)
	if j == i {
		return -1
	}
	return contraction(s, runOf(t, s, j, clsLower))
}
