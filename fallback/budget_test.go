package fallback

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullDraft has three entries in every list section, ranked 1 to 3, and a
// snapshot and a goal.
func fullDraft() *draft {
	d := &draft{snapshot: "the task, verbatim", goal: "the goal"}
	for s := sec(0); s < nSecs; s++ {
		for r := 1; r <= 3; r++ {
			d.secs[s] = append(d.secs[s], entry{text: secHeading[s] + " item " + strings.Repeat("x", r), rank: windowRank(r, 0), order: windowPos(r)})
		}
	}
	return d
}

// TestTrimOrder pins the documented priority of the total cap: items go
// lowest rank first, one section after another, in trimOrder; the goal
// after the earlier asks; the task snapshot never.
func TestTrimOrder(t *testing.T) {
	var secs [nSecs]fitted
	d := fullDraft()
	for s := sec(0); s < nSecs; s++ {
		secs[s].kept = append([]entry(nil), d.secs[s]...)
	}
	goal := d.goal
	var removed []string
	for {
		before := goal
		var counts [nSecs]int
		for s := range secs {
			counts[s] = len(secs[s].kept)
		}
		if _, ok := trimOne(&secs, &goal); !ok {
			break
		}
		if goal != before {
			removed = append(removed, "Goal")
			continue
		}
		for s := range secs {
			if len(secs[s].kept) < counts[s] {
				removed = append(removed, secHeading[s])
			}
		}
	}
	var want []string
	for _, s := range trimOrder {
		if s < 0 {
			want = append(want, "Goal")
			continue
		}
		want = append(want, secHeading[s], secHeading[s], secHeading[s])
	}
	assert.Equal(t, want, removed)
	assert.Equal(t, []string{
		"Last dropped turns", "Critical context", "Relevant files", "Completed actions", "Decisions",
		"Errors and fixes", "Task snapshot", "Goal", "Constraints and preferences", "Blocked", "Active state",
	}, compactRuns(removed), "the order the package doc states")
}

