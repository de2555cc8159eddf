package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/tokens"
)

// fakeModel answers POST /v1/chat/completions as an OpenAI-compatible
// provider does, with a scripted model in place of a trained one, so the
// example runs offline and always the same way. Point the agent and the
// compactor at a real provider instead and nothing else changes.
//
// A request that offers tools comes from the agent. The model finds its
// place in the script from the last tool call it made (a compaction always
// keeps that one, in the verbatim tail) and makes the next call, or gives
// its final answer. A request without tools comes from the compactor's LLM
// summarizer: the model answers with a handoff under compact's headings,
// folding in the previous handoff as a real model is asked to.
//
// Like the real API, it refuses (400) a conversation whose tool calls and
// tool results do not pair up, and a prompt longer than the model's
// context window (context_length_exceeded): a compaction that broke a pair,
// or a loop that did not compact, would stop the run.
type fakeModel struct {
	windows map[string]int  // context window by model name; unlisted models are not limited
	counter *tokens.Counter // counts prompts as the provider would
}

// scriptTurn is one reply of the scripted model: a remark and the calls it
// makes.
type scriptTurn struct {
	say   string
	calls []scriptCall
}

type scriptCall struct {
	name string
	args map[string]string
}

// script is the work the model does, one reply per turn, in order.
var script = []scriptTurn{
	{"Reserve is said to oversell. Let me read the code first.",
		[]scriptCall{{"read_file", map[string]string{"path": sourceFile}}}},
	{"And the tests that cover it.",
		[]scriptCall{{"read_file", map[string]string{"path": testFile}}}},
	{"Let me see which cases fail.",
		[]scriptCall{{"run_tests", nil}}},
	{"Reserve compares the order with the whole stock and ignores the units already reserved. It should compare with Available.",
		[]scriptCall{{"write_file", map[string]string{"path": sourceFile, "content": strings.Replace(seedSource, buggyLine, fixedLine, 1)}}}},
	{"Let me check the fix.",
		[]scriptCall{{"run_tests", nil}}},
	{"Every case passes. Staging first.",
		[]scriptCall{{"deploy", map[string]string{"service": "inventory", "env": "staging", "version": "v1.4.1"}}}},
	{"Staging took the release. The smoke tests, before production.",
		[]scriptCall{{"run_tests", map[string]string{"env": "staging"}}}},
	{"Staging is healthy. Now production.",
		[]scriptCall{{"deploy", map[string]string{"service": "inventory", "env": "production", "version": "v1.4.1"}}}},
	{"Production is live. The changelog, and the team should know.",
		[]scriptCall{
			{"write_file", map[string]string{"path": changelogFile, "content": "# Changelog\n\n## v1.4.1\n\n- Store.Reserve no longer accepts orders for units that are already reserved.\n"}},
			{"send_email", map[string]string{"to": "team@example.com", "subject": "inventory v1.4.1 is live",
				"body": "Store.Reserve now checks orders against the available stock (stock minus reservations). Deployed to staging and production."}},
		}},
}

// receiptPattern matches the receipts the services give out.
var receiptPattern = regexp.MustCompile(`\b(?:dep|msg)-[0-9a-f]{8}\b`)

func (f *fakeModel) register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/chat/completions", f.serveChat)
}

func (f *fakeModel) serveChat(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "could not parse the request body: "+err.Error())
		return
	}
	if err := checkConversation(req.Messages); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if window, ok := f.windows[req.Model]; ok {
		if n := f.promptTokens(req); n > window {
			apiError(w, http.StatusBadRequest, "context_length_exceeded", fmt.Sprintf(
				"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", window, n))
			return
		}
	}
	var (
		id    string
		reply openai.ChatCompletionMessage
	)
	if len(req.Tools) > 0 {
		id, reply = f.act(req.Messages)
	} else {
		id, reply = "chatcmpl-summary", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: f.summarize(req.Messages)}
	}
	finish := openai.FinishReasonStop
	if len(reply.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	writeJSON(w, http.StatusOK, openai.ChatCompletionResponse{
		ID: id, Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: reply, FinishReason: finish}},
	})
}

// act returns the model's next reply to the agent.
func (f *fakeModel) act(msgs []openai.ChatCompletionMessage) (string, openai.ChatCompletionMessage) {
	turn := lastTurn(msgs) + 1
	reply := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	if turn > len(script) {
		reply.Content = finalAnswer(msgs)
		return "chatcmpl-final", reply
	}
	st := script[turn-1]
	reply.Content = st.say
	for i, c := range st.calls {
		args, _ := json.Marshal(c.args)
		if c.args == nil {
			args = []byte("{}")
		}
		reply.ToolCalls = append(reply.ToolCalls, openai.ToolCall{
			ID: fmt.Sprintf("call_%d_%d", turn, i+1), Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.name, Arguments: string(args)},
		})
	}
	return fmt.Sprintf("chatcmpl-turn-%d", turn), reply
}

