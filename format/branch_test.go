package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// ccRec builds one Claude Code record: typ user/assistant (content a text
// or blocks), progress, attachment or system.
func ccRec(uuid, parent, typ, msgID string, content any) string {
	r := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/w", "sessionId": "s",
		"version": "2.1.37", "type": typ, "uuid": uuid, "timestamp": "2025-01-01T00:00:00Z"}
	if parent != "" {
		r["parentUuid"] = parent
	}
	switch typ {
	case ccUser:
		r["message"] = map[string]any{"role": "user", "content": content}
	case ccAssistant:
		if s, ok := content.(string); ok {
			content = []any{map[string]any{"type": "text", "text": s}}
		}
		r["message"] = map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": "claude", "content": content}
	case "progress":
		r["data"] = map[string]any{"type": "hook_progress"}
	case "attachment":
		r["attachment"] = map[string]any{"type": "todo"}
	case ccSystem:
		r["subtype"], r["content"] = "turn_duration", "1s"
	}
	b, _ := json.Marshal(r)
	return string(b) + "\n"
}

func toolUse(id string) []any {
	return []any{map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "ls"}}}
}

func toolResult(id string) []any {
	return []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "ok"}}
}

// rewoundSession: a session with parallel tool calls (two records of one
// API message, each result hanging off its call's record), progress and
// attachment records on the chain, then a rewind to a1 and a new branch.
func rewoundSession() string {
	var sb strings.Builder
	sb.WriteString(ccRec("u1", "", ccUser, "", "Write a parser for the CSV export."))
	sb.WriteString(ccRec("a1", "u1", ccAssistant, "m1", "Sure, which delimiter?"))
	sb.WriteString(ccRec("ua", "a1", ccUser, "", "ABANDONED: use commas, in Perl"))
	sb.WriteString(ccRec("aa1", "ua", ccAssistant, "m2", toolUse("t1")))
	sb.WriteString(ccRec("p1", "aa1", "progress", "", nil))
	sb.WriteString(ccRec("aa2", "aa1", ccAssistant, "m2", toolUse("t2")))
	sb.WriteString(ccRec("r1", "aa1", ccUser, "", toolResult("t1")))
	sb.WriteString(ccRec("r2", "aa2", ccUser, "", toolResult("t2")))
	sb.WriteString(ccRec("aa3", "r2", ccAssistant, "m3", "ABANDONED: done in Perl"))
	sb.WriteString(ccRec("s1", "aa3", ccSystem, "", nil))
	// The user rewinds to a1: the new prompt hangs off an attachment
	// record, which hangs off a progress record, which hangs off a1.
	sb.WriteString(ccRec("p2", "a1", "progress", "", nil))
	sb.WriteString(ccRec("at", "p2", "attachment", "", nil))
	sb.WriteString(ccRec("u2", "at", ccUser, "", "Use semicolons, the German export uses them."))
	sb.WriteString(ccRec("b1", "u2", ccAssistant, "m4", toolUse("t3")))
	sb.WriteString(ccRec("b2", "b1", ccAssistant, "m4", toolUse("t4")))
	sb.WriteString(ccRec("q1", "b1", ccUser, "", toolResult("t3")))
	sb.WriteString(ccRec("q2", "b2", ccUser, "", toolResult("t4")))
	sb.WriteString(ccRec("b3", "q2", ccAssistant, "m5", "OK, semicolons it is."))
	return sb.String()
}

