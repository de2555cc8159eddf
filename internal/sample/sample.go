// Package sample writes the project's own sample sessions: one coherent,
// realistic engineering session (an agent fixing a bug in a small Python
// project: reading files, searching, editing with real diffs, a failing
// test run, the fix, a passing run, a dependency install, a page looked up,
// a decision stated by the user, a secret printed by a command), rendered
// into each agent's and API's transcript format.
//
// The sessions are the repository's test data for everything that must
// hold on a fresh clone (golden files, the README's quick start, tests
// that need a long real-shaped transcript); third-party transcripts stay
// in the shared corpus (package internal/corpus). The output is a pure
// function of the seed: Files(DefaultSeed) is what testdata/sessions holds,
// and other seeds give other sessions of the same story (other data, ids,
// secrets, times and optional steps) for tests that must not fit one file.
//
// Every secret in a session is random (drawn from the seed) and of a kind
// that is fake by construction (Stripe test-mode keys, a local database's
// password); the redactor must still find them.
package sample

import (
	"fmt"
	"time"
)

// DefaultSeed is the seed of the checked-in sample sessions.
const DefaultSeed = 1

// File is one rendered sample session.
type File struct {
	Name   string // file name, e.g. "claudecode_invoicer.jsonl"
	Format string // the format package's name of its format
	Data   []byte
}

// Files renders the session of seed into every format, in a fixed order.
func Files(seed uint64) []File {
	s := Generate(seed)
	return []File{
		{Name: "claudecode_invoicer.jsonl", Format: "claude-code", Data: ClaudeCode(s)},
		{Name: "codex_invoicer.jsonl", Format: "codex", Data: Codex(s)},
		{Name: "openai_invoicer.json", Format: "openai", Data: OpenAIChat(s)},
		{Name: "anthropic_invoicer.json", Format: "anthropic", Data: Anthropic(s)},
	}
}

// Session is one engineering session, independent of any format: what the
// user asked, what the assistant thought, said and called, and what each
// call returned.
type Session struct {
	Seed    uint64
	Start   time.Time
	Project string // the project's directory name
	Cwd     string // the absolute working directory
	Branch  string // the git branch
	System  string // the system prompt of the API formats
	Events  []Event
	// Secrets are the secret values the session prints (for tests: each
	// must be redacted).
	Secrets []string
}

// EventKind says what an event is.
type EventKind int

const (
	UserText      EventKind = iota // the user types a message
	HarnessNote                    // the harness adds a note (a system reminder)
	AssistantTurn                  // the model answers: thinking, text, tool calls
)

// Event is one message of the session. The results of an assistant turn's
// calls follow it as the calls' Output.
type Event struct {
	Kind     EventKind
	At       time.Time
	Text     string
	Thinking string // assistant only
	Calls    []*Call
}

// Tool is what a call does, whatever the format names it.
type Tool int

const (
	ToolShell  Tool = iota // runs Command
	ToolRead               // reads Path (lines From..From+Lines-1, or all)
	ToolEdit               // replaces Old with New in Path
	ToolWrite              // writes Content to Path (a new file)
	ToolSearch             // searches Pattern in Paths
	ToolFind               // lists files matching Glob
	ToolFetch              // fetches URL
	ToolPlan               // updates the plan
)

// Call is one tool call and its outcome.
type Call struct {
	Tool    Tool
	At      time.Time // when the result came back
	Command string    // shell
	Desc    string    // a short description of the shell command
	Path    string    // read, edit, write (relative to the project)
	From    int       // read: first line (1-based), 0 for the whole file
	Lines   int       // read: number of lines
	Old     string    // edit
	New     string    // edit
	Content string    // write
	Pattern string    // search (an extended regular expression)
	Paths   []string  // search: where
	Glob    string    // find
	URL     string    // fetch
	Prompt  string    // fetch: what to look for
	Plan    []PlanItem

	// Outcome.
	Output string // what the tool returned: shell output, file text, matches, the page
	Exit   int    // shell exit code
	Failed bool   // the call failed (non-zero exit, a tool error)
	Before string // edit, write: the file before ("" for a new file)
	After  string // edit, write: the file after
	Hunks  []Hunk // edit, write: the change as unified-diff hunks
	Total  int    // read: the file's number of lines
}

// PlanItem is one step of the plan.
type PlanItem struct {
	Step   string
	Status string // "pending", "in_progress" or "completed"
}

// Hunk is one hunk of a unified diff.
type Hunk struct {
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []string // each prefixed with ' ', '-' or '+'
}

// Diff renders hunks as a unified diff of path.
func Diff(path string, hunks []Hunk) string {
	s := fmt.Sprintf("--- a/%s\n+++ b/%s\n", path, path)
	for _, h := range hunks {
		s += fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			s += l + "\n"
		}
	}
	return s
}
