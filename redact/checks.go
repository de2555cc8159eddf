package redact

import (
	"hash/crc32"
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/compactkit/compact/internal/keyword"
)

// Byte classes used by boundary and value checks. A table lookup keeps the
// hot loops free of branches on ranges.
const (
	clsLower = 1 << iota
	clsUpper
	clsDigit
	clsB64      // + / =
	clsURLSafe  // - _
	clsNameSep  // . (allowed inside names and some tokens)
	clsSpace    // space, tab, CR, LF
	clsQuote    // " ' `
	clsBackslsh // \
)

var byteClass [256]uint16

func init() {
	for c := 'a'; c <= 'z'; c++ {
		byteClass[c] = clsLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		byteClass[c] = clsUpper
	}
	for c := '0'; c <= '9'; c++ {
		byteClass[c] = clsDigit
	}
	for _, c := range "+/=" {
		byteClass[c] = clsB64
	}
	for _, c := range "-_" {
		byteClass[c] = clsURLSafe
	}
	byteClass['.'] = clsNameSep
	for _, c := range " \t\r\n\f\v" {
		byteClass[c] = clsSpace
	}
	for _, c := range "\"'`" {
		byteClass[c] = clsQuote
	}
	byteClass['\\'] = clsBackslsh
}

func isAlnum(c byte) bool { return byteClass[c]&(clsLower|clsUpper|clsDigit) != 0 }
func isSpace(c byte) bool { return byteClass[c]&clsSpace != 0 }
func isQuote(c byte) bool { return byteClass[c]&clsQuote != 0 }
func isHex(c byte) bool {
	return byteClass[c]&clsDigit != 0 || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// isTokenByte reports whether c may continue a credential-like token: the
// union of the alphabets of base64, base64url and the dotted token formats.
func isTokenByte(c byte) bool {
	return byteClass[c]&(clsLower|clsUpper|clsDigit|clsB64|clsURLSafe|clsNameSep) != 0
}

// entropy returns the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if len(s) == 0 {
		return 0
	}
	var counts [256]int32
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	// H = log2(n) - (1/n) * sum(c * log2(c)), with c*log2(c) from a table
	// for the counts short values have.
	n := len(s)
	var sum float64
	for _, c := range counts {
		if c > 1 {
			if int(c) < len(clog2) {
				sum += clog2[c]
			} else {
				sum += float64(c) * math.Log2(float64(c))
			}
		}
	}
	return math.Log2(float64(n)) - sum/float64(n)
}

// clog2[c] is c*log2(c).
var clog2 = func() (t [512]float64) {
	for c := 2; c < len(t); c++ {
		t[c] = float64(c) * math.Log2(float64(c))
	}
	return
}()

// charKinds returns a bit set of the kinds of characters in s: lower, upper,
// digit, other.
func charKinds(s string) (lower, upper, digit, other bool) {
	for i := 0; i < len(s); i++ {
		switch k := byteClass[s[i]]; {
		case k&clsLower != 0:
			lower = true
		case k&clsUpper != 0:
			upper = true
		case k&clsDigit != 0:
			digit = true
		default:
			other = true
		}
	}
	return
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if byteClass[s[i]]&clsDigit == 0 {
			return false
		}
	}
	return len(s) > 0
}

// placeholderMarkers are substrings (lowercased) that documentation and
// examples put where a real credential would go. A random token contains one
// by chance with negligible probability.
var placeholderMarkers = []string{
	"****", "...", "…", "•••", "<your", "your_", "your-", "yourapi", "yourkey", "yourtoken",
	"example", "placeholder", "changeme", "change_me", "change-me", "redacted", "dummy",
	"sample", "notreal", "not_real", "not-a-real", "notasecret", "not-a-secret",
	"insert", "replace_me", "replaceme", "replace-me", "fixme", "todo",
	"foobar", "lorem", "fake",
}

var placeholderSet = sync.OnceValue(func() *keyword.Matcher { return keyword.New(keyword.Words(placeholderMarkers), true) })

// isPlaceholder reports whether v looks like a documented stand-in rather
// than a credential: marker words, masks such as ***, template syntax, long
// runs of one character, or an ascending run such as 12345678 or abcdefgh.
func isPlaceholder(v string) bool {
	if placeholderMarked(v) {
		return true
	}
	if strings.Contains(v, "xxxx") || strings.Contains(v, "XXXX") {
		return true // xxxx-xxxx, sk-XXXX...; one case (a random token may hold "xxxX")
	}
	if angleWord(v) {
		return true // <your-token>, <API KEY>
	}
	if strings.Contains(v, "{{") || strings.Contains(v, "${") {
		return true
	}
	if i := strings.Index(v, "$("); i >= 0 && strings.IndexByte(v[i:], ')') > 0 {
		return true // $(cat token.txt); a random "$(" opens nothing
	}
	if i := strings.Index(v, "%s"); i >= 0 {
		// A format string ("Bearer %s", "%s:%s", "tok-%s-%s") is mostly its
		// verbs and words; a random secret may hold "%s" by chance.
		rest := strings.NewReplacer("%s", "", "%d", "", "%v", "").Replace(v)
		if len(rest) < 16 || entropy(rest) < 3.5 || looksLikeWords(rest) {
			return true
		}
	}
	run, asc := 1, 1
	for i := 1; i < len(v); i++ {
		if v[i] == v[i-1] {
			run++
			// xxxxxx, ******: a run of one character that makes up a good
			// part of the value (binary data in base64 has short runs of A).
			if run >= 6 && 3*run >= len(v) {
				return true
			}
		} else {
			run = 1
		}
		if v[i] == v[i-1]+1 && isAlnum(v[i]) {
			asc++
			if asc >= 7 {
				return true
			}
		} else {
			asc = 1
		}
	}
	return false
}

