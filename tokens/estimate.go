package tokens

import (
	"math"
	"unicode/utf8"
)

// Estimate returns an estimate of the number of tokens in s, for models
// whose tokenizer compact does not carry. It aims at o200k_base's count,
// without its tables: s is cut into the pieces o200k's split pattern makes
// (words, numbers, punctuation runs, whitespace), and each piece is priced
// by its shape, with prices measured on o200k over real transcripts. That
// makes the estimate follow the content: prose (one token per common word),
// code (identifiers split at case changes, indentation runs, operators),
// JSON (quotes, colons and braces merge into few tokens), logs (numbers in
// groups of three, timestamps, paths), CJK (priced per character, by
// script) and random blobs (base64, hashes: about a token per 1.5 bytes),
// where a flat characters-per-token ratio is off by a third or more.
func Estimate(s string) int {
	if s == "" {
		return 0
	}
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	var est estimator
	gap := 0 // start of the text not yet priced
	for i := 0; i < len(s); {
		if !isBlobByte(s[i]) {
			i++
			continue
		}
		j, switches := blobRun(s, i)
		if j-i >= blobMinBytes && switches*blobSwitchRatio >= j-i {
			est.pieces(s[gap:i])
			est.total += float64(j-i) / blobBytesPerToken
			gap = j
		}
		i = j
	}
	est.pieces(s[gap:])
	return int(math.Round(est.total))
}

// estimator accumulates piece prices.
type estimator struct {
	total float64
}

// Prices, in tokens.
var (
	// wordPrice[n] prices an ASCII word piece of n letters: words up to
	// about seven letters are one token; longer ones are rarer words that
	// split in two or three.
	wordPrice = [...]float64{0, 1, 1, 1.01, 1.02, 1.04, 1.05, 1.1, 1.15, 1.19, 1.17, 1.41, 1.6, 1.46, 1.67, 2.14, 2.5}
	// prefixPrice[n] is what a punctuation rune opening a word of n
	// letters adds ("_name", ".method", "$var"): little for short words,
	// which o200k often has with their prefix, a token for long ones.
	prefixPrice = [...]float64{0, 0, 0.07, 0.14, 0.16, 0.16, 0.22, 0.37, 0.9}
)

const (
	priceVowelless = 0.2  // added to a word of 3+ letters without a vowel (an abbreviation, a fragment of an id), plus a tenth per letter
	pricePerExtra  = 0.3  // per letter beyond the table
	pricePunct     = 0.46 // per character of a mixed punctuation run longer than two
	priceRepeat    = 0.12 // per character of a run of one repeated punctuation character
	priceHan       = 0.7  // per Han ideograph
	priceKana      = 0.78 // per hiragana or katakana character
	priceHangul    = 0.62 // per Hangul syllable
	priceCJKPunct  = 1.0  // per CJK or full-width punctuation mark
	priceOtherRune = 0.33 // per letter of other scripts (Cyrillic, Greek, accented Latin...)
	priceSymbol    = 1.3  // per non-ASCII symbol (emoji, arrows, box drawing)

	// A blob is a run of base64 characters at least blobMinBytes long in
	// which letters and digits, or lower and upper case, alternate at
	// least once every blobSwitchRatio bytes: encrypted payloads, inline
	// images, keys. o200k spends a token on about 1.47 of its bytes.
	blobBytesPerToken = 1.47
	blobMinBytes      = 24
	blobSwitchRatio   = 6
)

func isBlobByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '_' || c == '-'
}

// blobRun returns the end of the run of base64 characters at i and how
// often it switches between letters and digits or from lower to upper case.
func blobRun(s string, i int) (end, switches int) {
	var prev byte // 'l', 'u', 'd', or 0 after other characters
	for ; i < len(s) && isBlobByte(s[i]); i++ {
		var k byte
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			k = 'l'
		case c >= 'A' && c <= 'Z':
			k = 'u'
		case c >= '0' && c <= '9':
			k = 'd'
		}
		if prev != 0 && k != 0 && (prev == 'd') != (k == 'd') || prev == 'l' && k == 'u' {
			switches++
		}
		prev = k
	}
	return i, switches
}

// pieces prices s piece by piece.
func (e *estimator) pieces(s string) {
	t := classes()
	for i := 0; i < len(s); {
		j := nextO200k(t, s, i)
		e.piece(s[i:j])
		i = j
	}
}

// piece prices one o200k piece and adds it to the current run.
func (e *estimator) piece(p string) {
	if c := p[0]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		if len(p) > 1 && isSpaceOnly(p) {
			e.total += 1 + float64(len(p))/256
			return
		}
		if len(p) == 1 && isSpaceOnly(p) {
			e.total++
			return
		}
		p = p[1:] // a space that opens a word or punctuation run is free
		if p == "" {
			return
		}
	}
	var (
		letters, vowels, digits, punct int
		newlines                       int // trailing a punctuation run, where they are almost free
		han, kana, hangul, other, sym  int
		cjkPunct                       int
		repeat                         = true
	)
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'a' && c <= 'z':
				letters++
				if c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y' {
					vowels++
				}
			case c >= 'A' && c <= 'Z':
				letters++
				if c == 'A' || c == 'E' || c == 'I' || c == 'O' || c == 'U' || c == 'Y' {
					vowels++
				}
			case c >= '0' && c <= '9':
				digits++
			case c == '\n' || c == '\r':
				newlines++
			default:
				punct++
				if c != p[0] {
					repeat = false
				}
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(p[i:])
		i += n
		switch {
		case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0xF900 && r <= 0xFAFF, r >= 0x20000 && r <= 0x3FFFF:
			han++
		case r >= 0x3040 && r <= 0x30FF:
			kana++
		case r >= 0xAC00 && r <= 0xD7AF, r >= 0x1100 && r <= 0x11FF, r >= 0x3130 && r <= 0x318F:
			hangul++
		case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFFEF:
			cjkPunct++
		default:
			c, _ := classAt(classes(), p, i-n)
			if c&(clsL|clsM|clsN) != 0 {
				other++
			} else {
				sym++
			}
		}
	}
	price := 0.0
	switch {
	case han+kana+hangul > 0:
		price = priceHan*float64(han) + priceKana*float64(kana) + priceHangul*float64(hangul) +
			priceOtherRune*float64(other+letters) + 0.5*float64(punct)
	case other > 0:
		price = 1 + priceOtherRune*float64(other+letters-1)
	case letters > 0:
		price = wordPriceOf(letters, vowels)
		if punct > 0 {
			price += prefixPrice[min(letters, len(prefixPrice)-1)]
		}
	case digits > 0:
		price = 1
	case punct > 0:
		switch {
		case punct <= 2:
			price = 1
		case repeat:
			price = 1 + priceRepeat*float64(punct)
		default:
			price = pricePunct * float64(punct)
		}
	}
	price += priceSymbol*float64(sym) + priceCJKPunct*float64(cjkPunct)
	e.total += price
}

func wordPriceOf(letters, vowels int) float64 {
	var p float64
	if letters < len(wordPrice) {
		p = wordPrice[letters]
	} else {
		p = wordPrice[len(wordPrice)-1] + pricePerExtra*float64(letters-len(wordPrice)+1)
	}
	if vowels == 0 && letters >= 3 {
		p += priceVowelless + 0.1*float64(min(letters, 8)-3)
	}
	return p
}

func isSpaceOnly(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
		default:
			return false
		}
	}
	return true
}
