package format_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-41: OpenHands V0's own compaction, a CondensationAction event
// ("action": "condensation", args forgotten_events_start_id/_end_id or
// forgotten_event_ids, summary, summary_offset), is read as a tool call
// named "condensation" that nothing answers: `compact check` fails with a
// split_pair that is not there, the forgotten events stay in the live
// context, and the summary is an argument instead of a Summary message. The
// V1 reader honours Condensation; V0 does not.
func TestQAOpenHandsV0CondensationIsHonoured(t *testing.T) {
	in := `[
 {"id":0,"timestamp":"2025-02-01T00:14:10","source":"user","message":"fix the tests","action":"message","args":{"content":"fix the tests","image_urls":null,"wait_for_response":false}},
 {"id":1,"timestamp":"2025-02-01T00:14:11","source":"agent","message":"FORGOTTEN step one","action":"message","args":{"content":"FORGOTTEN step one","image_urls":null,"wait_for_response":false}},
 {"id":2,"timestamp":"2025-02-01T00:14:12","source":"agent","message":"FORGOTTEN step two","action":"message","args":{"content":"FORGOTTEN step two","image_urls":null,"wait_for_response":false}},
 {"id":3,"timestamp":"2025-02-01T00:14:13","source":"agent","message":"Summary: steps one and two done","action":"condensation","args":{"forgotten_event_ids":null,"forgotten_events_start_id":1,"forgotten_events_end_id":2,"summary":"CONDENSED: steps one and two done","summary_offset":1}},
 {"id":4,"timestamp":"2025-02-01T00:14:14","source":"agent","message":"now step three","action":"message","args":{"content":"now step three","image_urls":null,"wait_for_response":true}}
]`
	tr, err := format.Read(strings.NewReader(in), "traj.json", format.Name("openhands"))
	if err != nil {
		t.Fatal(err)
	}
	summary := false
	for i, m := range tr.Messages {
		if strings.Contains(m.Text(), "FORGOTTEN") {
			t.Errorf("message %d (%q) was forgotten by the condensation and is read as live", i, m.Text())
		}
		for _, c := range m.ToolCalls() {
			if c.Name == "condensation" {
				t.Errorf("message %d: the condensation is read as a tool call (nothing answers it: a false split pair)", i)
			}
		}
		if m.Summary && strings.Contains(m.Text(), "CONDENSED") {
			summary = true
		}
	}
	if !summary {
		t.Errorf("the condensation's summary is not a Summary message")
	}
}

// OpenHands V0 condensations as the agent applies them: forgotten events
// are records, not context; a call and its result go together; only the
// newest summary is live; condensation requests are bookkeeping; and the
// file is written back byte for byte.
func TestOpenHandsV0CondensationView(t *testing.T) {
	meta := func(id string) string {
		return `,"tool_call_metadata":{"function_name":"execute_bash","tool_call_id":"` + id + `","model_response":null,"total_calls_in_response":1}`
	}
	in := `[
 {"id":0,"source":"user","message":"fix it","action":"message","args":{"content":"fix it"}},
 {"id":1,"source":"agent","message":"run","action":"run","args":{"command":"ls","thought":"OLD look"}` + meta("c1") + `},
 {"id":2,"source":"agent","message":"out","observation":"run","content":"OLD listing","extras":{"command":"ls","exit_code":0},"cause":1` + meta("c1") + `},
 {"id":3,"source":"agent","message":"run","action":"run","args":{"command":"make","thought":"OLD build"}` + meta("c2") + `},
 {"id":4,"source":"agent","message":"req","action":"condensation_request","args":{}},
 {"id":5,"source":"agent","message":"c","action":"condensation","args":{"forgotten_event_ids":[1,3,4],"forgotten_events_start_id":null,"forgotten_events_end_id":null,"summary":"FIRST summary","summary_offset":1}},
 {"id":6,"source":"agent","message":"out","observation":"run","content":"OLD make output","extras":{"command":"make","exit_code":0},"cause":3` + meta("c2") + `},
 {"id":7,"source":"agent","message":"now","action":"message","args":{"content":"next step"}},
 {"id":8,"source":"agent","message":"c","action":"condensation","args":{"forgotten_event_ids":null,"forgotten_events_start_id":7,"forgotten_events_end_id":7,"summary":"SECOND summary","summary_offset":1}},
 {"id":9,"source":"agent","message":"run","action":"run","args":{"command":"go test","thought":"test"}` + meta("c3") + `},
 {"id":10,"source":"agent","message":"out","observation":"run","content":"ok","extras":{"command":"go test","exit_code":0},"cause":9` + meta("c3") + `}
]`
	tr, err := format.Read(strings.NewReader(in), "traj.json", format.Name("openhands"))
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, m := range tr.Messages {
		text := m.Text()
		if m.Role == "tool" {
			text = m.ResultText()
		}
		live = append(live, string(m.Role)+":"+text)
		if strings.Contains(text, "OLD") || strings.Contains(text, "next step") {
			t.Errorf("forgotten event read as live: %q", text)
		}
		if m.Summary && strings.Contains(m.Text(), "FIRST") {
			t.Errorf("the first summary is live after the second replaced it")
		}
	}
	if o := tr.Orphans(); len(o) != 0 {
		t.Errorf("orphans %v; messages %q", o, live)
	}
	want := []string{"user:fix it", "user:SECOND summary", "assistant:test", "tool:ok"}
	if strings.Join(live, "|") != strings.Join(want, "|") {
		t.Errorf("live messages %q, want %q", live, want)
	}
	var out bytes.Buffer
	if err := format.Write(&out, tr, format.OpenHands); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("not written back as read:\n%s", out.String())
	}
}