func TestClaudeCodeReadsTheLiveBranch(t *testing.T) {
	in := rewoundSession()
	var warned []Warning
	tr, err := ReadWith(strings.NewReader(in), "s.jsonl", ClaudeCode, ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range tr.Messages {
		ids = append(ids, m.ID)
	}
	// b1/b2 are one message; q1, q2 two result messages.
	if got, want := strings.Join(ids, " "), "u1 a1 u2 b1 q1 q2 b3"; got != want {
		t.Errorf("live messages %q, want %q", got, want)
	}
	if len(warned) != 1 || warned[0].Kind != WarnRewound || warned[0].Line != 13 ||
		!strings.Contains(warned[0].Msg, "5 message(s)") || !strings.Contains(warned[0].Msg, "line 2") {
		t.Errorf("warnings %v, want one %q at line 13 naming line 2 and 5 messages", warned, WarnRewound)
	}
	rewound := 0
	for _, r := range tr.Records {
		if r.Type == ccRewound {
			rewound++
		}
	}
	// ua, aa1+p1+aa2, r1, r2, aa3.
	if rewound != 7 {
		t.Errorf("%d %q records, want 7", rewound, ccRewound)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, ClaudeCode); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("written back differs:\n%s\nwant:\n%s", out.String(), in)
	}
	got := streamAll(t, []byte(in), "s.jsonl")
	if len(got) != len(tr.Messages) {
		t.Fatalf("streamed %d messages, read %d", len(got), len(tr.Messages))
	}
	for i := range got {
		if got[i].ID != tr.Messages[i].ID {
			t.Errorf("streamed message %d is %s, read %s", i, got[i].ID, tr.Messages[i].ID)
		}
	}
}

