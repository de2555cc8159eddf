package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/jsonscan"
)

// The corpus tests read every real transcript of the shared corpus (with
// its SOURCES.md rows), found by package internal/corpus, and check what was
// read against figures computed by a second, independent implementation of
// the reading rules: testdata/expect.py, a Python script over the raw files.
// Its output is the table below.

// corpusDir returns the shared corpus's transcripts directory, skipping tb
// where the corpus is missing (failing it under COMPACT_REQUIRE_CORPUS).
func corpusDir(tb testing.TB) string { return corpus.Dir(tb, corpus.Transcripts) }

// corpusCase is what one corpus file must read as.
type corpusCase struct {
	file   string
	format Name
	// messages and records in the live context; markers are records marking
	// the agent's own compactions; summaries and synthetic count messages.
	messages, records, markers, summaries, synthetic int
	roles                                            map[compact.Role]int
	calls, results                                   int // tool calls, and call ids answered by results
	orphans                                          []string
	ask                                              string // prefix of the first user ask
	// the first tool call: its name, and the first of its argument keys (in
	// sorted order) with a prefix of the value (a string, or compact JSON)
	call, argKey, argPrefix string
}

var corpusExpect = []corpusCase{
	{
		file: "claudecode_agentcmd_full-session-five.jsonl", format: ClaudeCode,
		messages: 9, records: 17, markers: 16, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 3, "user": 6},
		calls: 5, results: 5,
		orphans: []string{},
		ask:     "search the web for the claude code response type",
		call:    "WebSearch", argKey: "query", argPrefix: "Claude Code response types API",
	},
	{
		file: "claudecode_agentcmd_full-session-four.jsonl", format: ClaudeCode,
		messages: 63, records: 7, markers: 0, summaries: 0, synthetic: 3,
		roles: map[compact.Role]int{"assistant": 30, "user": 33},
		calls: 27, results: 27,
		orphans: []string{},
		ask:     "Can you add the first two initials of actual use",
		call:    "Glob", argKey: "pattern", argPrefix: "**/NavUser.{tsx,ts,jsx,js}",
	},
	{
		file: "claudecode_agentcmd_full-session-two.jsonl", format: ClaudeCode,
		messages: 30, records: 6, markers: 0, summaries: 0, synthetic: 5,
		roles: map[compact.Role]int{"assistant": 11, "user": 19},
		calls: 10, results: 10,
		orphans: []string{},
		ask:     "please move the + button to it's own button to t",
		call:    "Read", argKey: "file_path", argPrefix: "/Users/jnarowski/Dev/sourceborn/src/agen",
	},
	{
		file: "claudecode_agentcmd_full-session.jsonl", format: ClaudeCode,
		messages: 32, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 10, "user": 22},
		calls: 23, results: 20,
		orphans: []string{"call_without_result toolu_019KCj6ze6s4xPHdfY6s1FC5@31", "call_without_result toolu_011df4X9k8WZCHh9sXKVzGHZ@31", "call_without_result toolu_01XSaf9HkXmiWhn7q2mekBiR@31"},
		ask:     "Hey",
		call:    "mcp__happy__change_title", argKey: "title", argPrefix: "New Chat Session",
	},
	{
		file: "claudecode_agenthistory_session_with_compaction.synthetic.jsonl", format: ClaudeCode,
		messages: 5, records: 9, markers: 1, summaries: 1, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 2, "user": 3},
		calls: 1, results: 1,
		orphans: []string{},
		ask:     "Now let's add logout functionality",
		call:    "Edit", argKey: "file_path", argPrefix: "/home/testuser/compact-project/src/auth.",
	},
	{
		file: "claudecode_cclog_edge_cases.jsonl", format: ClaudeCode,
		messages: 12, records: 7, markers: 1, summaries: 0, synthetic: 3,
		roles: map[compact.Role]int{"assistant": 4, "user": 8},
		calls: 3, results: 1,
		orphans: []string{"call_without_result tool_edge_002@8", "call_without_result toolu_todowrite_002@10"},
		ask:     "Here's a message with some **markdown** formatti",
		call:    "FailingTool", argKey: "test_param", argPrefix: "This tool will fail to demonstrate error",
	},
	{
		file: "claudecode_cclog_representative_messages.jsonl", format: ClaudeCode,
		messages: 11, records: 1, markers: 1, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 5, "user": 6},
		calls: 2, results: 2,
		orphans: []string{},
		ask:     "Hello Claude! Can you help me understand how Pyt",
		call:    "Edit", argKey: "file_path", argPrefix: "/tmp/decorator_example.py",
	},
	{
		file: "claudecode_cclog_todowrite_examples.jsonl", format: ClaudeCode,
		messages: 11, records: 1, markers: 1, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 6, "user": 5},
		calls: 3, results: 3,
		orphans: []string{},
		ask:     "Can you help me implement a new feature with pro",
		call:    "TodoWrite", argKey: "todos", argPrefix: "[{\"id\":\"1\",\"content\":\"Design the feature",
	},
	{
		file: "claudecode_simonw_sample_session.json", format: ClaudeCode,
		messages: 5, records: 28, markers: 0, summaries: 1, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 2, "user": 3},
		calls: 1, results: 1,
		orphans: []string{},
		ask:     "Add a multiply function too",
		call:    "Edit", argKey: "file_path", argPrefix: "/project/math_utils.py",
	},
	{
		file: "codex_agentcmd_rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl", format: Codex,
		messages: 270, records: 428, markers: 0, summaries: 0, synthetic: 2,
		roles: map[compact.Role]int{"assistant": 132, "tool": 123, "user": 15},
		calls: 123, results: 123,
		orphans: []string{},
		ask:     "# Context from my IDE setup:\n\n## Open tabs:\n- pr",
		call:    "shell", argKey: "command", argPrefix: "[\"bash\",\"-lc\",\"rg \\\"TeamSheet\\\"\"]",
	},
	{
		file: "codex_agentcmd_rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl", format: Codex,
		messages: 37, records: 58, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 18, "tool": 16, "user": 3},
		calls: 16, results: 16,
		orphans: []string{},
		ask:     "# Context from my IDE setup:\n\n## Active file: ap",
		call:    "shell", argKey: "command", argPrefix: "[\"bash\",\"-lc\",\"cd /Users/jnarowski/Dev/s",
	},
	{
		file: "codex_agentcmd_rollout-2025-09-25T09-49-46-01998190-fba6-7f40-9309-dc4e48c5844a.jsonl", format: Codex,
		messages: 171, records: 258, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 85, "tool": 84, "user": 2},
		calls: 84, results: 84,
		orphans: []string{},
		ask:     "# Context from my IDE setup:\n\n## Open tabs:\n- cr",
		call:    "update_plan", argKey: "plan", argPrefix: "[{\"status\":\"in_progress\",\"step\":\"Review ",
	},
	{
		file: "codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl", format: Codex,
		messages: 71, records: 105, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 35, "tool": 34, "user": 2},
		calls: 34, results: 34,
		orphans: []string{},
		ask:     "# Context from my IDE setup:\n\n## Active file: ap",
		call:    "shell", argKey: "command", argPrefix: "[\"bash\",\"-lc\",\"ls\"]",
	},
	{
		file: "codex_agenthistory_session_with_compaction.synthetic.jsonl", format: Codex,
		messages: 8, records: 10, markers: 0, summaries: 1, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 2, "tool": 1, "user": 5},
		calls: 1, results: 1,
		orphans: []string{},
		ask:     "Help me build the API endpoints",
		call:    "shell", argKey: "command", argPrefix: "cat > src/middleware/auth.py << 'EOF'\nfr",
	},
	{
		file: "gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json", format: GeminiCLI,
		messages: 18, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 15, "user": 3},
		calls: 13, results: 13,
		orphans: []string{},
		ask:     "Can you make me an ai agent in python that I can",
		call:    "list_directory", argKey: "path", argPrefix: "/Users/jnarowski/Dev/playground/src/test",
	},
	{
		file: "gemini_agentcmd_session-2025-10-29T10-36-453aa339.json", format: GeminiCLI,
		messages: 5, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 4, "user": 1},
		calls: 3, results: 3,
		orphans: []string{},
		ask:     "Change 'Hello' to 'Goodbye' in /tmp/gemini-test/",
		call:    "read_file", argKey: "absolute_path", argPrefix: "/private/tmp/gemini-test/created.txt",
	},
	{
		file: "minisweagent_deepseek_chat_test_1-100_django__django-11099.traj.json", format: MiniSWEAgent,
		messages: 86, records: 0, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 42, "system": 1, "tool": 41, "user": 2},
		calls: 42, results: 41,
		orphans: []string{"call_without_result call_00_l7FNpGHiFmi9Q3zAd7QPhy0O@84"},
		ask:     "<pr_description>\nConsider the following PR descr",
		call:    "bash", argKey: "command", argPrefix: "find . -type f -name \"*.py\" | grep -i va",
	},
	{
		file: "minisweagent_deepseek_chat_test_1-100_django__django-13265.traj.json", format: MiniSWEAgent,
		messages: 314, records: 0, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 156, "system": 1, "tool": 155, "user": 2},
		calls: 156, results: 155,
		orphans: []string{"call_without_result call_00_rTMxF5EBqc40to812L8JSb9t@312"},
		ask:     "<pr_description>\nConsider the following PR descr",
		call:    "bash", argKey: "command", argPrefix: "find /testbed -type f -name \"*.py\" | gre",
	},
	{
		file: "minisweagent_deepseek_reasoner_dev_sqlfluff__sqlfluff-1733.traj.json", format: MiniSWEAgent,
		messages: 291, records: 0, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 144, "system": 1, "tool": 144, "user": 2},
		calls: 144, results: 144,
		orphans: []string{},
		ask:     "<pr_description>\nConsider the following PR descr",
		call:    "bash", argKey: "command", argPrefix: "find /testbed -type f -name \"*.py\" | hea",
	},
	{
		file: "minisweagent_github_issue.traj.json", format: OpenAIChat,
		messages: 22, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 10, "system": 1, "user": 11},
		calls: 0, results: 0,
		orphans: []string{},
		ask:     "Please solve this issue: GitHub Issue: SyntaxErr",
	},
	{
		file: "openhands_multi_swe_bench_output.jsonl", format: OpenHands,
		messages: 48, records: 3, markers: 0, summaries: 0, synthetic: 1,
		roles: map[compact.Role]int{"assistant": 23, "system": 1, "tool": 22, "user": 2},
		calls: 23, results: 22,
		orphans: []string{"call_without_result toolu_23@47"},
		ask:     "<uploaded_files>\n/workspace/ponylang__ponyc__0.1",
		call:    "execute_bash", argKey: "command", argPrefix: "ls -l /workspace/ponylang__ponyc__0.1",
	},
	{
		file: "openhands_resolver_mock_output.jsonl", format: OpenHands,
		messages: 8, records: 1, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 4, "tool": 3, "user": 1},
		calls: 3, results: 3,
		orphans: []string{},
		ask:     "Please fix the following issue for the repositor",
		call:    "run", argKey: "command", argPrefix: "touch LICENSE",
	},
	{
		file: "openhands_traj_basic.json", format: OpenHands,
		messages: 4, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 2, "tool": 1, "user": 1},
		calls: 2, results: 1,
		orphans: []string{"call_without_result toolu_01BUKu3B7nY574atNECkBiFk@3"},
		ask:     "Please create a simple 2048 game. No need to run",
		call:    "str_replace_editor", argKey: "command", argPrefix: "create",
	},
	{
		file: "openhands_traj_basic_gui_mode.json", format: OpenHands,
		messages: 10, records: 8, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 5, "tool": 4, "user": 1},
		calls: 4, results: 4,
		orphans: []string{},
		ask:     "I want to create a VueJS app that allows me to:\n",
		call:    "execute_bash", argKey: "command", argPrefix: "mkdir -p /workspace/todo-app",
	},
	{
		file: "sweagent_ctf_crypto_katy.traj", format: SWEAgent,
		messages: 37, records: 0, markers: 0, summaries: 0, synthetic: 17,
		roles: map[compact.Role]int{"assistant": 18, "system": 1, "user": 18},
		calls: 0, results: 0,
		orphans: []string{},
		ask:     "We're currently solving the following CTF challe",
	},
	{
		file: "sweagent_ctf_web_i_got_id_demo.traj", format: SWEAgent,
		messages: 43, records: 0, markers: 0, summaries: 0, synthetic: 20,
		roles: map[compact.Role]int{"assistant": 21, "system": 1, "user": 21},
		calls: 0, results: 0,
		orphans: []string{},
		ask:     "We're currently solving the following CTF challe",
	},
	{
		file: "sweagent_gpt4_pydicom-1458.traj", format: SWEAgent,
		messages: 26, records: 0, markers: 0, summaries: 0, synthetic: 12,
		roles: map[compact.Role]int{"assistant": 12, "system": 1, "user": 13},
		calls: 0, results: 0,
		orphans: []string{},
		ask:     "We're currently solving the following issue with",
	},
	{
		file: "sweagent_gpt4_test-repo-i1.traj", format: SWEAgent,
		messages: 12, records: 0, markers: 0, summaries: 0, synthetic: 5,
		roles: map[compact.Role]int{"assistant": 5, "system": 1, "user": 6},
		calls: 0, results: 0,
		orphans: []string{},
		ask:     "We're currently solving the following issue with",
	},
	{
		file: "sweagent_marshmallow-1867_function_calling.traj", format: SWEAgent,
		messages: 24, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 11, "system": 1, "tool": 11, "user": 1},
		calls: 11, results: 11,
		orphans: []string{},
		ask:     "We're currently solving the following issue with",
		call:    "create", argKey: "filename", argPrefix: "reproduce.py",
	},
	{
		file: "sweagent_marshmallow-1867_function_calling_replace_from_source.traj", format: SWEAgent,
		messages: 28, records: 0, markers: 0, summaries: 0, synthetic: 0,
		roles: map[compact.Role]int{"assistant": 13, "system": 1, "tool": 13, "user": 1},
		calls: 13, results: 13,
		orphans: []string{},
		ask:     "We're currently solving the following issue with",
		call:    "bash", argKey: "command", argPrefix: "ls -F",
	},
}

