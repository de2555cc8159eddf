package eval

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Facts returns the facts of text: the names a later turn may reach for,
// found by the eight patterns of the reference scorer (future_use.py's
// FACT_RES), each match with trailing ".,:;" stripped and kept when it is at
// least five characters long:
//
//   - paths with an extension (src/app/main.go, C:\x\y.txt, ./a/b.py)
//   - dotted calls (os.path.join()
//   - snake_case names (max_tokens)
//   - camelCase and PascalCase names (handleOpen, TeamSheet)
//   - URLs (https://example.com/a)
//   - hex ids and commit SHAs of 7 to 40 digits (3f2a9c1)
//   - versions of three or more parts (1.2.3)
//   - numbers of three or more digits (8080)
//
// The patterns follow Python's re semantics for str patterns: \w, \d, \s
// and \b are Unicode-aware, matches are found left to right without
// overlapping, each pattern on its own. Facts are returned in the order they
// are first found, each once.
func Facts(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(m string) {
		m = strings.TrimRight(m, ".,:;")
		if utf8.RuneCountInString(m) >= 5 && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	eachFact(text, add)
	return out
}

// eachFact calls add with every raw match of the patterns in text (before
// stripping), pattern by pattern.
func eachFact(text string, add func(string)) {
	if strings.ContainsAny(text, `/\`) {
		for _, loc := range pathRE().FindAllStringIndex(text, -1) {
			add(text[loc[0]:loc[1]])
		}
	}
	scanWords(text, add)
	scanURLs(text, add)
}

// pathRE is the reference's path pattern with Python's Unicode \w spelled
// out (letters, numbers and the underscore). It has no \b or lookaround, so
// RE2's leftmost-first matching finds what Python's backtracking finds.
// It is compiled on first use, not at start-up.
var pathRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:[A-Za-z]:\\|~?/|\./|\.\./)?(?:[\p{L}\p{N}_.-]+[/\\])+[\p{L}\p{N}_.-]+\.[\p{L}\p{N}_]{1,6}`)
})

// isWord is Python's \w for str patterns: a letter, a number or '_'.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isDigit is Python's \d for str patterns: a decimal digit (Nd).
func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

// isSpace is Python's \s for str patterns.
func isSpace(r rune) bool {
	if r >= 0x1c && r <= 0x1f {
		return true
	}
	return unicode.IsSpace(r)
}

// runeAt decodes the rune at i, and (RuneError, 0) past the end.
func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return utf8.RuneError, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// runeBefore decodes the rune ending at i, and (RuneError, 0) at the start.
func runeBefore(s string, i int) (rune, int) {
	if i <= 0 {
		return utf8.RuneError, 0
	}
	if c := s[i-1]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeLastRuneInString(s[:i])
}

// wordEnd returns the end of the run of word characters starting at i.
func wordEnd(s string, i int) int {
	for i < len(s) {
		r, n := runeAt(s, i)
		if !isWord(r) {
			break
		}
		i += n
	}
	return i
}

// scanWords finds the matches of the patterns anchored at a word boundary:
// dotted calls, snake_case, camelCase, hex ids, versions and numbers. A
// word run is a maximal run of \w; \b holds only at its ends, so the three
// patterns bounded by \b on both sides and made of word characters only
// match a whole run or nothing. Each pattern keeps its own scan position:
// Python runs them one after the other, each without overlapping itself.
func scanWords(s string, add func(string)) {
	callFrom, versionFrom := 0, 0
	for i := 0; i < len(s); {
		r, n := runeAt(s, i)
		if !isWord(r) {
			i += n
			continue
		}
		end := wordEnd(s, i)
		word := s[i:end]
		if isSnake(word) || isCamel(word) || isHexID(word) {
			add(word)
		}
		if i >= callFrom {
			if e := dottedCall(s, i, end); e > 0 {
				add(s[i:e])
				callFrom = e
			}
		}
		if i >= versionFrom {
			if e := version(s, i); e > 0 {
				add(s[i:e])
				versionFrom = e
			}
		}
		if e := number(s, i, end); e > 0 {
			add(s[i:e])
		}
		i = end
	}
}

// isSnake matches [a-z]+(?:_[a-z0-9]+)+ against a whole word.
func isSnake(w string) bool {
	i := 0
	for i < len(w) && 'a' <= w[i] && w[i] <= 'z' {
		i++
	}
	if i == 0 || i == len(w) {
		return false
	}
	groups := 0
	for i < len(w) {
		if w[i] != '_' {
			return false
		}
		i++
		j := i
		for i < len(w) && ('a' <= w[i] && w[i] <= 'z' || '0' <= w[i] && w[i] <= '9') {
			i++
		}
		if i == j {
			return false
		}
		groups++
	}
	return groups > 0
}