// base62 is GitHub's and npm's checksum alphabet.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// angleWord reports a word or phrase in angle brackets: <token>, <YOUR
// API KEY>, <insert-password>, sk-<key>. Inside a random value a '<'
// and a '>' may enclose random letters: they count only at the value's
// start or end, or around words joined by blanks, '-', '_' or '.'.
func angleWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] != '<' {
			continue
		}
		j := i + 1
		for j < len(v) && (isAlnum(v[j]) || v[j] == '_' || v[j] == '-' || v[j] == ' ' || v[j] == '.') {
			j++
		}
		if j >= len(v) || v[j] != '>' || j <= i+2 || allDigits(v[i+1:j]) {
			continue
		}
		if in := v[i+1 : j]; i == 0 || j == len(v)-1 || strings.ContainsAny(in, " -_.") {
			return true
		}
	}
	return false
}

// placeholderMarked reports a placeholder marker (example, changeme,
// your_, dummy, ...) in v. A short one of letters only (todo, fake, dummy)
// must stand as a word, written in one case (todo, TODO, Todo): at v's
// start or end, or between separators or a change of case; the same
// letters inside a random run (…TODOXWUS…, …-TOdoHG…) are chance.
func placeholderMarked(v string) bool {
	found := false
	placeholderSet().Find(v, func(start, id int) {
		if found {
			return
		}
		m := placeholderMarkers[id]
		if len(m) >= 6 || !onlyLetters(m) {
			found = true // long or punctuated: never there by chance
			return
		}
		end := start + len(m)
		found = wordCase(v[start:end]) && markerBound(v, start-1, start, true) && markerBound(v, end, end-1, false)
	})
	return found
}

// wordCase reports letters written as a word is: all lower case, all upper
// case, or capitalised (todo, TODO, Todo). Random letters mix cases
// (TOdo, tOdO) far more often than not.
func wordCase(w string) bool {
	upper := 0
	for i := 0; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' {
			upper++
		}
	}
	return upper == 0 || upper == len(w) || upper == 1 && w[0] >= 'A' && w[0] <= 'Z'
}

func onlyLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 < 'a' || s[i]|0x20 > 'z' {
			return false
		}
	}
	return true
}

// markerBound reports whether v[at] (outside a marker whose edge byte is
// v[edge]) bounds it: the end of v, a byte that is no letter, or a change
// of case into or out of the marker (yourApiKey, API_KEY_HERE).
func markerBound(v string, at, edge int, before bool) bool {
	if at < 0 || at >= len(v) || edge < 0 || edge >= len(v) {
		return true
	}
	c, e := v[at], v[edge]
	letter := func(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
	if !letter(c) || !letter(e) {
		return true
	}
	lower := func(b byte) bool { return b >= 'a' && b <= 'z' }
	if before {
		return lower(c) && !lower(e) // myExample: a hump starts with the marker
	}
	return lower(e) && !lower(c) // exampleKey: a hump starts after it
}

// validCRC32Base62 checks the checksum of GitHub (2021 format) and npm
// tokens: the last six characters are the CRC32 of the 30 before them,
// written in base62 and left-padded with zeros.
func validCRC32Base62(body string) bool {
	if len(body) != 36 {
		return false
	}
	payload, sum := body[:30], body[30:]
	n := crc32.ChecksumIEEE([]byte(payload))
	var enc [6]byte
	for i := 5; i >= 0; i-- {
		enc[i] = base62[n%62]
		n /= 62
	}
	return n == 0 && string(enc[:]) == sum
}

// escapedAt reports whether s[i] is the escaped character of a backslash
// escape: it is preceded by an odd run of backslashes.
func escapedAt(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// lineSepBefore reports whether the text before i ends a line: a real line
// break, or a JSON-escaped one (\n, \r) as found inside string literals.
func lineSepBefore(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	if c == '\n' || c == '\r' {
		return true
	}
	return (c == 'n' || c == 'r') && i >= 2 && escapedAt(s, i-1)
}

// leftBoundary reports whether a token may start at t[i]: nothing glued to
// it on the left but a separator (an escaped \n counts as one).
func leftBoundary(t string, i int) bool {
	if i == 0 || !isAlnum(t[i-1]) {
		return true
	}
	c := t[i-1]
	if (c == 'n' || c == 'r' || c == 't') && escapedAt(t, i-1) {
		return true
	}
	// \u201c, \u00a0: an escaped character (JSON inside a JSON string,
	// which the decoded view shows one level decoded) that is no letter or
	// digit.
	if i >= 6 && t[i-6] == '\\' && t[i-5] == 'u' && !escapedAt(t, i-6) {
		if r, ok := hexRune(t[i-4 : i]); ok && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// hexRune reads four hex digits.
func hexRune(h string) (rune, bool) {
	var r rune
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			r = r<<4 | rune(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	return r, len(h) == 4
}

// rightBoundary reports whether a token may end at t[i].
func rightBoundary(t string, i int) bool {
	return i >= len(t) || !isAlnum(t[i])
}

// hasSuffixFold reports whether s ends with suffix (lowercase ASCII),
// ignoring ASCII case.
func hasSuffixFold(s, suffix string) bool {
	if len(s) < len(suffix) {
		return false
	}
	tail := s[len(s)-len(suffix):]
	for i := 0; i < len(suffix); i++ {
		if lowerASCII(tail[i]) != suffix[i] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
