package format_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-40: a Claude Code session is a tree (each record names its
// parentUuid); Esc-Esc rewind / editing an earlier prompt starts a new
// branch from an earlier record, and Claude Code resumes the branch that
// leads to the last record, walking parentUuid back from it. The reader
// takes every record in file order, so the rewound-away branch is read as
// part of the conversation: counted, compacted, and summarized (the
// fallback handoff's task snapshot becomes an abandoned instruction).
func TestQAClaudeCodeRewoundBranchIsNotRead(t *testing.T) {
	rec := func(uuid, parent, typ, text string) string {
		r := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/w", "sessionId": "s",
			"version": "2.1.37", "type": typ, "uuid": uuid, "timestamp": "2025-01-01T00:00:00Z"}
		if parent != "" {
			r["parentUuid"] = parent
		}
		if typ == "user" {
			r["message"] = map[string]any{"role": "user", "content": text}
		} else {
			r["message"] = map[string]any{"id": "m" + uuid, "type": "message", "role": "assistant", "model": "claude",
				"content": []any{map[string]any{"type": "text", "text": text}}}
		}
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	var sb strings.Builder
	sb.WriteString(rec("u1", "", "user", "Write a parser for the CSV export."))
	sb.WriteString(rec("a1", "u1", "assistant", "Sure, which delimiter?"))
	parent := "a1"
	for i := 0; i < 3; i++ {
		sb.WriteString(rec(fmt.Sprintf("ua%d", i), parent, "user", fmt.Sprintf("ABANDONED step %d: use commas, in Perl", i)))
		sb.WriteString(rec(fmt.Sprintf("aa%d", i), fmt.Sprintf("ua%d", i), "assistant", fmt.Sprintf("ABANDONED answer %d", i)))
		parent = fmt.Sprintf("aa%d", i)
	}
	// The user rewinds to a1 and asks again: the live branch.
	sb.WriteString(rec("u2b", "a1", "user", "Use semicolons, the German export uses them."))
	sb.WriteString(rec("a2b", "u2b", "assistant", "OK, semicolons it is."))
	var warned []format.Warning
	tr, err := format.ReadWith(strings.NewReader(sb.String()), "s.jsonl", format.Name("claude-code"), format.ReadOptions{
		Warn: func(w format.Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range tr.Messages {
		if strings.Contains(m.Text(), "ABANDONED") {
			n++
		}
	}
	if n > 0 {
		t.Errorf("%d messages of the rewound-away branch read as the conversation (%d messages in all; Claude Code resumes 4); warnings: %v", n, len(tr.Messages), warned)
	}
}

// QA-40 (Gemini CLI): the JSON-lines recording is an upsert log; a
// {"$rewindTo": id} line (Gemini CLI's /rewind, Esc-Esc) truncates the
// conversation from that message on, as Gemini CLI's own loader does. The
// reader keeps the line as an "unknown" record with a warning and reads the
// rewound-away messages as live.
func TestQAGeminiRewindToIsHonoured(t *testing.T) {
	in := `{"sessionId":"gem-r","projectHash":"p","startTime":"2026-10-02T10:00:00Z","lastUpdated":"2026-10-02T10:00:00Z","kind":"main"}
{"id":"a","timestamp":"2026-10-02T10:00:01Z","type":"user","content":"first ask"}
{"id":"b","timestamp":"2026-10-02T10:00:02Z","type":"gemini","content":"reply to first"}
{"id":"c","timestamp":"2026-10-02T10:00:03Z","type":"user","content":"REWOUND-AWAY second ask: delete the database"}
{"id":"d","timestamp":"2026-10-02T10:00:04Z","type":"gemini","content":"REWOUND-AWAY reply"}
{"$rewindTo":"c"}
{"id":"e","timestamp":"2026-10-02T10:00:05Z","type":"user","content":"second ask, rephrased: back up the database"}
`
	tr, err := format.ReadWith(strings.NewReader(in), "s.jsonl", format.Name("gemini-cli"), format.ReadOptions{Warn: func(format.Warning) {}})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range tr.Messages {
		if strings.Contains(m.Text(), "REWOUND-AWAY") {
			t.Errorf("message %d (%q) was rewound away by {\"$rewindTo\":\"c\"} and is read as live", i, m.Text())
		}
	}
}

// QA-40 (Codex): an event_msg "thread_rolled_back" {"num_turns": N} (Codex's
// Esc-Esc backtrack / rollback) drops the last N user turns from the
// history Codex resumes with. The reader keeps the line as a record, with
// no warning, and reads the rolled-back turn as live.
func TestQACodexThreadRollbackIsHonoured(t *testing.T) {
	in := `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.60.0"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first ask: add a CSV reader"}]}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ROLLED-BACK ask: drop the users table"}]}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ROLLED-BACK reply"}]}}
{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}
{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"instead: back up the users table"}]}}
`
	tr, err := format.Read(strings.NewReader(in), "rollout.jsonl", format.Name("codex"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range tr.Messages {
		if strings.Contains(m.Text(), "ROLLED-BACK") {
			t.Errorf("message %d (%q) was rolled back by thread_rolled_back and is read as live", i, m.Text())
		}
	}
}
