package redact

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// The evaluation corpus (corpus.jsonl, from gen.py --seed 1) and its scorer
// (eval.py) are in the shared corpus's redact/ directory, outside this
// repository (package internal/corpus finds it). TestEvalCorpus scores the
// redactor in process with the scorer's definitions and, where python3 is
// installed, also through eval.py itself, and fails below the goals.

// redactCorpusFile returns the path of a file of the shared redaction
// corpus, skipping tb where the corpus is missing.
func redactCorpusFile(tb testing.TB, name string) string {
	tb.Helper()
	return corpus.Path(tb, corpus.Redact, name)
}

// transcriptFile returns the path of a real transcript of the shared
// corpus, skipping tb where the corpus is missing.
func transcriptFile(tb testing.TB, name string) string {
	tb.Helper()
	return corpus.Path(tb, corpus.Transcripts, name)
}

// evalCorpusFile is the corpus TestEvalCorpus scores: -eval.corpus, or the
// shared corpus's corpus.jsonl.
func evalCorpusFile(tb testing.TB) string {
	tb.Helper()
	if *evalCorpus != "" {
		return *evalCorpus
	}
	return redactCorpusFile(tb, "corpus.jsonl")
}

var (
	evalCorpus  = flag.String("eval.corpus", "", "corpus to score (e.g. one written by gen.py --seed N; default: the shared corpus's redact/corpus.jsonl)")
	evalVerbose = flag.Bool("eval.v", false, "print every miss and false positive")
)

type evalCase struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Family  string   `json:"family"`
	Context string   `json:"context"`
	Tags    []string `json:"tags"`
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
	Keep    []string `json:"keep"`
}

func loadCases(t testing.TB, path string) []evalCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []evalCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c evalCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// leakedStrict is eval.py's strict test: a run of the secret of length
// min(len, max(12, ceil(len/2))) survives.
func leakedStrict(secret, out string) bool {
	n := len(secret)
	tl := min(n, max(12, int(math.Ceil(float64(n)/2))))
	for i := 0; i+tl <= n; i++ {
		if strings.Contains(out, secret[i:i+tl]) {
			return true
		}
	}
	return false
}

// contextFamilies are the corpus families whose secrets carry no vendor
// prefix: only their context says they are secret.
var contextFamilies = set("password_assignment", "generic_high_entropy", "auth_header_opaque", "basic_auth_url",
	"db_connection_string", "docker_config_auth")

// zeroFPFamilies must never lose a keep.
var zeroFPFamilies = set("git_sha", "uuid", "sha256_digest", "lockfile_hash", "agent_object_id", "public_key_or_cert", "base64_image")

type score struct {
	secrets, caught, exact         int
	vendorN, vendorOK, ctxN, ctxOK int
	posKeep, posKeepOK             int
	neg, negFP                     int
	famN, famOK, famFP             map[string]int
	misses, fps                    []string
}

func (s *score) pct(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return 100 * float64(a) / float64(b)
}

func scoreCases(cases []evalCase, outputs map[string]string) *score {
	s := &score{famN: map[string]int{}, famOK: map[string]int{}, famFP: map[string]int{}}
	for _, c := range cases {
		out := outputs[c.ID]
		if c.Kind == "pos" {
			for _, sec := range c.Secrets {
				s.secrets++
				s.famN[c.Family]++
				leak := leakedStrict(sec, out)
				if !strings.Contains(out, sec) {
					s.exact++
				}
				if contextFamilies[c.Family] {
					s.ctxN++
				} else {
					s.vendorN++
				}
				if leak {
					s.misses = append(s.misses, fmt.Sprintf("%s [%s] %.60q", c.ID, c.Context, sec))
					continue
				}
				s.caught++
				s.famOK[c.Family]++
				if contextFamilies[c.Family] {
					s.ctxOK++
				} else {
					s.vendorOK++
				}
			}
			for _, k := range c.Keep {
				s.posKeep++
				if strings.Contains(out, k) {
					s.posKeepOK++
				} else {
					s.fps = append(s.fps, fmt.Sprintf("%s (positive) lost keep %.60q", c.ID, k))
				}
			}
			continue
		}
		s.neg++
		s.famN[c.Family]++
		for _, k := range c.Keep {
			if !strings.Contains(out, k) {
				s.negFP++
				s.famFP[c.Family]++
				s.fps = append(s.fps, fmt.Sprintf("%s lost %.60q", c.ID, k))
				break
			}
		}
	}
	return s
}

