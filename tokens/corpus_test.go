package tokens

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/corpus"
)

var (
	update    = flag.Bool("update", false, "rewrite golden files under testdata/")
	fullDiff  = flag.Bool("full", false, "differential test over the whole corpus and 100k hostile strings (slow)")
	corpusDir = flag.String("corpus", "", "directory of transcripts for the corpus tests (default: the shared corpus's transcripts, found by package internal/corpus)")
)

// smallCorpus names the transcripts of the tests that need little text (and
// of the estimator's check under -race, where the whole corpus takes
// minutes): one or two in each agent's format, 0.8 MB in all.
var smallCorpus = []string{
	"claudecode_agentcmd_full-session-two.jsonl",
	"claudecode_simonw_sample_session.json",
	"codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
	"gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json",
	"minisweagent_deepseek_chat_test_1-100_django__django-11099.traj.json",
	"minisweagent_github_issue.traj.json",
	"openhands_traj_basic.json",
	"sweagent_marshmallow-1867_function_calling.traj",
}

// transcriptDir is the directory of the corpus tests: -corpus, or the
// shared corpus's transcripts (skipping tb where it is missing).
func transcriptDir(tb testing.TB) string {
	tb.Helper()
	if *corpusDir != "" {
		return *corpusDir
	}
	return corpus.Dir(tb, corpus.Transcripts)
}

// corpusFile is one transcript's text: every JSON string value in it (the
// messages, tool arguments and outputs, metadata), in document order.
type corpusFile struct {
	name    string
	raw     string
	strings []string
}

// loadCorpus reads every JSON or JSONL transcript under dir with
// encoding/json alone, so these tests do not depend on package format.
func loadCorpus(t testing.TB, dir string) []corpusFile {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	var names []string
	for _, en := range entries {
		if !en.IsDir() && corpus.IsTranscript(en.Name()) {
			names = append(names, en.Name())
		}
	}
	return loadTranscripts(t, dir, names)
}

// loadSmallCorpus reads the smallCorpus transcripts of the shared
// corpus.
func loadSmallCorpus(t testing.TB) []corpusFile {
	t.Helper()
	return loadTranscripts(t, corpus.Dir(t, corpus.Transcripts), smallCorpus)
}

// loadTranscripts reads the named transcripts of dir.
func loadTranscripts(t testing.TB, dir string, names []string) []corpusFile {
	t.Helper()
	var files []corpusFile
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f := corpusFile{name: name, raw: string(raw)}
		if json.Valid(raw) {
			f.strings = jsonStrings(t, raw, nil)
		} else {
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
					f.strings = jsonStrings(t, line, f.strings)
				}
			}
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("corpus: no transcripts in %s", dir)
	}
	return files
}

func jsonStrings(t testing.TB, data []byte, out []string) []string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("corpus: %v", err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if x != "" {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// Hostile text: every class of rune the split patterns tell apart, the
// boundaries between them, and runs long enough for the heap merge.
var hostileAtoms = []string{
	// whitespace: ASCII, CR/LF mixes, Unicode spaces, NEL, line separator
	" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r", "\r\n", "\r\n\r\n", " \n", "\n ", " \n ", "\n \n",
	"\v", "\f", "\u00a0", "\u0085", "\u1680", "\u2000", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
	// letters of each category: Lu, Ll, Lt, Lm, Lo; marks Mn, Mc, Me
	"A", "Z", "a", "z", "É", "é", "Σ", "σ", "ς", "ß", "İ", "ı", "ǅ", "ǈ", "ᾈ", "ʰ", "ー", "ᵃ", "々",
	"中", "あ", "ア", "한", "ا", "א", "ก", "ꦲ", "ߊ",
	"\u0301", "\u0308", "\u0903", "\u093f", "\u20dd", "\u0488", "\u302a", "\ufe0f",
	// supplementary planes: math letters (Lu/Ll), Deseret, CJK extension B (above the class table)
	"𝐀", "𝐚", "𐐀", "𐐨", "𠀀", "𪚥", "𖿠",
	// numbers: Nd, Nl, No, in several scripts
	"0", "1", "9", "42", "007", "12345678", "٣", "३", "໕", "Ⅻ", "ⅷ", "½", "²", "①", "𝟘",
	// punctuation, symbols, controls, format characters
	"'", "\"", ".", ",", ";", ":", "!", "?", "/", "//", "\\", "-", "--", "_", "(", ")", "{", "}", "[", "]",
	"<", ">", "|", "&", "*", "#", "@", "$", "%", "^", "~", "`", "=", "+", "...", "->", "=>", "</",
	"\x00", "\x1b", "\x7f", "\u200b", "\u200c", "\u200d", "\ufeff", "\u00ad", "\u061c", "\ue000", "\U000f0000",
	"€", "©", "°", "→", "♥", "✓", "★", "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "🏳️\u200d🌈", "\ufffd", "\u0378",
	// contractions in both cases, and near misses
	"'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D",
	"'r", "'v", "'l", "'x", "'ſ", "’s", "don't", "DON'T", "it's", "IT'S", "we're", "they'LL",
	// words, identifiers, markup
	"hello", "Hello", "HELLO", "hELLO", "camelCase", "PascalCase", "snake_case", "SCREAMING_CASE", "kebab-case",
	"naïve", "Ærøskøbing", "straße", "ΑΘΗΝΑ", "Москва", "日本語", "中文字符", "한국어", "عربي", "עברית", "ไทย",
	"http://example.com/a/b?c=d", "<|endoftext|>", "<|im_start|>", "\\n", "\\u0041", "0x1F", "1e-9", "3.14159",
	"func main() {", "    return nil", "}\n", "{\"key\": [1, 2, 3]}", "2025-01-02T03:04:05Z", "ERROR", "[INFO]",
}

// hostileString builds one string of 1 to 40 atoms; one in eight atoms is
// repeated 20 to 400 times.
func hostileString(r *rand.Rand) string {
	var b strings.Builder
	for n := 1 + r.IntN(40); n > 0; n-- {
		atom := hostileAtoms[r.IntN(len(hostileAtoms))]
		switch k := r.IntN(16); {
		case k == 0:
			atom = strings.Repeat(atom, 20+r.IntN(380))
		case k == 1:
			atom = randomRunes(r, 1+r.IntN(8))
		}
		b.WriteString(atom)
	}
	return b.String()
}

// randomRunes returns n runes drawn from the whole code space.
func randomRunes(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := rune(r.IntN(0x110000))
		if !utf8.ValidRune(c) {
			c = utf8.RuneError
		}
		b.WriteRune(c)
	}
	return b.String()
}

func hostileStrings(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 0x636f6d70616374))
	out := make([]string, n)
	for i := range out {
		out[i] = hostileString(r)
	}
	return out
}