// corpusPath returns the path of a transcript of the shared corpus, as
// corpusDir finds it; a corpus without the file fails tb.
func corpusPath(tb testing.TB, file string) string {
	tb.Helper()
	return corpus.Path(tb, corpus.Transcripts, file)
}

// TestCorpusCoversTestdata: every transcript in the corpus has a case, and
// every case a file.
func TestCorpusCoversTestdata(t *testing.T) {
	dir := corpusDir(t)
	cases := map[string]bool{}
	for _, c := range corpusExpect {
		cases[c.file] = true
	}
	for _, f := range corpus.List(t, corpus.Transcripts) {
		base := filepath.Base(f)
		if !cases[base] {
			t.Errorf("%s has no corpusExpect case", base)
		}
		delete(cases, base)
	}
	for f := range cases {
		t.Errorf("case %s has no file in %s", f, dir)
	}
	sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range corpusExpect {
		if !bytes.Contains(sources, []byte("| "+c.file+" |")) {
			t.Errorf("%s has no row in SOURCES.md", c.file)
		}
	}
}

// TestCorpusRead reads every corpus file, detecting its format, and checks
// counts, roles, tool pairs, orphans, summaries, markers and a few contents.
func TestCorpusRead(t *testing.T) {
	corpusDir(t) // one skip for the whole test where the corpus is missing
	for _, c := range corpusExpect {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			requireFormat(t, c.format)
			data, err := os.ReadFile(corpusPath(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Read(bytes.NewReader(data), c.file, "")
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if Name(tr.Format) != c.format {
				t.Fatalf("detected %s, want %s", tr.Format, c.format)
			}
			got := corpusFigures(&tr)
			want := c
			want.file, want.format = "", ""
			if want.orphans == nil {
				want.orphans = []string{}
			}
			if !corpusFiguresEqual(got, want) {
				t.Errorf("read\n got %+v\nwant %+v", got, want)
			}
			for i, m := range tr.Messages {
				if m.ID == "" {
					t.Errorf("message %d has no ID", i)
				}
				if m.Source.Format != string(c.format) || len(m.Source.Records) == 0 || !m.Unchanged() {
					t.Errorf("message %d: source not kept: %+v", i, m.Source.Format)
				}
			}
		})
	}
}

