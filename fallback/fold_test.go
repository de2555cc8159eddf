package fallback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFoldResolvesWhatLaterTurnsResolved: an earlier handoff's Blocked
// item whose call later passed is not carried, and its error says it was
// resolved.
func TestFoldResolvesWhatLaterTurnsResolved(t *testing.T) {
	prev := compact.Handoff{
		TaskSnapshot:   "make the suite green",
		Blocked:        []string{"last call failed: bash ./ci/check.sh → FAILED test_quota_refill"},
		ErrorsAndFixes: []string{"bash ./ci/check.sh → FAILED test_quota_refill; not resolved in this part"},
	}
	window := []compact.Message{
		assistant("", toolCall("1", "bash", args{"command": "./ci/check.sh"})),
		toolMessage("1", "all 212 checks passed"),
	}
	h, err := fallback.Build(window, fallback.Config{Previous: &prev})
	require.NoError(t, err)
	assert.Empty(t, h.Blocked, "the call passed since")
	errs := strings.Join(h.ErrorsAndFixes, "\n")
	assert.Contains(t, errs, "later succeeded: bash ./ci/check.sh")
	assert.NotContains(t, errs, "not resolved")

	// A call that still fails leaves both as they were.
	window[1] = toolMessage("1", "FAILED test_quota_refill\nexit status 1")
	h, err = fallback.Build(window, fallback.Config{Previous: &prev})
	require.NoError(t, err)
	assert.NotEmpty(t, h.Blocked)
}

// TestManyFoldsNoNearDuplicates: a session folded 56 times, each part
// restating the same finding in other words, keeps it once.
func TestManyFoldsNoNearDuplicates(t *testing.T) {
	restatements := []string{
		"The flaky test fails because the cache TTL is zero in CI.",
		"So the flaky test fails because the cache TTL is zero in CI, as suspected.",
		"This means the flaky test fails because the cache TTL is zero in CI.",
	}
	var prev *compact.Handoff
	for fold := range 56 {
		id := fmt.Sprint("c", fold)
		window := []compact.Message{
			user(fmt.Sprintf("step %d: keep going", fold)),
			assistant(restatements[fold%len(restatements)]),
			assistant("", toolCall(id, "bash", args{"command": fmt.Sprintf("go test ./cache -run TestRefill%d", fold)})),
			toolMessage(id, "ok"),
		}
		h, err := fallback.Build(window, fallback.Config{Previous: prev})
		require.NoError(t, err)
		prev = &h
	}
	n := 0
	for _, d := range prev.Decisions {
		if strings.Contains(d, "cache TTL is zero") {
			n++
		}
	}
	assert.Equal(t, 1, n, "restatements of one finding:\n%s", strings.Join(prev.Decisions, "\n"))
}
