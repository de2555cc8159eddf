package fallback

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

// eventKind says what happened at one point of the window's timeline.
type eventKind uint8

const (
	evCall      eventKind = iota + 1 // a tool call (or a result whose call came before the window)
	evInterrupt                      // the person interrupted the agent
	evNote                           // the harness reported an error outside any tool result
)

// event is one entry of the window's timeline, in transcript order.
type event struct {
	kind eventKind
	msg  int
	call *call
	text string
}

// ask is one thing the person asked, with where it was asked.
type ask struct {
	msg  int
	text string
}

// todo is one item of the agent's last todo list or plan.
type todo struct {
	text, status string
}

// window is what Build reads out of the (redacted) dropped messages before
// deciding what to keep.
type window struct {
	msgs     *messages
	calls    []*call
	timeline []event
	asks     []ask
	// previous holds handoffs written by compact found in the window;
	// foreign holds other agents' summaries, as text.
	previous []compact.Handoff
	foreign  []string
	// todos is the last todo list or plan the agent wrote, todoMsg where.
	todos   []todo
	todoMsg int
	// plans are plans the agent proposed (ExitPlanMode) or explained
	// (update_plan), with where.
	plans []ask
	// ideContext holds the IDE context wrapped around asks (active file,
	// open tabs), for paths.
	ideContext []string
	// root is the directory most paths of the window's calls lie under;
	// paths in action keys are shown relative to it.
	root string
	// kept holds the names the messages kept around the window say.
	kept map[string]bool
}

// messages is the window as Build reads it: the caller's messages, each
// one that held a secret read as its masked copy (Config.Masked), so that
// masking a window copies only the few messages it changes.
type messages struct {
	all    []compact.Message
	masked map[int]*compact.Message
}

func newMessages(all []compact.Message, masked map[int]compact.Message) *messages {
	v := &messages{all: all}
	if len(masked) > 0 {
		v.masked = make(map[int]*compact.Message, len(masked))
		for i, m := range masked {
			if i >= 0 && i < len(all) {
				v.masked[i] = &m
			}
		}
	}
	return v
}

func (v *messages) len() int { return len(v.all) }

// at returns message i as Build reads it.
func (v *messages) at(i int) *compact.Message {
	if m, ok := v.masked[i]; ok {
		return m
	}
	return &v.all[i]
}

