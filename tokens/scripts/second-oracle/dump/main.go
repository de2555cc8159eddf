// Command dump writes the texts the second-oracle check compares, one JSON
// object per line: {"text": ..., "o200k_base": N, "cl100k_base": M}, with
// this package's counts. The texts are every string value of the JSON and
// JSONL transcripts in -corpus, the start of each raw file, and -random
// seeded random strings built from the character classes tiktoken's split
// patterns tell apart.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/tokens"
)

func main() {
	dir := flag.String("corpus", "", "directory of JSON/JSONL transcripts, relative to the working directory (run.sh runs from the repository's root); default: the shared corpus's transcripts ($COMPACT_CORPUS/transcripts, else ../shared/corpus/transcripts)")
	random := flag.Int("random", 20000, "number of random strings")
	seed := flag.Uint64("seed", 1, "seed of the random strings")
	flag.Parse()

	if *dir == "" {
		root, err := corpus.Root()
		if err != nil {
			log.Fatal(err)
		}
		*dir = filepath.Join(root, corpus.Transcripts)
	}
	texts, err := corpusTexts(*dir)
	if err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(*seed, 0))
	for range *random {
		texts = append(texts, randomText(r))
	}
	encs := map[string]*tokens.Encoding{}
	for _, name := range []string{tokens.O200kBase, tokens.Cl100kBase} {
		if encs[name], err = tokens.GetEncoding(name); err != nil {
			log.Fatal(err)
		}
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	total, spent := 0, map[string]time.Duration{}
	for _, text := range texts {
		rec := map[string]any{"text": text}
		for name, e := range encs {
			start := time.Now()
			rec[name] = e.Count(text)
			spent[name] += time.Since(start)
		}
		total += len(text)
		if err := enc.Encode(rec); err != nil {
			log.Fatal(err)
		}
	}
	for name, d := range spent {
		fmt.Fprintf(os.Stderr, "compact %s: %d texts, %.1f MB in %v: %.1f MB/s\n", name, len(texts), float64(total)/1e6, d.Round(time.Millisecond), float64(total)/1e6/d.Seconds())
	}
}

// corpusTexts returns every string value of the transcripts in dir and the
// first 64 KiB of each file.
func corpusTexts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
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
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, en := range entries {
		if en.IsDir() || !corpus.IsTranscript(en.Name()) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, strings.ToValidUTF8(string(raw[:min(len(raw), 64<<10)]), "\uFFFD"))
		docs := [][]byte{raw}
		if !json.Valid(raw) {
			docs = bytes.Split(raw, []byte("\n"))
		}
		for _, d := range docs {
			var v any
			if len(bytes.TrimSpace(d)) > 0 && json.Unmarshal(d, &v) == nil {
				walk(v)
			}
		}
	}
	return out, nil
}

var atoms = []string{
	" ", "  ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u2028",
	"a", "Z", "é", "Σ", "ß", "ǅ", "ʰ", "中", "あ", "한", "ا", "𝐀", "𠀀",
	"\u0301", "\u0903", "\u20dd", "0", "42", "12345", "٣", "Ⅻ", "½",
	"'", "'s", "'S", "'ll", "'RE", "don't", ".", ",", "/", "//", "{", "}", "(", ")", "\"", "-", "_", "=", "<|endoftext|>",
	"😀", "👍🏽", "👨\u200d👩\u200d👧", "\u200d", "\ufeff", "\x00", "\x1b[0m",
	"hello", "World", "camelCase", "SCREAMING", "naïve", "日本語", "func main() {", "\treturn nil\n}",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := 1 + r.IntN(30); n > 0; n-- {
		a := atoms[r.IntN(len(atoms))]
		if r.IntN(12) == 0 {
			a = strings.Repeat(a, 2+r.IntN(200))
		}
		b.WriteString(a)
	}
	return b.String()
}
