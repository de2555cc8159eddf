package sample

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Codex renders the session as a Codex CLI rollout
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): session_meta, the
// environment context, a turn_context before each model request, and
// response_items (message, reasoning, function_call and its output in the
// JSON envelope the shell tool returns) with their event_msg copies
// (user_message, agent_reasoning, agent_message, token_count). Every tool
// is Codex's own: shell (reads, searches and fetches are commands),
// apply_patch through the shell for edits, update_plan.
func Codex(s *Session) []byte {
	id := newIDs(s, "codex")
	w := codexWriter{s: s, id: id}
	sessionID := id.uuidV7(s.Start)
	w.line(s.Start, "session_meta", obj{{"id", sessionID}, {"timestamp", stamp(s.Start)}, {"cwd", s.Cwd}, {"originator", "codex_cli_rs"},
		{"cli_version", "0.46.0"}, {"instructions", nil}, {"source", "cli"}, {"model_provider", "openai"},
		{"git", obj{{"commit_hash", id.str("0123456789abcdef", 40)}, {"branch", s.Branch}, {"repository_url", "git@github.com:example-finance/invoicer.git"}}}})
	w.line(s.Start, "response_item", obj{{"type", "message"}, {"role", "user"}, {"content", []obj{{{"type", "input_text"}, {"text",
		"<environment_context>\n  <cwd>" + s.Cwd + "</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n" +
			"  <network_access>enabled</network_access>\n  <shell>bash</shell>\n</environment_context>"}}}}})
	for _, e := range s.Events {
		switch e.Kind {
		case UserText:
			w.line(e.At, "response_item", obj{{"type", "message"}, {"role", "user"}, {"content", []obj{{{"type", "input_text"}, {"text", e.Text}}}}})
			w.line(e.At, "event_msg", obj{{"type", "user_message"}, {"message", e.Text}, {"images", []string{}}})
		case AssistantTurn:
			w.turn(e)
		}
	}
	return w.out.Bytes()
}

type codexWriter struct {
	s      *Session
	id     ids
	out    bytes.Buffer
	tokens int // total input tokens so far, for token_count
}

func (w *codexWriter) line(at time.Time, typ string, payload obj) {
	w.out.Write(marshal(obj{{"timestamp", stamp(at)}, {"type", typ}, {"payload", payload}}))
	w.out.WriteByte('\n')
}

// turn writes one model request: its context, reasoning, message and calls
// with their outputs.
func (w *codexWriter) turn(e Event) {
	at := e.At
	w.line(at, "turn_context", obj{{"cwd", w.s.Cwd}, {"approval_policy", "on-request"},
		{"sandbox_policy", obj{{"mode", "workspace-write"}, {"network_access", true}, {"exclude_tmpdir_env_var", false}, {"exclude_slash_tmp", false}}},
		{"model", "gpt-5-codex"}, {"effort", "medium"}, {"summary", "auto"}})
	if e.Thinking != "" {
		title := "**" + firstSentence(e.Thinking) + "**"
		w.line(at, "event_msg", obj{{"type", "agent_reasoning"}, {"text", title}})
		w.tokenCount(at)
		w.line(at, "response_item", obj{{"type", "reasoning"}, {"summary", []obj{{{"type", "summary_text"}, {"text", title}}}}, {"content", nil},
			{"encrypted_content", "gAAAAABo" + w.id.str(base62+"-_", 320)}})
	} else {
		w.tokenCount(at)
	}
	if e.Text != "" {
		w.line(at, "event_msg", obj{{"type", "agent_message"}, {"message", e.Text}})
		w.line(at, "response_item", obj{{"type", "message"}, {"role", "assistant"}, {"content", []obj{{{"type", "output_text"}, {"text", e.Text}}}}})
	}
	ids := make([]string, len(e.Calls))
	for i, c := range e.Calls {
		ids[i] = "call_" + w.id.str(alnum, 24)
		name, args := w.call(c)
		w.line(at, "response_item", obj{{"type", "function_call"}, {"name", name}, {"arguments", string(marshal(args))}, {"call_id", ids[i]}})
	}
	for i, c := range e.Calls {
		w.line(c.At, "response_item", obj{{"type", "function_call_output"}, {"call_id", ids[i]}, {"output", w.output(c)}})
	}
}