// corpusFigures measures a transcript the way corpusCase describes it.
func corpusFigures(tr *compact.Transcript) corpusCase {
	c := corpusCase{messages: len(tr.Messages), records: len(tr.Records), roles: map[compact.Role]int{}, orphans: []string{}}
	for _, r := range tr.Records {
		if r.Marker {
			c.markers++
		}
	}
	for _, m := range tr.Messages {
		c.roles[m.Role]++
		c.calls += len(m.ToolCalls())
		c.results += len(m.ResultIDs())
		if m.Summary {
			c.summaries++
		}
		if m.Synthetic {
			c.synthetic++
		}
		if c.ask == "" && m.IsUserAsk() {
			c.ask = m.Text()
		}
		if calls := m.ToolCalls(); c.call == "" && len(calls) > 0 {
			c.call = calls[0].Name
			c.argKey, c.argPrefix = firstArg(calls[0].Arguments)
		}
	}
	for _, o := range tr.Orphans() {
		c.orphans = append(c.orphans, fmt.Sprintf("%s %s@%d", o.Kind, o.CallID, o.Index))
	}
	return c
}

// corpusFiguresEqual compares measured figures with expected ones, taking
// ask and argPrefix as prefixes.
func corpusFiguresEqual(got, want corpusCase) bool {
	prefixes := strings.HasPrefix(got.ask, want.ask) && strings.HasPrefix(got.argPrefix, want.argPrefix)
	got.ask, got.argPrefix, want.ask, want.argPrefix = "", "", "", ""
	return prefixes && fmt.Sprintf("%+v", got) == fmt.Sprintf("%+v", want)
}

