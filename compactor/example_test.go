package compactor_test

import (
	"context"
	"errors"
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
	cfg := compactor.DefaultConfig() // gpt-4o, compact at 80% of the usable window
	cfg.Window = 40000               // a small window, so this session needs compacting
	cfg.Strategy = compactor.StrategyFallback
	c, err := compactor.New(cfg)
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

// New says what is wrong with a configuration instead of replacing it.
func ExampleNew() {
	cfg := compactor.DefaultConfig()
	cfg.Model = "gpt4o" // misspelt: the table does not know it
	_, err := compactor.New(cfg)
	fmt.Println(errors.Is(err, compactor.ErrConfig))
	cfg.Model, cfg.Window, cfg.OutputReserve = "gpt-4o", 16000, 20000
	_, err = compactor.New(cfg)
	fmt.Println(err)
	// Output:
	// true
	// compactor: invalid compactor config: OutputReserve 20000 leaves no room in a 16000-token window
}

// Plan shows where a compaction would cut, without compacting.
func ExampleCompactor_Plan() {
	cfg := compactor.DefaultConfig()
	cfg.Window, cfg.OutputReserve, cfg.Force = 40000, 8000, true
	c, _ := compactor.New(cfg)
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
