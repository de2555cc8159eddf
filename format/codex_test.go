package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

func readCX(t *testing.T, src string) compact.Transcript {
	t.Helper()
	tr, err := Read(strings.NewReader(src), "rollout.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != string(Codex) {
		t.Fatalf("detected %s", tr.Format)
	}
	return tr
}

func cxSummary(tr *compact.Transcript) []string {
	var out []string
	for _, m := range tr.Messages {
		s := string(m.Role) + ":" + m.Text()
		if m.Summary {
			s += "(summary)"
		}
		for _, c := range m.ToolCalls() {
			s += "+call:" + c.ID
		}
		for _, id := range m.ResultIDs() {
			s += "+result:" + id
		}
		out = append(out, s)
	}
	return out
}

const cxSessionMetaLine = `{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"s1","cwd":"/w","cli_version":"0.77.0"}}`

func cxLine(ts, typ, payload string) string {
	return `{"timestamp":"2025-10-01T10:00:` + ts + `.000Z","type":"` + typ + `","payload":` + payload + `}`
}

func cxUser(ts, text string) string {
	return cxLine(ts, "response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"`+text+`"}]}`)
}

func cxAssistant(ts, text string) string {
	return cxLine(ts, "response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"`+text+`"}]}`)
}

// TestCodexEventsAreNotCounted: event_msg lines that repeat response items
// are records; reasoning, the assistant text and parallel calls made in one
// turn are one message.
func TestCodexEventsAreNotCounted(t *testing.T) {
	src := strings.Join([]string{
		cxSessionMetaLine,
		cxUser("01", "<environment_context>\\n  <cwd>/w</cwd>\\n</environment_context>"),
		cxUser("02", "# Context from my IDE setup:\\n\\n## Active file: a.go\\n\\n## My request for Codex:\\nfix it"),
		cxLine("02", "event_msg", `{"type":"user_message","message":"fix it","kind":"plain"}`),
		cxLine("03", "turn_context", `{"cwd":"/w","model":"gpt-5-codex"}`),
		cxLine("04", "event_msg", `{"type":"agent_reasoning","text":"look"}`),
		cxLine("05", "response_item", `{"type":"reasoning","summary":[{"type":"summary_text","text":"look"}],"encrypted_content":"gAAA"}`),
		cxLine("05", "response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}`),
		cxLine("05", "response_item", `{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"c2"}`),
		cxLine("06", "response_item", `{"type":"function_call_output","call_id":"c1","output":"a.go"}`),
		cxLine("06", "response_item", `{"type":"custom_tool_call_output","call_id":"c2","output":"applied"}`),
		cxAssistant("07", "fixed"),
		cxLine("07", "event_msg", `{"type":"agent_message","message":"fixed"}`),
	}, "\n") + "\n"
	tr := readCX(t, src)
	want := []string{
		"user:<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
		"user:# Context from my IDE setup:\n\n## Active file: a.go\n\n## My request for Codex:\nfix it",
		"assistant:+call:c1+call:c2",
		"tool:a.go+result:c1",
		"tool:applied+result:c2",
		"assistant:fixed",
	}
	if got := cxSummary(&tr); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages\n%q\nwant\n%q", got, want)
	}
	if !tr.Messages[0].Synthetic || tr.Messages[1].Synthetic || !tr.Messages[1].IsUserAsk() {
		t.Error("environment context must be synthetic and the IDE request an ask")
	}
	if a := tr.Messages[2].ToolCalls()[1].Arguments; string(a) != `"*** Begin Patch"` {
		t.Errorf("custom tool input %s", a)
	}
	if len(tr.Records) != 5 {
		t.Errorf("%d records, want 5", len(tr.Records))
	}
	var out bytes.Buffer
	if err := Write(&out, tr, Codex); err != nil || out.String() != src {
		t.Fatalf("round trip changed the file (%v)", err)
	}
	// A changed call keeps its kind.
	tr.Messages[2].Parts[0].Text = "looked"
	out.Reset()
	if err := Write(&out, tr, Codex); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"c2"`) {
		t.Errorf("re-encoded custom call lost its kind:\n%s", out.String())
	}
	back := readCX(t, out.String())
	if strings.Join(cxSummary(&back), "|") != strings.Join(want, "|") || back.Messages[2].Fingerprint() != tr.Messages[2].Fingerprint() {
		t.Errorf("re-read %q", cxSummary(&back))
	}
}

// TestCodexLegacyCompacted: a compacted line without replacement_history
// keeps the user's messages and adds the summary (build_compacted_history).
func TestCodexLegacyCompacted(t *testing.T) {
	src := strings.Join([]string{
		cxSessionMetaLine,
		cxUser("01", "first ask"),
		cxAssistant("02", "first answer"),
		cxUser("03", "second ask"),
		cxLine("04", "compacted", `{"message":"SUMMARY"}`),
		cxUser("05", "third ask"),
	}, "\n") + "\n"
	tr := readCX(t, src)
	want := "user:first ask|user:second ask|user:SUMMARY(summary)|user:third ask"
	if got := strings.Join(cxSummary(&tr), "|"); got != want {
		t.Errorf("live context %s, want %s", got, want)
	}
	if len(tr.Records) != 2 || tr.Records[1].Type != "response_item:message" {
		t.Errorf("records %+v", tr.Records)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, Codex); err != nil || out.String() != src {
		t.Errorf("round trip changed the file (%v)", err)
	}
	// Compacting keeps the earlier summary a summary.
	in := tr.Clone()
	in.Messages = append(append(in.Messages[:3:3], testHandoff), in.Messages[3])
	checkCompacted(t, &in)
}

// TestCodexReplacementHistory: a compacted line with replacement_history
// resets the history; its items are the messages. A change to one of them
// is written as a new compacted line.
func TestCodexReplacementHistory(t *testing.T) {
	src := strings.Join([]string{
		cxSessionMetaLine,
		cxUser("01", "old ask"),
		cxAssistant("02", "old answer"),
		cxLine("03", "compacted", `{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"old ask"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"S"}]},{"type":"function_call","name":"shell","arguments":"{}","call_id":"c9"},{"type":"function_call_output","call_id":"c9","output":"long output"}]}`),
		cxUser("04", "new ask"),
	}, "\n") + "\n"
	tr := readCX(t, src)
	want := "user:old ask|user:S|assistant:+call:c9|tool:long output+result:c9|user:new ask"
	if got := strings.Join(cxSummary(&tr), "|"); got != want {
		t.Fatalf("live context %s, want %s", got, want)
	}
	if n := len(tr.Records); n != 4 || !tr.Records[3].Marker {
		t.Errorf("records %+v", tr.Records)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, Codex); err != nil || out.String() != src {
		t.Fatalf("round trip changed the file (%v)", err)
	}
	tr.Messages[3].Parts[0].Text = "[pruned]"
	out.Reset()
	if err := Write(&out, tr, Codex); err != nil {
		t.Fatal(err)
	}
	back := readCX(t, out.String())
	if got := strings.Join(cxSummary(&back), "|"); got != strings.Replace(want, "long output", "[pruned]", 1) {
		t.Errorf("after pruning: %s", got)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"type":"compacted"`) {
		t.Errorf("last line %s", last)
	}
}

