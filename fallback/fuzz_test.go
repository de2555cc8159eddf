package fallback

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

var textSeeds = []string{
	`see src/x.go:42 and C:\Users\a\b.cs, ~/notes.md, /usr/lib/x.so and ./a/(group)/[id]/page.tsx:1-9`,
	"`getUserByID` in pkg.Func calls snake_case_name with @scope/pkg@1.2 and https://e.com/a?b=(c)] #123 3f2a9c1e",
	"Traceback (most recent call last):\n  File \"/t/x.py\", line 3\nKeyError: 'k'\n",
	"ERROR:\nNo replacement was performed.\n== [a.sql] FAIL\nL:   3 | P:  1 | L003 | bad\n",
	"The issue is that `a` runs before `b`. So we fix it.Now the next sentence! e.g. this. 1. item\n```go\nx := 1\n```",
	"cd /w && cat > f.py << 'EOF'\nprint(1)\nEOF\nsed -i 's/a/b/' x.go | tee out.log > /dev/null; mv a b; rm -rf c",
	"<returncode>2</returncode>\n<output>\nboom\n</output>",
	`{"output":"x\n","metadata":{"exit_code":1}}`,
	"日本語のパス/ファイル.txt and \x00\xff invalid utf8 a/b/../c",
	"",
}

// FuzzScanRefs checks the reference scanner on any text: it never panics,
// and everything it reports is a piece of the input of the kind it says.
func FuzzScanRefs(f *testing.F) {
	for _, s := range textSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scanRefs(s, func(r ref) {
			if !strings.Contains(s, r.text) {
				t.Fatalf("%q is not part of the input", r.text)
			}
			switch r.kind {
			case refPath:
				if !isPath(r.text) {
					t.Fatalf("path %q fails isPath", r.text)
				}
				for _, part := range strings.Split(r.line, ",") {
					a, b, _ := strings.Cut(part, "-")
					if r.line != "" && (!allDigits(a) || b != "" && !allDigits(b)) {
						t.Fatalf("line %q of %q", r.line, r.text)
					}
				}
			case refURL:
				if !strings.Contains(r.text, "://") {
					t.Fatalf("URL %q", r.text)
				}
			case refIdent:
				if !isIdentifier(r.text) && !isScopedPackage(r.text) {
					t.Fatalf("identifier %q", r.text)
				}
			case refSHA:
				if !isHexID(r.text) {
					t.Fatalf("hex id %q", r.text)
				}
			case refIssue:
				if r.text[0] != '#' || !allDigits(r.text[1:]) {
					t.Fatalf("issue %q", r.text)
				}
			default:
				t.Fatalf("kind %d", r.kind)
			}
		})
		codeSpans(s, func(span string) {
			if !strings.Contains(s, span) || strings.Contains(span, "\n") {
				t.Fatalf("span %q", span)
			}
		})
	})
}

// FuzzSentences checks that every sentence is found where it says, in
// order, on one line.
func FuzzSentences(f *testing.F) {
	for _, s := range textSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		last := -1
		sentences(s, func(off int, sentence string) {
			if off < 0 || off+len(sentence) > len(s) || s[off:off+len(sentence)] != sentence {
				t.Fatalf("sentence %q not at offset %d", sentence, off)
			}
			if off <= last || strings.Contains(sentence, "\n") || sentence == "" {
				t.Fatalf("sentence %q at %d after %d", sentence, off, last)
			}
			last = off
			_ = decisionScore(sentence)
		})
		for _, c := range constraintSentences(s) {
			if !strings.Contains(s, c) {
				t.Fatalf("constraint %q not verbatim", c)
			}
		}
	})
}

// FuzzOutputs runs the readers of tool output and commands on any text.
func FuzzOutputs(f *testing.F) {
	for _, s := range textSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		body, _, _ := format.UnwrapOutput(s)
		for _, brief := range []bool{false, true} {
			lines := errorLines(body, brief, !brief)
			if len(lines) > 2 {
				t.Fatalf("%d error lines", len(lines))
			}
		}
		_ = firstMeaningfulLine(body)
		for _, f := range shellFiles(s) {
			if f.path == "" || !strings.Contains(s, strings.Trim(f.path, `"'`)) && !strings.ContainsAny(s, `"'`) {
				t.Fatalf("file %q not in command", f.path)
			}
		}
		_, _ = format.PatchOf(s)
		_ = commandTarget(s)
		if c := clip(s, 10); len(c) > 10 || !utf8.ValidString(c) && utf8.ValidString(s) {
			t.Fatalf("clip %q", c)
		}
	})
}

