package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/tokens"
)

// agent runs one session: it asks the model for its next move, runs the
// tools the model calls, compacts the transcript when it nears the window,
// and checkpoints after every step.
type agent struct {
	session   string
	model     string
	llm       *openai.Client
	tools     *toolbox
	counter   *tokens.Counter
	compactor *compactor.Compactor
	store     checkpoint.Store
	pause     *pauses
	out       io.Writer

	// state is the latest checkpoint saved. Every save names its ID as the
	// expected parent, so a save fails (checkpoint.ErrConflict) rather than
	// overwrite progress another process made on the same session.
	state *checkpoint.Checkpoint
	// cache holds every tool result by idempotency key; it is saved in
	// each checkpoint (ToolCache) and restored from it on resume.
	cache *checkpoint.Cache
}

// run works the session to its end and returns the model's final answer.
func (a *agent) run(ctx context.Context) (string, error) {
	if final, done, err := a.start(ctx); err != nil || done {
		return final, err
	}
	return a.loop(ctx)
}

// loop runs turns until the model gives its final answer.
func (a *agent) loop(ctx context.Context) (string, error) {
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		// The transcript says what is left to do, the same way in a fresh
		// run and a resumed one: calls of the model's latest reply that
		// have no result yet run first; otherwise the model is asked for
		// its next move.
		if call, ok := a.nextCall(); ok {
			if err := a.runCall(ctx, call); err != nil {
				return "", err
			}
			continue
		}
		if err := a.compact(ctx); err != nil {
			return "", err
		}
		reply, err := a.ask(ctx)
		if err != nil {
			return "", err
		}
		if done, err := a.record(ctx, reply); err != nil || done {
			return reply.Text(), err
		}
	}
}

// start resumes the session from its latest checkpoint, or begins it when
// it has none. done is set when the session had already completed.
func (a *agent) start(ctx context.Context) (final string, done bool, err error) {
	r, err := checkpoint.Resume(ctx, a.store, a.session)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return "", false, a.begin(ctx)
	case errors.Is(err, checkpoint.ErrCompleted):
		c, err := a.store.Latest(ctx, a.session)
		if err != nil {
			return "", false, err
		}
		fmt.Fprintf(a.out, "session %s completed at checkpoint %d; --reset starts it over\n", a.session, c.Seq)
		return lastAnswer(c.Transcript), true, nil
	case err != nil:
		return "", false, fmt.Errorf("resume session %s: %w", a.session, err)
	}
	a.state = r.Checkpoint
	a.cache = checkpoint.NewCache(a.state.ToolCache)
	fmt.Fprintf(a.out, "session %s: resuming from checkpoint %d (retry %d): %d steps done, %d results cached, %d side effects recorded\n",
		a.session, a.state.Seq, a.state.RetryCount, a.state.CompletedSteps(), len(a.state.ToolCache), len(a.state.SideEffects))
	if len(r.Reset) > 0 {
		fmt.Fprintf(a.out, "  interrupted, to finish: %s\n", strings.Join(r.Reset, ", "))
	}
	// Saving at once claims the session: another process resuming from
	// the same checkpoint now fails its first save with ErrConflict
	// instead of running the same steps beside this one.
	return "", false, a.save(ctx, "resume", "")
}

// begin starts the session: the work dir's files, the system prompt and
// the task, in a first checkpoint.
func (a *agent) begin(ctx context.Context) error {
	if err := seedWorkspace(a.tools.dir); err != nil {
		return fmt.Errorf("prepare the work dir: %w", err)
	}
	a.state = &checkpoint.Checkpoint{
		Session: a.session,
		Task:    task,
		Status:  checkpoint.StatusRunning,
		Transcript: &compact.Transcript{
			Tools: a.tools.defs(),
			Messages: []compact.Message{
				textMessage("system", compact.RoleSystem, systemPrompt),
				textMessage("task", compact.RoleUser, task),
			},
		},
	}
	a.cache = checkpoint.NewCache(nil)
	fmt.Fprintf(a.out, "session %s: new\n", a.session)
	return a.save(ctx, "start", "")
}

// compact counts the transcript and compacts it when the compactor's
// policy says so (the threshold of the window, minus the reply's reserve).
// Below it, Compact costs a count from the token cache and changes nothing.
func (a *agent) compact(ctx context.Context) error {
	n := a.counter.Transcript(*a.state.Transcript)
	res, err := a.compactor.Compact(ctx, *a.state.Transcript)
	fmt.Fprintf(a.out, "[steps done: %d] transcript: %d tokens, compaction at %d\n", a.state.CompletedSteps(), n, res.Plan.Trigger)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The transcript is unchanged: carry on, and try again next turn.
		fmt.Fprintf(a.out, "  compaction failed, going on uncompacted: %v\n", err)
		return nil
	}
	rec := res.Record
	if !res.Changed() {
		if n >= res.Plan.Trigger {
			fmt.Fprintf(a.out, "  not compacted: %s\n", rec.Reason)
		}
		return nil
	}
	a.state.Transcript = &res.Transcript
	a.state.Compactions = append(a.state.Compactions, rec)
	what := fmt.Sprintf("%d messages replaced by a handoff", res.Plan.Dropped())
	if rec.Method == compact.MethodPrune {
		what = "old tool outputs masked"
	}
	fmt.Fprintf(a.out, "  compacted (%s): %d → %d tokens, %s\n", rec.Method, rec.TokensBefore, rec.TokensAfter, what)
	if rec.Reason != "" {
		fmt.Fprintf(a.out, "  (%s)\n", rec.Reason)
	}
	for _, w := range rec.Warnings {
		fmt.Fprintf(a.out, "  warning: %s\n", w)
	}
	return a.save(ctx, "compaction", "")
}

