package compactor

import (
	"context"
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
		Count: c.counter.Text, Redactor: newTestRedactor(t)})
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

// recording is a Summarizer that keeps the requests it was given and
// answers with a fixed handoff.
type recording struct{ reqs []compact.SummaryRequest }

func (r *recording) Summarize(_ context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	r.reqs = append(r.reqs, req)
	return compact.Summary{Handoff: compact.Handoff{TaskSnapshot: req.LatestAsk, Goal: "g"}, Model: "rec"}, nil
}

// When the only ask sits in the kept head, a Summarizer is still given it,
// redacted, and the LLM's prompt quotes it, instead of asking for "the
// user's most recent request" without showing it.
func TestSummarizersSeeTheLatestAskWherever(t *testing.T) {
	const secret = "hunter2-Secret-Token-0123456789"
	ask := "Fix the failing test in pkg/foo; the staging password is " + secret
	in := agentRun(60, 600)
	in.Messages[1] = user(ask) // in the head
	cfg := testConfig()
	cfg.Redactor = newTestRedactor(t, secret)
	rec := &recording{}
	cfg.Strategy, cfg.Summarizer = StrategyLLM, rec
	c := mustNew(t, cfg)
	if p := c.Plan(in); p.HeadEnd <= 1 {
		t.Fatalf("the ask is not in the head (head ends at %d)", p.HeadEnd)
	}
	if _, err := c.Compact(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	got := rec.reqs[0].LatestAsk
	if !strings.HasPrefix(got, "Fix the failing test in pkg/foo") || strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED") {
		t.Fatalf("LatestAsk %q", got)
	}

	f, srv := newFakeProvider(t, answerHandoff(compact.Handoff{TaskSnapshot: "the ask", Goal: "green tests"}))
	cfg.Summarizer = llmSummarizer(t, srv, 0)
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodLLM {
		t.Fatalf("llm: %v %+v", err, res.Record)
	}
	if len(f.prompts) != 1 || !strings.Contains(f.prompts[0], "<latest-request>\nFix the failing test in pkg/foo") || strings.Contains(f.prompts[0], secret) {
		t.Fatalf("the prompt does not show the latest ask, redacted:\n%.2000s", f.prompts[0])
	}
}
