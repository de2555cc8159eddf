package tokens

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

var encodingNames = []string{O200kBase, Cl100kBase}

// differ compares our tokens and count of s with the oracle's and describes
// the first difference, or returns "".
func differ(e *Encoding, o interface{ EncodeOrdinary(string) []int }, s string) string {
	got, want := e.Encode(s), o.EncodeOrdinary(s)
	n := e.Count(s)
	if slices.Equal(got, want) && n == len(want) {
		return ""
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := len(e.Decode(got[:i]))
	return fmt.Sprintf("count %d, %d tokens, oracle %d; first difference at token %d (byte %d): %q | ours %v, oracle %v",
		n, len(got), len(want), i, at, clip(s, at), got[i:min(i+4, len(got))], want[i:min(i+4, len(want))])
}

func clip(s string, at int) string {
	from, to := max(0, at-20), min(len(s), at+40)
	return s[from:to]
}

// checkAll runs differ over texts and fails with the first few mismatches.
func checkAll(t *testing.T, name string, texts []string) {
	t.Helper()
	e, o := mustEncoding(t, name), oracle(t, name)
	bad, bytes := 0, 0
	for i, s := range texts {
		bytes += len(s)
		if d := differ(e, o, s); d != "" {
			bad++
			if bad <= 5 {
				t.Errorf("%s text %d (%d bytes): %s", name, i, len(s), d)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d texts differ from tiktoken", name, bad, len(texts))
	}
	t.Logf("%s: %d texts, %d bytes, %d mismatches", name, len(texts), bytes, bad)
}

func TestExactEdgeCases(t *testing.T) {
	cases := []struct{ name, text string }{
		{"empty", ""},
		{"newline space newline", "\n \n"},
		{"spaces before word", "   word"},
		{"trailing spaces", "word   "},
		{"tab before word", "\tword"},
		{"tab before punct", "\t!"},
		{"nbsp before word", "\u00a0word"},
		{"crlf runs", "a\r\n\r\n  b\r\n"},
		{"space newline space", "x \n y"},
		{"spaces newline tabs", "  \n\t\tx"},
		{"ideographic space", "a\u3000\u3000b"},
		{"contractions lower", "it's we're they've I'm we'll he'd don't"},
		{"contractions upper", "IT'S WE'RE THEY'VE I'M WE'LL HE'D DON'T"},
		{"contraction alone", "'s 'S 'll 'Ll x'RE"},
		{"apostrophe then letters", "'sdf 'tis 'twas"},
		{"digits", "1 12 123 1234 12345 1234567"},
		{"digits other scripts", "٣٤٥٦ ३४५ Ⅻ½²"},
		{"camel case", "getHTTPResponseCode XMLHttpRequest iPhone"},
		{"title case letters", "ǅungla ǈ ᾈ"},
		{"modifier letters", "ʰʰʰa aʰ Aʰ ʰA"},
		{"marks alone", "\u0301 \u0301\u0301 a\u0301 A\u0301B"},
		{"mark before upper", "\u0301A"},
		{"mark before lower", "\u0301a"},
		{"mark after punct", "!\u0301 !!\u0301"},
		{"combining sequences", "e\u0301e\u0301 cafe\u0301s Zalgơ̴̢̖͎̽ͫ"},
		{"cjk", "お誕生日おめでとう 中文字符测试 한국어 텍스트"},
		{"emoji", "👍🏽 👨\u200d👩\u200d👧 🇫🇷 ok😀ok"},
		{"slashes after punct", "}\n//\n/ x //"},
		{"punct newlines", "});\n\n\n"},
		{"special token text", "<|endoftext|><|im_start|>user"},
		{"math letters", "𝐀𝐁𝐂 𝐚𝐛𝐜 𝟘𝟙"},
		{"plane 2", "𠀀𪚥 𠀀a"},
		{"long space run", strings.Repeat(" ", 1000) + "x"},
		{"long letter run", strings.Repeat("ab", 700)},
		{"long digit run", strings.Repeat("7", 999)},
		{"long punct run", strings.Repeat("=-", 300)},
		{"long newline run", strings.Repeat("\n", 500) + strings.Repeat("\r\n", 300)},
		{"long cjk run", strings.Repeat("語", 300)},
		{"base64", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="},
		{"invalid utf8", "a\xffb\xc3(\xe2\x82 \xf0\x9f\x98"},
		{"control chars", "\x00\x01\x1b[31mred\x1b[0m\x7f"},
		{"json", `{"role":"user","content":"hi\n","n":[1,2,3],"ok":true}`},
		{"go code", "func (e *Encoding) Count(s string) int {\n\tif s == \"\" {\n\t\treturn 0\n\t}\n}\n"},
	}
	for _, name := range encodingNames {
		e, o := mustEncoding(t, name), oracle(t, name)
		for _, c := range cases {
			if d := differ(e, o, c.text); d != "" {
				t.Errorf("%s %s: %s", name, c.name, d)
			}
		}
	}
}

func TestExactCorpus(t *testing.T) {
	files := loadCorpus(t, transcriptDir(t))
	var texts []string
	for _, f := range files {
		strs, raw := f.strings, f.raw
		if !*fullDiff {
			// A bounded sample for CI: strings spread over the file and
			// the start of its raw JSON.
			n, rawBytes := 150, 16<<10
			if raceEnabled {
				n, rawBytes = 30, 2<<10
			}
			strs = spread(strs, n)
			raw = raw[:min(len(raw), rawBytes)]
		}
		texts = append(texts, strs...)
		texts = append(texts, strings.ToValidUTF8(raw, ""))
	}
	for _, name := range encodingNames {
		t.Run(name, func(t *testing.T) { checkAll(t, name, texts) })
	}
}

func TestExactHostile(t *testing.T) {
	n := 2000
	switch {
	case *fullDiff:
		n = 100_000
	case raceEnabled:
		n = 300
	}
	texts := hostileStrings(1, n)
	for _, name := range encodingNames {
		t.Run(name, func(t *testing.T) { checkAll(t, name, texts) })
	}
}

// spread returns at most n elements of xs, evenly spaced.
func spread(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

// TestClassTable checks the class of every rune against the unicode
// package, which regexp2 (tiktoken-go's regex engine) also uses.
func TestClassTable(t *testing.T) {
	tab := classes()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		var want uint8
		if unicode.IsLetter(r) {
			want |= clsL
		}
		if unicode.IsNumber(r) {
			want |= clsN
		}
		if unicode.IsMark(r) {
			want |= clsM
		}
		if unicode.IsSpace(r) {
			want |= clsSpace
		}
		if r == '\r' || r == '\n' {
			want |= clsNL
		}
		if r == '/' {
			want |= clsSlash
		}
		if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
			want |= clsUpper
		}
		if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
			want |= clsLower
		}
		s := string(r)
		if got, n := classAt(tab, s, 0); got != want || n != len(s) {
			t.Fatalf("class of %U = %08b (%d bytes), want %08b", r, got, n, want)
		}
	}
}

// TestContractionLetters backs the ASCII-only case folding of contraction:
// regexp2 matches (?i:...) by unicode.ToLower, and no rune but the ASCII
// ones lower-cases to a letter of 's 't 're 've 'm 'll 'd.
func TestContractionLetters(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); strings.ContainsRune("strvmlde", l) {
			t.Errorf("%U lower-cases to %q", r, l)
		}
	}
}

