package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"pgregory.net/rapid"

	"github.com/compactkit/compact/tokens"
)

// countRun runs "compact ARGS" with stdin and environ.
func countRun(t *testing.T, stdin string, environ map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return environ[k] }}
	code := run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// countJSON runs a count with --json and decodes the report, checking the
// keys the issue promises.
func countJSON(t *testing.T, stdin string, args ...string) countReport {
	t.Helper()
	code, out, errOut := countRun(t, stdin, nil, append([]string{"count", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("count %v: exit %d: %s", args, code, errOut)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("count %v: %v\n%s", args, err, out)
	}
	for _, k := range []string{"total", "encoding", "model", "window", "by_role"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("count %v: no %q in %s", args, k, out)
		}
	}
	var rep countReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCountCorpus counts every corpus transcript: the parts add up to the
// total, the total is the library's, and stdin gives the same answer.
func TestCountCorpus(t *testing.T) {
	counter, err := tokens.ForModel("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range corpusTranscripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep := countJSON(t, "", path)
			sum := rep.ToolDefinitions + rep.ReplyPriming
			for _, n := range rep.ByRole {
				sum += n
			}
			if rep.Total <= rep.ReplyPriming || sum != rep.Total {
				t.Errorf("total %d, parts add up to %d", rep.Total, sum)
			}
			if rep.Model != "gpt-4o" || rep.Encoding != tokens.O200kBase || !rep.Exact || rep.Window != 128_000 {
				t.Errorf("report: %+v", rep)
			}
			tr := readTranscriptFile(t, path)
			if want := counter.Transcript(tr); rep.Total != want {
				t.Errorf("count says %d, tokens.Counter.Transcript %d", rep.Total, want)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if in := countJSON(t, string(data), "-"); in.Total != rep.Total || in.File != "<stdin>" {
				t.Errorf("from stdin: total %d (file %q), from the file %d", in.Total, in.File, rep.Total)
			}
		})
	}
}

var (
	countOracleOnce sync.Once
	countOracles    = map[string]*tiktoken.Tiktoken{}
)

// tiktokenCount is tiktoken-go's count with its offline loader.
func tiktokenCount(t *testing.T, encoding, text string) int {
	t.Helper()
	countOracleOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		for _, name := range []string{tokens.O200kBase, tokens.Cl100kBase} {
			enc, err := tiktoken.GetEncoding(name)
			if err != nil {
				panic(err)
			}
			countOracles[name] = enc
		}
	})
	return len(countOracles[encoding].EncodeOrdinary(text))
}

// TestCountTextMatchesTiktoken: "count --text" gives tiktoken's count on
// the raw corpus files and on random text, for both encodings.
func TestCountTextMatchesTiktoken(t *testing.T) {
	var texts []string
	for _, path := range corpusTranscripts(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data[:min(len(data), 16<<10)]))
	}
	texts = append(texts, "", "\n \n", "don't STOP'S  \r\n\r\n", "お誕生日おめでとう 👍🏽", "a\xffb")
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		b := make([]rune, r.IntN(200))
		for i := range b {
			b[i] = rune(r.IntN(0x3000))
		}
		texts = append(texts, string(b))
	}
	for _, enc := range []string{tokens.O200kBase, tokens.Cl100kBase} {
		for i, text := range texts {
			rep := countJSON(t, text, "--text", "--encoding", enc, "-")
			if want := tiktokenCount(t, enc, text); rep.Total != want || rep.Mode != "text" || rep.Encoding != enc {
				t.Errorf("%s text %d (%d bytes): count --text %d (%s), tiktoken %d", enc, i, len(text), rep.Total, rep.Encoding, want)
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		text := rapid.String().Draw(rt, "text")
		enc := rapid.SampledFrom([]string{tokens.O200kBase, tokens.Cl100kBase}).Draw(rt, "encoding")
		code, out, errOut := countRun(t, text, nil, "count", "--text", "--json", "--encoding", enc)
		if code != exitOK {
			rt.Fatalf("exit %d: %s", code, errOut)
		}
		var rep countReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			rt.Fatal(err)
		}
		if want := tiktokenCount(t, enc, text); rep.Total != want {
			rt.Fatalf("%s %q: count --text %d, tiktoken %d", enc, text, rep.Total, want)
		}
	})
}