// TestCodexWritesNativeCompaction: a compacted transcript ends in one
// compacted line whose replacement_history is head + handoff + tail, the
// kept items byte for byte; no response_item follows it.
func TestCodexWritesNativeCompaction(t *testing.T) {
	tr := readCorpus(t, "codex_agentcmd_rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl")
	in, ok := compactForTest(&tr, 3, 5)
	if !ok {
		t.Fatal("nothing to compact")
	}
	out := checkCompacted(t, &in)
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte{'\n'})
	var last struct {
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Payload   struct {
			Message            string            `json:"message"`
			ReplacementHistory []json.RawMessage `json:"replacement_history"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		t.Fatal(err)
	}
	if last.Type != cxCompacted || last.Payload.Message != testHandoff.Text() || last.Timestamp == "" {
		t.Fatalf("last line %s", head(lines[len(lines)-1]))
	}
	var want []json.RawMessage
	for i := range in.Messages {
		want = append(want, codexItems(&in.Messages[i])...)
	}
	if len(last.Payload.ReplacementHistory) != len(want) {
		t.Fatalf("%d items, want %d", len(last.Payload.ReplacementHistory), len(want))
	}
	for i := range want {
		if !bytes.Equal(last.Payload.ReplacementHistory[i], want[i]) {
			t.Errorf("item %d: %s\nwant %s", i, head(last.Payload.ReplacementHistory[i]), head(want[i]))
		}
	}
	h := -1 // index of the handoff
	for i, m := range in.Messages {
		if m.Summary && len(m.Source.Records) == 0 {
			h = i
		}
	}
	item := last.Payload.ReplacementHistory[len(codexItemsOf(in.Messages[:h]))]
	if jsonscan.LookupString(item, "role") != "user" || !strings.Contains(string(item), `"input_text"`) {
		t.Errorf("handoff item %s", head(item))
	}
}

func codexItemsOf(msgs []compact.Message) []json.RawMessage {
	var items []json.RawMessage
	for i := range msgs {
		items = append(items, codexItems(&msgs[i])...)
	}
	return items
}

func TestCodexHarnessText(t *testing.T) {
	cases := map[string]bool{
		"<environment_context>\n<cwd>/w</cwd>\n</environment_context>":                           true,
		"<user_instructions>\nbe brief\n</user_instructions>":                                    true,
		"# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>":                      true,
		"# Context from my IDE setup:\n\n## Open tabs:\n- a.go":                                  true,
		"# Context from my IDE setup:\n\n## Open tabs:\n- a.go\n\n## My request for Codex:\nfix": false,
		"fix the bug": false,
	}
	for text, want := range cases {
		if got := harnessText(text); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}

func TestCodexBadInput(t *testing.T) {
	src := cxSessionMetaLine + "\n" + cxUser("01", "hi") + "\n" + `{"timestamp":"2025-10-01T10:00:02.000Z","type":"response_item","payload":{"type":"mess`
	_, err := Read(strings.NewReader(src), "rollout.jsonl", "")
	var fe *Error
	if !errors.As(err, &fe) || fe.Line != 3 || fe.Format != Codex || !strings.Contains(err.Error(), "expected a Codex rollout line") {
		t.Fatalf("error %v (%#v)", err, fe)
	}
}
