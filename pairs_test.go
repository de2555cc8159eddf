package compact

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// pairsReference is the first implementation of pairs (three maps), kept
// to hold the leaner one to it.
func pairsReference(t *Transcript) ([]ToolGroup, []Orphan) {
	var groups []ToolGroup
	var orphans []Orphan
	open := map[string][]int{}
	answered := map[[2]int]bool{}
	callIndex := map[[2]int]string{}
	for i := range t.Messages {
		m := &t.Messages[i]
		if calls := m.ToolCalls(); len(calls) > 0 {
			g := len(groups)
			groups = append(groups, ToolGroup{Call: i, Calls: calls})
			for c, call := range calls {
				open[call.ID] = append(open[call.ID], g)
				callIndex[[2]int{g, c}] = call.ID
			}
		}
		for _, id := range m.ResultIDs() {
			waiting := open[id]
			if len(waiting) == 0 {
				orphans = append(orphans, Orphan{Kind: OrphanResult, Index: i, CallID: id})
				continue
			}
			g := waiting[0]
			open[id] = waiting[1:]
			for c, call := range groups[g].Calls {
				if call.ID == id && !answered[[2]int{g, c}] {
					answered[[2]int{g, c}] = true
					break
				}
			}
			if r := groups[g].Results; len(r) == 0 || r[len(r)-1] != i {
				groups[g].Results = append(groups[g].Results, i)
			}
		}
	}
	for g := range groups {
		for c := range groups[g].Calls {
			if !answered[[2]int{g, c}] {
				groups[g].Missing = append(groups[g].Missing, callIndex[[2]int{g, c}])
			}
		}
	}
	return groups, orphans
}

// TestPairsMatchReference: random calls and results over a few ids (empty,
// repeated within a turn and across turns, answered twice, never) pair as
// the reference pairs them.
func TestPairsMatchReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ids := []string{"", "a", "b", "c"}
		var tr Transcript
		for n := rapid.IntRange(0, 30).Draw(rt, "n"); n > 0; n-- {
			if rapid.Bool().Draw(rt, "call") {
				var calls []ToolCall
				for k := rapid.IntRange(1, 3).Draw(rt, "calls"); k > 0; k-- {
					calls = append(calls, ToolCall{ID: rapid.SampledFrom(ids).Draw(rt, "id"), Name: "x"})
				}
				tr.Messages = append(tr.Messages, AssistantMessage("", calls...))
			} else {
				m := Message{Role: RoleTool, ToolCallIDs: []string{rapid.SampledFrom(ids).Draw(rt, "result")}}
				if rapid.Bool().Draw(rt, "part") {
					m = Message{Role: RoleUser, Parts: []Part{{Type: PartToolResult, CallID: rapid.SampledFrom(ids).Draw(rt, "pid")},
						{Type: PartToolResult, CallID: rapid.SampledFrom(ids).Draw(rt, "pid2")}}}
				}
				tr.Messages = append(tr.Messages, m)
			}
		}
		g1, o1 := tr.pairs()
		g2, o2 := pairsReference(&tr)
		if !reflect.DeepEqual(g1, g2) || !reflect.DeepEqual(o1, o2) {
			rt.Fatalf("pairs:\n%+v %+v\nreference:\n%+v %+v", g1, o1, g2, o2)
		}
	})
}

// TestToolPairsIsGroupsAndOrphans: ToolPairs is ToolGroups and Orphans.
func TestToolPairsIsGroupsAndOrphans(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var tr Transcript
		for n := rapid.IntRange(0, 20).Draw(rt, "n"); n > 0; n-- {
			id := rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "id")
			if rapid.Bool().Draw(rt, "call") {
				tr.Messages = append(tr.Messages, AssistantMessage("", ToolCall{ID: id, Name: "x"}))
			} else {
				tr.Messages = append(tr.Messages, ToolResultMessage(id, "out"))
			}
		}
		groups, orphans := tr.ToolPairs()
		if !reflect.DeepEqual(groups, tr.ToolGroups()) || !reflect.DeepEqual(orphans, tr.Orphans()) {
			rt.Fatalf("ToolPairs %+v %+v", groups, orphans)
		}
	})
}