func (s *score) report(t testing.TB, name string) {
	t.Logf("== %s: strict recall %.2f%% (%d/%d), exact %.2f%%; vendor-prefixed %.2f%% (%d/%d), context %.2f%% (%d/%d); "+
		"keep survival %.2f%% (%d/%d); FP %.2f%% (%d/%d)",
		name, s.pct(s.caught, s.secrets), s.caught, s.secrets, s.pct(s.exact, s.secrets),
		s.pct(s.vendorOK, s.vendorN), s.vendorOK, s.vendorN, s.pct(s.ctxOK, s.ctxN), s.ctxOK, s.ctxN,
		s.pct(s.posKeepOK, s.posKeep), s.posKeepOK, s.posKeep, s.pct(s.negFP, s.neg), s.negFP, s.neg)
	if *evalVerbose || testing.Verbose() {
		fams := make([]string, 0, len(s.famN))
		for f := range s.famN {
			fams = append(fams, f)
		}
		sort.Strings(fams)
		for _, f := range fams {
			if s.famOK[f] < s.famN[f] && s.famFP[f] == 0 && s.famOK[f] > 0 || s.famFP[f] > 0 {
				t.Logf("   %-30s n=%-4d caught=%-4d fp=%d", f, s.famN[f], s.famOK[f], s.famFP[f])
			}
		}
		for _, m := range s.misses {
			t.Logf("   miss %s", m)
		}
		for _, f := range s.fps {
			t.Logf("   fp   %s", f)
		}
	}
}

func redactAll(t testing.TB, r *Redactor, cases []evalCase) map[string]string {
	out := make(map[string]string, len(cases))
	for _, c := range cases {
		b, _ := r.RedactBytes([]byte(c.Text))
		out[c.ID] = string(b)
	}
	return out
}

func TestEvalCorpus(t *testing.T) {
	path := evalCorpusFile(t)
	cases := loadCases(t, path)
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	outputs := redactAll(t, r, cases)
	s := scoreCases(cases, outputs)
	s.report(t, path)

	if got := s.pct(s.caught, s.secrets); got < 95 {
		t.Errorf("strict recall %.2f%%, want >= 95%%", got)
	}
	if got := s.pct(s.vendorOK, s.vendorN); got < 99 {
		t.Errorf("strict recall on vendor-prefixed families %.2f%%, want >= 99%%", got)
	}
	if got := s.pct(s.ctxOK, s.ctxN); got < 90 {
		t.Errorf("strict recall on context families %.2f%%, want >= 90%%", got)
	}
	if got := s.pct(s.negFP, s.neg); got > 1 {
		t.Errorf("false positives %.2f%%, want <= 1%%", got)
	}
	if got := s.pct(s.posKeepOK, s.posKeep); got < 99 {
		t.Errorf("keep survival %.2f%%, want >= 99%%", got)
	}
	for f := range zeroFPFamilies {
		if s.famFP[f] > 0 {
			t.Errorf("family %s: %d false positives, want 0", f, s.famFP[f])
		}
	}
	checkWithEvalPy(t, path, cases, outputs, s)
}

// checkWithEvalPy scores the same outputs with the corpus's own eval.py
// when python3 is installed, and requires the two scorers to agree.
func checkWithEvalPy(t *testing.T, path string, cases []evalCase, outputs map[string]string, s *score) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: eval.py cross-check skipped (the in-process score above still gates)")
		return
	}
	dir := t.TempDir()
	outPath := filepath.Join(dir, "outputs.jsonl")
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, c := range cases {
		if err := enc.Encode(map[string]string{"id": c.ID, "output": outputs[c.ID]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sumPath := filepath.Join(dir, "summary.json")
	cmd := exec.Command(py, redactCorpusFile(t, "eval.py"), "--corpus", path, "--outputs", outPath, "--json", sumPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("eval.py: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Summary map[string]int `json:"summary"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	got := sum.Summary
	if got["pos_caught_strict"] != s.caught || got["pos_secrets"] != s.secrets || got["neg_fp"] != s.negFP {
		t.Errorf("eval.py disagrees: strict %d/%d, fp %d; in process: %d/%d, fp %d",
			got["pos_caught_strict"], got["pos_secrets"], got["neg_fp"], s.caught, s.secrets, s.negFP)
	}
	recall := 100 * float64(got["pos_caught_strict"]) / float64(got["pos_secrets"])
	fp := 100 * float64(got["neg_fp"]) / float64(got["neg_cases"])
	t.Logf("eval.py: strict recall %.2f%%, FP %.2f%%", recall, fp)
	if recall < 95 || fp > 1 {
		t.Errorf("eval.py: strict recall %.2f%% (want >= 95%%), FP %.2f%% (want <= 1%%)", recall, fp)
	}
}
