package fallback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileItem returns the Relevant files item of path, or "".
func fileItem(h compact.Handoff, path string) string {
	for _, it := range h.RelevantFiles {
		if strings.HasPrefix(it, path+" ") || strings.HasPrefix(it, path+":") {
			return it
		}
	}
	return ""
}

func TestReadFilesAreDigested(t *testing.T) {
	client := `import { createQueueClient } from "@acme/queue";
import { env } from "@/env";
import { helper } from "./helper";

// ==================== CLIENT ====================

/**
 * Queue client for the worker pool.
 *
 * The broker's HTTP API doesn't support acknowledging messages across partitions without a
 * shared lease, so retries are scheduled in application code.
 * @public
 */
export function createClient() {
  // return legacyClient();
  return createQueueClient(env.QUEUE_BROKER_URL, env.QUEUE_ACCESS_TOKEN);
}

export type JobQueue = QueueClient<JobPayload>;
function internalHelper() {}
`
	readme := "# @repo/services\n\n[![ci](x.svg)](y)\n\nA type-safe service factory for database operations. It does more.\n\n## Usage\n"
	numbered := "     1→\"\"\"Command line interface.\"\"\"\n     2→import os\n     3→\n     4→# NB: the parser must run before the loader, because the loader reads its flags.\n     5→def main(argv):\n     6→    return os.environ[\"APP_MODE\"]\n"
	window := []compact.Message{
		user("review the data layer"),
		assistant("", toolCall("1", "shell", args{"command": []string{"bash", "-lc", "sed -n '1,200p' src/lib/client.ts"}})),
		toolMessage("1", fmt.Sprintf(`{"output":%q,"metadata":{"exit_code":0}}`, client)),
		assistant("", toolCall("2", "Read", args{"file_path": "/repo/packages/services/README.md"})),
		results(result("2", readme, false)),
		assistant("", toolCall("3", "Read", args{"file_path": "/repo/cli.py"})),
		results(result("3", numbered, false)),
		assistant("", toolCall("4", "Read", args{"file_path": "/repo/missing.ts"})),
		results(result("4", "File does not exist.", true)),
	}
	h, err := fallback.Build(window, fallback.Config{ItemTokens: 400}) // room for whole digests
	require.NoError(t, err)

	c := fileItem(h, "src/lib/client.ts")
	require.NotEmpty(t, c, joined(h.RelevantFiles))
	assert.Contains(t, c, "(read): Queue client for the worker pool.", "the doc comment describes the file; banners are skipped")
	assert.Contains(t, c, "defines createClient, export type JobQueue = QueueClient<JobPayload>;, internalHelper",
		"exported declarations first; a one-line declaration whole")
	assert.Contains(t, c, "env QUEUE_BROKER_URL, QUEUE_ACCESS_TOKEN")
	assert.Contains(t, c, "The broker's HTTP API doesn't support acknowledging messages across partitions without a shared lease",
		"a comment that explains a constraint is a note")
	assert.Contains(t, c, "uses createQueueClient (@acme/queue)")
	assert.NotContains(t, c, "helper (", "the project's own imports are not listed")
	assert.NotContains(t, c, "legacyClient", "code commented out is no note")
	assert.NotContains(t, c, "@public")

	assert.Contains(t, fileItem(h, "/repo/packages/services/README.md"), ": A type-safe service factory for database operations.")

	cli := fileItem(h, "/repo/cli.py")
	assert.Contains(t, cli, "Command line interface.", "line numbers are stripped, the docstring read")
	assert.Contains(t, cli, "NB: the parser must run before the loader, because the loader reads its flags.")
	assert.Contains(t, cli, "defines main")
	assert.Contains(t, cli, "env APP_MODE")

	assert.NotContains(t, fileItem(h, "/repo/missing.ts"), "(read)", "a read that failed read nothing")
}

func TestSearchShowsBestHit(t *testing.T) {
	hits := strings.Join([]string{
		"src/jobs/queue.types.ts:import { QueueClient } from \"@acme/queue\";",
		"src/jobs/queue.types.ts:export type JobQueue = QueueClient<JobPayload>;",
		"src/workers/retry.ts:import type { QueueClient } from \"@acme/queue\";",
	}, "\n")
	window := []compact.Message{
		assistant("", toolCall("1", "shell", args{"command": []string{"bash", "-lc", `rg "QueueClient"`}})),
		toolMessage("1", fmt.Sprintf(`{"output":%q,"metadata":{"exit_code":0}}`, hits)),
		assistant("", toolCall("2", "bash", args{"command": "find_file \"x.py\""})),
		toolMessage("2", "Found 1 matches for \"x.py\" in /repo:\n/repo/src/x.py"),
	}
	h := build(t, window)
	assert.Equal(t, `shell rg "QueueClient" → exit 0: 3 hits in 2 files: src/jobs/queue.types.ts: export type JobQueue = QueueClient<JobPayload>;`,
		h.CompletedActions[0], "a definition is the hit that tells most")
	assert.Equal(t, `bash find_file "x.py" → 1 hit: /repo/src/x.py`, h.CompletedActions[1], "a header line is no hit")
}

