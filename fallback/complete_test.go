package fallback_test

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/tokens"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func completeWindow() []compact.Message {
	return []compact.Message{
		user("make the exporter flush on shutdown"),
		assistant("", toolCall("1", "Read", args{"file_path": "/srv/export/flush.go"})),
		results(result("1", "func (e *Exporter) flushPending() error {\n\treturn e.sink.WriteBatch(e.buf)\n}\n", false)),
		assistant("flushPending drops the last batch when WriteBatch times out."),
		assistant("", toolCall("2", "Edit", args{"file_path": "/srv/export/flush.go", "old_string": "a", "new_string": "e.sink.WriteBatchWithDeadline(e.buf, shutdownGrace)"})),
		results(result("2", "ok", false)),
	}
}

// TestCompleteAddsWhatTheSummaryLeftOut: a handoff written elsewhere (an
// LLM's) that tells the story without the names gets the window's
// highest-ranked names and files; its own items stay as written.
func TestCompleteAddsWhatTheSummaryLeftOut(t *testing.T) {
	h := compact.Handoff{
		TaskSnapshot: "make the exporter flush on shutdown",
		Decisions:    []string{"The exporter loses its last batch on shutdown."},
	}
	got, err := fallback.Complete(h, completeWindow(), fallback.Config{})
	require.NoError(t, err)
	assert.Equal(t, h.Decisions, got.Decisions)
	assert.Equal(t, h.TaskSnapshot, got.TaskSnapshot)
	all := got.Render()
	for _, want := range []string{"/srv/export/flush.go", "flushPending", "shutdownGrace"} {
		assert.Contains(t, all, want)
	}
	assert.Equal(t, 1, strings.Count(strings.Join(got.RelevantFiles, "\n"), "/srv/export/flush.go"))
}

// TestCompleteRepeatsNothing: what the handoff already names is not added
// again.
func TestCompleteRepeatsNothing(t *testing.T) {
	h := compact.Handoff{
		TaskSnapshot:    "make the exporter flush on shutdown",
		RelevantFiles:   []string{"/srv/export/flush.go (edited): flushPending now waits"},
		CriticalContext: []string{"Names: shutdownGrace"},
	}
	got, err := fallback.Complete(h, completeWindow(), fallback.Config{})
	require.NoError(t, err)
	assert.Equal(t, h.RelevantFiles, got.RelevantFiles, "the file is named already")
	assert.Equal(t, 1, strings.Count(got.Render(), "shutdownGrace"))
}

// TestCompleteWithinBudget: a handoff at its budget comes back as it was.
func TestCompleteWithinBudget(t *testing.T) {
	h := compact.Handoff{TaskSnapshot: strings.Repeat("a long ask ", 300)}
	got, err := fallback.Complete(h, completeWindow(), fallback.Config{MaxTokens: 300})
	require.NoError(t, err)
	assert.Equal(t, h, got)
	got, err = fallback.Complete(compact.Handoff{TaskSnapshot: "short"}, completeWindow(), fallback.Config{MaxTokens: 300})
	require.NoError(t, err)
	counter, err := tokens.ForModel("gpt-4o")
	require.NoError(t, err)
	assert.LessOrEqual(t, counter.Text(got.Render()), 300)
}
