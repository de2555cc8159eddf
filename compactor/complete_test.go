package compactor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// giveUp is what batch i's code calls: the early batches a name that only
// the dropped middle holds.
func giveUp(i int) string {
	if i < 7 {
		return "retryBudgetExceeded(ctx)"
	}
	return "return nil"
}

// TestLLMHandoffCompleted: a summary from the scripted OpenAI-compatible
// server that tells the story but forgets the names is completed with the
// window's highest-ranked names and files (package fallback's index),
// its own items untouched.
func TestLLMHandoffCompleted(t *testing.T) {
	msgs := []compact.Message{sys("You are a coding agent."), user("Make the importer retry on timeouts."), asst("Looking.")}
	for i := range 12 {
		id := fmt.Sprintf("r%d", i)
		read := withID(compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: []byte(fmt.Sprintf(`{"cmd":"sed -n 1,80p internal/importer/batch%d.go"}`, i))}}}})
		msgs = append(msgs, read,
			result(id, fmt.Sprintf("func importBatch%d() { %s }\n%s", i, giveUp(i), strings.Repeat("filler output line\n", 40))))
		if i == 6 {
			msgs = append(msgs, asst("The early batches give up in retryBudgetExceeded."))
		}
	}
	msgs = append(msgs, user("Go ahead and raise the budget."), asst("Raising it now."), asst("Done."))
	forgetful := compact.Handoff{
		TaskSnapshot:     "Make the importer retry on timeouts.",
		CompletedActions: []string{"Looked through the importer's batch code."},
		Decisions:        []string{"The retry budget is too small."},
	}
	_, srv := newFakeProvider(t, answerHandoff(forgetful))
	cfg := testConfig()
	cfg.Strategy, cfg.Summarizer, cfg.Force = StrategyLLM, llmSummarizer(t, srv, 0), true
	res, err := mustNew(t, cfg).Compact(context.Background(), transcript(msgs...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Method != compact.MethodLLM || res.Handoff == nil {
		t.Fatalf("method %s, want llm (%s)", res.Record.Method, res.Record.Reason)
	}
	h := res.Handoff
	if strings.Join(h.CompletedActions, "\n") != forgetful.CompletedActions[0] || strings.Join(h.Decisions, "\n") != forgetful.Decisions[0] {
		t.Errorf("the LLM's own items changed:\n%s", h.Render())
	}
	ctx, files := strings.Join(h.CriticalContext, "\n"), strings.Join(h.RelevantFiles, "\n")
	if !strings.Contains(ctx, "retryBudgetExceeded") {
		t.Errorf("the name the agent kept coming back to is not added:\n%s", h.Render())
	}
	if !strings.Contains(files, "internal/importer/batch") {
		t.Errorf("no file the window named is added:\n%s", h.Render())
	}
	if n := cfg.Counter.Text(h.Render()); n > cfg.handoffBudget(&res.Plan) {
		t.Errorf("the completed handoff (%d tokens) is over its budget (%d)", n, cfg.handoffBudget(&res.Plan))
	}
}