func firstArg(args json.RawMessage) (string, string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || len(m) == 0 {
		return "", ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	v := m[keys[0]]
	var s string
	if json.Unmarshal(v, &s) == nil {
		return keys[0], s
	}
	var b bytes.Buffer
	_ = json.Compact(&b, v)
	return keys[0], b.String()
}

// agentFormats are the formats this file's round-trip and compaction tests
// cover (the others have their own tests).
var agentFormats = []Name{ClaudeCode, Codex, SWEAgent, MiniSWEAgent, OpenHands, GeminiCLI}

// TestCorpusRoundTrip: writing what was read gives the file back, byte for
// byte (but for a missing final newline), and reading that gives the same
// transcript.
func TestCorpusRoundTrip(t *testing.T) {
	corpusDir(t) // one skip for the whole test where the corpus is missing
	for _, c := range corpusExpect {
		if !slices.Contains(agentFormats, c.format) {
			continue
		}
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(corpusPath(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Read(bytes.NewReader(data), c.file, "")
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Write(&out, tr, c.format); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.TrimRight(out.Bytes(), "\n"), bytes.TrimRight(data, "\n")) {
				t.Errorf("written file differs from the input (%d vs %d bytes)", out.Len(), len(data))
			}
			back, err := Read(bytes.NewReader(out.Bytes()), c.file, "")
			if err != nil {
				t.Fatal(err)
			}
			sameTranscript(t, &back, &tr)
		})
	}
}

