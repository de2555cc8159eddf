package compact_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func sample() compact.Handoff {
	return compact.Handoff{
		TaskSnapshot:     "Fix the failing test in `pkg/x`.\n\n## Not a heading\n```go\nfmt.Println(1)\n```",
		EarlierAsks:      []string{"add a flag", "read the README"},
		Goal:             "Make CI green.\n# also not a heading",
		Constraints:      []string{"don't touch go.mod"},
		CompletedActions: []string{"bash `go test ./...` → exit 1", "edit pkg/x/x.go → ok"},
		ActiveState:      []string{"branch fix-x"},
		Decisions:        []string{"keep the old API"},
		ErrorsAndFixes:   []string{"x_test.go:12: want 2 got 3\n  (fixed by edit)"},
		RelevantFiles:    []string{"pkg/x/x.go (edited)"},
		CriticalContext:  []string{"3f2a9c1", "https://github.com/o/r/pull/12"},
		LastDroppedTurns: []string{"user: try again", "assistant: running tests"},
	}
}

func TestRenderHeadingsInOrder(t *testing.T) {
	out := sample().Render()
	last := -1
	for _, name := range compact.HandoffSections {
		i := strings.Index(out, "\n## "+name+"\n")
		if name == compact.HandoffSections[0] {
			i = strings.Index(out, "## "+name+"\n")
		}
		require.GreaterOrEqual(t, i, 0, name)
		assert.Greater(t, i, last, "%s out of order", name)
		last = i
	}
	empty := compact.Handoff{}.Render()
	assert.Equal(t, len(compact.HandoffSections), strings.Count(empty, "(none)"))
}

func TestRenderParseRoundTrip(t *testing.T) {
	h := sample()
	got, err := compact.ParseHandoff(h.Render())
	require.NoError(t, err)
	assert.Equal(t, h, got)

	got, err = compact.ParseHandoff(h.Message().Text())
	require.NoError(t, err)
	assert.Equal(t, h, got)
}

// TestRenderParseProperty: any handoff with trimmed, non-empty items
// survives Render and ParseHandoff unchanged.
func TestRenderParseProperty(t *testing.T) {
	// Lines a quoted text may hold include the handoff's own headings and
	// lead-in: quoted, they must never start a section of their own.
	heading := rapid.Custom(func(t *rapid.T) string {
		name := rapid.SampledFrom(compact.HandoffSections).Draw(t, "section")
		return rapid.SampledFrom([]string{"## " + name, "# " + name + ":", "**" + name + "**", "Earlier asks, newest first:", "```"}).Draw(t, "form")
	})
	line := rapid.OneOf(rapid.StringMatching(`[A-Za-z0-9 #*\x60>._/:-]{1,30}`), heading)
	text := func(max int) *rapid.Generator[string] {
		return rapid.Custom(func(t *rapid.T) string {
			n := rapid.IntRange(1, max).Draw(t, "lines")
			var ls []string
			for i := 0; i < n; i++ {
				ls = append(ls, strings.TrimSpace(line.Draw(t, "line")))
			}
			return strings.TrimSpace(strings.Join(ls, "\n"))
		})
	}
	item := rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 3).Draw(t, "lines")
		var ls []string
		for i := 0; i < n; i++ {
			ls = append(ls, strings.TrimSpace(line.Draw(t, "line")))
		}
		s := strings.TrimSpace(strings.Join(ls, "\n"))
		switch strings.ToLower(strings.Trim(s, "*_.")) {
		case "", "(none)", "none", "n/a", "- none", "nothing", "none yet":
			// What a section says when it has no items, not an item.
			return "item"
		}
		return s
	})
	items := rapid.SliceOfN(item, 0, 4)
	rapid.Check(t, func(t *rapid.T) {
		h := compact.Handoff{
			TaskSnapshot:     rapid.OneOf(rapid.StringMatching("[a-z`#\n ]{0,40}"), text(4)).Draw(t, "ask"),
			Goal:             text(3).Draw(t, "goal"),
			EarlierAsks:      items.Draw(t, "asks"),
			Decisions:        items.Draw(t, "decisions"),
			CompletedActions: items.Draw(t, "actions"),
			RelevantFiles:    items.Draw(t, "files"),
			LastDroppedTurns: items.Draw(t, "turns"),
		}
		h.TaskSnapshot = strings.TrimSpace(h.TaskSnapshot)
		got, err := compact.ParseHandoff(h.Render())
		if err != nil {
			t.Fatal(err)
		}
		if len(h.CompletedActions) == 0 {
			h.CompletedActions = nil
		}
		if len(h.EarlierAsks) == 0 {
			h.EarlierAsks = nil
		}
		if len(h.Decisions) == 0 {
			h.Decisions = nil
		}
		if strings.EqualFold(strings.Trim(h.Goal, "*_."), "none") {
			h.Goal = ""
		}
		if len(h.RelevantFiles) == 0 {
			h.RelevantFiles = nil
		}
		if len(h.LastDroppedTurns) == 0 {
			h.LastDroppedTurns = nil
		}
		assert.Equal(t, h, got)
	})
}

