package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactBytes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"json document keeps its bytes",
			"{\n  \"a\" : [1, 2.5e3, true, null],\n  \"token\":\"" + tGitHub + "\", \"u\": \"\\u00e9\\/x\"\n}\n",
			"{\n  \"a\" : [1, 2.5e3, true, null],\n  \"token\":\"[REDACTED:github-token#1]\", \"u\": \"\\u00e9\\/x\"\n}\n"},
		{"jsonl",
			`{"n":1,"content":"GITHUB_TOKEN=` + tGitHub + `\nPORT=8080"}` + "\n\n" + `{"n":2}` + "\n",
			`{"n":1,"content":"GITHUB_TOKEN=[REDACTED:github-token#1]\nPORT=8080"}` + "\n\n" + `{"n":2}` + "\n"},
		{"secret split over two literals is masked in each",
			`["-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----"]`,
			`["-----BEGIN PRIVATE KEY-----\n[REDACTED:private-key#1]", "[REDACTED:private-key#2]\n-----END PRIVATE KEY-----"]`},
		{"text that is not JSON", "password=" + tPassword + " {not json", "password=[REDACTED:password#1] {not json"},
		{"escaped quote ends a value, never swallowed", `{"cmd": "login --token=\"` + tGitHub + `\" --x"}`, `{"cmd": "login --token=\"[REDACTED:github-token#1]\" --x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := newTestRedactor(t).RedactBytes([]byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("\n in: %q\ngot: %q\nwant %q", tt.in, got, tt.want)
			}
			if kind := jsonKindOf(tt.in); kind != docText && !validDoc(string(got), kind) {
				t.Errorf("output no longer JSON: %s", got)
			}
		})
	}
}

func TestStringLiterals(t *testing.T) {
	doc := `{"a\"b": ["x", "", "\\"], "c": 1}`
	var got []string
	for _, l := range stringLiterals(doc) {
		got = append(got, doc[l[0]:l[1]])
	}
	want := []string{`a\"b`, `x`, ``, `\\`, `c`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRedactLiteralsFallback exercises the re-encoding path that RedactBytes
// takes should span clipping ever yield invalid JSON.
func TestRedactLiteralsFallback(t *testing.T) {
	r := newTestRedactor(t)
	doc := `{"a": "token=` + tGitHub + `", "b": "<p>keep \u00e9</p>", "n": 3}`
	lits := stringLiterals(doc)
	spans := clipToLiterals(doc, r.find(doc, nil), lits)
	out, found := r.redactLiterals(doc, spans, lits)
	if !json.Valid([]byte(out)) {
		t.Fatalf("invalid: %s", out)
	}
	want := `{"a": "token=[REDACTED:github-token#1]", "b": "<p>keep \u00e9</p>", "n": 3}`
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if len(found) != 1 || found[0].Rule != "github-token" {
		t.Errorf("findings %v", found)
	}
}
