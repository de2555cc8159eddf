package fallback_test

import (
	"encoding/json"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/tokens"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Builders for hand-made windows.

func user(text string) compact.Message {
	return compact.Message{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}
}

func synthetic(text string) compact.Message {
	m := user(text)
	m.Synthetic = true
	return m
}

func assistant(text string, calls ...compact.ToolCall) compact.Message {
	m := compact.Message{Role: compact.RoleAssistant}
	if text != "" {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: text})
	}
	for i := range calls {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: &calls[i]})
	}
	return m
}

func thinking(text string) compact.Message {
	return compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartThinking, Text: text}}}
}

func toolCall(id, name string, args any) compact.ToolCall {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return compact.ToolCall{ID: id, Name: name, Arguments: raw}
}

// toolMessage answers one call OpenAI-style: a tool-role message.
func toolMessage(id, text string) compact.Message {
	return compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}
}

// results answers calls Anthropic-style: tool_result parts in a user message.
func results(parts ...compact.Part) compact.Message {
	return compact.Message{Role: compact.RoleUser, Parts: parts}
}

func result(id, text string, isErr bool) compact.Part {
	return compact.Part{Type: compact.PartToolResult, CallID: id, Text: text, IsError: isErr}
}

type args = map[string]any

// build runs Build with the default config and fails the test on error.
func build(t *testing.T, window []compact.Message) compact.Handoff {
	t.Helper()
	h, err := fallback.Build(window, fallback.Config{})
	require.NoError(t, err)
	return h
}

func joined(items []string) string { return strings.Join(items, "\n") }

func TestTaskSnapshotAndAsks(t *testing.T) {
	window := []compact.Message{
		user("Port the parser to Go."),
		assistant("On it."),
		synthetic("<system-reminder>remember the todo list</system-reminder>"),
		user("Also keep the old API."),
		assistant("", toolCall("c1", "Bash", args{"command": "go test ./..."})),
		results(result("c1", "ok", false)), // a tool result in the user role: not an ask
		synthetic("[Request interrupted by user]"),
		user("# Context from my IDE setup:\n\n## Active file: internal/parse/lexer.go\n\n## My request for Codex:\nnow make the lexer streaming"),
		assistant("Working on the streaming lexer."),
	}
	h := build(t, window)
	assert.Equal(t, "now make the lexer streaming", h.TaskSnapshot, "the latest ask, verbatim, without the IDE context")
	assert.Equal(t, []string{"Also keep the old API."}, h.EarlierAsks, "earlier asks, newest first, the goal not repeated")
	assert.Equal(t, "Port the parser to Go.", h.Goal, "the first ask is the goal")
	assert.Contains(t, joined(h.CompletedActions), "[Request interrupted by user]")
	assert.Contains(t, joined(h.RelevantFiles), "internal/parse/lexer.go", "the IDE's active file")
	assert.NotContains(t, h.Render(), "remember the todo list", "harness notes are not asks")
}

func TestEarlierAsksNewestFirst(t *testing.T) {
	window := []compact.Message{user("first"), user("second"), user("third"), user("fourth")}
	h := build(t, window)
	assert.Equal(t, "fourth", h.TaskSnapshot)
	assert.Equal(t, "first", h.Goal)
	assert.Equal(t, []string{"third", "second"}, h.EarlierAsks)
}

func TestConstraintsVerbatim(t *testing.T) {
	window := []compact.Message{
		user("Add retries to the HTTP client."),
		assistant("Added retries with exponential backoff."),
		user("Don't touch go.mod. Use the standard library only, please, and keep the public API stable."),
		assistant("Understood."),
		user("No, not the transport: wrap the client instead."),
		assistant("Wrapping the client."),
		user("thanks, now run the tests"),
	}
	h := build(t, window)
	c := joined(h.Constraints)
	assert.Contains(t, h.Constraints, "Don't touch go.mod.", "each rule sentence, verbatim")
	assert.Contains(t, h.Constraints, "Use the standard library only, please, and keep the public API stable.")
	assert.Contains(t, c, "No, not the transport: wrap the client instead.", "a correction is kept whole")
	assert.NotContains(t, c, "Add retries", "an ask stating no rule is not a constraint")
}

func TestParallelToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window []compact.Message
	}{
		{"tool messages", []compact.Message{
			user("look at both files"),
			assistant("", toolCall("a", "read_file", args{"path": "cmd/main.go"}), toolCall("b", "read_file", args{"path": "internal/db/db.go"})),
			toolMessage("b", "package db\n\nfunc Open() {}\n"),
			toolMessage("a", "package main\n\nfunc main() {}\n"),
		}},
		{"result parts", []compact.Message{
			user("look at both files"),
			assistant("", toolCall("a", "read_file", args{"path": "cmd/main.go"}), toolCall("b", "read_file", args{"path": "internal/db/db.go"})),
			results(result("a", "package main\n\nfunc main() {}\n", false), result("b", "package db\n\nfunc Open() {}\n", false)),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := build(t, tc.window)
			require.Len(t, h.CompletedActions, 2)
			assert.Equal(t, "read_file cmd/main.go → 3 lines", h.CompletedActions[0], "calls in the order made")
			assert.Equal(t, "read_file internal/db/db.go → 3 lines", h.CompletedActions[1])
			files := joined(h.RelevantFiles)
			assert.Contains(t, files, "cmd/main.go (read)")
			assert.Contains(t, files, "internal/db/db.go (read)")
		})
	}
}

func TestActionsOutcomes(t *testing.T) {
	window := []compact.Message{
		user("fix the build"),
		assistant("", toolCall("1", "shell", args{"command": []string{"bash", "-lc", "cd /repo && go build ./..."}, "workdir": "/repo"})),
		toolMessage("1", `{"output":"./x.go:3:2: undefined: foo\n","metadata":{"exit_code":1,"duration_seconds":0.4}}`),
		assistant("", toolCall("2", "bash", args{"command": "cd /testbed && grep -rn needle src"})),
		toolMessage("2", "<returncode>1</returncode>\n<output>\n</output>"),
		assistant("", toolCall("3", "Edit", args{"file_path": "/repo/x.go", "old_string": "\tfoo()\n", "new_string": "\tbar()\n\tbaz(1)\n"})),
		results(result("3", "The file /repo/x.go has been updated.", false)),
		assistant("", toolCall("4", "WebFetch", args{"url": "https://pkg.go.dev/errors", "prompt": "summarise"})),
		results(result("4", "<html><head><title>errors package - errors - Go Packages</title></head></html>", false)),
	}
	h := build(t, window)
	require.Len(t, h.CompletedActions, 4)
	assert.Equal(t, "shell go build ./... → exit 1: ./x.go:3:2: undefined: foo", h.CompletedActions[0])
	assert.Equal(t, "bash grep -rn needle src → exit 1: no matches", h.CompletedActions[1], "grep finding nothing is not an error")
	assert.Equal(t, "Edit /repo/x.go → ok\n+ bar()\n+ baz(1)", h.CompletedActions[2], "an edit lists the lines it added")
	assert.Equal(t, "WebFetch https://pkg.go.dev/errors → page title: errors package - errors - Go Packages", h.CompletedActions[3])
	assert.NotContains(t, joined(h.ErrorsAndFixes), "needle")
	assert.NotContains(t, joined(h.ErrorsAndFixes), "undefined: foo", "the action's outcome states it")
	assert.Contains(t, joined(h.CriticalContext), "Working directory: /repo")
}

