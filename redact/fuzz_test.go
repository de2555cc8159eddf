package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/corpus"
)

// fuzzSeeds are a few cases of the shared redaction corpus (where it is)
// and the adversarial shapes.
func fuzzSeeds(f *testing.F) {
	if corpus.Available() {
		cases := loadCases(f, redactCorpusFile(f, "corpus.jsonl"))
		for i := 0; i < len(cases); i += 13 {
			f.Add(cases[i].Text)
		}
	}
	for _, s := range adversarialSeeds {
		f.Add(s)
	}
}

var adversarialSeeds = []string{
	"password=password=password=", `"token": "\"token\": \""`, "-----BEGIN RSA PRIVATE KEY-----\n-----BEGIN", "a://b:c@d://e:f@",
	"[REDACTED:x#1][REDACTED", "kind: Secret\ndata:\n  a: |\n    b\n", "eyJ-eyJ.eyJ", "\\\\\\\"token\\\\\\\": \\\\\\\"",
	"key: |\n  " + tGitHub + "\n", "x\\n" + tOpenAI + "\\u00", "login is a / b\xff", "Q~Q~1Q~", "1234567:AA",
	// Keys split by a line break inside their quotes: CR LF, a lone CR,
	// escaped breaks, JSON inside a JSON string.
	"k = \"" + tGitHub[:20] + "\r\n  " + tGitHub[20:] + "\"\r\n", "k = '" + tGitHub[:20] + "\r" + tGitHub[20:] + "'",
	`{"k": "` + tGitHub[:20] + `\r\n` + tGitHub[20:] + `"}`, `{"o": "{\"k\": \"` + tGitHub[:20] + `\\r\\n` + tGitHub[20:] + `\"}"}`,
	`"ab\\\n` + tGitHub + `\r\n\"`,
}

func FuzzRedact(f *testing.F) {
	fuzzSeeds(f)
	r, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, found := r.Redact(in)
		prev := 0
		for _, fd := range found {
			if fd.Start < prev || fd.End <= fd.Start || fd.End > len(in) {
				t.Fatalf("bad finding %+v (prev %d, len %d)", fd, prev, len(in))
			}
			prev = fd.End
		}
		if len(found) == 0 && out != in {
			t.Fatalf("output changed without findings")
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", out)
		}
		if again := r.String(out); again != out {
			t.Fatalf("not idempotent:\n in: %q\n 1x: %q\n 2x: %q", in, out, again)
		}
	})
}

func FuzzRedactJSON(f *testing.F) {
	for _, s := range []string{`{"password": "` + tPassword + `"}`, `["` + tGitHub + `", 1, null]`,
		`{"a": "line\n` + tNPM + `\"", "b": {"token": "x\\\"y"}}` + "\n" + `{"c": "d"}`,
		"$ tool --json\n" + `{"out": "caf\u00e9 \u201c` + tGitHub + `\u201d"}` + "\nExit code: 0"} {
		f.Add(s)
	}
	r, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		kind := jsonKind(in)
		out, _ := r.RedactBytes([]byte(in))
		if kind != docText && !validDoc(string(out), kind) {
			t.Fatalf("JSON in, invalid out:\n in: %q\nout: %q", in, out)
		}
		// Lines of JSON among text stay JSON too.
		inLines, outLines := strings.Split(in, "\n"), strings.Split(string(out), "\n")
		if len(inLines) != len(outLines) {
			t.Fatalf("%d lines in, %d out", len(inLines), len(outLines))
		}
		for i, l := range inLines {
			if tl := strings.TrimSpace(l); tl != "" && strings.ContainsAny(tl[:1], `{["`) && json.Valid([]byte(tl)) &&
				!json.Valid([]byte(strings.TrimSpace(outLines[i]))) {
				t.Fatalf("line %d: JSON in, invalid out:\n in: %q\nout: %q", i, l, outLines[i])
			}
		}
		if kind == docJSON {
			var a, b any
			json.Unmarshal([]byte(in), &a)
			json.Unmarshal(out, &b)
			if shape(a) != shape(b) {
				t.Fatalf("shape changed:\n in: %q\nout: %q", in, out)
			}
		}
		if again, _ := r.RedactBytes(out); string(again) != string(out) {
			t.Fatalf("not idempotent:\n in: %q\n 1x: %q\n 2x: %q", in, out, again)
		}
	})
}

// FuzzLoadRules feeds the TOML rule parser: no input may panic it, and a
// configuration it accepts must build a Redactor that runs.
func FuzzLoadRules(f *testing.F) {
	f.Add(rulesTOML)
	f.Add("[[rules]]\nid = \"x\"\nregex = '''a(b)'''\nsecretGroup = 1\nkeywords = [\"a\"]\n")
	f.Add("[extend]\nuseDefault = false\n[[allowlists]]\nregexTarget = \"line\"\nregexes = ['''x''']\n")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := LoadRules(strings.NewReader(src))
		if err != nil {
			return
		}
		r, err := New(cfg)
		if err != nil {
			return
		}
		r.Redact("acme_live_q8w2xz0pl4vr7nt1yb6ck3mh ticket-ABCD123456 " + tGitHub)
	})
}
