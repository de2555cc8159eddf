package fallback_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
	"pgregory.net/rapid"
)

// secrets registered with the Redactor in the property tests; the
// generator scatters them through texts, arguments and results.
var propSecrets = []string{"s3cr3t-Pa55w0rd-Xq9Zk2", "tok_live_9f8e7d6c5b4a39281706"}

// vocabulary the generator builds texts from: plain words, rule words,
// paths of every kind, names, errors, URLs, markdown and the secrets.
var vocabulary = []string{
	"fix", "the", "parser", "please", "don't", "always", "only", "instead", "because", "so", "not", "the issue is",
	"src/x.go:42", "/home/u/repo/cmd/main.go", `C:\Users\u\app\main.cs`, "~/notes.md", "./internal/y.go", "a/b/c.ts",
	"getUserByID", "snake_case_name", "pkg.Func", "@scope/pkg", "TK_MATCH", "https://example.com/a?b=c", "#123",
	"3f2a9c1e", "error:", "Traceback (most recent call last):", "ValueError: bad", "FAIL", "exit status 1",
	"`code span`", "```", "\n", "\n\n", "## Heading", "- item", "<<<compact:handoff>>>", "[Request interrupted by user]",
	"## My request for Codex:", "<returncode>1</returncode>", "→", "日本語", "\t", "\\", `"quoted"`,
	propSecrets[0], propSecrets[1],
}

func genText(t *rapid.T, label string) string {
	n := rapid.IntRange(0, 30).Draw(t, label+"-len")
	words := make([]string, n)
	for i := range words {
		words[i] = rapid.SampledFrom(vocabulary).Draw(t, label+"-word")
	}
	return strings.Join(words, " ")
}

var toolNames = []string{"bash", "shell", "Read", "Edit", "Write", "str_replace_editor", "TodoWrite", "update_plan", "WebFetch", "Grep", ""}

func genArgs(t *rapid.T) json.RawMessage {
	a := map[string]any{}
	for _, k := range rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"command", "file_path", "path", "old_string", "new_string", "content", "url", "query", "workdir", "plan", "todos"}), 0, 4, rapid.ID[string]).Draw(t, "keys") {
		switch k {
		case "todos":
			a[k] = []map[string]string{{"content": genText(t, "todo"), "status": rapid.SampledFrom([]string{"pending", "in_progress", "completed", "blocked"}).Draw(t, "status")}}
		case "command":
			if rapid.Bool().Draw(t, "argv") {
				a[k] = []string{"bash", "-lc", genText(t, "cmd")}
			} else {
				a[k] = genText(t, "cmd")
			}
		default:
			a[k] = genText(t, k)
		}
	}
	if rapid.IntRange(0, 9).Draw(t, "raw") == 0 {
		return json.RawMessage(`"` + strings.ReplaceAll(genText(t, "rawarg"), `"`, "") + `"`)
	}
	raw, _ := json.Marshal(a)
	return raw
}

// genWindow draws a window of any shape: asks, harness notes, agent text
// and reasoning, calls answered in any order or not at all, results whose
// calls are missing, earlier handoffs and foreign summaries.
func genWindow(t *rapid.T) []compact.Message {
	n := rapid.IntRange(0, 40).Draw(t, "messages")
	var msgs []compact.Message
	var open []string
	for i := range n {
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0:
			msgs = append(msgs, user(genText(t, "ask")))
		case 1:
			msgs = append(msgs, synthetic(genText(t, "note")))
		case 2:
			msgs = append(msgs, assistant(genText(t, "say")))
		case 3:
			msgs = append(msgs, thinking(genText(t, "think")))
		case 4, 5:
			var calls []compact.ToolCall
			for j := range rapid.IntRange(1, 3).Draw(t, "calls") {
				id := fmt.Sprintf("c%d-%d", i, j)
				if rapid.IntRange(0, 9).Draw(t, "noid") == 0 {
					id = ""
				}
				calls = append(calls, compact.ToolCall{ID: id, Name: rapid.SampledFrom(toolNames).Draw(t, "tool"), Arguments: genArgs(t)})
				open = append(open, id)
			}
			msgs = append(msgs, assistant(genText(t, "pre"), calls...))
		case 6:
			id := "orphan"
			if len(open) > 0 && rapid.IntRange(0, 4).Draw(t, "answer") > 0 {
				k := rapid.IntRange(0, len(open)-1).Draw(t, "which")
				id, open = open[k], append(open[:k:k], open[k+1:]...)
			}
			if rapid.Bool().Draw(t, "style") {
				msgs = append(msgs, toolMessage(id, genText(t, "out")))
			} else {
				msgs = append(msgs, results(result(id, genText(t, "out"), rapid.Bool().Draw(t, "iserr"))))
			}
		case 7:
			h := compact.Handoff{TaskSnapshot: genText(t, "old"), Decisions: []string{genText(t, "olddec")}, CriticalContext: []string{"Names: " + genText(t, "names")}}
			msgs = append(msgs, h.Message())
		case 8:
			m := user(genText(t, "summary"))
			m.Summary = true
			msgs = append(msgs, m)
		}
	}
	return msgs
}