// ask sends the transcript to the model and returns its reply.
func (a *agent) ask(ctx context.Context) (compact.Message, error) {
	t := a.state.Transcript
	resp, err := a.llm.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    a.model,
		Messages: toOpenAI(t.Messages),
		Tools:    toOpenAITools(t.Tools),
	})
	if err != nil {
		return compact.Message{}, fmt.Errorf("model: %w", err)
	}
	if len(resp.Choices) == 0 {
		return compact.Message{}, errors.New("model: the answer has no choices")
	}
	reply := fromOpenAI(resp.ID, resp.Choices[0].Message)
	if s := reply.Text(); s != "" {
		fmt.Fprintf(a.out, "  model: %s\n", shorten(s, 110))
	}
	for _, c := range reply.ToolCalls() {
		fmt.Fprintf(a.out, "  model → %s %s\n", c.Name, shorten(string(c.Arguments), 90))
	}
	return reply, nil
}

// record adds the model's reply to the transcript and checkpoints it, with
// a pending step for each tool call, before any call runs. A reply without
// calls is the final answer, and completes the session.
func (a *agent) record(ctx context.Context, reply compact.Message) (done bool, err error) {
	a.state.Transcript.Messages = append(a.state.Transcript.Messages, reply)
	calls := reply.ToolCalls()
	if len(calls) == 0 {
		a.state.Status, a.state.CurrentStep = checkpoint.StatusCompleted, ""
		return true, a.save(ctx, "final", "")
	}
	var names []string
	for _, c := range calls {
		a.state.Steps = append(a.state.Steps, checkpoint.Step{ID: c.ID, Status: checkpoint.StepPending, Tool: c.Name, Args: c.Arguments})
		names = append(names, c.Name)
	}
	return false, a.save(ctx, "reply", strings.Join(names, ","))
}

// nextCall returns the first call of the model's latest reply that has no
// result in the transcript yet.
func (a *agent) nextCall() (compact.ToolCall, bool) {
	groups := a.state.Transcript.ToolGroups()
	if len(groups) == 0 {
		return compact.ToolCall{}, false
	}
	g := groups[len(groups)-1]
	for _, c := range g.Calls {
		if slices.Contains(g.Missing, c.ID) {
			return c, true
		}
	}
	return compact.ToolCall{}, false
}

// runCall runs one tool call at most once, however often the process dies
// around it:
//
//  1. The call's idempotency key is saved, with the step marked running,
//     before anything runs.
//  2. checkpoint.Cache.Do runs the call only if no result is cached for
//     its key; a resumed run gets a finished call's result from the cache
//     (restored from the checkpoint) and runs nothing.
//  3. The result, the tool message and any side effect are saved in one
//     checkpoint before the model can see the result.
//
// A kill between the effect and step 3 leaves a call that happened but is
// not cached. The resumed run calls again under the same key, and the
// service, which takes that key, answers with its first receipt instead of
// acting twice (see services).
func (a *agent) runCall(ctx context.Context, call compact.ToolCall) error {
	step := a.state.Step(call.ID)
	if step == nil { // a reply recorded by an older version of the loop
		a.state.Steps = append(a.state.Steps, checkpoint.Step{ID: call.ID, Tool: call.Name, Args: call.Arguments})
		step = &a.state.Steps[len(a.state.Steps)-1]
	}
	start := time.Now()
	key, err := a.tools.key(call)
	if err != nil {
		if !isToolError(err) {
			return err
		}
		return a.finishCall(ctx, call, step, toolResult{Output: err.Error(), IsError: true}, "refused", start)
	}
	step.Status, step.InputHash = checkpoint.StepRunning, key
	a.state.CurrentStep = call.ID
	if err := a.save(ctx, "running", call.Name); err != nil {
		return err
	}

	ran := false
	raw, err := a.cache.Do(ctx, key, func(ctx context.Context) (json.RawMessage, error) {
		ran = true
		r, err := a.tools.run(ctx, call, key)
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	})
	var r toolResult
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("cached result of %s: %w", key, err)
		}
	case isToolError(err):
		r = toolResult{Output: err.Error(), IsError: true}
	case ctx.Err() != nil:
		return err // interrupted: the step stays running, and a resume runs it again
	default:
		// A failure the model cannot fix (a service down). Record it and
		// stop: the next run retries the call under the same key, which
		// the service recognises if the first attempt did reach it.
		step.Status, step.Error = checkpoint.StepFailed, err.Error()
		a.state.Status, a.state.LastError = checkpoint.StatusFailed, err.Error()
		if serr := a.save(ctx, "failed", call.Name); serr != nil {
			return errors.Join(err, serr)
		}
		return fmt.Errorf("%s: %w", call.Name, err)
	}
	how := "ran"
	if !ran {
		how = "answered from the idempotency cache, not run again"
	}
	return a.finishCall(ctx, call, step, r, how, start)
}