func TestOlderActionsShortenedAndReadsCounted(t *testing.T) {
	var window []compact.Message
	window = append(window, user("port the module"))
	for i := range 6 {
		id := fmt.Sprint("r", i)
		window = append(window,
			assistant("", toolCall(id, "Read", args{"file_path": fmt.Sprintf("/repo/old%d.go", i)})),
			results(result(id, "package old", false)))
	}
	window = append(window,
		assistant("", toolCall("e", "Edit", args{"file_path": "/repo/main.go", "old_string": "a()", "new_string": "b()\nc()\nd()\ne()\nf()\ng()"})),
		results(result("e", "ok", false)),
		assistant("", toolCall("f", "bash", args{"command": "go build ./... && go vet ./..."})),
		toolMessage("f", "vet: main.go:3:1: unreachable code\nexit status 1"))
	for i := range 8 {
		id := fmt.Sprint("n", i)
		window = append(window,
			assistant("", toolCall(id, "Read", args{"file_path": fmt.Sprintf("/repo/new%d.go", i)})),
			results(result(id, "package neu", false)))
	}
	h := build(t, window)
	acts := h.CompletedActions
	require.Len(t, acts, 11, joined(acts))
	assert.Equal(t, "(6 earlier actions not listed)", acts[0], "older reads are counted, not listed")
	assert.Equal(t, "Edit /repo/main.go → ok", acts[1], "an older action is shortened: no added lines")
	assert.Equal(t, "bash go build ./... && go vet ./... → exit 1: vet: main.go:3:1: unreachable code", acts[2])
	assert.Equal(t, "Read /repo/new7.go → 1 lines", acts[10], "the newest actions are listed in full")
}

func TestTestsAndInstallsAreCriticalContext(t *testing.T) {
	window := []compact.Message{
		assistant("", toolCall("1", "bash", args{"command": "cd /testbed && pip install sqlparse -q 2>&1 | tail -2"})),
		toolMessage("1", "<returncode>0</returncode>\n<output>\n</output>"),
		assistant("", toolCall("2", "bash", args{"command": "npm install left-pad"})),
		toolMessage("2", "<returncode>1</returncode>\n<output>\nnpm ERR! 404\n</output>"),
		assistant("", toolCall("3", "bash", args{"command": "python -m django test migrations.test_autodetector --verbosity=2 2>&1 | grep -A5 FAIL"})),
		toolMessage("3", "<returncode>0</returncode>\n<output>\nOK\n</output>"),
		assistant("", toolCall("4", "bash", args{"command": "cat > t.py << 'EOF'\npytest -q\nEOF"})),
		toolMessage("4", "<returncode>0</returncode>\n<output>\n</output>"),
	}
	h := build(t, window)
	ctx := joined(h.CriticalContext)
	assert.Contains(t, ctx, "Tests: python -m django test migrations.test_autodetector --verbosity=2")
	assert.Contains(t, ctx, "Installed: pip install sqlparse -q")
	assert.NotContains(t, ctx, "left-pad", "an install that failed installed nothing")
	assert.NotContains(t, ctx, "pytest -q", "a heredoc's body is not a command")
}

func TestWrittenTestsListedByName(t *testing.T) {
	body := strings.Join([]string{
		`describe("getInitials", () => {`,
		`  it("should return first two initials for a full name", () => {`,
		`    expect(getInitials("John Doe")).toBe("JD");`,
		`  });`,
		`  it("should return ?? for empty string", () => {`,
		`    expect(getInitials("")).toBe("??");`,
		`  });`,
		`  test('handles lowercase names', () => {});`,
		`});`,
	}, "\n")
	window := []compact.Message{
		assistant("", toolCall("1", "Write", args{"file_path": "/repo/NavUser.test.tsx", "content": body})),
		results(result("1", "File created successfully", false)),
	}
	h := build(t, window)
	assert.Contains(t, h.CompletedActions[0], "\n+ tests: should return first two initials for a full name; should return ?? for empty string; handles lowercase names")
	assert.Contains(t, h.CompletedActions[0], `+ expect(getInitials("John Doe")).toBe("JD");`)
}

func TestLineEditorEdits(t *testing.T) {
	window := []compact.Message{
		assistant("Let's fix the missing colon.\n```\nedit 4:4\ndef division(a: float, b: float) -> float:\nend_of_edit\n```"),
		synthetic("[File: /repo/tests/missing_colon.py (10 lines total)]\n1:def division(a: float, b: float) -> float:\nFile updated."),
		assistant("Now run it.\n```\npython tests/missing_colon.py\n```"),
		synthetic("2.0"),
	}
	h := build(t, window)
	assert.Equal(t, "run edit 4:4 …(+2 lines) → [File: /repo/tests/missing_colon.py (10 lines total)] (3 lines)\n+ def division(a: float, b: float) -> float:",
		h.CompletedActions[0])
	assert.Contains(t, joined(h.RelevantFiles), "/repo/tests/missing_colon.py (edited)")
}