func TestPathsFromArgumentsAndText(t *testing.T) {
	window := []compact.Message{
		user(`The crash is in C:\Users\ana\proj\src\main.go and in ~/notes/todo.md; also see src/x.go:42 and ./internal/y.go`),
		assistant("", toolCall("1", "Read", args{"file_path": `C:\Users\ana\proj\src\main.go`})),
		results(result("1", "package main", false)),
		assistant("The bug is at `src/x.go:42` and `pkg/z.ts:71-78`; see https://github.com/o/r/issues/12 (issue #12), commit 3f2a9c1e in git."),
		assistant("", toolCall("2", "Write", args{"file_path": "/home/ana/proj/src/x.go", "content": "package x\n"})),
		results(result("2", "File created successfully", false)),
		assistant("", toolCall("3", "bash", args{"command": "rm -f build/out.bin && mv a.txt b.txt && sed -i 's/a/b/' cfg/app.yaml"})),
		toolMessage("3", ""),
	}
	h := build(t, window)
	files := joined(h.RelevantFiles)
	for _, want := range []string{
		`C:\Users\ana\proj\src\main.go (read)`,
		"~/notes/todo.md",
		"/home/ana/proj/src/x.go:42 (created)", // src/x.go folded into the absolute path it ends
		"internal/y.go",
		"pkg/z.ts:71-78",
		"build/out.bin (deleted)",
		"a.txt (deleted)",
		"b.txt (created)",
		"cfg/app.yaml (edited)",
	} {
		assert.Contains(t, files, want)
	}
	assert.Equal(t, 1, strings.Count(files, "src/x.go"), "one entry per file")
	// The agent's sentence holding them is a decision: the index does not
	// repeat what the handoff already spells out.
	all := h.Render()
	assert.Contains(t, all, "https://github.com/o/r/issues/12")
	assert.Contains(t, all, "#12")
	assert.Contains(t, all, "3f2a9c1e")
}

func TestWindowStartsAndEndsMidExchange(t *testing.T) {
	window := []compact.Message{
		toolMessage("before", "FAIL: TestParse (0.01s)\n    parse_test.go:12: want 2, got 3"),
		assistant("The parser drops the last token; fixing the loop bound."),
		assistant("", toolCall("e1", "Edit", args{"file_path": "parse.go", "old_string": "i < n-1", "new_string": "i < n"})),
		results(result("e1", "ok", false)),
		assistant("", toolCall("t1", "Bash", args{"command": "go test ./..."})),
		// the window ends before the result
	}
	h := build(t, window)
	acts := joined(h.CompletedActions)
	assert.Contains(t, acts, "(call made before this part) → FAIL: TestParse (0.01s)")
	assert.Contains(t, acts, "Bash go test ./... → no result in this part")
	assert.NotContains(t, joined(h.ErrorsAndFixes), "FAIL: TestParse", "the action's outcome states it")
	assert.Empty(t, h.TaskSnapshot, "no ask in the window")
}

func TestWindowWithoutUserMessage(t *testing.T) {
	window := []compact.Message{
		thinking("The failing test points at the tokenizer. So the tokenizer does not handle CRLF line endings."),
		assistant("", toolCall("1", "bash", args{"command": "python -m pytest tests/test_tok.py"})),
		toolMessage("1", "E   AssertionError: assert 'a\\r' == 'a'\n1 failed in 0.03s"),
	}
	h := build(t, window)
	assert.Empty(t, h.TaskSnapshot)
	assert.Empty(t, h.EarlierAsks)
	assert.Empty(t, h.Goal)
	assert.Contains(t, joined(h.Decisions), "So the tokenizer does not handle CRLF line endings.")
	assert.Contains(t, joined(h.ErrorsAndFixes), "AssertionError")
	_, err := compact.ParseHandoff(h.Render())
	assert.NoError(t, err, "every heading rendered, even when empty")
}

func TestErrorsAndFixes(t *testing.T) {
	// Each error is seen twice: the count is what Errors adds to the
	// actions' outcomes (see TestErrorStatedByItsActionIsNotRepeated).
	window := []compact.Message{
		user("make the tests pass"),
		assistant("", toolCall("1", "bash", args{"command": "cd /w && go test ./pkg/..."})),
		toolMessage("1", "--- FAIL: TestX\npanic: runtime error: index out of range [3] with length 3\nexit status 2"),
		assistant("", toolCall("1b", "bash", args{"command": "cd /w && go test ./pkg/..."})),
		toolMessage("1b", "--- FAIL: TestX\npanic: runtime error: index out of range [3] with length 3\nexit status 2"),
		assistant("", toolCall("2", "bash", args{"command": "cd /w && go test ./pkg/..."})),
		toolMessage("2", "ok  \texample.com/pkg\t0.01s\nexit status 0"),
		assistant("", toolCall("3", "bash", args{"command": "make lint"})),
		toolMessage("3", "make: *** [Makefile:12: lint] Error 1\nexit status 2"),
		assistant("", toolCall("3b", "bash", args{"command": "make lint"})),
		toolMessage("3b", "make: *** [Makefile:12: lint] Error 1\nexit status 2"),
	}
	h := build(t, window)
	require.Len(t, h.ErrorsAndFixes, 2)
	assert.Contains(t, h.ErrorsAndFixes[0], "bash go test ./pkg/... → ")
	assert.Contains(t, h.ErrorsAndFixes[0], "panic: runtime error: index out of range [3] with length 3")
	assert.Contains(t, h.ErrorsAndFixes[0], "later succeeded: bash go test ./pkg/...")
	assert.Contains(t, h.ErrorsAndFixes[1], "make: *** [Makefile:12: lint] Error 1")
	assert.Contains(t, h.ErrorsAndFixes[1], "not resolved")
	assert.Contains(t, joined(h.Blocked), "last call failed: bash make lint", "the window ends on a failure")
}