// analyze pairs calls with results and sorts the window's messages into
// asks, calls, summaries and todo lists. mask redacts every string of the
// calls' arguments once decoded, whatever the Redactor did to the raw JSON.
func analyze(msgs *messages, mask func(string) string) *window {
	w := &window{msgs: msgs, todoMsg: -1}
	pending := map[string]*call{}
	var idless []*call
	observed := map[int]bool{} // messages that are the output of a text action
	textActing := false        // the agent has acted through its text before
	attach := func(i int, id, text string, isErr bool) {
		c := pending[id]
		if c != nil {
			delete(pending, id)
		} else if id == "" && len(idless) > 0 {
			c, idless = idless[0], idless[1:]
		}
		if c == nil {
			// The call was made before the window opened.
			c = &call{msg: -1}
			w.calls = append(w.calls, c)
			w.timeline = append(w.timeline, event{kind: evCall, msg: i, call: c})
		}
		if c.res == nil {
			c.res = &result{msg: i}
		} else if text != "" && c.res.text != "" {
			text = c.res.text + "\n" + text
		}
		c.res.text = text
		c.res.isError = c.res.isError || isErr
	}
	for i := range msgs.len() {
		m := msgs.at(i)
		if m.Summary || (m.Role == compact.RoleUser || m.Role == compact.RoleSystem) && compact.IsHandoffText(textOf(m)) {
			w.addSummary(textOf(m))
			continue
		}
		if c := textAction(msgs, i, textActing); c != nil {
			// An agent that acts through fenced commands in its text
			// (SWE-agent, mini-swe-agent): the next message is the output.
			w.calls = append(w.calls, c)
			w.timeline = append(w.timeline, event{kind: evCall, msg: i, call: c})
			if i+1 < msgs.len() {
				c.res = &result{msg: i + 1, text: textOf(msgs.at(i + 1))}
				observed[i+1] = true
			}
			textActing = true
			continue
		}
		if observed[i] {
			continue
		}
		for k, p := range m.Parts {
			if p.Type != compact.PartToolCall || p.ToolCall == nil {
				continue
			}
			c := &call{msg: i, part: int32(k), name: p.ToolCall.Name, kind: p.ToolCall.Kind}
			w.calls = append(w.calls, c)
			w.timeline = append(w.timeline, event{kind: evCall, msg: i, call: c})
			if id := p.ToolCall.ID; id != "" {
				pending[id] = c
			} else {
				idless = append(idless, c)
			}
		}
		// Results: by part (Anthropic, Claude Code, Gemini) or by message
		// (OpenAI tool messages, SWE-agent's tool_call_ids).
		byPart := false
		for _, p := range m.Parts {
			if p.Type == compact.PartToolResult {
				attach(i, p.CallID, p.Text, p.IsError || p.Failed)
				byPart = true
			}
		}
		if !byPart && m.IsToolResult() {
			isErr := false
			for _, p := range m.Parts {
				isErr = isErr || p.IsError || p.Failed
			}
			text := textOf(m)
			if len(m.ToolCallIDs) == 0 {
				attach(i, "", text, isErr)
			}
			for _, id := range m.ToolCallIDs {
				attach(i, id, text, isErr)
			}
			continue
		}
		if m.Role != compact.RoleUser {
			continue
		}
		text := textOf(m)
		// Interruptions are harness notes (readers mark them Synthetic),
		// but they say what the person did, so they go on the timeline.
		if format.Interruption(text) {
			w.timeline = append(w.timeline, event{kind: evInterrupt, msg: i, text: strings.TrimSpace(text)})
			continue
		}
		if !m.IsUserAsk() {
			// A harness note that reports an error (OpenHands sends a
			// failed action's complaint as its own message).
			// One the reader tagged Failed is one whatever its words.
			if m.Synthetic && !m.Summary {
				errs := errorLines(text, false, false)
				switch {
				case len(errs) > 0 && maxErrorScore(errs) >= 3:
					w.timeline = append(w.timeline, event{kind: evNote, msg: i, text: bestError(errs)})
				case failedText(m):
					if l := firstMeaningfulLine(text); l != "" {
						w.timeline = append(w.timeline, event{kind: evNote, msg: i, text: l})
					}
				}
			}
			continue
		}
		if a, ide := askText(personText(m)); a != "" {
			w.asks = append(w.asks, ask{msg: i, text: a})
			if ide != "" {
				w.ideContext = append(w.ideContext, ide)
			}
		}
	}
	dirs := map[string]int{} // how many calls ran in each directory
	var args callArgs        // the arguments of the call being described
	for _, c := range w.calls {
		if c.res != nil {
			c.res.text, c.res.exit, c.res.hasExit = format.UnwrapOutput(c.res.text)
			if !c.res.hasExit {
				c.res.exit, c.res.hasExit = trailingStatus(c.res.text)
			}
		}
		if c.msg >= 0 {
			if c.a == nil { // a tool call's, read from its part
				args.decode(msgs.at(c.msg).Parts[c.part].ToolCall.Arguments, mask)
				c.a = &args
			}
			if d := c.dirArg(); d != "" {
				c.more().argDir = d
			}
			c.describe()
			w.noteTodosAndPlans(c)
			if d := c.workdir(); d != "" {
				dirs[d]++
			}
			// Described: what later steps read of the arguments is in
			// the call's fields now.
			c.a = nil
		}
	}
	w.markAcks()
	w.root = mostCalls(dirs)
	return w
}