func (w *codexWriter) tokenCount(at time.Time) {
	in := 900 + w.id.r.IntN(4000)
	w.tokens += in
	out := 40 + w.id.r.IntN(600)
	w.line(at, "event_msg", obj{{"type", "token_count"}, {"info", obj{
		{"total_token_usage", obj{{"input_tokens", w.tokens}, {"cached_input_tokens", w.tokens * 9 / 10}, {"output_tokens", out}, {"reasoning_output_tokens", out / 2}, {"total_tokens", w.tokens + out}}},
		{"last_token_usage", obj{{"input_tokens", in}, {"cached_input_tokens", in * 9 / 10}, {"output_tokens", out}, {"reasoning_output_tokens", out / 2}, {"total_tokens", in + out}}},
		{"model_context_window", 272000}}}})
}

// call is a call's Codex function name and arguments.
func (w *codexWriter) call(c *Call) (string, obj) {
	if c.Tool == ToolPlan {
		var items []obj
		for _, p := range c.Plan {
			items = append(items, obj{{"status", p.Status}, {"step", p.Step}})
		}
		return "update_plan", obj{{"plan", items}}
	}
	return "shell", obj{{"command", []string{"bash", "-lc", w.command(c)}}, {"workdir", w.s.Cwd}, {"timeout_ms", 120000}}
}

// command is the shell command Codex runs for a call.
func (w *codexWriter) command(c *Call) string {
	switch c.Tool {
	case ToolShell:
		return c.Command
	case ToolRead:
		if c.From > 0 {
			return fmt.Sprintf("sed -n '%d,%dp' %s", c.From, c.From+c.Lines-1, c.Path)
		}
		return fmt.Sprintf("sed -n '1,200p' %s", c.Path)
	case ToolEdit:
		return "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: " + c.Path + "\n" + patchBody(c.Hunks) + "*** End Patch\nPATCH"
	case ToolWrite:
		var b strings.Builder
		for _, l := range splitLines(c.Content) {
			b.WriteString("+" + l + "\n")
		}
		return "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: " + c.Path + "\n" + b.String() + "*** End Patch\nPATCH"
	case ToolSearch:
		return fmt.Sprintf("rg -n %s %s", shellQuote(c.Pattern), strings.Join(c.Paths, " "))
	case ToolFind:
		return fmt.Sprintf("rg --files -g %s | sort", shellQuote(strings.TrimPrefix(c.Glob, "**/")))
	case ToolFetch:
		return fmt.Sprintf("curl -sL %s | sed -e 's/<[^>]*>//g' | grep -v '^\\s*$' | sed -n '/quantize(exp/,/ROUND_HALF_UP)/p'", shellQuote(c.URL))
	}
	panic("sample: unknown tool")
}

// output is a call's function_call_output: the shell's JSON envelope, or
// the plan tool's plain text.
func (w *codexWriter) output(c *Call) string {
	if c.Tool == ToolPlan {
		return c.Output
	}
	text, exit := c.Output, c.Exit
	switch c.Tool {
	case ToolEdit:
		text = "Success. Updated the following files:\nM " + c.Path + "\n"
	case ToolWrite:
		text = "Success. Updated the following files:\nA " + c.Path + "\n"
	case ToolSearch, ToolFind:
		if text == "" {
			exit = 1
		}
	}
	secs := float64(w.id.r.IntN(40)) / 10
	return string(marshal(obj{{"output", text}, {"metadata", obj{{"exit_code", exit}, {"duration_seconds", secs}}}}))
}

// patchBody is apply_patch's body of hunks: an @@ line, then the context,
// removed and added lines.
func patchBody(hunks []Hunk) string {
	var b strings.Builder
	for _, h := range hunks {
		b.WriteString("@@\n")
		for _, l := range h.Lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// firstSentence is the reasoning summary's title: the thinking's first
// sentence, without its full stop.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
