package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
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
		{"a token right after a \\u escape (json.dumps writes them)",
			`{"text": "the key \u201c` + tGitHub + `\u201d and caf\u00e9\u00a0` + tGitHub + `"}`,
			`{"text": "the key \u201c[REDACTED:github-token#1]\u201d and caf\u00e9\u00a0[REDACTED:github-token#1]"}`},
		{"a secret after escaped line breaks and quotes",
			`{"out": "x\n\tPASSWORD=\"` + tPassword + `\"\nnext"}`,
			`{"out": "x\n\tPASSWORD=\"[REDACTED:password#1]\"\nnext"}`},
		{"escaped quote ends a value, never swallowed", `{"cmd": "login --token=\"` + tGitHub + `\" --x"}`, `{"cmd": "login --token=\"[REDACTED:github-token#1]\" --x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := newTestRedactor(t).RedactBytes([]byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("\n in: %q\ngot: %q\nwant %q", tt.in, got, tt.want)
			}
			if kind := jsonKind(tt.in); kind != docText && !validDoc(string(got), kind) {
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
	v, _ := newJSONView(doc)
	m := newMasker()
	spans := r.findInView(doc, v, m)
	out, found := r.redactLiterals(doc, spans, lits, m)
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

// TestJSONView: the view decodes every literal as encoding/json does, and
// maps each of its offsets back to the document so that what a span
// covers, decoded, is what the view showed.
func TestJSONView(t *testing.T) {
	docs := []string{
		`{"a":"x\ny","b":"\u00e9\u201cghp\u201d","c":["\\","\"q\"","\ud83d\ude00!","\ud800x"],"d":"plain"}`,
		`{"n":1,"s":"a\/b\tc"}` + "\n" + `{"n":2,"s":"\u0041\u0042"}` + "\n",
		`"no escapes at all"`,
	}
	for _, doc := range docs {
		v, _ := newJSONView(doc)
		lits := stringLiterals(doc)
		if len(v.lits) != len(lits) {
			t.Fatalf("%s: %d literals in the view, %d in the document", doc, len(v.lits), len(lits))
		}
		for i, l := range lits {
			var want string
			if err := json.Unmarshal([]byte(doc[l[0]-1:l[1]+1]), &want); err != nil {
				t.Fatal(err)
			}
			got := v.text[v.lits[i][0]:v.lits[i][1]]
			if got != want {
				t.Errorf("literal %d: view %q, encoding/json %q", i, got, want)
			}
			// Every span of the decoded literal maps to a span of the
			// document that decodes to at least that text.
			for s := v.lits[i][0]; s <= v.lits[i][1]; s++ {
				for e := s; e <= v.lits[i][1]; e++ {
					ds, de := v.docOffset(s, false), v.docOffset(e, true)
					if ds < l[0] || de > l[1] || ds > de {
						t.Fatalf("view [%d,%d) -> doc [%d,%d) outside literal [%d,%d)", s, e, ds, de, l[0], l[1])
					}
					var dec string
					if err := json.Unmarshal([]byte(`"`+doc[ds:de]+`"`), &dec); err != nil {
						t.Fatalf("view [%d,%d) -> doc %q: cuts an escape", s, e, doc[ds:de])
					}
					if !strings.Contains(dec, v.text[s:e]) && utf8.ValidString(v.text[s:e]) {
						t.Fatalf("view %q -> doc %q decodes to %q", v.text[s:e], doc[ds:de], dec)
					}
				}
			}
		}
	}
}

// FuzzJSONView holds the view builder's validation to encoding/json's: a
// text is one JSON value for the builder exactly when json.Valid says so,
// and every literal it decodes reads as encoding/json reads it.
func FuzzJSONView(f *testing.F) {
	for _, s := range []string{`{"a":"x\ny","b":[1,-2.5e+3,true,false,null,"\u00e9\ud83d\ude00\ud800"]}`, `[1,]`, `01`,
		`{"a" 1}`, "\"a\tb\"", `"\u12"`, "{\"a\":1}\n{\"b\":\"\\\"\"}\n", " [ ] ", `{"a":{"b":[[]]}}`, "\"\xff\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, kind := newJSONView(s)
		first := strings.TrimLeft(s, " \t\r\n")
		whole := first != "" && strings.ContainsAny(first[:1], `{["`)
		if valid := json.Valid([]byte(s)); whole && valid != (kind == docJSON) {
			t.Fatalf("%q: json.Valid %v, view kind %v", s, valid, kind)
		}
		if kind != docJSON {
			return
		}
		lits := stringLiterals(s)
		if len(lits) != len(v.lits) {
			t.Fatalf("%q: %d literals, view %d", s, len(lits), len(v.lits))
		}
		for i, l := range lits {
			var want string
			if err := json.Unmarshal([]byte(s[l[0]-1:l[1]+1]), &want); err != nil {
				t.Fatal(err)
			}
			if got := v.text[v.lits[i][0]:v.lits[i][1]]; got != want && utf8.ValidString(s[l[0]:l[1]]) {
				t.Fatalf("%q literal %d: view %q, encoding/json %q", s, i, got, want)
			}
		}
	})
}