// lastTurn returns the script turn of the model's latest tool call in the
// conversation, 0 when it has made none.
func lastTurn(msgs []openai.ChatCompletionMessage) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != openai.ChatMessageRoleAssistant || len(msgs[i].ToolCalls) == 0 {
			continue
		}
		var turn, n int
		if _, err := fmt.Sscanf(msgs[i].ToolCalls[0].ID, "call_%d_%d", &turn, &n); err == nil {
			return turn
		}
	}
	return 0
}

// finalAnswer reports the work, quoting every receipt the model can still
// see: in tool results of the tail, or in the handoff that replaced older
// turns. A receipt a compaction lost would be missing here.
func finalAnswer(msgs []openai.ChatCompletionMessage) string {
	var receipts []string
	for _, m := range msgs {
		for _, id := range receiptPattern.FindAllString(m.Content, -1) {
			if !slices.Contains(receipts, id) {
				receipts = append(receipts, id)
			}
		}
	}
	return "Done. Store.Reserve now checks orders against Available (stock minus reservations), so it no longer oversells; " +
		"all " + strconv.Itoa(len(reserveCases)) + " Reserve cases pass. inventory v1.4.1 is deployed to staging and production, " +
		"the CHANGELOG has its entry and the team is told. Receipts: " + strings.Join(receipts, ", ") + "."
}

// summarize writes the handoff the compactor asked for. The request's user
// message holds the previous handoff, if any, between <previous-summary>
// tags and the turns to summarize between <transcript> tags; each tool call
// in them is rendered as a line "→ call NAME ARGS".
func (f *fakeModel) summarize(msgs []openai.ChatCompletionMessage) string {
	var prompt string
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleUser {
			prompt = m.Content
		}
	}
	var h compact.Handoff
	if prev, ok := between(prompt, "<previous-summary>\n", "\n</previous-summary>"); ok {
		h, _ = compact.ParseHandoff(prev) // a partial parse keeps what it found
	}
	if h.Goal == "" {
		h.Goal = "Fix Store.Reserve in the inventory service, release v1.4.1 and tell the team."
	}
	window, _ := between(prompt, "<transcript>\n", "\n</transcript>")
	var actions []string
	for _, line := range strings.Split(window, "\n") {
		rest, ok := strings.CutPrefix(line, "→ call ")
		if !ok {
			if strings.Contains(line, "cases failed") {
				h.ErrorsAndFixes = appendNew(h.ErrorsAndFixes, "run_tests: "+line)
			}
			continue
		}
		name, args, _ := strings.Cut(rest, " ")
		actions = append(actions, name+" "+shorten(args, 72))
		if p := argString(json.RawMessage(args), "path"); p != "" {
			h.RelevantFiles = appendNew(h.RelevantFiles, p)
		}
	}
	h.CompletedActions = append(h.CompletedActions, actions...)
	for _, id := range receiptPattern.FindAllString(window, -1) {
		h.CriticalContext = appendNew(h.CriticalContext, "receipt "+id)
	}
	h.LastDroppedTurns = actions[max(0, len(actions)-2):]
	return h.Render()
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func between(s, open, end string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(rest, end)
	return in, ok
}

// checkConversation applies the API's rule on tool calls: an assistant
// message with tool calls is followed by one tool message per call, and a
// tool message answers a call of the assistant message before it.
func checkConversation(msgs []openai.ChatCompletionMessage) error {
	if len(msgs) == 0 {
		return fmt.Errorf("messages: must not be empty")
	}
	var waiting []string
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			j := slices.Index(waiting, m.ToolCallID)
			if j < 0 {
				return fmt.Errorf("messages[%d]: a message with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			waiting = slices.Delete(waiting, j, j+1)
			continue
		}
		if len(waiting) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing %v", i, waiting)
		}
		for _, c := range m.ToolCalls {
			waiting = append(waiting, c.ID)
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("messages: the last assistant message's tool calls %v have no responses", waiting)
	}
	return nil
}

// promptTokens counts a request's prompt: its messages and tools.
func (f *fakeModel) promptTokens(req openai.ChatCompletionRequest) int {
	msgs := make([]compact.Message, 0, len(req.Messages))
	for _, o := range req.Messages {
		m := fromOpenAI("", o)
		m.Role = compact.Role(o.Role)
		if o.ToolCallID != "" {
			m.ToolCallIDs = []string{o.ToolCallID}
		}
		msgs = append(msgs, m)
	}
	var tools []compact.ToolDef
	for _, t := range req.Tools {
		if t.Function != nil {
			params, _ := json.Marshal(t.Function.Parameters)
			tools = append(tools, compact.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: params})
		}
	}
	return f.counter.CountMessages(msgs, tools)
}

// apiError answers as the OpenAI API does, so the client's error says what
// went wrong.
func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code}})
}
