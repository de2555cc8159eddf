package format_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-15 (issue 14 item 6, for the new readers): a record of a known type
// with a field of the wrong type is an error naming the line and the field
// (or, with SkipBadLines, a warning), never a message silently read empty.
func TestQAWrongTypedFieldsInNewReaders(t *testing.T) {
	const gemHeader = `{"sessionId":"s","projectHash":"p","startTime":"2026-04-29T21:39:22.319Z","lastUpdated":"2026-04-29T21:39:22.319Z","kind":"main"}` + "\n"
	const gemModel = `{"id":"g2","timestamp":"2026-04-29T21:39:35Z","type":"gemini","content":"ok"}` + "\n"
	gemUser := func(content string) string {
		return gemHeader + `{"id":"g1","timestamp":"2026-04-29T21:39:33Z","type":"user","content":` + content + "}\n" + gemModel
	}
	const ohAction = `{"id":"a1","timestamp":"2026-06-16T05:39:40","source":"agent","thought":[],"action":{"command":"ls","kind":"TerminalAction"},"tool_name":"terminal","tool_call_id":"c1","tool_call":{"id":"c1","name":"terminal","arguments":"{\"command\":\"ls\"}","origin":"completion"},"llm_response_id":"r1","kind":"ActionEvent"}` + "\n"
	const ohMessage = `{"id":"m0","timestamp":"2026-06-16T05:39:30","source":"user","llm_message":{"role":"user","content":[{"type":"text","text":"hi"}]},"kind":"MessageEvent"}` + "\n"
	ohObservation := func(obs string) string {
		return `{"id":"o1","timestamp":"2026-06-16T05:39:49","source":"environment","tool_name":"terminal","tool_call_id":"c1","observation":` + obs + `,"action_id":"a1","kind":"ObservationEvent"}` + "\n"
	}
	cases := []struct{ name, in, field string }{
		{"gemini user content is a number", gemUser("5"), `"content"`},
		{"gemini user content is a boolean", gemUser("true"), `"content"`},
		{"gemini user content lists a number", gemUser(`["a",5]`), `"content"`},
		{"openhands v1 observation is a number", ohAction + ohObservation("5"), `"observation"`},
		{"openhands v1 action is a string", ohMessage + strings.Replace(ohAction, `"action":{"command":"ls","kind":"TerminalAction"}`, `"action":"ls"`, 1), `"action"`},
		{"openhands v1 message content is a number", ohMessage + `{"id":"m1","timestamp":"t","source":"user","llm_message":{"role":"user","content":5},"kind":"MessageEvent"}` + "\n", `"llm_message.content"`},
	}
	for _, c := range cases {
		tr, err := format.Read(strings.NewReader(c.in), "in.jsonl", "")
		var fe *format.Error
		switch {
		case err == nil:
			t.Errorf("%s: read with no error (%d messages, format %s); want an error naming the line and the field", c.name, len(tr.Messages), tr.Format)
		case !errors.As(err, &fe) || fe.Line == 0 || !strings.Contains(err.Error(), c.field):
			t.Errorf("%s: %v; want an error naming the line and field %s", c.name, err, c.field)
		}
		// With SkipBadLines: a warning naming the line, the rest read.
		var warned []format.Warning
		_, err = format.ReadWith(strings.NewReader(c.in), "in.jsonl", "", format.ReadOptions{SkipBadLines: true,
			Warn: func(w format.Warning) { warned = append(warned, w) }})
		if len(warned) == 0 || warned[0].Kind != format.WarnSkipped {
			t.Errorf("%s: with SkipBadLines: %v, warnings %v; want the line skipped with a warning", c.name, err, warned)
		}
	}
	// Gemini CLI's content is a PartListUnion: a string, a Part or a list
	// of them. A single Part object is content, read as its text.
	tr, err := format.Read(strings.NewReader(gemUser(`{"text":"x"}`)), "in.jsonl", "")
	if err != nil || len(tr.Messages) != 2 || tr.Messages[0].Text() != "x" {
		t.Errorf("gemini content as one Part object: %v, %+v", err, tr.Messages)
	}
}