func TestNoticesAreNoErrors(t *testing.T) {
	window := []compact.Message{
		assistant("", toolCall("1", "bash", args{"command": "pip install -e ."})),
		toolMessage("1", "Successfully installed app\nWARNING: Running pip as the 'root' user can result in broken permissions\nexit code 0"),
		assistant("", toolCall("2", "bash", args{"command": "pnpm lint"})),
		toolMessage("2", "src/a.ts\n  211:11  Warning: 'teamLead' is assigned a value but never used.\nexit code 0"),
		assistant("", toolCall("3", "bash", args{"command": "pnpm lint --fix"})),
		toolMessage("3", "✔ No ESLint warnings or errors\nexit code 0"),
		assistant("", toolCall("4", "bash", args{"command": "python repro.py"})),
		toolMessage("4", "Traceback (most recent call last):\n  File \"repro.py\", line 3, in <module>\n    from django.utils.deprecation import RemovedInDjango41Warning\nModuleNotFoundError: No module named 'asgiref'\nexit code 1"),
	}
	h := build(t, window)
	errs := joined(h.ErrorsAndFixes)
	assert.NotContains(t, errs, "root", "a warning about no place in the code is a notice")
	assert.Contains(t, joined(h.CompletedActions), "211:11  Warning: 'teamLead' is assigned a value but never used.", "a lint warning is kept")
	assert.NotContains(t, errs, "teamLead", "its action's outcome says it: not repeated")
	assert.NotContains(t, errs, "No ESLint warnings")
	assert.NotContains(t, errs, "RemovedInDjango41Warning", "the line a traceback quotes is code")
	assert.Equal(t, "bash python repro.py → exit 1: ModuleNotFoundError: No module named 'asgiref'", h.CompletedActions[3],
		"the outcome is the line that says most clearly what went wrong")
}

func TestConclusionsOutrankIntentions(t *testing.T) {
	window := []compact.Message{
		user("find the bug"),
		assistant("Now we need to add debug lines that are simple and won't break the `parser`."),
		assistant("So `Bracketed` adds an Indent after the start bracket."),
		// A reasoning model that says nothing but its reasoning.
		thinking("Great. So our modifications introduced a syntax error in the patch."),
	}
	cfg := fallback.Config{SectionTokens: map[string]int{"Decisions": 40}}
	h, err := fallback.Build(window, cfg)
	require.NoError(t, err)
	dec := joined(h.Decisions)
	assert.Contains(t, dec, "So `Bracketed` adds an Indent after the start bracket.")
	assert.Contains(t, dec, "So our modifications introduced a syntax error in the patch.", "reasoning is what such an agent says")
	assert.NotContains(t, dec, "Now we need to", "an intention goes first when room is short")
}

func TestRoomBeyondDefaultSharesIsUsed(t *testing.T) {
	// Only Relevant files has much to say: it may take more than its
	// default share (40%) of the total rather than leave the room empty.
	var window []compact.Message
	for i := range 120 {
		id := fmt.Sprint(i)
		window = append(window,
			assistant("", toolCall(id, "Read", args{"file_path": fmt.Sprintf("/repo/pkg%03d/module_with_a_long_name_%03d.go", i, i)})),
			results(result(id, "ok", false)))
	}
	count := func(s string) int { return len(s) / 4 }
	h, err := fallback.Build(window, fallback.Config{Count: count, MaxTokens: 2000})
	require.NoError(t, err)
	files := 0
	for _, it := range h.RelevantFiles {
		files += count(it) + 2
	}
	assert.Greater(t, files, 2000*40/100, "files use room the other sections leave")
	assert.LessOrEqual(t, count(h.Render()), 2000)
}

func TestPrunedEnvelopeStillRead(t *testing.T) {
	// The compactor shortens long outputs before summarizing, which can cut
	// a Codex output envelope in the middle of its JSON.
	cut := `{"output":"src/app.ts:3: error TS2304: Cannot find name 'foo'.\nsrc/app.ts:9: more\n[... compact: 4000 bytes omitted ...]`
	window := []compact.Message{
		assistant("", toolCall("1", "shell", args{"command": []string{"bash", "-lc", "pnpm tsc"}})),
		toolMessage("1", cut),
	}
	h := build(t, window)
	assert.Contains(t, h.CompletedActions[0], "error TS2304: Cannot find name 'foo'.")
	assert.NotContains(t, h.CompletedActions[0], `\n`, "the escapes are decoded")
}