// sameTranscript checks that two reads of one file agree: messages (content
// and source), records and envelope.
func sameTranscript(t *testing.T, got, want *compact.Transcript) {
	t.Helper()
	if got.Format != want.Format || len(got.Messages) != len(want.Messages) || len(got.Records) != len(want.Records) {
		t.Fatalf("got %s with %d messages, %d records; want %s with %d, %d",
			got.Format, len(got.Messages), len(got.Records), want.Format, len(want.Messages), len(want.Records))
	}
	for i := range want.Messages {
		g, w := &got.Messages[i], &want.Messages[i]
		if g.Fingerprint() != w.Fingerprint() || g.ID != w.ID {
			t.Errorf("message %d differs:\n got %+v\nwant %+v", i, *g, *w)
		}
		if !slices.EqualFunc(g.Source.Records, w.Source.Records, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Errorf("message %d: source records differ", i)
		}
	}
	for i := range want.Records {
		g, w := got.Records[i], want.Records[i]
		if g.At != w.At || g.Type != w.Type || g.Marker != w.Marker || !bytes.Equal(g.Raw, w.Raw) {
			t.Errorf("record %d differs: got %d %s %v, want %d %s %v", i, g.At, g.Type, g.Marker, w.At, w.Type, w.Marker)
		}
	}
	if !bytes.Equal(got.Envelope, want.Envelope) {
		t.Errorf("envelope differs")
	}
}

