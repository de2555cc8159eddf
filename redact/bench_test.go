package redact

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/cputime"
)

// benchRedact runs r.Redact over text b.N times and reports throughput
// in wall-clock and CPU time.
func benchRedact(b *testing.B, r *Redactor, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	start := cputime.Process()
	n := 0
	for b.Loop() {
		r.Redact(text)
		n++
	}
	if cpu := cputime.Process() - start; cpu > 0 {
		b.ReportMetric(float64(len(text)*n)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}

// benchTranscripts are the benchmarks' real agent transcripts (Claude Code
// and Codex JSONL) of the shared corpus.
var benchTranscripts = []string{
	"claudecode_agentcmd_full-session-four.jsonl",
	"codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
}

// transcriptsText is the text of the benchmark transcripts.
func transcriptsText(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	for _, name := range benchTranscripts {
		raw, err := os.ReadFile(transcriptFile(tb, name))
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(raw)
	}
	return b.String()
}

// mixedText is the benchmark's input: two real agent transcripts (Claude
// Code and Codex JSONL, mostly code, logs and prose, no secrets) followed by
// every case of the evaluation corpus (secrets in 40+ contexts, hard
// negatives). About 830 KB; one secret per 2 KB.
func mixedText(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString(transcriptsText(tb))
	for _, c := range loadCases(tb, redactCorpusFile(tb, "corpus.jsonl")) {
		b.WriteString(c.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// BenchmarkRedactMixed is the throughput goal (>= 50 MiB/s on one core:
// go test -bench RedactMixed -cpu 1).
func BenchmarkRedactMixed(b *testing.B) {
	text := mixedText(b)
	r, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	benchRedact(b, r, text)
}

// BenchmarkRedactTranscripts measures real transcripts alone: text with no
// secret, the common case.
func BenchmarkRedactTranscripts(b *testing.B) {
	text := transcriptsText(b)
	r, _ := New(Config{})
	benchRedact(b, r, text)
}

// BenchmarkRedactCorpus measures the evaluation corpus alone: one secret
// per 900 bytes, the worst case for the detectors that run after a keyword.
func BenchmarkRedactCorpus(b *testing.B) {
	var sb strings.Builder
	for _, c := range loadCases(b, redactCorpusFile(b, "corpus.jsonl")) {
		sb.WriteString(c.Text)
		sb.WriteByte('\n')
	}
	text := sb.String()
	r, _ := New(Config{})
	benchRedact(b, r, text)
}

// adversarialInputs are 1 MiB texts built to make a detector do more than
// linear work: endless runs, keywords repeated back to back, markers
// without their closing half.
func adversarialInputs() map[string]string {
	const mib = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mib/len(s)+1)[:mib] }
	return map[string]string{
		"A-run":             rep("A"),
		"hex-run":           rep("0123456789abcdef"),
		"b64-with-==":       rep("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo0NTY3ODkwYWJjZGVmZ2hpamts=="),
		"password=":         rep("password="),
		"PASSWORD-glued":    rep("PASSWORD"),
		"token:-quoted":     rep(`"token":"`),
		"key-yaml-block":    rep("key: |\n  "),
		"pem-no-end":        rep("-----BEGIN RSA PRIVATE KEY-----\n"),
		"pem-one-end":       rep("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n") + "-----END RSA PRIVATE KEY-----",
		"url-userinfo":      rep("a://b:c@"),
		"eyJ-glued":         rep("eyJ-"),
		"xoxb-glued":        rep("xoxb-"),
		"sk-dashes":         rep("sk-a"),
		"ghp_repeat":        rep("ghp_"),
		"Q~":                rep("Q~"),
		":AA":               rep("1:AA"),
		"dots":              rep("MTIzNDU2Nzg5MDEyMzQ1Njc4OQ."),
		"kind-secret":       rep("kind: Secret\ndata:\n  a: b\n"),
		"bearer":            rep("Bearer "),
		"curl-u":            rep("-u a:"),
		"cat-key":           rep("cat master.key\n"),
		"mask-like":         rep("[REDACTED:x#1"),
		"json-escapes":      rep(`\\\"\n`),
		"login-slash":       rep("login is a / "),
		"twilio-AC":         rep("twilio AC0123456789abcdef0123456789abcdef, "),
		"telegram-digits":   rep("telegram 12345678901234567890"),
		"nested-brackets":   rep("token=(((((("),
		"k8s-json":          rep(`"kind":"Secret","data":{"a":"`),
		"long-name-keyword": rep("a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p_q_r_s_t_u_v_w_x_y_z_token_"),
		"secret-set":        rep("gh secret set A --body x=y "),
		"from-literal":      rep("--from-literal=a=b "),
		"tf-variable":       rep("variable \"db_password\" {\n"),
		"json-deep":         rep("["),
		"json-escapes-u":    `{"a":"` + rep(`\u00e9`)[:mib-16] + `"}`,
		"json-lines-open":   rep("{\"a\":\"b\\\"\n"),
		"url-at-run":        "x://y:" + rep("@"),
		"typographic-open":  rep("TOKEN=“"),
		"b64-text-runs":     rep("VE9LRU49Z2hwX2N2YlBDYms1WjRWclpRTjFuMllCc09rY2NGeTM5STNyMGlsMgo= "),
		"percent-run":       rep("%41"),
		"percent-fields":    rep("a%3Db%26"),
		"split-quoted":      rep("\"ghp_abc\n  def\n"),
		"split-quoted-crlf": rep("\"ghp_abc\r\n  def\r\n"),
		"split-quoted-cr":   rep("'ghp_abc\r  def\r"),
	}
}

// BenchmarkAdversarial is the 1 MiB adversarial goal (< 100 ms each).
func BenchmarkAdversarial(b *testing.B) {
	r, _ := New(Config{})
	in := adversarialInputs()
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) { benchRedact(b, r, in[name]) })
	}
}

// BenchmarkCompileBuiltins is the compile goal (< 5 ms): compiling every
// built-in pattern and building the keyword automaton from scratch.
func BenchmarkCompileBuiltins(b *testing.B) {
	b.ReportAllocs()
	start := cputime.Process()
	n := 0
	for b.Loop() {
		var rules []*rule
		rules = append(rules, vendorRules()...)
		rules = append(rules, goRules()...)
		rules = append(rules, contextRules()...)
		newEngine(rules, true)
		n++
	}
	b.ReportMetric(float64((cputime.Process()-start).Microseconds())/float64(n)/1000, "cpu-ms/op")
}
