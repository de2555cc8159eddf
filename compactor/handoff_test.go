package compactor

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
)

// The deterministic handoff is built from the real window: pruning shapes
// only what is kept verbatim or sent to a Summarizer, so the handoff
// reports each output as it was (115 lines, not the 31 a shortened copy
// keeps), exactly as fallback.Build on the untouched turns does.
func TestHandoffFromTheRealWindow(t *testing.T) {
	in := agentRun(40, 3000) // outputs of 115 lines, each long enough to be shortened
	cfg := testConfig()
	cfg.Force = true
	c := mustNew(t, cfg)
	res, err := c.Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodFallback {
		t.Fatalf("%v %+v", err, res.Record)
	}
	p := res.Plan
	want, err := fallback.Build(in.Messages[p.HeadEnd:p.TailStart], fallback.Config{MaxTokens: c.cfg.handoffBudget(&p),
		Count: c.counter.Text, Redactor: newTestRedactor(t),
		// The ask sits in the kept head: the compactor carries it in.
		Previous: &compact.Handoff{TaskSnapshot: in.Messages[1].Text()}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Handoff.Render(); got != want.Render() {
		t.Fatalf("the compactor's handoff differs from fallback.Build on the untouched window:\n%s\n---\n%s", got, want.Render())
	}
	if !strings.Contains(res.Handoff.Render(), "→ 116 lines") || strings.Contains(res.Handoff.Render(), "→ 31 lines") {
		t.Fatalf("outputs not reported as they were:\n%s", res.Handoff.Render())
	}
}

// When the only ask sits in the kept head, the summarizers are still
// given it: the LLM's prompt quotes it and the fallback's task snapshot is
// it, instead of "(none)".
func TestSummarizersSeeTheLatestAskWherever(t *testing.T) {
	const ask = "Fix the failing test in pkg/foo."
	in := agentRun(60, 600) // the ask is message 1, in the head
	cfg := testConfig()
	c := mustNew(t, cfg)
	if p := c.Plan(in); p.HeadEnd <= 1 {
		t.Fatalf("the ask is not in the head (head ends at %d)", p.HeadEnd)
	}
	res, err := c.Compact(context.Background(), in)
	if err != nil || res.Handoff == nil || res.Handoff.TaskSnapshot != ask {
		t.Fatalf("fallback: %v, task snapshot %q", err, res.Handoff.TaskSnapshot)
	}

	f, srv := newFakeProvider(t, func(w http.ResponseWriter, prompt string) {
		answerHandoff(compact.Handoff{TaskSnapshot: ask, Goal: "green tests"})(w, prompt)
	})
	cfg.Strategy, cfg.Summarizer = StrategyLLM, llmSummarizer(t, srv, 0)
	res, err = mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodLLM {
		t.Fatalf("llm: %v %+v", err, res.Record)
	}
	if len(f.prompts) != 1 || !strings.Contains(f.prompts[0], "<latest-request>\n"+ask+"\n</latest-request>") {
		t.Fatalf("the prompt does not show the latest ask:\n%.2000s", f.prompts[0])
	}
}