// testHandoff is the summary the compaction tests insert.
var testHandoff = compact.Handoff{
	TaskSnapshot:     "Finish the feature the user asked for.",
	Goal:             "Ship it.",
	CompletedActions: []string{"Read the code", "Edited the handler"},
	RelevantFiles:    []string{"src/app.go"},
}.Message()

// compactForTest does what the compactor does to a transcript: it keeps the
// first head and last tail messages (moving each cut so no tool group is
// split), drops the middle and puts testHandoff in its place. Records keep
// their places, those of the dropped middle going before the handoff. It
// returns false when nothing would be dropped.
func compactForTest(tr *compact.Transcript, head, tail int) (compact.Transcript, bool) {
	n := len(tr.Messages)
	groups := tr.ToolGroups()
	splits := func(i int) bool {
		for _, g := range groups {
			if g.Call < i && g.End() >= i {
				return true
			}
		}
		return false
	}
	h := min(head, n)
	for h < n && splits(h) {
		h++
	}
	s := max(n-tail, h)
	for s > h && splits(s) {
		s--
	}
	if s <= h {
		return compact.Transcript{}, false
	}
	out := tr.Clone()
	out.Messages = append(append(slices.Clone(out.Messages[:h]), testHandoff), out.Messages[s:]...)
	for i := range out.Records {
		switch at := out.Records[i].At; {
		case at <= h:
		case at <= s:
			out.Records[i].At = h
		default:
			out.Records[i].At = at - (s - h) + 1
		}
	}
	return out, true
}

// TestCorpusCompaction writes a compacted transcript of every corpus file
// back in its own format: the result must read back (detected as that
// format) as head + handoff + tail, with the handoff a summary, no new
// orphans, and every kept record in the output as it was read.
func TestCorpusCompaction(t *testing.T) {
	corpusDir(t) // one skip for the whole test where the corpus is missing
	for _, c := range corpusExpect {
		if !slices.Contains(agentFormats, c.format) {
			continue
		}
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(corpusPath(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Read(bytes.NewReader(data), c.file, "")
			if err != nil {
				t.Fatal(err)
			}
			in, ok := compactForTest(&tr, 2, 4)
			if !ok {
				t.Skip("too short to compact")
			}
			out := checkCompacted(t, &in)
			checkKeptVerbatim(t, &in, out)
		})
	}
}

// checkCompacted writes a compacted transcript, reads it back and checks it;
// it returns the written bytes.
func checkCompacted(t *testing.T, in *compact.Transcript) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, *in, Name(in.Format)); err != nil {
		t.Fatalf("write: %v", err)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()), "compacted", "")
	if err != nil {
		t.Fatalf("read back: %v\n%s", err, head(buf.Bytes()))
	}
	if back.Format != in.Format {
		t.Fatalf("compacted output detected as %s, want %s", back.Format, in.Format)
	}
	if len(back.Messages) != len(in.Messages) {
		t.Fatalf("read back %d messages, want %d", len(back.Messages), len(in.Messages))
	}
	for i := range in.Messages {
		if back.Messages[i].Fingerprint() != in.Messages[i].Fingerprint() {
			t.Errorf("message %d differs:\n got %+v\nwant %+v", i, back.Messages[i], in.Messages[i])
		}
	}
	if got, want := orphanSet(&back), orphanSet(in); !slices.Equal(got, want) {
		t.Errorf("orphans %v, want %v", got, want)
	}
	// Writing the re-read transcript again is stable.
	var again bytes.Buffer
	if err := Write(&again, back, Name(back.Format)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("writing the re-read compacted transcript changed its bytes")
	}
	return buf.Bytes()
}

