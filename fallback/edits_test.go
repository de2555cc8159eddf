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