// finishCall records a call's result: the tool message, the step's outcome
// and, for a side effect, its receipt under its key; then checkpoints.
func (a *agent) finishCall(ctx context.Context, call compact.ToolCall, step *checkpoint.Step, r toolResult, how string, start time.Time) error {
	fmt.Fprintf(a.out, "  %s: %s → %s\n", call.Name, how, outline(r.Output))
	if t := a.tools.lookup(call.Name); t != nil && t.effect && len(r.Receipt) > 0 && !a.hasSideEffect(step.InputHash) {
		a.state.SideEffects = append(a.state.SideEffects, checkpoint.SideEffect{
			Tool: call.Name, Key: step.InputHash, Receipt: r.Receipt, At: time.Now().UTC(),
		})
	}
	a.state.Transcript.Messages = append(a.state.Transcript.Messages, toolMessage(call.ID, r))
	step.Status, step.Output, step.Duration, step.Error = checkpoint.StepCompleted, outline(r.Output), time.Since(start), ""
	a.state.CurrentStep = ""
	a.state.Status, a.state.LastError = checkpoint.StatusRunning, ""
	return a.save(ctx, "result", call.Name)
}

func (a *agent) hasSideEffect(key string) bool {
	return slices.ContainsFunc(a.state.SideEffects, func(e checkpoint.SideEffect) bool { return e.Key == key })
}

// save checkpoints the session over the checkpoint it holds
// (compare-and-set), then gives the pause point after it its turn.
func (a *agent) save(ctx context.Context, point, tool string) error {
	a.state.ToolCache = a.cache.Results()
	if err := a.store.Save(ctx, a.state, a.state.ID); err != nil {
		return fmt.Errorf("checkpoint after %s: %w", point, err)
	}
	label := point
	if tool != "" {
		label += " " + tool
	}
	fmt.Fprintf(a.out, "    ✓ checkpoint %d (%s)\n", a.state.Seq, label)
	return a.pause.at(ctx, point, tool)
}

// Conversions between compact's messages and the OpenAI Chat Completions
// API's, as go-openai spells them.

func toOpenAI(msgs []compact.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.IsToolResult() {
			// The API wants one tool message per answered call.
			for _, id := range m.ResultIDs() {
				out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: m.ResultText()})
			}
			continue
		}
		// A handoff is a user message: Handoff.Message wraps it in markers
		// and a preamble that tell the model it is background.
		o := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Text()}
		for _, c := range m.ToolCalls() {
			o.ToolCalls = append(o.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: string(c.Arguments)}})
		}
		out = append(out, o)
	}
	return out
}

func toOpenAITools(defs []compact.ToolDef) []openai.Tool {
	tools := make([]openai.Tool, len(defs))
	for i, d := range defs {
		tools[i] = openai.Tool{Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: d.Name, Description: d.Description, Parameters: d.Parameters}}
	}
	return tools
}

func fromOpenAI(id string, o openai.ChatCompletionMessage) compact.Message {
	m := compact.Message{ID: id, Role: compact.RoleAssistant}
	if o.Content != "" {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: o.Content})
	}
	for _, c := range o.ToolCalls {
		args := json.RawMessage(c.Function.Arguments)
		if !json.Valid(args) {
			// Kept as a JSON string, as compact.ToolCall documents; the
			// tool then reports the bad arguments to the model.
			args, _ = json.Marshal(c.Function.Arguments)
		}
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args}})
	}
	return m
}

func textMessage(id string, role compact.Role, text string) compact.Message {
	return compact.Message{ID: id, Role: role, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}
}

func toolMessage(callID string, r toolResult) compact.Message {
	return compact.Message{ID: "result-" + callID, Role: compact.RoleTool, ToolCallIDs: []string{callID},
		Parts: []compact.Part{{Type: compact.PartText, Text: r.Output, IsError: r.IsError}}}
}

// lastAnswer returns the text of the transcript's last assistant message.
func lastAnswer(t *compact.Transcript) string {
	if t == nil {
		return ""
	}
	for i := len(t.Messages) - 1; i >= 0; i-- {
		if t.Messages[i].Role == compact.RoleAssistant {
			return t.Messages[i].Text()
		}
	}
	return ""
}

// outline sums up a tool's output in a line: the output itself when it is
// one line, its size and last line otherwise.
func outline(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	if len(lines) == 1 {
		return shorten(s, 100)
	}
	return fmt.Sprintf("%d lines, ending %q", len(lines), shorten(lines[len(lines)-1], 60))
}
