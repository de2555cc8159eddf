package compactor

import (
	"slices"

	"github.com/compactkit/compact"
)

// assemble builds head + pinned + handoff + tail. handoff may be nil (prune
// strategy: the middle was rewritten in place and is passed as middle).
// origin maps each output message to its input index, -1 for the handoff.
func assemble(t *compact.Transcript, p *Plan, middle []compact.Message, handoff *compact.Message) (compact.Transcript, []int) {
	// Kept messages are shared with t, not cloned: nothing here writes to
	// them, and copying a long transcript would cost more than the rest.
	out := compact.Transcript{Format: t.Format, Tools: t.Tools, Records: t.Records, Envelope: t.Envelope}
	n := len(t.Messages)
	msgs := make([]compact.Message, 0, p.HeadEnd+len(p.Pinned)+1+n-p.TailStart+len(middle))
	origin := make([]int, 0, cap(msgs))
	newIndex := make(map[int]int, len(p.Pinned))
	for i := 0; i < p.HeadEnd; i++ {
		msgs = append(msgs, t.Messages[i])
		origin = append(origin, i)
	}
	if handoff == nil {
		for k := range middle {
			msgs = append(msgs, middle[k])
			origin = append(origin, p.HeadEnd+k)
		}
	}
	for _, i := range p.Pinned {
		newIndex[i] = len(msgs)
		msgs = append(msgs, t.Messages[i])
		origin = append(origin, i)
	}
	if handoff != nil {
		msgs = append(msgs, *handoff)
		origin = append(origin, -1)
	}
	shift := len(msgs) - p.TailStart
	for i := p.TailStart; i < n; i++ {
		msgs = append(msgs, t.Messages[i])
		origin = append(origin, i)
	}
	out.Messages = msgs
	if handoff != nil {
		out.Records = remapRecords(t.Records, p, newIndex, shift)
	}
	return out, origin
}

// remapRecords moves each record to the new index of the message it
// preceded. Records in the dropped middle go with their messages, except
// the last of each state type, which now precedes what replaced the middle
// (the pinned messages and the handoff).
func remapRecords(recs []compact.Record, p *Plan, pinned map[int]int, shift int) []compact.Record {
	lastState := map[string]int{}
	for k, r := range recs {
		if r.At >= p.HeadEnd && r.At < p.TailStart && !r.Marker && r.State {
			if _, ok := pinned[r.At]; !ok {
				lastState[r.Type] = k
			}
		}
	}
	out := make([]compact.Record, 0, len(recs))
	for k, r := range recs {
		switch {
		case r.At < p.HeadEnd:
		case r.At >= p.TailStart:
			r.At += shift
		default:
			if i, ok := pinned[r.At]; ok {
				r.At = i
			} else if lastState[r.Type] == k && r.State && !r.Marker {
				r.At = p.HeadEnd
			} else {
				continue
			}
		}
		out = append(out, r)
	}
	// Records moved to the start of the middle and those of pinned
	// messages share indices; a stable sort keeps their source order.
	slices.SortStableFunc(out, func(a, b compact.Record) int { return a.At - b.At })
	return out
}
