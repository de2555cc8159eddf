package fallback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// busyWork is n shell calls that worked, enough to push earlier calls out
// of the actions Completed actions shows in full.
func busyWork(n int) []compact.Message {
	var out []compact.Message
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		out = append(out,
			assistant("", toolCall(id, "Bash", args{"command": fmt.Sprintf("ls dir%d", i)})),
			results(result(id, "a.txt", false)))
	}
	return out
}

// An edited file's entry under Relevant files quotes the telling line its
// last edit wrote, once the actions no longer show that edit: what the
// file holds now is more than its path says. An edit whose lines are
// unknown (sed -i) leaves the last known line; an edit shown in full is
// not quoted twice.
func TestEditedFileSaysWhatItsLastEditWrote(t *testing.T) {
	window := []compact.Message{
		user("make the parser return its config"),
		assistant("", toolCall("1", "Edit", args{"file_path": "/repo/config/parse.go", "old_string": "func Parse(s string) Config {", "new_string": "func Parse(s string) Config { // TODO"})),
		results(result("1", "ok", false)),
		assistant("", toolCall("2", "Edit", args{"file_path": "/repo/config/parse.go", "old_string": "func Parse(s string) Config {", "new_string": "func Parse(s string) (Config, error) {"})),
		results(result("2", "ok", false)),
		assistant("", toolCall("3", "Bash", args{"command": "sed -i 's/\\t/  /' /repo/config/parse.go"})),
		results(result("3", "", false)),
		assistant("", toolCall("4", "Edit", args{"file_path": "/repo/config/load.go", "old_string": "x := 1", "new_string": "x := loadDefaults()"})),
		results(result("4", "failed: old_string not found", true)),
		assistant("", toolCall("6", "Edit", args{"file_path": "/repo/tools.py", "old_string": "", "new_string": "import os"})),
		results(result("6", "ok", false)),
	}
	window = append(window, busyWork(10)...)
	window = append(window,
		assistant("", toolCall("5", "Edit", args{"file_path": "/repo/main.go", "old_string": "run()", "new_string": "run(cfg)"})),
		results(result("5", "ok", false)))
	h := build(t, window)

	parse := fileItem(h, "/repo/config/parse.go")
	require.NotEmpty(t, parse, joined(h.RelevantFiles))
	assert.Contains(t, parse, "wrote `func Parse(s string) (Config, error) {`", "the last edit's line, past the sed -i that said none")
	assert.NotContains(t, parse, "TODO", "an older edit's line is history")
	assert.NotContains(t, fileItem(h, "/repo/config/load.go"), "wrote", "an edit that failed wrote nothing")
	tools := fileItem(h, "/repo/tools.py")
	require.NotEmpty(t, tools, joined(h.RelevantFiles))
	assert.NotContains(t, tools, "wrote", "an import tells little of what the file does")
	main := fileItem(h, "/repo/main.go")
	require.NotEmpty(t, main, joined(h.RelevantFiles))
	assert.NotContains(t, main, "wrote", "Completed actions shows this edit's lines already")
	assert.Contains(t, joined(h.CompletedActions), "+ run(cfg)")
}

// A harness message the reader tagged Failed (an error observation no
// call claims: the harness could not run the action) is an error of the
// window, whatever its words, and ranks with errors that were got past.
func TestHarnessComplaintIsAnError(t *testing.T) {
	complaint := synthetic("Allowed values for 'mode': fast, safe.")
	complaint.Parts[0].Failed = true
	complaint.Parts[0].Harness = true
	plain := synthetic("The sandbox is ready.")
	plain.Parts[0].Harness = true
	window := []compact.Message{
		user("deploy the service"),
		assistant("", toolCall("1", "deploy", args{"mode": "quick"})),
		complaint,
		plain,
		assistant("", toolCall("2", "deploy", args{"mode": "safe"})),
		results(result("2", "deployed", false)),
	}
	h := build(t, window)
	errs := joined(h.ErrorsAndFixes)
	assert.Contains(t, errs, "harness: Allowed values for 'mode': fast, safe.")
	assert.NotContains(t, errs, "sandbox is ready", "a harness note that reports no failure is no error")
}

// One-line actions that read word for word alike are kept once, the
// newest, with their count: "Edit x → ok" made ten times says no more
// than once with (×10).
func TestRepeatedActionsAreCounted(t *testing.T) {
	window := []compact.Message{user("tidy the handlers")}
	for i := range 6 {
		id := fmt.Sprintf("e%d", i)
		window = append(window,
			assistant("", toolCall(id, "Edit", args{"file_path": "/repo/handlers.go", "old_string": fmt.Sprintf("a%d", i), "new_string": fmt.Sprintf("b%d", i)})),
			results(result(id, "ok", false)))
	}
	window = append(window, busyWork(10)...)
	h := build(t, window)
	acts := joined(h.CompletedActions)
	assert.Equal(t, 1, strings.Count(acts, "handlers.go → ok"), acts)
	assert.Contains(t, acts, "Edit /repo/handlers.go → ok (×6)")
}

