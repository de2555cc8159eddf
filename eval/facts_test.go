package eval

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFacts holds cases whose expected facts future_use.py's facts()
// printed (python3, the reference's own regular expressions).
func TestFacts(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{`see src/app/main.go:12 and C:\Users\me\x.txt, ./a/b.py ../c/d.rs ~/e/f.toml`,
			[]string{"../c/d.rs", "./a/b.py", `C:\Users\me\x.txt`, "src/app/main.go", "~/e/f.toml"}},
		{"call os.path.join( and self.assertEqual(x) but not a.b (",
			[]string{"assertEqual", "os.path.join(", "self.assertEqual("}},
		{"max_tokens foo_bar_X café_bar 调用foo_bar函数 _private_name snake_2x",
			[]string{"max_tokens", "snake_2x"}},
		{"handleOpen TeamSheet iPhone ABCDef camelCaseX getHTTPResponse",
			[]string{"TeamSheet", "handleOpen", "iPhone"}},
		{`https://example.com/a?b=1&c=2) http://x.y/z"q https:// httpx://no`,
			[]string{"http://x.y/z", "https://example.com/a?b=1&c=2"}},
		{"commit 3f2a9c1 and deadbeefcafe1234567890abcdef1234567890abcd0 abcdefg 1234567",
			[]string{"1234567", "3f2a9c1"}},
		{"v1.2.3 1.2.3.4a 1.2.3a 10.0.0.1: 3.14", []string{"1.2.3", "10.0.0.1"}},
		{"port 8080, 12, 1234.5, x123, 123x, .456 789. ١٢٣٤", nil},
		{"a/b.toolongext dir/file.c-d x/y/.hidden/z", []string{"a/b.toolon", "dir/file.c"}},
	}
	for _, c := range cases {
		got := Facts(c.text)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("Facts(%q)\n got %q\nwant %q", c.text, got, c.want)
		}
	}
}

func TestHas(t *testing.T) {
	cases := []struct {
		fact, text string
		want       bool
	}{
		{"max_tokens", "set max_tokens=5", true},
		{"/home/u/repo/pkg/x.go", "edited pkg/x.go", true},
		{"/home/u/repo/pkg/x.go", "edited x.go", false},
		{`C:\repo\pkg\x.go`, `"C:\\repo\\pkg\\x.go"`, false}, // JSON-escaped: the reference misses it too
		{`C:\repo\pkg\x.go`, `saw pkg\x.go`, true},
		{"a/b.py", "a/b.py", true},
	}
	for _, c := range cases {
		if got := Has(c.fact, c.text); got != c.want {
			t.Errorf("Has(%q, %q) = %v, want %v", c.fact, c.text, got, c.want)
		}
	}
}

// referenceREs are the reference's patterns in Go's syntax for ASCII text,
// where Go's \b and \w agree with Python's; the number pattern's
// look-arounds are checked by hand in referenceFacts.
var referenceREs = []*regexp.Regexp{
	regexp.MustCompile(`(?:[A-Za-z]:\\|~?/|\./|\.\./)?(?:[\w.-]+[/\\])+[\w.-]+\.\w{1,6}`),
	regexp.MustCompile(`\b[A-Za-z_]\w*\.[A-Za-z_][\w.]*\(`),
	regexp.MustCompile(`\b[a-z]+(?:_[a-z0-9]+)+\b`),
	regexp.MustCompile(`\b[A-Z]?[a-z]+(?:[A-Z][a-z0-9]+)+\b`),
	regexp.MustCompile(`https?://[^\s"'<>)\]\x0b\x1c-\x1f]+`),
	regexp.MustCompile(`\b[0-9a-f]{7,40}\b`),
	regexp.MustCompile(`\b\d+\.\d+(?:\.\d+)+\b`),
}

// referenceFacts is facts() of the reference for ASCII text, built on
// regular expressions rather than Facts' scanners.
func referenceFacts(text string) []string {
	set := map[string]bool{}
	add := func(m string) {
		m = strings.TrimRight(m, ".,:;")
		if utf8.RuneCountInString(m) >= 5 {
			set[m] = true
		}
	}
	for _, re := range referenceREs {
		for _, m := range re.FindAllString(text, -1) {
			add(m)
		}
	}
	// (?<![\w.])\d{3,}(?![\w.]), left to right without overlaps.
	word := func(c byte) bool {
		return c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := 0; i < len(text); i++ {
		if i > 0 && word(text[i-1]) {
			continue
		}
		j := i
		for j < len(text) && '0' <= text[j] && text[j] <= '9' {
			j++
		}
		if j-i >= 3 && (j == len(text) || !word(text[j])) {
			add(text[i:j])
			i = j - 1
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// FuzzFacts compares Facts' hand-written scanners with the reference's
// regular expressions on ASCII text, where both engines agree on \b, \w,
// \d and \s.
func FuzzFacts(f *testing.F) {
	for _, s := range []string{
		"see src/app/main.go:12 and C:\\x\\y.txt ./a/b.py",
		"os.path.join( max_tokens handleOpen 3f2a9c1 1.2.3.4a 10.0.0.1 12345 https://x.y/z?a=1)",
		"a.b.c(d) _x.y( 1.2.3a 99999.5 .12345 12345.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return
			}
		}
		got := Facts(s)
		slices.Sort(got)
		if want := referenceFacts(s); !slices.Equal(got, want) {
			t.Fatalf("Facts(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}