// TestMergeLargeMatchesSmall runs both merge strategies over the same
// pieces: the heap merge must pick pairs in the quadratic scan's order.
func TestMergeLargeMatchesSmall(t *testing.T) {
	texts := hostileStrings(7, 3000)
	if raceEnabled {
		texts = texts[:500]
	}
	for _, name := range encodingNames {
		e := mustEncoding(t, name)
		tab := classes()
		for _, s := range texts {
			s = strings.ToValidUTF8(s, "")
			for i := 0; i < len(s); {
				j := e.next(tab, s, i)
				p := s[i:j]
				i = j
				if len(p) < 2 || len(p) > smallPiece {
					continue
				}
				n1, small := e.merge(p, []int{})
				n2, large := e.mergeLarge(p, []int{})
				if n1 != n2 || !slices.Equal(small, large) {
					t.Fatalf("%s %q: quadratic merge %v, heap merge %v", name, p, small, large)
				}
			}
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	for _, name := range encodingNames {
		e := mustEncoding(t, name)
		for _, s := range hostileStrings(3, 500) {
			s = strings.ToValidUTF8(s, "")
			if got := e.Decode(e.Encode(s)); got != s {
				t.Fatalf("%s: decode(encode(%q)) = %q", name, s, got)
			}
		}
	}
}

func TestUnknownEncoding(t *testing.T) {
	if _, err := GetEncoding("p50k_base"); err == nil || !strings.Contains(err.Error(), "p50k_base") {
		t.Fatalf("GetEncoding(p50k_base) error = %v", err)
	}
}

// TestRankTables checks the embedded tables against tiktoken's rank files,
// token by token: every token has its rank, every two-byte token its pair
// entry, and the vocabulary is the same size. The tables are laid out at
// generate time (gen_ranks.go), so this is what ties them to tiktoken.
func TestRankTables(t *testing.T) {
	for _, name := range encodingNames {
		ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		e := mustEncoding(t, name)
		if e.Vocabulary() != len(ranks) {
			t.Fatalf("%s: %d tokens, tiktoken has %d", name, e.Vocabulary(), len(ranks))
		}
		for tok, r := range ranks {
			if got := e.rank(tok); got != uint32(r) {
				t.Fatalf("%s: rank of %q = %d, want %d", name, tok, got, r)
			}
			if got := e.token(uint32(r)); got != tok {
				t.Fatalf("%s: token %d = %q, want %q", name, r, got, tok)
			}
			if len(tok) == 2 && e.pair(tok[0], tok[1]) != uint32(r) {
				t.Fatalf("%s: pair %q = %d, want %d", name, tok, e.pair(tok[0], tok[1]), r)
			}
		}
		pairs := 0
		for a := 0; a < 256; a++ {
			for b := 0; b < 256; b++ {
				if r := e.pair(byte(a), byte(b)); r != noRank {
					pairs++
					if _, ok := ranks[string([]byte{byte(a), byte(b)})]; !ok {
						t.Fatalf("%s: pair %q has rank %d but is no token", name, []byte{byte(a), byte(b)}, r)
					}
				}
			}
		}
		for _, s := range []string{"", "\x00\x00", strings.Repeat("a", 300), "no such token, surely", "\xff\xfe"} {
			if _, ok := ranks[s]; !ok && e.rank(s) != noRank {
				t.Fatalf("%s: %q has rank %d but is no token", name, s, e.rank(s))
			}
		}
		t.Logf("%s: %d tokens, %d two-byte tokens", name, len(ranks), pairs)
	}
}