// TestClaudeCodeNoRewindWithoutABranch: parallel tool results, progress
// records and records whose parent is not in the file start no branch.
func TestClaudeCodeNoRewindWithoutABranch(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(ccRec("u1", "gone", ccUser, "", "start"))
	sb.WriteString(ccRec("a1", "u1", ccAssistant, "m1", toolUse("t1")))
	sb.WriteString(ccRec("r1", "a1", ccUser, "", toolResult("t1")))
	sb.WriteString(ccRec("a2", "a1", ccAssistant, "m1", toolUse("t2")))
	sb.WriteString(ccRec("r2", "a2", ccUser, "", toolResult("t2")))
	sb.WriteString(ccRec("a3", "r2", ccAssistant, "m2", "done"))
	sb.WriteString(ccRec("u2", "missing", ccUser, "", "next, after a damaged line"))
	var warned []Warning
	tr, err := ReadWith(strings.NewReader(sb.String()), "s.jsonl", ClaudeCode, ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	// u1, a1, r1, a2 (m1 again after a result: a message of its own), r2, a3, u2.
	if len(tr.Messages) != 7 || len(warned) != 0 {
		t.Errorf("%d messages, warnings %v; want 7 and none", len(tr.Messages), warned)
	}
}

// TestClaudeCodeCompactedKeepsTheBranchOff: a compaction that drops the
// record a rewound branch hangs off writes the branch so that it still
// reads as rewound, and the live chain does not run through it.
func TestClaudeCodeCompactedKeepsTheBranchOff(t *testing.T) {
	tr, err := ReadWith(strings.NewReader(rewoundSession()), "s.jsonl", ClaudeCode, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Replace u1, a1 with a handoff.
	handoff := compact.Message{Role: compact.RoleUser, Summary: true, Parts: []compact.Part{{Type: compact.PartText, Text: "handoff: a CSV parser"}}}
	tr.Messages = append([]compact.Message{handoff}, tr.Messages[2:]...)
	for i := range tr.Records {
		tr.Records[i].At = max(0, tr.Records[i].At-1)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, ClaudeCode); err != nil {
		t.Fatal(err)
	}
	var warned []Warning
	back, err := ReadWith(bytes.NewReader(out.Bytes()), "out.jsonl", ClaudeCode, ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range back.Messages {
		if strings.Contains(m.Text(), "ABANDONED") {
			t.Errorf("rewound message %s read back as live:\n%s", m.ID, out.String())
		}
	}
	if len(back.Messages) != 6 {
		t.Errorf("read back %d messages, want 6 (handoff, u2, b, q1, q2, b3)", len(back.Messages))
	}
	_, problems, err := Check(out.Bytes(), "out.jsonl", ClaudeCode)
	if err != nil || len(problems) > 0 {
		t.Errorf("check: %v %v", problems, err)
	}
}

// rewindCase reads in (format as), checks that no message holding gone is
// read, that one WarnRewound names the messages taken back, that the file
// is written back byte for byte, and that Stream hands over the same.
func rewindCase(t *testing.T, as Name, in, gone string, left int) {
	t.Helper()
	var warned []Warning
	tr, err := ReadWith(strings.NewReader(in), "s.jsonl", as, ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range tr.Messages {
		if strings.Contains(m.Text(), gone) {
			t.Errorf("message %d (%q) was taken back and is read as live", i, m.Text())
		}
	}
	if len(warned) != 1 || warned[0].Kind != WarnRewound || !strings.Contains(warned[0].Msg, fmt.Sprintf(" %d message(s)", left)) {
		t.Errorf("warnings %v, want one %q of %d messages", warned, WarnRewound, left)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, as); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("written back differs:\n%s\nwant:\n%s", out.String(), in)
	}
	got := streamAll(t, []byte(in), "s.jsonl")
	if len(got) != len(tr.Messages) {
		t.Fatalf("streamed %d messages, read %d", len(got), len(tr.Messages))
	}
	for i := range got {
		if got[i].Fingerprint() != tr.Messages[i].Fingerprint() {
			t.Errorf("streamed message %d differs", i)
		}
	}
}

func TestGeminiRewindTo(t *testing.T) {
	in := `{"sessionId":"gem-r","projectHash":"p","startTime":"2026-10-02T10:00:00Z","lastUpdated":"2026-10-02T10:00:00Z","kind":"main"}
{"id":"a","timestamp":"2026-10-02T10:00:01Z","type":"user","content":"first ask"}
{"id":"b","timestamp":"2026-10-02T10:00:02Z","type":"gemini","content":"reply to first"}
{"id":"c","timestamp":"2026-10-02T10:00:03Z","type":"user","content":"REWOUND second ask: delete the database"}
{"$set":{"lastUpdated":"2026-10-02T10:00:03Z"}}
{"id":"d","timestamp":"2026-10-02T10:00:04Z","type":"gemini","content":"REWOUND reply"}
{"id":"d","timestamp":"2026-10-02T10:00:04Z","type":"gemini","content":"REWOUND reply, recorded again"}
{"$rewindTo":"c"}
{"id":"c","timestamp":"2026-10-02T10:00:05Z","type":"user","content":"second ask, rephrased: back up the database"}
`
	rewindCase(t, GeminiCLI, in, "REWOUND", 2)
	tr, _ := ReadWith(strings.NewReader(in), "s.jsonl", GeminiCLI, ReadOptions{})
	if len(tr.Messages) != 3 || tr.Messages[2].ID != "c" {
		t.Errorf("%d messages, want a, b and the new c", len(tr.Messages))
	}
	// An id never recorded takes back everything, as Gemini CLI's loader does.
	all := strings.Replace(in, `{"$rewindTo":"c"}`, `{"$rewindTo":"zz"}`, 1)
	tr, _ = ReadWith(strings.NewReader(all), "s.jsonl", GeminiCLI, ReadOptions{})
	if len(tr.Messages) != 1 {
		t.Errorf("rewind to an unknown id: %d messages, want 1", len(tr.Messages))
	}
}

func TestCodexThreadRolledBack(t *testing.T) {
	in := `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.60.0"}}
{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first ask: add a CSV reader"}]}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ROLLED-BACK ask: drop the users table"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"user_message","message":"ROLLED-BACK ask: drop the users table"}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"psql\"]}","call_id":"c1"}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ROLLED-BACK output"}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ROLLED-BACK reply"}]}}
{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}
{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"instead: back up the users table"}]}}
`
	rewindCase(t, Codex, in, "ROLLED-BACK", 4)
	// More turns than there are: every user turn goes, the context before stays.
	many := strings.Replace(in, `"num_turns":1`, `"num_turns":5`, 1)
	tr, _ := ReadWith(strings.NewReader(many), "s.jsonl", Codex, ReadOptions{})
	if len(tr.Messages) != 2 || !tr.Messages[0].Synthetic {
		t.Errorf("rollback of 5 turns: %d messages, want the context and the new ask", len(tr.Messages))
	}
}