// A comment of a file the agent read that the agent's own words echo
// (quoted back while reasoning) leads the file's digest, even where the
// file has more notes than a digest shows: it is what the file meant to
// the agent.
func TestEchoedNoteLeadsDigest(t *testing.T) {
	src := strings.Join([]string{
		"// Package serve answers the wire protocol.",
		"package serve",
		"",
		"// NB: the cache must be warmed before the server starts, because handlers read it without locks.",
		"var cache map[string]string",
		"",
		"// NB: never call Close twice, because the pool panics on a double close.",
		"func Close() {}",
		"",
		"// NB: timeouts are in milliseconds here, unlike the rest of the package, because the wire format says so.",
		"func Serve() {}",
	}, "\n")
	window := []compact.Message{
		user("why do requests time out?"),
		assistant("", toolCall("1", "Read", args{"file_path": "/repo/serve/serve.go"})),
		results(result("1", src, false)),
		thinking(`The comment says "NB: timeouts are in milliseconds here, unlike the rest of the package", so the 30 means 30 ms.`),
		assistant("The timeout is read in milliseconds."),
	}
	h := build(t, window)
	item := fileItem(h, "/repo/serve/serve.go")
	require.NotEmpty(t, item, joined(h.RelevantFiles))
	echo := strings.Index(item, "NB: timeouts are in milliseconds here")
	require.GreaterOrEqual(t, echo, 0, item)
	assert.Less(t, echo, strings.Index(item, "defines"), "the echoed note comes first")
	assert.Contains(t, item, "NB: the cache must be warmed", "the best other notes still follow")
}

// A line of a file the agent read that the agent quoted back in a fenced
// block of its own message is shown with the file: the agent singled it
// out as evidence. Line numbers copied with it are dropped; an import it
// quoted is not shown.
func TestQuotedLinesOfReadFiles(t *testing.T) {
	src := "     1→import { useStore } from \"./store\";\n     2→\n     3→export function Badge() {\n     4→  const account = useStore((s) => s.account);\n     5→  return account.name;\n     6→}\n"
	window := []compact.Message{
		user("where does the badge get its name?"),
		assistant("", toolCall("1", "Read", args{"file_path": "/repo/ui/Badge.tsx"})),
		results(result("1", src, false)),
		assistant("It comes from the store:\n```tsx\n4\t  const account = useStore((s) => s.account);\n```\nand the import:\n```tsx\nimport { useStore } from \"./store\";\n```\nThe name is the account's."),
	}
	h := build(t, window)
	item := fileItem(h, "/repo/ui/Badge.tsx")
	require.NotEmpty(t, item, joined(h.RelevantFiles))
	assert.Contains(t, item, "quoted `const account = useStore((s) => s.account);`")
	assert.NotContains(t, item, "quoted `import", "an import says little of what the file does")
}

// An edit tool that echoes what it wrote (a diff of the change, the edited
// lines numbered) did not fail because the lines it added raise or log an
// error: a write call that did not fail lists no error, and its outcome
// names none, nor for the file's code a diff shows around the change. A
// write the tool reports failed still is one.
func TestEditEchoIsNotAnError(t *testing.T) {
	edit := toolCall("1", "apply_edit", args{"path": "/srv/shop/cart.py", "old_string": "return total", "new_string": "if total < 0:\n    raise ValueError(\"negative total\")\nreturn total"})
	edit.Kind = compact.ToolWrite
	again := toolCall("2", "apply_edit", args{"path": "/srv/shop/tax.py", "old_string": "rate = 0", "new_string": "rate = lookup(region)"})
	again.Kind = compact.ToolWrite
	echo := toolCall("3", "apply_edit", args{"path": "/srv/shop/pay.py", "old_string": "pass", "new_string": "log.error(\"card declined: %s\", code)"})
	echo.Kind = compact.ToolWrite
	window := []compact.Message{
		user("reject negative totals in the cart"),
		assistant("", edit),
		results(result("1", "Edited /srv/shop/cart.py:\n@@ -40,1 +40,3 @@\n+    if total < 0:\n+        raise ValueError(\"negative total\")\n     return total\n@@ -52,1 +54,1 @@\n     raise LookupError(\"no cart\")", false)),
		assistant("", echo),
		results(result("3", "Updated /srv/shop/pay.py, added:\n+    log.error(\"card declined: %s\", code)", false)),
	}
	window = append(window, busyWork(12)...) // the edit's action is no longer shown
	window = append(window,
		assistant("", again),
		results(result("2", "Error: /srv/shop/tax.py has no line 'rate = 0'", true)))
	h := build(t, window)
	errs, acts := joined(h.ErrorsAndFixes), joined(h.CompletedActions)
	assert.NotContains(t, errs, "ValueError", "the edit echoed the line it added")
	assert.NotContains(t, errs, "LookupError", "a diff's context lines are the file's code")
	assert.NotContains(t, errs, "card declined", "the edit echoed the line it added, no diff around it")
	assert.NotContains(t, errs, "cart.py", errs)
	assert.Contains(t, acts+errs, "has no line 'rate = 0'", "a write the tool says failed is an error")
	short := build(t, window[:3])
	assert.Contains(t, joined(short.CompletedActions), "apply_edit /srv/shop/cart.py → ok", "its outcome names no error")
}