func TestTodoListIsActiveState(t *testing.T) {
	window := []compact.Message{
		user("refactor the store"),
		assistant("", toolCall("1", "TodoWrite", args{"todos": []args{
			{"content": "Split store.go", "status": "completed", "activeForm": "Splitting"},
			{"content": "Add a cache", "status": "in_progress", "activeForm": "Adding"},
		}})),
		results(result("1", "Todos have been modified successfully.", false)),
		assistant("", toolCall("2", "update_plan", args{"plan": []args{
			{"step": "Split store.go", "status": "completed"},
			{"step": "Add a cache", "status": "completed"},
			{"step": "Wire metrics", "status": "in_progress"},
			{"step": "Get review from infra", "status": "blocked"},
		}, "explanation": "Caching first because metrics depend on it."})),
		toolMessage("2", "Plan updated"),
	}
	h := build(t, window)
	assert.Equal(t, []string{"[completed] Split store.go", "[completed] Add a cache", "[in_progress] Wire metrics"}, h.ActiveState, "the last list, in its order")
	assert.Equal(t, []string{"[blocked] Get review from infra"}, h.Blocked)
	assert.Contains(t, joined(h.Decisions), "Caching first because metrics depend on it.")
}

func TestEarlierHandoffIsCarriedNotNested(t *testing.T) {
	old := compact.Handoff{
		TaskSnapshot:     "migrate the users table",
		Goal:             "Move storage from MySQL to Postgres",
		Constraints:      []string{"never drop a column in the same release"},
		CompletedActions: []string{"bash pg_dump users → exit 0"},
		Decisions:        []string{"use pgx, not database/sql"},
		ErrorsAndFixes:   []string{"bash migrate up → duplicate key; not resolved in this part"},
		RelevantFiles:    []string{"db/migrations/001_users.sql (created)"},
		CriticalContext:  []string{"Names: users_v2, MigrateUsers"},
	}
	window := []compact.Message{
		old.Message(),
		user("now backfill the emails"),
		assistant("", toolCall("1", "bash", args{"command": "go run ./cmd/backfill"})),
		toolMessage("1", "backfilled 1200 rows\nexit status 0"),
	}
	h := build(t, window)
	assert.Equal(t, "now backfill the emails", h.TaskSnapshot)
	assert.Equal(t, []string{"migrate the users table"}, h.EarlierAsks, "the old snapshot is an earlier ask")
	assert.Equal(t, "Move storage from MySQL to Postgres", h.Goal)
	assert.Contains(t, h.Constraints, "never drop a column in the same release")
	require.GreaterOrEqual(t, len(h.CompletedActions), 2)
	assert.Equal(t, "bash pg_dump users → exit 0", h.CompletedActions[0], "older actions first")
	assert.Contains(t, h.Decisions, "use pgx, not database/sql")
	assert.Contains(t, h.ErrorsAndFixes, "bash migrate up → duplicate key; not resolved in this part")
	assert.Contains(t, joined(h.RelevantFiles), "db/migrations/001_users.sql (created)")
	assert.Contains(t, joined(h.CriticalContext), "users_v2")

	out := h.Message().Text()
	assert.Equal(t, 1, strings.Count(out, compact.HandoffBegin), "never nested")
	assert.Equal(t, 1, strings.Count(out, "## Task snapshot"))

	// Compacting again folds the second handoff in the same way.
	again := build(t, []compact.Message{h.Message(), user("and verify the counts")})
	assert.Equal(t, "and verify the counts", again.TaskSnapshot)
	assert.Equal(t, []string{"now backfill the emails", "migrate the users table"}, again.EarlierAsks)
	assert.Equal(t, "Move storage from MySQL to Postgres", again.Goal)
	assert.Equal(t, 1, strings.Count(again.Message().Text(), compact.HandoffBegin))
}

