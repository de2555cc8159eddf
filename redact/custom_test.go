package redact

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const rulesTOML = `
title = "acme"

[extend]
useDefault = true
disabledRules = ["mailgun-api-key"]

[[rules]]
id = "acme-key"
description = "ACME internal key"
regex = '''acme_(?:live|test)_([a-z0-9]{24})'''
secretGroup = 1
keywords = ["acme_"]
entropy = 3.0
tags = ["internal"]

  [rules.allowlist]
  stopwords = ["deadbeef"]

[[rules]]
id = "Ticket Token"
regex = '''(?<=ticket-)[A-Z]{4}\d{6}(?!\d)'''
keywords = ["ticket-"]

  [[rules.allowlists]]
  regexTarget = "line"
  regexes = ['''^#''']

[allowlist]
description = "test fixtures"
regexes = ['''^acme_test_000''']

[[allowlists]]
stopwords = ["EXAMPLE"]
`

func TestLoadRules(t *testing.T) {
	cfg, err := LoadRules(strings.NewReader(rulesTOML))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rules) != 2 || len(cfg.Allowlists) != 2 || cfg.NoBuiltin || len(cfg.Disable) != 1 {
		t.Fatalf("config %+v", cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"k acme_live_q8w2xz0pl4vr7nt1yb6ck3mh", "k acme_live_[REDACTED:acme-key#1]"},
		{"k acme_live_deadbeefdeadbeefdeadbeef", ""},                              // rule stopword
		{"see ticket-ABCD123456 now", "see ticket-[REDACTED:ticket-token#1] now"}, // lookbehind: regexp2
		{"# ticket-ABCD123456 in a comment", ""},                                  // line allowlist
		{"ticket-ABCD1234567", ""},                                                // lookahead
		{"mail key-0123456789abcdef0123456789abcdef", ""},                         // disabled built-in (and ascending)
		{"GITHUB_TOKEN=" + tGitHub, "GITHUB_TOKEN=[REDACTED:github-token#1]"},
	}
	for _, tt := range tests {
		want := tt.want
		if want == "" {
			want = tt.in
		}
		if got := r.String(tt.in); got != want {
			t.Errorf("%q: got %q, want %q", tt.in, got, want)
		}
	}
}

func TestLoadRulesErrors(t *testing.T) {
	for name, src := range map[string]string{
		"syntax":        "[[rules]\n",
		"unknown field": "[[rules]]\nid = \"x\"\nregex = \"x\"\nsecret_group = 1\n",
		"path only":     "[[rules]]\nid = \"x\"\npath = '''\\.pem$'''\n",
	} {
		if _, err := LoadRules(strings.NewReader(src)); !errors.Is(err, ErrRule) {
			t.Errorf("%s: err %v, want ErrRule", name, err)
		}
	}
	for name, rl := range map[string]Rule{
		"no id":      {Regex: "x"},
		"no regex":   {ID: "x"},
		"bad regex":  {ID: "x", Regex: "(?<=a"},
		"bad group":  {ID: "x", Regex: "a(b)", SecretGroup: 2},
		"bad allow":  {ID: "x", Regex: "a", Allowlists: []Allowlist{{Regexes: []string{"("}}}},
		"bad target": {ID: "x", Regex: "a", Allowlists: []Allowlist{{RegexTarget: "commit"}}},
	} {
		if _, err := New(Config{Rules: []Rule{rl}}); !errors.Is(err, ErrRule) {
			t.Errorf("%s: err %v, want ErrRule", name, err)
		}
	}
	if cfg, err := LoadRules(strings.NewReader("[extend]\nuseDefault = false\n")); err != nil || !cfg.NoBuiltin {
		t.Errorf("useDefault = false: %+v %v", cfg, err)
	}
}

// TestCustomRuleTimeout runs a catastrophically backtracking rule: the
// match is abandoned at the timeout, counted, and nothing of the input
// reaches an error or a finding.
func TestCustomRuleTimeout(t *testing.T) {
	r, err := New(Config{
		Rules:        []Rule{{ID: "evil", Regex: `x(?=a)(a+)+$`}},
		MatchTimeout: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	secretish := "x" + strings.Repeat("a", 40) + "!" + tGitHub
	start := time.Now()
	out, found := r.Redact(secretish)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if st := r.Stats(); st.Timeouts == 0 {
		t.Errorf("timeout not counted: %+v", st)
	}
	// The built-in rules still ran.
	if strings.Contains(out, tGitHub) || len(found) != 1 {
		t.Errorf("out %q, findings %v", out, found)
	}
}
