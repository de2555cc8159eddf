package compactor_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
)

// session is an agent session: one ask, then many tool calls with long
// outputs.
func session() compact.Transcript {
	t := compact.Transcript{Messages: []compact.Message{
		{Role: compact.RoleSystem, Parts: []compact.Part{{Type: compact.PartText, Text: "You are a coding agent."}}},
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "Make the pkg/cache tests pass."}}},
	}}
	for i := range 30 {
		id := fmt.Sprintf("call_%d", i)
		t.Messages = append(t.Messages,
			compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartToolCall,
				ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: []byte(`{"cmd":"go test ./pkg/cache"}`)}}}},
			compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: []compact.Part{{Type: compact.PartText,
				Text: strings.Repeat("--- FAIL: TestEvict: got 3 entries, want 2\n", 100)}}})
	}
	return t
}

// An agent loop keeps one Compactor and calls Compact before each model
// call; below the threshold it returns the transcript unchanged, cheaply.
func ExampleCompactor_Compact() {
	c, err := compactor.New(compactor.Config{
		Model:    "gpt-4o",
		Window:   40000, // a small window, so this session needs compacting
		Strategy: compactor.StrategyFallback,
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Compact(context.Background(), session())
	if err != nil {
		log.Fatal(err) // the transcript in res is unchanged
	}
	fmt.Println("method:", res.Record.Method)
	fmt.Println("smaller:", res.Record.TokensAfter < res.Record.TokensBefore)
	fmt.Println("head kept:", res.Plan.HeadEnd, "messages")
	handoff := res.Transcript.Messages[res.Plan.HeadEnd]
	fmt.Println("then the handoff:", compact.IsHandoffText(handoff.Text()))
	// Output:
	// method: fallback
	// smaller: true
	// head kept: 4 messages
	// then the handoff: true
}

// The LLM summarizer talks to any OpenAI-compatible API. The compactor
// never reads the environment: pass the key and base URL in. An LLM
// failure falls back to the deterministic handoff unless
// AbortOnSummaryFailure is set.
func ExampleLLMConfig() {
	cfg := compactor.Config{
		Model: "gpt-4o",
		LLM: compactor.LLMConfig{
			BaseURL: "http://localhost:11434/v1", // Ollama; empty for api.openai.com
			APIKey:  "",                          // e.g. os.Getenv("OPENAI_API_KEY")
			Model:   "llama3.1",
			Retries: 2,
		},
		Focus: "the database migration",
		Observer: func(e compactor.Event) {
			if e.Kind == compactor.EventRetry {
				log.Printf("summary retry in %s: %v", e.Delay, e.Err)
			}
		},
	}
	c, err := compactor.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Config().Strategy, c.Config().LLM.Model, c.Config().LLM.Timeout)
	// Output: auto llama3.1 2m0s
}

// Plan shows where a compaction would cut, without compacting.
func ExampleCompactor_Plan() {
	c, _ := compactor.New(compactor.Config{Window: 40000, OutputReserve: 8000, Force: true})
	s := session()
	p := c.Plan(s)
	fmt.Printf("keep %d head messages (system, ask, first call and its result)\n", p.HeadEnd)
	fmt.Println("drops the middle:", p.Dropped() > 0)
	fmt.Println("trigger:", p.Trigger, "tokens; the tail ends the session:", p.TailStart < len(s.Messages))
	// Output:
	// keep 4 head messages (system, ask, first call and its result)
	// drops the middle: true
	// trigger: 25600 tokens; the tail ends the session: true
}