func TestPreviousFromConfig(t *testing.T) {
	prev := &compact.Handoff{TaskSnapshot: "ship v2", Decisions: []string{"keep v1 endpoints until June"}}
	h, err := fallback.Build([]compact.Message{assistant("Tagged the release.")}, fallback.Config{Previous: prev})
	require.NoError(t, err)
	assert.Equal(t, "ship v2", h.TaskSnapshot, "with no ask in the window the old task still stands")
	assert.Contains(t, h.Decisions, "keep v1 endpoints until June")
}

func TestForeignSummaryKeptBounded(t *testing.T) {
	summary := "This session is being continued from a previous conversation. Summary: the user wants a CSV exporter; " +
		strings.Repeat("details of earlier work. ", 2000)
	m := user(summary)
	m.Summary = true
	h := build(t, []compact.Message{m, user("add a --delimiter flag")})
	require.NotEmpty(t, h.CompletedActions)
	first := h.CompletedActions[0]
	assert.True(t, strings.HasPrefix(first, "Earlier summary: This session is being continued"), first)
	assert.Less(t, len(first), 2000, "bounded")
	assert.Equal(t, "add a --delimiter flag", h.TaskSnapshot)
}

func TestHugeToolOutput(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 8<<20; i++ {
		b.WriteString("compiling module ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	b.WriteString("error[E0308]: mismatched types in src/lib.rs:88\n")
	window := []compact.Message{
		user("build the crate"),
		assistant("", toolCall("1", "bash", args{"command": "cargo build"})),
		toolMessage("1", b.String()),
	}
	h := build(t, window)
	assert.Contains(t, joined(h.CompletedActions), "error[E0308]: mismatched types in src/lib.rs:88", "the error at the end of the output")
	assert.Contains(t, joined(h.RelevantFiles), "src/lib.rs:88")
	c, err := tokens.ForModel("gpt-4o")
	require.NoError(t, err)
	assert.LessOrEqual(t, c.Text(h.Render()), fallback.DefaultMaxTokens)
	for _, a := range h.CompletedActions {
		assert.Less(t, len(a), 2000, "one action stays one short item")
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	const registered = "hunter2-correct-horse-battery-staple"
	github := githubToken("R3aLlyL00k1ngT0k3nW1thEntr0py9")
	const aws = "AKIAQ5ZN2BXKRT7WM4PD"
	r, err := redact.New(redact.Config{})
	require.NoError(t, err)
	r.AddValue(registered)
	window := []compact.Message{
		user("deploy with password " + registered + " please"),
		assistant("", toolCall("1", "bash", args{"command": "GITHUB_TOKEN=" + github + " gh release create v1 && echo " + registered})),
		toolMessage("1", "using key "+aws+"\nerror: token "+github+" rejected for "+registered),
		assistant("", toolCall("2", "Write", args{"file_path": ".env", "content": "AWS_ACCESS_KEY_ID=" + aws + "\nPASSWORD=" + registered + "\n"})),
		results(result("2", "wrote .env with "+registered, false)),
	}
	for _, max := range []int{0, 300, 180} {
		h, err := fallback.Build(window, fallback.Config{Redactor: r, MaxTokens: max})
		require.NoError(t, err)
		out := h.Message().Text()
		for _, secret := range []string{registered, github, aws} {
			for i := 0; i+12 <= len(secret); i++ {
				require.NotContains(t, out, secret[i:i+12], "MaxTokens %d: part of a secret leaked", max)
			}
		}
	}
	// A window the caller redacted first gives the same handoff.
	red, _ := r.Transcript(compact.Transcript{Messages: window})
	h1, err := fallback.Build(window, fallback.Config{Redactor: r})
	require.NoError(t, err)
	h2, err := fallback.Build(red.Messages, fallback.Config{Redactor: r, Redacted: true})
	require.NoError(t, err)
	assert.Equal(t, h1.Render(), h2.Render())
	// The default Redactor finds the vendor tokens on its own.
	h := build(t, window)
	assert.NotContains(t, h.Render(), github)
	assert.NotContains(t, h.Render(), aws)
}

// githubToken makes a token in GitHub's 2021 format: ghp_, 30 characters,
// then their CRC32 in base62 (what GitHub's secret scanning checks).
func githubToken(body string) string {
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := crc32.ChecksumIEEE([]byte(body))
	var sum [6]byte
	for i := 5; i >= 0; i-- {
		sum[i] = base62[n%62]
		n /= 62
	}
	return "ghp_" + body + string(sum[:])
}

func TestConfigErrors(t *testing.T) {
	window := []compact.Message{user("hi")}
	_, err := fallback.Build(window, fallback.Config{MaxTokens: -1})
	assert.ErrorIs(t, err, fallback.ErrConfig)
	_, err = fallback.Build(window, fallback.Config{SectionTokens: map[string]int{"Todo": 10}})
	assert.ErrorIs(t, err, fallback.ErrConfig)
	assert.ErrorContains(t, err, `"Todo"`)
	_, err = fallback.Build(window, fallback.Config{MaxTokens: 20})
	assert.ErrorIs(t, err, fallback.ErrBudget)
	h, err := fallback.Build(nil, fallback.Config{})
	require.NoError(t, err, "an empty window is an empty handoff")
	assert.True(t, h.IsEmpty())
}

func TestSectionAndItemCaps(t *testing.T) {
	var window []compact.Message
	for i := range 60 {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		window = append(window,
			assistant("", toolCall(id, "bash", args{"command": "go test ./pkg" + id + "/... -run TestLongName" + strings.Repeat("X", 40)})),
			toolMessage(id, "ok"))
	}
	count := func(s string) int { return len(s) / 4 }
	h, err := fallback.Build(window, fallback.Config{Count: count, SectionTokens: map[string]int{"Completed actions": 200}, ItemTokens: 30})
	require.NoError(t, err)
	total := 0
	for _, a := range h.CompletedActions {
		assert.LessOrEqual(t, count(a), 30, "item cap")
		total += count(a) + 2
	}
	assert.LessOrEqual(t, total, 200, "section cap")
	assert.True(t, strings.HasSuffix(h.CompletedActions[0], "earlier actions not listed)"), h.CompletedActions[0])
	assert.Contains(t, h.CompletedActions[len(h.CompletedActions)-1], "pkgh", "the newest actions are kept")
}

func TestErrorsAreWrapped(t *testing.T) {
	_, err := fallback.Build(nil, fallback.Config{MaxTokens: 1})
	var target error = fallback.ErrBudget
	assert.True(t, errors.Is(err, target))
	assert.Contains(t, err.Error(), "MaxTokens 1")
}

// TestErrorStatedByItsActionIsNotRepeated: an error seen once, whose
// action's outcome line already says what went wrong, is not listed again
// under Errors; one whose lines the outcome does not all show is.
func TestErrorStatedByItsActionIsNotRepeated(t *testing.T) {
	window := []compact.Message{
		user("get the importer running"),
		assistant("", toolCall("1", "bash", args{"command": "python import_feed.py"})),
		toolMessage("1", "Traceback (most recent call last):\n  File \"import_feed.py\", line 9, in <module>\nKeyError: 'price'\nexit code 1"),
		assistant("", toolCall("2", "bash", args{"command": "make feed"})),
		toolMessage("2", "error: feed.yaml: missing key 'source'\nerror: feed.yaml: missing key 'schedule'\nexit code 2"),
	}
	h := build(t, window)
	acts, errs := joined(h.CompletedActions), joined(h.ErrorsAndFixes)
	assert.Contains(t, acts, "bash python import_feed.py → exit 1: KeyError: 'price'")
	assert.NotContains(t, errs, "KeyError", "the action's outcome says it")
	assert.Contains(t, errs, "missing key 'schedule'", "a second error line the outcome does not show is listed")
}
