package fallback_test

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/stretchr/testify/assert"
)

// The agent's first statement after a tool's output is its reading of
// that output, a conclusion a next turn builds on: it is kept among the
// decisions where the same statement, said unprompted between two of the
// agent's own messages, is narration.
func TestReadingOfAnOutputIsAConclusion(t *testing.T) {
	reading := "The loader sets retry_limit to \"3\" by default."
	musing := "The loader sets retry_limit to \"5\" for admins."
	window := []compact.Message{
		user("why do uploads give up so early?"),
		assistant("Looking into it."),
		assistant("", toolCall("1", "bash", args{"command": "grep -rn retry_limit src/"})),
		toolMessage("1", "src/upload/loader.py:12:    retry_limit = 3"),
		assistant(reading + " Let me look at the caller."),
		assistant(musing + " Let me look at the caller."),
		assistant("", toolCall("2", "bash", args{"command": "sed -n 1,40p src/upload/client.py"})),
		toolMessage("2", "def upload(path):\n    return send(path, retries=loader.retry_limit)"),
	}
	h := build(t, window)
	d := joined(h.Decisions)
	assert.Contains(t, d, reading, d)
	assert.NotContains(t, d, musing, d)
}