// decode decodes raw arguments, masking every string once decoded,
// whatever the Redactor did to the raw JSON.
func (a *callArgs) decode(raw json.RawMessage, mask func(string) string) {
	a.args, a.argRaw = decodeArgs(raw)
	maskValues(a.args, mask)
	if a.argRaw != "" {
		a.argRaw = mask(a.argRaw)
	}
}

// maxAckBytes bounds the outputs that can be acknowledgements: a long
// output repeated is a listing shown twice, not a formula.
const maxAckBytes = 400

// statusNotes are the words a program or a shell ends its output with to
// report its exit status, whatever the agent: "exit status 2" (Go, sh),
// "exited with code 1" (process runners), "exit code: 3" (CI steps).
var statusNotes = []string{"exit status ", "exited with code ", "exit code: ", "exit code "}

// trailingStatus reads the exit status a command's last output line
// reports (see statusNotes).
func trailingStatus(text string) (int, bool) {
	t := strings.TrimRight(text, " \n\r\t.]")
	last := t[strings.LastIndexByte(t, '\n')+1:]
	if len(last) > 80 {
		return 0, false
	}
	lower := strings.ToLower(last)
	for _, note := range statusNotes {
		if k := strings.LastIndex(lower, note); k >= 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(last[k+len(note):])); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// showsData reports a call whose output is data (a file read, a search, a
// listing, a program's output), which can repeat without being an
// acknowledgement.
func (c *call) showsData() bool {
	if c.exec || c.search() || c.listing() {
		return true
	}
	for _, f := range c.files {
		if f.op == opRead {
			return true
		}
	}
	return false
}

// markAcks marks the outputs a tool gave word for word to two calls or
// more (see result.ack).
func (w *window) markAcks() {
	type key struct{ name, text string }
	n := map[key]int{}
	for _, c := range w.calls {
		if c.res != nil && c.res.text != "" && len(c.res.text) <= maxAckBytes && !c.res.failed() && !c.showsData() {
			n[key{c.name, c.res.text}]++
		}
	}
	for _, c := range w.calls {
		if c.res != nil && n[key{c.name, c.res.text}] >= 2 {
			c.res.ack = true
		}
	}
}

// addSummary records a summary message: a compact handoff is parsed so its
// items can be carried forward; another agent's summary is kept as text.
func (w *window) addSummary(text string) {
	if compact.IsHandoffText(text) {
		if h, err := compact.ParseHandoff(text); err == nil || !h.IsEmpty() {
			w.previous = append(w.previous, h)
			return
		}
	}
	if h, err := compact.ParseHandoff(text); err == nil {
		w.previous = append(w.previous, h) // an LLM summary under our headings
		return
	}
	if t := strings.TrimSpace(text); t != "" {
		w.foreign = append(w.foreign, t)
	}
}

// noteTodosAndPlans records todo lists (Claude Code TodoWrite, Codex
// update_plan and any tool whose arguments carry a list of items with a
// status) and plans (a "plan" text argument, update_plan's explanation).
func (w *window) noteTodosAndPlans(c *call) {
	for _, key := range []string{"todos", "plan", "steps", "tasks", "items"} {
		list, ok := c.a.args[key].([]any)
		if !ok {
			continue
		}
		var items []todo
		for _, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			status, _ := m["status"].(string)
			var text string
			for _, k := range []string{"content", "step", "title", "task", "description", "text"} {
				if s, ok := m[k].(string); ok && s != "" {
					text = s
					break
				}
			}
			if text != "" && status != "" {
				items = append(items, todo{text: text, status: status})
			}
		}
		if len(items) > 0 {
			w.todos, w.todoMsg = items, c.msg
		}
	}
	if p, ok := c.a.args["plan"].(string); ok && strings.TrimSpace(p) != "" {
		w.plans = append(w.plans, ask{msg: c.msg, text: p})
	}
	if e, ok := c.a.args["explanation"].(string); ok && strings.TrimSpace(e) != "" {
		w.plans = append(w.plans, ask{msg: c.msg, text: e})
	}
}