func TestCountOptions(t *testing.T) {
	path := corpusPath(t, "sweagent_marshmallow-1867_function_calling.traj")
	base := countJSON(t, "", path)

	per := countJSON(t, "", "--per-message", path)
	if len(per.PerMessage) != per.Messages || per.Total != base.Total {
		t.Errorf("--per-message: %d rows for %d messages, total %d (without: %d)", len(per.PerMessage), per.Messages, per.Total, base.Total)
	}
	sum := per.ToolDefinitions + per.ReplyPriming
	for i, row := range per.PerMessage {
		sum += row.Tokens
		if row.Index != i || row.Role == "" || row.Tokens < 4 {
			t.Errorf("row %d: %+v", i, row)
		}
	}
	if sum != per.Total {
		t.Errorf("rows add up to %d, total %d", sum, per.Total)
	}

	cl := countJSON(t, "", "--encoding", "cl100k_base", path)
	if cl.Encoding != tokens.Cl100kBase || cl.Model != "gpt-4o" || cl.Total == 0 {
		t.Errorf("--encoding cl100k_base: %+v", cl)
	}
	gpt4 := countJSON(t, "", "--model", "gpt-4-0613", path)
	if gpt4.Model != "gpt-4" || gpt4.Encoding != tokens.Cl100kBase || gpt4.Window != 8192 || gpt4.Percent <= 0 {
		t.Errorf("--model gpt-4-0613: %+v", gpt4)
	}
	claude := countJSON(t, "", "--model", "claude-sonnet-4-5", path)
	if claude.Exact || claude.Encoding != "estimate" || claude.UnknownModel || claude.Window != 200_000 {
		t.Errorf("--model claude-sonnet-4-5: %+v", claude)
	}
	unknown := countJSON(t, "", "--model", "my-local-model", path)
	if unknown.Exact || !unknown.UnknownModel || unknown.Window != tokens.DefaultWindow {
		t.Errorf("unknown model: %+v", unknown)
	}
	code, out, _ := countRun(t, "", nil, "count", "--model", "my-local-model", path)
	if code != exitOK || !strings.Contains(out, "unknown model: estimated") {
		t.Errorf("unknown model, text output (exit %d):\n%s", code, out)
	}

	dir := t.TempDir()
	table := filepath.Join(dir, "models.toml")
	os.WriteFile(table, []byte("[[models]]\nname = \"my-local-model\"\nencoding = \"cl100k_base\"\nwindow = 32000\noutput_reserve = 4000\n"), 0o644)
	for _, c := range []struct {
		args    []string
		environ map[string]string
	}{
		{[]string{"--models", table}, nil},
		{nil, map[string]string{"COMPACT_MODELS": table}},
	} {
		code, out, errOut := countRun(t, "", c.environ, append(append([]string{"count", "--json", "--model", "my-local-model"}, c.args...), path)...)
		var rep countReport
		if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("model table %v %v: exit %d: %s", c.args, c.environ, code, errOut)
		}
		if rep.UnknownModel || !rep.Exact || rep.Encoding != tokens.Cl100kBase || rep.Window != 32000 || rep.Total != cl.Total {
			t.Errorf("model table %v %v: %+v", c.args, c.environ, rep)
		}
	}

	code, out, errOut := countRun(t, "", nil, "count", path)
	for _, want := range []string{"total", "% of the 128,000-token window", "o200k_base (exact)", "assistant"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("text output lacks %q (exit %d, %s):\n%s", want, code, errOut, out)
		}
	}
}

// TestCountThinking: thinking parts are reported apart and counted only
// with --thinking.
func TestCountThinking(t *testing.T) {
	var found bool
	for _, path := range corpusTranscripts(t) {
		rep := countJSON(t, "", path)
		if rep.Thinking == 0 {
			continue
		}
		found = true
		with := countJSON(t, "", "--thinking", path)
		if !with.ThinkingCounted || with.Total <= rep.Total || with.Total-rep.Total > rep.Thinking+rep.Messages {
			t.Errorf("%s: total %d without thinking, %d with; thinking %d", filepath.Base(path), rep.Total, with.Total, rep.Thinking)
		}
	}
	if !found {
		t.Fatal("no corpus transcript has thinking parts") // the corpus has several: reading them lost it
	}
}

func TestCountErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"models": [{"name": "x", "window": 10, "encoding": "p50k_base"}]}`), 0o644)
	notTranscript := filepath.Join(dir, "notes.txt")
	os.WriteFile(notTranscript, []byte("just some notes\n"), 0o644)
	cases := []struct {
		name  string
		args  []string
		code  int
		inErr string
	}{
		{"bad encoding", []string{"count", "--encoding", "p50k_base", notTranscript}, exitUsage, "p50k_base"},
		{"missing file", []string{"count", filepath.Join(dir, "nope.jsonl")}, exitUsage, "nope.jsonl"},
		{"two files", []string{"count", notTranscript, notTranscript}, exitUsage, "one FILE"},
		{"bad flag", []string{"count", "--bogus"}, exitUsage, "bogus"},
		{"bad model table", []string{"count", "--models", bad, notTranscript}, exitUsage, "p50k_base"},
		{"missing model table", []string{"count", "--models", filepath.Join(dir, "none.toml"), notTranscript}, exitUsage, "none.toml"},
		{"not a transcript", []string{"count", notTranscript}, exitUsage, "--text counts it as plain text"},
		{"directory", []string{"count", dir}, exitUsage, "directory"},
	}
	for _, c := range cases {
		code, out, errOut := countRun(t, "", nil, c.args...)
		if code != c.code || !strings.Contains(errOut, c.inErr) || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d mentioning %q", c.name, code, errOut, out, c.code, c.inErr)
		}
	}
	if code, _, errOut := countRun(t, "", nil, "count", "--help"); code != exitOK || !strings.Contains(errOut, "--per-message") {
		t.Errorf("--help: exit %d, %s", code, errOut)
	}
	// Text mode accepts any bytes.
	if code, out, errOut := countRun(t, "", nil, "count", "--text", notTranscript); code != exitOK || !strings.Contains(out, "4 tokens") {
		t.Errorf("--text notes.txt: exit %d, %q, %s", code, out, errOut)
	}
	if !utf8.ValidString(countCommas(-1234567)) || countCommas(-1234567) != "-1,234,567" || countCommas(999) != "999" {
		t.Errorf("countCommas: %q %q", countCommas(-1234567), countCommas(999))
	}
}