// windowFrom turns fuzz bytes into a window: 0xFF separates messages, the
// first byte of each picks its kind (ask, harness note, agent text,
// reasoning, a tool call, a result, a summary, an earlier handoff) and the
// rest is its text or command.
func windowFrom(data []byte) []compact.Message {
	var msgs []compact.Message
	lastID := ""
	text := func(role compact.Role, t compact.PartType, s string) compact.Message {
		return compact.Message{Role: role, Parts: []compact.Part{{Type: t, Text: s}}}
	}
	for i, chunk := range strings.Split(string(data), "\xff") {
		if chunk == "" {
			continue
		}
		body := chunk[1:]
		switch chunk[0] % 9 {
		case 0:
			msgs = append(msgs, text(compact.RoleUser, compact.PartText, body))
		case 1:
			m := text(compact.RoleUser, compact.PartText, body)
			m.Synthetic = true
			msgs = append(msgs, m)
		case 2:
			msgs = append(msgs, text(compact.RoleAssistant, compact.PartText, body))
		case 3:
			msgs = append(msgs, text(compact.RoleAssistant, compact.PartThinking, body))
		case 4, 5:
			lastID = "c" + string(rune('a'+i%26))
			args, _ := json.Marshal(map[string]string{"command": body})
			if chunk[0]%9 == 5 {
				args, _ = json.Marshal(map[string]string{"file_path": body, "old_string": body, "new_string": body + "\nx"})
			}
			msgs = append(msgs, compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{
				{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: lastID, Name: "bash", Arguments: args}}}})
		case 6:
			msgs = append(msgs, compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{lastID},
				Parts: []compact.Part{{Type: compact.PartText, Text: body}}})
		case 7:
			m := text(compact.RoleUser, compact.PartText, body)
			m.Summary = true
			msgs = append(msgs, m)
		case 8:
			h, _ := compact.ParseHandoff(body)
			h.TaskSnapshot = body
			msgs = append(msgs, h.Message())
		}
	}
	return msgs
}

// FuzzBuild runs the whole fallback on windows made from the fuzzer's
// bytes: no panic, the cap holds, the same input gives the same bytes.
func FuzzBuild(f *testing.F) {
	kinds := []byte{0, 2, 4, 6, 3, 5, 6, 1, 7, 8, 4}
	var seed strings.Builder
	for i, s := range textSeeds {
		seed.WriteByte(kinds[i%len(kinds)])
		seed.WriteString(s)
		seed.WriteByte(0xFF)
	}
	f.Add([]byte(seed.String()), 300)
	f.Add([]byte("\x00fix it\xff\x04go test ./...\xff\x06FAIL x_test.go:3\xff"), 200)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		window := windowFrom(data)
		count := func(s string) int { return len(s) / 4 }
		max = 150 + (max%4000+4000)%4000
		cfg := Config{MaxTokens: max, Count: count}
		h1, err := Build(window, cfg)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		out := h1.Render()
		if n := count(out); n > max {
			t.Fatalf("%d over the cap %d", n, max)
		}
		h2, _ := Build(window, cfg)
		if out != h2.Render() {
			t.Fatal("not deterministic")
		}
		if strings.Count(h1.Message().Text(), compact.HandoffBegin) != 1 {
			t.Fatal("nested handoff")
		}
	})
}

// shellWordsReference is the straightforward splitter shellWords must
// agree with: every word built byte by byte.
func shellWordsReference(s string) []string {
	var words []string
	var cur strings.Builder
	var quote byte
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// FuzzShellWords checks that shellWords, which returns pieces of its input
// where it can, splits as the reference does.
func FuzzShellWords(f *testing.F) {
	for _, s := range []string{`a "b c"d e''f 'g h'`, `x="$(ls)"  y`, `"`, `a\tb`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := shellWords(s), shellWordsReference(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shellWords(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzDigest reads any text as file contents of several languages: no
// panic, bounded, and what it reports comes from the text.
func FuzzDigest(f *testing.F) {
	for _, s := range append(textSeeds, "/**\n * Doc.\n * NB: must not block.\n */\nexport const x = 1;\nimport { a } from \"b\";\nenv.API_KEY_X",
		"\"\"\"Module doc.\"\"\"\nfrom os import path\n# TODO: why\ndef f():\n    pass", "# Title\n\nA description of it here.\n") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, path := range []string{"x.ts", "x.py", "x.md", "x.sql", "x"} {
			d := readDigest(path, s)
			if len(d.defs) > maxDigestDefs || len(d.uses) > maxDigestUses || len(d.env) > maxDigestEnv || len(d.notes) > maxDigestNotes {
				t.Fatalf("%s: unbounded digest %+v", path, d)
			}
			for _, x := range d.env {
				if !strings.Contains(s, x) {
					t.Fatalf("env %q not in the text", x)
				}
			}
			for _, x := range d.defs {
				if !strings.Contains(s, x) {
					t.Fatalf("declaration %q not in the text", x)
				}
			}
			_ = d.render(nil)
		}
		_, _, _ = bestHit(s)
		commandKinds(s, func(kind int, seg string) {
			if kind != cmdTest && kind != cmdInstall || seg == "" {
				t.Fatalf("kind %d segment %q", kind, seg)
			}
		})
	})
}