// personText is the text of m's parts the person wrote: the parts the
// reader tagged Harness (reminders, command echoes riding along) left out.
func personText(m *compact.Message) string {
	if !slices.ContainsFunc(m.Parts, func(p compact.Part) bool { return p.Harness }) {
		return textOf(m)
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == compact.PartText && !p.Harness && p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// harnessOnly reports a message whose text parts the reader all tagged
// Harness.
func harnessOnly(m *compact.Message) bool {
	n := 0
	for _, p := range m.Parts {
		if p.Type == compact.PartText && p.Text != "" {
			if !p.Harness {
				return false
			}
			n++
		}
	}
	return n > 0
}

// textOf is m.Text() without a copy when the message has one text part,
// as most have: a window's messages are read for their text many times.
func textOf(m *compact.Message) string {
	var only *compact.Part
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != compact.PartText || p.Text == "" {
			continue
		}
		if only != nil {
			return m.Text()
		}
		only = p
	}
	if only == nil {
		return ""
	}
	return only.Text
}

// maskValues redacts every string inside decoded JSON, in place.
func maskValues(v any, mask func(string) string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				x[k] = mask(s)
			} else {
				maskValues(e, mask)
			}
		}
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				x[i] = mask(s)
			} else {
				maskValues(e, mask)
			}
		}
	}
}

// textAction recognises an assistant message that acts by a fenced command
// in its text, answered by the next message: a user-role message written
// by the harness (Synthetic, or mini-swe-agent's <returncode> output), or
// by nothing when the window ends there and the agent has acted this way
// before. The last fenced block is the command.
func textAction(msgs *messages, i int, acting bool) *call {
	m := msgs.at(i)
	if m.Role != compact.RoleAssistant || makesCall(m) {
		return nil
	}
	// The window may end before the output: an agent seen acting this way
	// is taken to act again.
	if i+1 == msgs.len() {
		if !acting {
			return nil
		}
	} else {
		next := msgs.at(i + 1)
		if next.Role != compact.RoleUser || next.Summary || next.IsToolResult() {
			return nil
		}
		if !next.Synthetic && !harnessOnly(next) {
			return nil // the readers mark a harness's observation Synthetic or Harness
		}
	}
	lang, block := lastFence(textOf(m))
	if strings.TrimSpace(block) == "" {
		return nil
	}
	name := "run"
	if lang != "" {
		name = lang
	}
	c := &call{msg: i, name: name, a: &callArgs{args: map[string]any{"command": strings.TrimSpace(block)}}}
	return c
}

// lastFence returns the info string and body of the last fenced code block
// of s.
func lastFence(s string) (lang, body string) {
	end := strings.LastIndex(s, "```")
	if end < 0 {
		return "", ""
	}
	start := strings.LastIndex(s[:end], "```")
	if start < 0 {
		return "", ""
	}
	inner := s[start+3 : end]
	first, rest, ok := strings.Cut(inner, "\n")
	if !ok {
		return "", inner
	}
	first = strings.TrimSpace(first)
	if first != "" && !strings.ContainsAny(first, " \t") && len(first) < 20 {
		return first, rest
	}
	return "", inner
}

// failedText reports a message with a text part its reader tagged Failed.
func failedText(m *compact.Message) bool {
	for _, p := range m.Parts {
		if p.Type == compact.PartText && p.Failed {
			return true
		}
	}
	return false
}

// makesCall reports whether m makes a tool call, without copying its calls
// out (Message.ToolCalls): every assistant message of a window is asked.
func makesCall(m *compact.Message) bool {
	for _, p := range m.Parts {
		if p.Type == compact.PartToolCall && p.ToolCall != nil {
			return true
		}
	}
	return false
}