func orphanSet(tr *compact.Transcript) []string {
	var out []string
	for _, o := range tr.Orphans() {
		out = append(out, string(o.Kind)+" "+o.CallID)
	}
	return out
}

// checkKeptVerbatim checks that every source record of a kept message is in
// out as read: whole, or (Codex) its item inside the replacement history,
// or (Claude Code) with at most its parentUuid re-pointed.
func checkKeptVerbatim(t *testing.T, in *compact.Transcript, out []byte) {
	t.Helper()
	var lines [][]byte
	if in.Format == string(ClaudeCode) {
		for _, l := range bytes.Split(out, []byte{'\n'}) {
			lines = append(lines, ccSetParent(l, "-"))
		}
	}
	for i := range in.Messages {
		for _, rec := range in.Messages[i].Source.Records {
			switch {
			case in.Format == string(Codex) && codexIsLine(rec):
				rec = jsonscan.Lookup(rec, "payload")
			case in.Format == string(ClaudeCode) && bytes.IndexByte(rec, '\n') < 0:
				if !slices.ContainsFunc(lines, func(l []byte) bool { return bytes.Equal(l, ccSetParent(rec, "-")) }) {
					t.Errorf("message %d: record not in the output (even up to parentUuid): %s", i, head(rec))
				}
				continue
			}
			if !bytes.Contains(out, rec) {
				t.Errorf("message %d: record not in the output as read: %s", i, head(rec))
			}
		}
	}
}

func head(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// seedAgent seeds a fuzz target with the corpus files whose names start
// with prefix (the first lines only of large JSONL files, whole small
// documents) and with extra inputs.
func seedAgent(f *testing.F, prefix string, extra ...string) {
	var files []string
	if corpus.Available() {
		files, _ = filepath.Glob(filepath.Join(corpusDir(f), prefix+"*"))
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 64<<10 {
			if !strings.HasSuffix(file, ".jsonl") {
				continue
			}
			cut := bytes.LastIndexByte(data[:32<<10], '\n')
			data = data[:cut+1]
		}
		f.Add(data)
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

// fuzzAgent checks one input against a reader: an error is an *Error that
// names the input and says what was expected; a transcript read is written
// back and reads the same, and so does a compaction of it.
func fuzzAgent(t *testing.T, data []byte, f Name) {
	if fm, ok := Lookup(f); ok {
		fm.Sniff(data) // must not panic on any head
	}
	tr, err := Read(bytes.NewReader(data), "fuzz", f)
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) || fe.File != "fuzz" || fe.Msg == "" {
			t.Fatalf("error %v (%T) is not an *Error naming the input and what was expected", err, err)
		}
		return
	}
	tr.ToolGroups()
	tr.Orphans()
	rewrite := func(in *compact.Transcript, what string) {
		var out bytes.Buffer
		if err := Write(&out, *in, f); err != nil {
			t.Fatalf("%s: write: %v", what, err)
		}
		back, err := Read(bytes.NewReader(out.Bytes()), "fuzz", f)
		if err != nil {
			t.Fatalf("%s: the written file does not read: %v\n%s", what, err, head(out.Bytes()))
		}
		if len(back.Messages) != len(in.Messages) {
			t.Fatalf("%s: %d messages read back, want %d\n%s", what, len(back.Messages), len(in.Messages), head(out.Bytes()))
		}
		for i := range in.Messages {
			if back.Messages[i].Fingerprint() != in.Messages[i].Fingerprint() {
				t.Fatalf("%s: message %d reads back as\n%+v\nwant\n%+v", what, i, back.Messages[i], in.Messages[i])
			}
		}
	}
	rewrite(&tr, "round trip")
	if in, ok := compactForTest(&tr, 1, 1); ok {
		rewrite(&in, "compaction")
	}
}