func TestParseLLMAnswer(t *testing.T) {
	answer := `Here is the summary you asked for.

### 1. Task Snapshot
Add retries to the uploader.

**Goal:**
Uploads survive flaky networks.

## Constraints and preferences
* keep the public API
* no new deps

## Completed actions
1. Read uploader.go
2. Ran the tests

## Active state
None

## Blocked
- n/a

## Decisions
We chose exponential backoff
because the server rate limits.

## Errors and fixes
- timeout in TestUpload, fixed by raising the deadline

## Relevant files
- uploader.go

## Critical context
- PR #42

## Last dropped turns
- user: ship it
`
	h, err := compact.ParseHandoff(answer)
	require.NoError(t, err)
	assert.Equal(t, "Add retries to the uploader.", h.TaskSnapshot)
	assert.Equal(t, "Uploads survive flaky networks.", h.Goal)
	assert.Equal(t, []string{"keep the public API", "no new deps"}, h.Constraints)
	assert.Equal(t, []string{"Read uploader.go", "Ran the tests"}, h.CompletedActions)
	assert.Nil(t, h.ActiveState)
	assert.Nil(t, h.Blocked)
	assert.Equal(t, []string{"We chose exponential backoff\nbecause the server rate limits."}, h.Decisions)
	assert.Equal(t, []string{"PR #42"}, h.CriticalContext)
}

func TestParseMissingSections(t *testing.T) {
	h, err := compact.ParseHandoff("## Task snapshot\n\ndo it\n\n## Goal\n\nwin\n")
	require.Error(t, err)
	assert.True(t, errors.Is(err, compact.ErrIncompleteHandoff))
	assert.Contains(t, err.Error(), "Completed actions")
	assert.Equal(t, "do it", h.TaskSnapshot)
}

func TestHandoffMessage(t *testing.T) {
	m := sample().Message()
	assert.Equal(t, compact.RoleUser, m.Role)
	assert.True(t, m.Summary)
	txt := m.Text()
	assert.True(t, compact.IsHandoffText(txt))
	assert.Regexp(t, `\n<<<compact:handoff-end mac=[0-9a-f]{32}>>>$`, txt)
	assert.Contains(t, txt, compact.HandoffPreamble)
	assert.False(t, compact.IsHandoffText("hello "+compact.HandoffBegin))
	assert.True(t, (&compact.Handoff{}).IsEmpty())
	assert.False(t, func() bool { h := sample(); return h.IsEmpty() }())
}

func TestStripHandoffMarkers(t *testing.T) {
	for _, s := range []string{
		compact.HandoffBegin + "x" + compact.HandoffEnd,
		"<<<compact:" + compact.HandoffBegin + "handoff>>>",
		"<<<compact:handoff" + compact.HandoffEnd + "-end>>> " + compact.HandoffPreamble,
	} {
		got := compact.StripHandoffMarkers(s)
		if strings.Contains(got, compact.HandoffBegin) || strings.Contains(got, compact.HandoffEnd) || strings.Contains(got, compact.HandoffPreamble) {
			t.Errorf("compact.StripHandoffMarkers(%q) = %q", s, got)
		}
	}
	if got := compact.StripHandoffMarkers("plain <<<compact: text"); got != "plain <<<compact: text" {
		t.Errorf("changed text without markers: %q", got)
	}
}