func newRedactor(t *rapid.T) *redact.Redactor {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range propSecrets {
		r.AddValue(s)
	}
	return r
}

// TestPropertyBuild checks the fallback's invariants on arbitrary windows:
// Build succeeds, is deterministic (same input, same bytes, also on a
// copy), never exceeds its cap, leaves the window untouched, renders every
// heading, and lets no registered secret through.
func TestPropertyBuild(t *testing.T) {
	counter, err := tokens.ForModel("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		window := genWindow(t)
		before := (&compact.Transcript{Messages: window}).Hash()
		maxTokens := rapid.IntRange(200, 3000).Draw(t, "max")
		cfg := fallback.Config{MaxTokens: maxTokens, Redactor: newRedactor(t)}
		if rapid.Bool().Draw(t, "itemcap") {
			cfg.ItemTokens = rapid.IntRange(5, 200).Draw(t, "itemTokens")
		}
		h1, err := fallback.Build(window, cfg)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		out := h1.Render()
		if n := counter.Text(out); n > maxTokens {
			t.Fatalf("%d tokens, cap %d", n, maxTokens)
		}
		clone := (&compact.Transcript{Messages: window}).Clone()
		cfg.Redactor = newRedactor(t)
		h2, err := fallback.Build(clone.Messages, cfg)
		if err != nil {
			t.Fatalf("second Build: %v", err)
		}
		if out2 := h2.Render(); out2 != out {
			t.Fatalf("not deterministic:\n%s\n----\n%s", out, out2)
		}
		if after := (&compact.Transcript{Messages: window}).Hash(); after != before {
			t.Fatal("Build changed its input")
		}
		if _, err := compact.ParseHandoff(out); err != nil {
			t.Fatalf("rendered handoff does not parse: %v", err)
		}
		msg := h1.Message().Text()
		for _, s := range propSecrets {
			for i := 0; i+12 <= len(s); i++ {
				if strings.Contains(msg, s[i:i+12]) {
					t.Fatalf("secret leaked: %q in\n%s", s[i:i+12], msg)
				}
			}
		}
		if strings.Count(msg, compact.HandoffBegin) != 1 {
			t.Fatalf("nested handoff:\n%s", msg)
		}
	})
}

// TestPropertyCapWithOddCounters checks the cap under counters that are far
// from additive (per line, per rune), where only the final trim on the
// rendered text keeps the promise.
func TestPropertyCapWithOddCounters(t *testing.T) {
	counters := map[string]func(string) int{
		"lines": func(s string) int { return strings.Count(s, "\n")*3 + len(s)/8 },
		"runes": func(s string) int { return len([]rune(s)) },
		"words": func(s string) int { return len(strings.Fields(s)) },
	}
	for name, count := range counters {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				window := genWindow(t)
				skeleton := count(compact.Handoff{}.Render())
				maxTokens := rapid.IntRange(skeleton+24, skeleton+3000).Draw(t, "max")
				h, err := fallback.Build(window, fallback.Config{MaxTokens: maxTokens, Count: count, Redactor: newRedactor(t)})
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				if n := count(h.Render()); n > maxTokens {
					t.Fatalf("%d > cap %d", n, maxTokens)
				}
			})
		})
	}
}
