package format

import (
	"encoding/json"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// condense applies a V0 condensation action as OpenHands' View does (see
// the comment at the top of openhands.go): the messages of the events it
// forgets become records, and its summary a Summary message.
func (o *ohReader) condense(e *ohEvent, raw []byte, idx int) {
	var a ohCondensationArgs
	if e.Args.First() == '{' {
		_ = json.Unmarshal(e.Args, &a) // a field of another shape forgets nothing
	}
	summary := a.Summary != nil && *a.Summary != ""
	forget := map[int]bool{}
	for id, k := range o.ids {
		if ohForgets(&a, id) {
			forget[k] = true
		}
	}
	if summary {
		// The newest condensation's summary is the one the model sees.
		for _, k := range o.summaries {
			forget[k] = true
		}
	}
	if len(forget) > 0 {
		o.forget(forget)
	}
	o.open = ""
	if !summary {
		o.t.Records = append(o.t.Records, compact.Record{At: len(o.t.Messages), Type: "action:" + ohCondensation, Raw: raw, Marker: true})
		return
	}
	o.summaries = append(o.summaries, len(o.t.Messages))
	o.push(compact.Message{Role: compact.RoleUser, Summary: true,
		Parts: []compact.Part{{Type: compact.PartText, Text: *a.Summary}}}, raw, idx, "")
}

// ohForgets reports whether a condensation forgets the event with id:
// forgotten_event_ids when given, else the range from
// forgotten_events_start_id to forgotten_events_end_id.
func ohForgets(a *ohCondensationArgs, id string) bool {
	if a.ForgottenIDs != nil {
		for _, f := range a.ForgottenIDs {
			if ohScalar(f) == id {
				return true
			}
		}
		return false
	}
	n, err := strconv.Atoi(id)
	start, serr := strconv.Atoi(ohScalar(a.Start))
	end, eerr := strconv.Atoi(ohScalar(a.End))
	return err == nil && serr == nil && eerr == nil && start <= n && n <= end
}

// forget turns the messages at the indexes in forget into records where
// they stood, with every message tied to one of them by a call and its
// result (the prompt never holds half a pair); results of their calls read
// later are records too.
func (o *ohReader) forget(forget map[int]bool) {
	msgs := o.t.Messages
	for changed := true; changed; {
		changed = false
		calls := map[string]bool{}
		for k := range forget {
			for _, c := range msgs[k].ToolCalls() {
				calls[c.ID] = true
			}
			for _, id := range msgs[k].ToolCallIDs {
				calls[id] = true
			}
		}
		for i := range msgs {
			if forget[i] {
				continue
			}
			tied := false
			for _, c := range msgs[i].ToolCalls() {
				tied = tied || calls[c.ID]
			}
			for _, id := range msgs[i].ToolCallIDs {
				tied = tied || calls[id]
			}
			if tied {
				forget[i], changed = true, true
			}
		}
	}
	recs := o.t.Records
	o.t.Messages, o.t.Records = nil, nil
	newAt := make([]int, len(msgs))
	r := 0
	for i := range msgs {
		for ; r < len(recs) && recs[r].At <= i; r++ {
			recs[r].At = len(o.t.Messages)
			o.t.Records = append(o.t.Records, recs[r])
		}
		newAt[i] = len(o.t.Messages)
		if !forget[i] {
			o.t.Messages = append(o.t.Messages, msgs[i])
			continue
		}
		newAt[i] = -1
		for _, c := range msgs[i].ToolCalls() {
			o.forgotten[c.ID] = true
		}
		for _, src := range msgs[i].Source.Records {
			o.t.Records = append(o.t.Records, compact.Record{At: len(o.t.Messages), Type: ohRecordType(src), Raw: src})
		}
	}
	for ; r < len(recs); r++ {
		recs[r].At = len(o.t.Messages)
		o.t.Records = append(o.t.Records, recs[r])
	}
	for id, k := range o.ids {
		if newAt[k] < 0 {
			delete(o.ids, id)
		} else {
			o.ids[id] = newAt[k]
		}
	}
	kept := o.summaries[:0]
	for _, k := range o.summaries {
		if newAt[k] >= 0 {
			kept = append(kept, newAt[k])
		}
	}
	o.summaries = kept
}

// ohRecordType is the record Type of an event: "action:<kind>" or
// "observation:<kind>".
func ohRecordType(raw []byte) string {
	if a := jsonscan.LookupString(raw, "action"); a != "" {
		return "action:" + a
	}
	return "observation:" + jsonscan.LookupString(raw, "observation")
}
