package compactor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
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

// A complete agent loop: each turn appends the model's call and the tool's
// result, counts (from the cache, no planning), compacts when over the
// threshold, and checkpoints; a new process resumes from the last
// checkpoint with the compacted transcript.
func Example_agentLoop() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "loop")
	defer os.RemoveAll(dir)
	store, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		log.Fatal(err)
	}
	cfg := compactor.DefaultConfig()
	cfg.Window = 16000 // gpt-4o's tokenizer in a small window: its reserve scales to 2,048
	cfg.Strategy = compactor.StrategyFallback
	c, err := compactor.New(cfg)
	if err != nil {
		log.Fatal(err)
	}

	t := compact.Transcript{Messages: []compact.Message{compact.UserMessage("Make the pkg/cache tests pass.")}}
	cp := &checkpoint.Checkpoint{Session: "loop-1", Task: "make the pkg/cache tests pass", Status: checkpoint.StatusRunning}
	parent := "" // a new session
	for turn := range 60 {
		id := fmt.Sprintf("call_%d", turn)
		args, _ := json.Marshal(map[string]string{"cmd": "go test ./pkg/cache"})
		t.Messages = append(t.Messages,
			compact.AssistantMessage("", compact.ToolCall{ID: id, Name: "bash", Arguments: args}),
			compact.ToolErrorMessage(id, strings.Repeat("--- FAIL: TestEvict: got 3 entries, want 2\n", 20)))
		if _, _, over := c.NeedsCompaction(t); over {
			res, err := c.Compact(ctx, t)
			if err != nil {
				log.Fatal(err) // t is unchanged; a loop could also carry on
			}
			if !res.Fits {
				log.Fatal(res.Overflow())
			}
			if res.Changed() {
				t = res.Transcript
				cp.Compactions = append(cp.Compactions, res.Record)
			}
		}
		cp.Transcript = &t
		cp.Steps = append(cp.Steps, checkpoint.Step{ID: id, Tool: "bash", Status: checkpoint.StepCompleted})
		if err := store.Save(ctx, cp, parent); err != nil { // compare-and-set on the parent
			log.Fatal(err)
		}
		parent = cp.ID
	}

	// The process dies; the next one resumes where it stopped.
	r, err := checkpoint.Resume(ctx, store, "loop-1")
	if err != nil {
		log.Fatal(err)
	}
	resumed := *r.Checkpoint.Transcript
	n, trigger, _ := c.NeedsCompaction(resumed)
	fmt.Println("compacted:", len(r.Checkpoint.Compactions) > 0)
	fmt.Println("under the trigger:", n < trigger)
	fmt.Println("steps done:", len(r.Checkpoint.Steps))
	fmt.Println("ask kept:", resumed.Messages[0].Text())
	// Output:
	// compacted: true
	// under the trigger: true
	// steps done: 60
	// ask kept: Make the pkg/cache tests pass.
}