// compactRuns collapses consecutive repeats.
func compactRuns(s []string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// TestTrimLowestRankFirst checks that within a section the total cap
// removes the lowest-ranked item first.
func TestTrimLowestRankFirst(t *testing.T) {
	var secs [nSecs]fitted
	secs[secLastTurns].kept = []entry{{text: "b", rank: windowRank(5, 0)}, {text: "a", rank: windowRank(1, 0)}, {text: "c", rank: windowRank(9, 0)}}
	goal := ""
	for _, want := range []string{"a", "b", "c"} {
		keep := map[string]bool{}
		for _, e := range secs[secLastTurns].kept {
			keep[e.text] = true
		}
		_, ok := trimOne(&secs, &goal)
		require.True(t, ok)
		for _, e := range secs[secLastTurns].kept {
			delete(keep, e.text)
		}
		assert.Equal(t, map[string]bool{want: true}, keep)
	}
}

// TestFinalCapTrimsInOrder drives the total cap with a counter under which
// the rendered whole costs far more than its items (three tokens a line),
// so the cap has to remove what the shares let through. What it removes
// must follow trimOrder: once a section loses items, every section before
// it in trimOrder is empty; and the snapshot survives.
func TestFinalCapTrimsInOrder(t *testing.T) {
	count := func(s string) int { return len(s)/4 + 3*strings.Count(s, "\n") }
	lim := &limits{count: count}
	for s := sec(0); s < nSecs; s++ {
		lim.item[s], lim.secCap[s] = 1000, 100000
	}
	lim.snapshotCap, lim.goalCap = 1000, 1000
	skeleton := count(compact.Handoff{}.Render())
	checked := 0
	for max := 2000; max >= skeleton+minRoom; max -= 5 {
		lim.max = max
		d := fullDraft()
		b, err := allot(d, lim)
		require.NoError(t, err)
		before := assemble(b.snapshot, b.goal, &b.secs)
		h := b.capTotal(d, lim)
		require.LessOrEqual(t, count(h.Render()), max)
		assert.NotEmpty(t, h.TaskSnapshot, "max %d: the snapshot is never dropped", max)
		lost := lostSections(before, h)
		for i, s := range trimOrder {
			if !lost[i] {
				continue
			}
			checked++
			for j := range i {
				if trimOrder[j] >= 0 {
					assert.Empty(t, realItems(items(h, trimOrder[j])), "max %d: %s kept items while %s lost some", max, name(trimOrder[j]), name(s))
				} else {
					assert.Empty(t, h.Goal, "max %d: goal kept while %s lost items", max, name(s))
				}
			}
		}
	}
	assert.Greater(t, checked, 20, "the total cap had to act")
}

func name(s sec) string {
	if s < 0 {
		return "Goal"
	}
	return secHeading[s]
}

func items(h compact.Handoff, s sec) []string {
	return map[sec][]string{
		secEarlierAsks: h.EarlierAsks, secConstraints: h.Constraints, secActions: h.CompletedActions,
		secActive: h.ActiveState, secBlocked: h.Blocked, secDecisions: h.Decisions, secErrors: h.ErrorsAndFixes,
		secFiles: h.RelevantFiles, secContext: h.CriticalContext, secLastTurns: h.LastDroppedTurns,
	}[s]
}

// lostSections reports, per trimOrder position, whether h has fewer items
// (notes aside) than all.
func lostSections(all, h compact.Handoff) []bool {
	lost := make([]bool, len(trimOrder))
	for i, s := range trimOrder {
		if s < 0 {
			lost[i] = all.Goal != "" && h.Goal == ""
			continue
		}
		lost[i] = realItems(items(h, s)) < realItems(items(all, s))
	}
	return lost
}

func realItems(list []string) int {
	n := 0
	for _, it := range list {
		if !strings.HasSuffix(it, "not listed)") {
			n++
		}
	}
	return n
}

func TestShareGivesUnusedRoomAway(t *testing.T) {
	var need [nSecs]int
	need[secActions], need[secFiles], need[secActive] = 1000, 1000, 10
	alloc := share(need, 1000)
	assert.Equal(t, 10, alloc[secActive], "a small need is met in full")
	rest := alloc[secActions] + alloc[secFiles]
	assert.LessOrEqual(t, rest, 990)
	assert.GreaterOrEqual(t, rest, 988, "what the small section left goes to the others (up to rounding)")
	assert.Greater(t, alloc[secActions], alloc[secFiles], "shared by weight")
	for s := sec(0); s < nSecs; s++ {
		if need[s] == 0 {
			assert.Zero(t, alloc[s])
		}
	}
}

func TestTruncateMiddleKeepsBothEnds(t *testing.T) {
	count := func(s string) int { return len(s) / 4 }
	ask := "START " + strings.Repeat("filler words here ", 500) + " END"
	out, n := truncateMiddle(ask, 100, count)
	assert.LessOrEqual(t, n, 100)
	assert.True(t, strings.HasPrefix(out, "START "))
	assert.True(t, strings.HasSuffix(out, " END"))
	assert.Contains(t, out, "bytes left out")
}

// TestRankOrder: a rank's class outranks any weight, a weight any second
// weight, a second weight any position.
func TestRankOrder(t *testing.T) {
	ordered := []rank{
		{class: classCarried, weight: 100, weight2: 100, at: 100},
		{class: classWindow, weight: -1, at: 1000},
		{class: classWindow, weight: 0, weight2: 0, at: 5},
		{class: classWindow, weight: 0, weight2: 1, at: 0},
		{class: classWindow, weight: 3},
		{class: classPinned},
	}
	for i := 1; i < len(ordered); i++ {
		if ordered[i-1].cmp(ordered[i]) >= 0 || ordered[i].cmp(ordered[i-1]) <= 0 {
			t.Errorf("%+v should rank below %+v", ordered[i-1], ordered[i])
		}
	}
	if (rank{weight: 2}).cmp(rank{weight: 2}) != 0 {
		t.Error("equal ranks compare unequal")
	}
	if !(position{era: -1, at: 9}).before(position{at: 0}) || (position{at: 1, tie: 0}).before(position{at: 1, tie: 0}) {
		t.Error("positions out of order")
	}
}
