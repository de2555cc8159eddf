package redact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Fake secrets with valid formats. They are random; the GitHub and npm ones
// carry valid checksums.
const (
	tGitHub   = "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"
	tGitHub2  = "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"
	tNPM      = "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"
	tAWSID    = "AKIAZ7QW3ER5TY2UI4OP"
	tAWSSec   = "LI5vb+0x1P6kRP827zIVIIsFKMkgIlGK9TJ+QiqG"
	tOpenAI   = "sk-proj-Qx3vB8nW2mK5tR9yH4jL7pZ1cF6dS0gA3eU8iO2wT5rY9uX4vN7bM1kJ6hG3fD0sT3BlbkFJq8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2jA8eU1iO4wQ7rY5tZ2xC9vB6nM3lK0j"
	tSlack    = "xoxb-971633718598-0153713072-fREeY4djFiSFBEsaMqIOhM5f"
	tStripe   = "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"
	tJWT      = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MmQ2YjNiMiIsImlhdCI6MTcwMDAwMDAwMH0.q8W2xZ0pL4vR7nT1yB6cK3mH9sD5fG2jA8eU1iO4wQ7"
	tPassword = "Tr0ub4dor&3xyz"
)

func newTestRedactor(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMaskFormat(t *testing.T) {
	r := newTestRedactor(t)
	in := "a=" + tGitHub + " b=" + tGitHub2 + " again " + tGitHub + " key " + tAWSID
	out, found := r.Redact(in)
	want := "a=[REDACTED:github-token#1] b=[REDACTED:github-token#2] again [REDACTED:github-token#1] key [REDACTED:aws-access-key-id#1]"
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if len(found) != 4 {
		t.Fatalf("%d findings", len(found))
	}
	for _, f := range found {
		if sec := in[f.Start:f.End]; sec != tGitHub && sec != tGitHub2 && sec != tAWSID {
			t.Errorf("finding %+v spans %q", f, sec)
		}
	}
	// Numbering depends on the input, not on what the Redactor saw before:
	// a used Redactor and a fresh one number a text alike.
	if out2 := r.String("later: " + tGitHub2); out2 != "later: [REDACTED:github-token#1]" {
		t.Errorf("second call: %s", out2)
	}
	if out3 := newTestRedactor(t).String("later: " + tGitHub2); out3 != "later: [REDACTED:github-token#1]" {
		t.Errorf("fresh redactor: %s", out3)
	}
	// Within a scope, one secret keeps its mask across calls.
	sc := r.NewScope()
	a, b := sc.String("a "+tGitHub), sc.String("b "+tGitHub2+" "+tGitHub)
	if a != "a [REDACTED:github-token#1]" || b != "b [REDACTED:github-token#2] [REDACTED:github-token#1]" {
		t.Errorf("scope: %q, %q", a, b)
	}
	// A new secret never takes the number of a mask the text already holds.
	if got := r.String("old [REDACTED:github-token#1] new " + tGitHub2); got != "old [REDACTED:github-token#1] new [REDACTED:github-token#2]" {
		t.Errorf("reserved: %s", got)
	}
	sc = r.NewScope("folded handoff: [REDACTED:github-token#4]")
	if got := sc.String(tGitHub); got != "[REDACTED:github-token#5]" {
		t.Errorf("reserved by NewScope: %s", got)
	}
}

func TestFindingsNeverHoldSecrets(t *testing.T) {
	r := newTestRedactor(t)
	_, found := r.Redact("token=" + tGitHub + "\npassword: " + tPassword)
	b, _ := json.Marshal(found)
	if strings.Contains(string(b), tGitHub) || strings.Contains(string(b), tPassword) {
		t.Fatalf("findings hold a secret: %s", b)
	}
}

func TestIdempotentExamples(t *testing.T) {
	r := newTestRedactor(t)
	for _, in := range []string{
		"password=" + tPassword,
		"Authorization: Bearer " + tJWT,
		"postgres://app:" + tPassword + "@db:5432/x",
		`{"api_key": "` + tOpenAI + `", "n": 1}`,
		"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
		"[REDACTED] [REDACTED:x#3] password: [REDACTED:password#1]",
	} {
		once := r.String(in)
		if twice := r.String(once); twice != once {
			t.Errorf("not idempotent:\n in: %q\n 1x: %q\n 2x: %q", in, once, twice)
		}
	}
}

func TestAddValue(t *testing.T) {
	r := newTestRedactor(t)
	r.AddValue(`my"weird/value`)
	r.AddValue("abc") // too short: ignored
	r.AddValue("")
	in := `plain my"weird/value; json "my\"weird/value"; query x=my%22weird%2Fvalue; abc`
	out, found := r.Redact(in)
	want := `plain [REDACTED:value#1]; json "[REDACTED:value#1]"; query x=[REDACTED:value#1]; abc`
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if len(found) != 3 {
		t.Errorf("%d findings", len(found))
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newTestRedactor(t)
	var wg sync.WaitGroup
	results := make([]string, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%4 == 0 {
				r.AddValue(fmt.Sprintf("value-number-%02d", i))
			}
			results[i] = r.String("x " + tGitHub + " y " + tGitHub2 + " z " + tAWSID)
		}()
	}
	wg.Wait()
	for _, s := range results[1:] {
		if s != results[0] {
			t.Fatalf("masks differ across goroutines: %q vs %q", s, results[0])
		}
	}
	if st := r.Stats(); st.Findings != 48 || st.Bytes == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestConfig(t *testing.T) {
	r, err := New(Config{Disable: []string{"github-token"}})
	if err != nil {
		t.Fatal(err)
	}
	if out := r.String("x " + tGitHub); out != "x "+tGitHub {
		t.Errorf("disabled rule still masks: %s", out)
	}
	if out := r.String("token=" + tGitHub); out != "token=[REDACTED:token#1]" {
		t.Errorf("context rule: %s", out)
	}
	r, _ = New(Config{NoBuiltin: true})
	if out := r.String("password=" + tPassword + " " + tGitHub); out != "password="+tPassword+" "+tGitHub {
		t.Errorf("NoBuiltin masks: %s", out)
	}
	r, _ = New(Config{Allowlists: []Allowlist{{Stopwords: []string{"cvbPCbk5"}}, {Regexes: []string{`^AKIA`}}}})
	if out := r.String(tGitHub + " " + tAWSID + " " + tGitHub2); out != tGitHub+" "+tAWSID+" [REDACTED:github-token#1]" {
		t.Errorf("allowlist: %s", out)
	}
	if _, err := New(Config{Allowlists: []Allowlist{{RegexTarget: "path"}}}); err == nil {
		t.Error("bad regexTarget accepted")
	}
}

func TestBuiltinRulesListed(t *testing.T) {
	ids := map[string]bool{}
	for _, ri := range BuiltinRules() {
		if ri.ID == "" || ri.Description == "" {
			t.Errorf("rule without id or description: %+v", ri)
		}
		ids[ri.ID] = true
	}
	// The families, by rule id.
	for _, id := range []string{"openai-api-key", "anthropic-api-key", "github-token", "github-fine-grained-pat", "gitlab-token",
		"aws-access-key-id", "aws-session-token", "gcp-api-key", "private-key", "azure-ad-client-secret", "slack-token",
		"slack-webhook", "stripe-api-key", "twilio-api-key", "twilio-auth-token", "sendgrid-api-key", "mailgun-api-key",
		"npm-token", "pypi-token", "huggingface-token", "databricks-token", "digitalocean-token", "shopify-token",
		"linear-api-key", "doppler-token", "vault-token", "telegram-bot-token", "discord-webhook", "discord-bot-token",
		"jwt", "secret-assignment", "url-password", "kubernetes-secret", "azure-account-key"} {
		if !ids[id] {
			t.Errorf("no rule %s", id)
		}
	}
	vendors := map[string]bool{}
	for _, tk := range vendorTokens {
		vendors[tk.id] = true
	}
	for _, m := range midTokens {
		vendors[m.id] = true
	}
	if len(vendors) < 100 {
		t.Errorf("%d vendor token families, want at least 100", len(vendors))
	}
}

// TestBuiltinPatternsCompile compiles every built-in pattern: they are
// compiled lazily, on a rule's first keyword hit, so this is where a bad
// one shows.
func TestBuiltinPatternsCompile(t *testing.T) {
	n := 0
	for _, r := range builtinRules() {
		for _, l := range []*lazyRegexp{r.prefix, r.window} {
			if l == nil {
				continue
			}
			if _, err := regexp.Compile(l.expr); err != nil {
				t.Errorf("rule %s: %v", r.id, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no built-in patterns")
	}
}