// isCamel matches [A-Z]?[a-z]+(?:[A-Z][a-z0-9]+)+ against a whole word.
func isCamel(w string) bool {
	i := 0
	if i < len(w) && 'A' <= w[i] && w[i] <= 'Z' {
		i++
	}
	j := i
	for i < len(w) && 'a' <= w[i] && w[i] <= 'z' {
		i++
	}
	if i == j {
		return false
	}
	groups := 0
	for i < len(w) {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
		i++
		j := i
		for i < len(w) && ('a' <= w[i] && w[i] <= 'z' || '0' <= w[i] && w[i] <= '9') {
			i++
		}
		if i == j {
			return false
		}
		groups++
	}
	return groups > 0
}

// isHexID matches [0-9a-f]{7,40} against a whole word.
func isHexID(w string) bool {
	if len(w) < 7 || len(w) > 40 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// dottedCall matches \b[A-Za-z_]\w*\.[A-Za-z_][\w.]*\( at the word run
// [i, end) and returns the match's end, 0 when there is none. Backtracking
// cannot help: the first \w* must run to the end of the word to meet the
// dot, and [\w.]* must run to the first other character to meet the "(".
func dottedCall(s string, i, end int) int {
	if c := s[i]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return 0
	}
	if end+1 >= len(s) || s[end] != '.' {
		return 0
	}
	if c := s[end+1]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return 0
	}
	j := end + 2
	for j < len(s) {
		r, n := runeAt(s, j)
		if r != '.' && !isWord(r) {
			break
		}
		j += n
	}
	if j < len(s) && s[j] == '(' {
		return j + 1
	}
	return 0
}

// digitsEnd returns the end of the run of \d starting at i.
func digitsEnd(s string, i int) int {
	for i < len(s) {
		r, n := runeAt(s, i)
		if !isDigit(r) {
			break
		}
		i += n
	}
	return i
}

// version matches \b\d+\.\d+(?:\.\d+)+\b at i, a word start, and returns
// the match's end, 0 when there is none. When the last part runs into a
// word character, backtracking gives it up: the match then ends at the dot
// before it, a boundary, if two dotted parts remain.
func version(s string, i int) int {
	e := digitsEnd(s, i)
	if e == i || e >= len(s) || s[e] != '.' {
		return 0
	}
	f := digitsEnd(s, e+1)
	if f == e+1 {
		return 0
	}
	var ends []int
	for f < len(s) && s[f] == '.' {
		g := digitsEnd(s, f+1)
		if g == f+1 {
			break
		}
		f = g
		ends = append(ends, f)
	}
	if len(ends) == 0 {
		return 0
	}
	last := ends[len(ends)-1]
	if r, _ := runeAt(s, last); last >= len(s) || !isWord(r) {
		return last
	}
	if len(ends) >= 2 {
		return ends[len(ends)-2]
	}
	return 0
}

// number matches (?<![\w.])\d{3,}(?![\w.]) starting at i, a word start
// whose run ends at end, and returns the match's end, 0 when there is none.
// Inside a word run the look-behind fails, so only a run's start can match,
// and only when the whole run is digits.
func number(s string, i, end int) int {
	if r, _ := runeBefore(s, i); i > 0 && r == '.' {
		return 0
	}
	e := digitsEnd(s, i)
	if e != end || utf8.RuneCountInString(s[i:e]) < 3 {
		return 0
	}
	if e < len(s) && s[e] == '.' {
		return 0
	}
	return e
}

// scanURLs finds https?://[^\s"'<>)\]]+.
func scanURLs(s string, add func(string)) {
	for i := 0; ; {
		k := strings.Index(s[i:], "http")
		if k < 0 {
			return
		}
		i += k
		j := i + 4
		if j < len(s) && s[j] == 's' {
			j++
		}
		if !strings.HasPrefix(s[j:], "://") {
			i += 4
			continue
		}
		j += 3
		start := j
		for j < len(s) {
			r, n := runeAt(s, j)
			if isSpace(r) || strings.ContainsRune(`"'<>)]`, r) {
				break
			}
			j += n
		}
		if j == start {
			i += 4
			continue
		}
		add(s[i:j])
		i = j
	}
}

// Has reports whether fact occurs in text, as the reference scorer decides:
// verbatim, or, for a path, by its last two segments (a handoff may shorten
// /home/u/repo/pkg/x.go to pkg/x.go), in text with backslashes read as
// slashes.
func Has(fact, text string) bool {
	return newHaystack(text).has(fact)
}

// haystack is a text searched for many facts; the slashed copy is made once,
// when a path first needs it.
type haystack struct {
	text    string
	slashed *string
}

func newHaystack(text string) *haystack { return &haystack{text: text} }

func (h *haystack) has(fact string) bool {
	if strings.Contains(h.text, fact) {
		return true
	}
	if !strings.ContainsAny(fact, `/\`) {
		return false
	}
	if h.slashed == nil {
		s := strings.ReplaceAll(h.text, `\`, "/")
		h.slashed = &s
	}
	return strings.Contains(*h.slashed, lastTwoSegments(fact))
}

// lastTwoSegments joins the last two of fact's segments split at / and \.
func lastTwoSegments(fact string) string {
	segs := splitSlashes(fact)
	if len(segs) > 2 {
		segs = segs[len(segs)-2:]
	}
	return strings.Join(segs, "/")
}

func splitSlashes(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == '\\' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
