package compactor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
)

// QA-12 (issue 18 part 4), QA's test kept as a regression test: a loop's test command fails for 300 turns, then
// passes for 100. After the folds that summarized the passing runs, the
// handoff must not say the call is blocked/failing, and the same unresolved
// error must not be listed once per fold.
func TestQAFoldResolvesAFixedFailure(t *testing.T) {
	ctx := context.Background()
	cfg := compactor.DefaultConfig()
	cfg.Window = 16000
	c, err := compactor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := compact.Transcript{Messages: []compact.Message{compact.UserMessage("Make the pkg/cache tests pass.")}}
	var last *compact.Handoff
	lastFold := 0
	for turn := range 400 {
		id := fmt.Sprintf("call_%d", turn)
		args, _ := json.Marshal(map[string]string{"cmd": "go test ./pkg/cache"})
		out := compact.ToolResultMessage(id, "ok  \tpkg/cache\t0.012s\n"+strings.Repeat("log line\n", 40))
		if turn < 300 {
			out = compact.ToolErrorMessage(id, "--- FAIL: TestEviction (0.00s)\n    cache_test.go:42: got 3 want 2\nFAIL\nexit status 1\n"+strings.Repeat("log line\n", 40))
		}
		tr.Messages = append(tr.Messages, compact.AssistantMessage("", compact.ToolCall{ID: id, Name: "bash", Arguments: args}), out)
		if _, _, over := c.NeedsCompaction(tr); over {
			res, err := c.Compact(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(res.Record.Warnings, "\n"); strings.Contains(w, "does not verify") {
				t.Fatalf("turn %d: the loop's own handoff was not folded: %s", turn, w)
			}
			if res.Changed() {
				tr, last, lastFold = res.Transcript, res.Handoff, turn
			}
		}
	}
	if last == nil || lastFold < 340 {
		t.Fatalf("no fold after the passing runs (last at turn %d)", lastFold)
	}
	for _, b := range last.Blocked {
		if strings.Contains(b, "FAIL") || strings.Contains(b, "failed") {
			t.Errorf("fold at turn %d, 40+ passing runs of the same command summarized: still Blocked: %q", lastFold, b)
		}
	}
	unresolved := 0
	for _, e := range last.ErrorsAndFixes {
		unresolved += strings.Count(e, "not resolved")
	}
	if unresolved > 0 {
		t.Errorf("the fixed failure is listed %d times as \"not resolved\" in Errors and fixes: %q", unresolved, last.ErrorsAndFixes)
	}
}
