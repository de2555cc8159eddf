package format

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Tags: what a reader adds to a transcript from its agent's conventions,
// so that no layer above has to know them (see the package doc). The
// tables the tags come from are in tools.go, one per agent; this file
// applies them.

// toolRow is what format knows of one tool: its kind and which argument
// holds its target.
type toolRow struct {
	kind compact.ToolKind
	// target lists the arguments that may hold the call's target, most
	// telling first. A list value gives its first element; an argv of a
	// shell command the script it runs.
	target []string
	// sub, for an editor tool whose sub-command is an argument
	// (str_replace_editor's "command"), names that argument, and subs
	// says what each sub-command does; one it does not list is a write.
	sub  string
	subs map[string]compact.ToolKind
	// opens marks a tool that opens its target in the agent's editor
	// window (SWE-agent's open and create); onOpen one that works on the
	// file open there, which is then its target.
	opens, onOpen bool
}

// toolTable maps an agent's tool names to rows. A name ending in "*"
// matches every tool name with that prefix (MCP tools).
type toolTable map[string]toolRow

// lookup finds name in t: exactly, then by prefix.
func (t toolTable) lookup(name string) (toolRow, bool) {
	if r, ok := t[name]; ok {
		return r, true
	}
	for k, r := range t {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(name, p) {
			return r, true
		}
	}
	return toolRow{}, false
}

// editorSubs are the sub-commands of the editor tools agents share
// (Anthropic's text editor, SWE-agent's and OpenHands' str_replace_editor).
var editorSubs = map[string]compact.ToolKind{
	"view": compact.ToolRead, "create": compact.ToolWrite, "str_replace": compact.ToolWrite,
	"insert": compact.ToolWrite, "undo_edit": compact.ToolWrite, "write": compact.ToolWrite,
	"delete": compact.ToolWrite, "rename": compact.ToolWrite,
}

// targetKeys are the arguments a tool no table knows may name its target
// by, most telling first.
var targetKeys = []string{"file_path", "path", "absolute_path", "filePath", "notebook_path", "target_file",
	"filename", "file", "dir_path", "directory", "url", "uri", "query", "pattern", "command", "cmd"}

// maxTarget bounds a target's length: a command that runs a long script
// is named by its first kilobyte.
const maxTarget = 1024

// tagTranscript sets the tags of every message of t from the tables (the
// agent's own first, then the generic one): each tool call's kind and
// target, each failed result, each harness text.
func tagTranscript(t *compact.Transcript, tables ...toolTable) {
	tg := tagger{tables: tables}
	for i := range t.Messages {
		tg.tag(&t.Messages[i])
	}
}

// tagger tags messages one at a time, in order: SWE-agent's edits take
// the file an earlier call opened.
type tagger struct {
	tables []toolTable
	open   string // the file open in the agent's editor window
}

func (tg *tagger) tag(m *compact.Message) {
	for k := range m.Parts {
		p := &m.Parts[k]
		switch {
		case p.Type == compact.PartToolCall && p.ToolCall != nil:
			if p.ToolCall.Kind != "" {
				break
			}
			row, kind, target := callTag(p.ToolCall, tg.tables)
			switch {
			case row.opens && target != "":
				tg.open = target
			case row.onOpen && target == "":
				target = tg.open
			}
			p.ToolCall.Kind, p.ToolCall.Target = kind, target
		case p.Type == compact.PartToolResult:
			p.Failed = p.Failed || p.IsError || outputFailed(p.Text)
		case p.Type == compact.PartText && len(m.ToolCallIDs) > 0:
			// A tool's answer by id (OpenAI, OpenHands): its text is
			// the output.
			p.Failed = p.Failed || outputFailed(p.Text)
		case p.Type == compact.PartText && m.Role == compact.RoleUser:
			p.Harness = p.Harness || m.Synthetic || harnessText(p.Text)
			// A harness message that reports a command's result
			// (mini-swe-agent's observations) failed with it.
			p.Failed = p.Failed || p.Harness && outputFailed(p.Text)
		}
	}
}

// callTag returns a call's kind and target by the first table that knows
// its name, and the row it used. A call no table knows is ToolOther, its
// target the first of targetKeys it has.
func callTag(c *compact.ToolCall, tables []toolTable) (toolRow, compact.ToolKind, string) {
	args := objectArgs(c.Arguments)
	row, known := toolRow{kind: compact.ToolOther, target: targetKeys}, false
	for _, t := range tables {
		if r, ok := t.lookup(c.Name); ok {
			row, known = r, true
			break
		}
		if r, ok := t.lookup(strings.ToLower(c.Name)); ok {
			row, known = r, true
			break
		}
	}
	kind := row.kind
	if row.sub != "" {
		sub := jsonscan.LookupString(args, row.sub)
		kind = compact.ToolWrite
		if k, ok := row.subs[sub]; ok {
			kind = k
		}
	}
	target := argTarget(c.Arguments, args, row.target)
	switch {
	case kind == compact.ToolShell:
		cmd := target
		if k, t := commandKind(cmd); k != compact.ToolShell {
			kind, target = k, t
			if target == "" {
				target = cmd
			}
		}
	case kind == compact.ToolWrite && known && (target == "" || hasKey(row.target, "input")):
		// apply_patch and its kin: the patch names the file.
		target = patchTarget(argText(c.Arguments, args))
	case kind == compact.ToolWeb && hasKey(row.target, "prompt") && !strings.HasPrefix(target, "http"):
		// Gemini CLI's web_fetch takes a prompt with the URLs in it.
		target = firstURL(target)
	}
	return row, kind, clip(target, maxTarget)
}

// objectArgs returns the arguments when they are a JSON object, or the
// object a JSON string of one holds (some agents double-encode them).
func objectArgs(raw json.RawMessage) []byte {
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) {
		return nil
	}
	switch raw[i] {
	case '{':
		return raw[i:]
	case '"':
		if s, ok := jsonscan.Unquote(raw[i:]); ok && strings.HasPrefix(strings.TrimSpace(s), "{") {
			return []byte(s)
		}
	}
	return nil
}

// argText returns the arguments as text: a JSON string's contents, the
// "input" or "patch" member of an object, or "".
func argText(raw json.RawMessage, obj []byte) string {
	if s, ok := jsonscan.Unquote([]byte(raw)); ok {
		return s
	}
	for _, k := range []string{"input", "patch"} {
		if s := jsonscan.LookupString(obj, k); s != "" {
			return s
		}
	}
	return ""
}

// argTarget returns the first of keys the arguments have as a non-empty
// string (a list gives its first string; a shell argv the script it runs).
// A call whose arguments are a bare string (a custom tool's input) has it
// as its target when keys lists "input".
func argTarget(raw json.RawMessage, obj []byte, keys []string) string {
	if obj == nil {
		if hasKey(keys, "input") || hasKey(keys, "command") {
			if s, ok := jsonscan.Unquote([]byte(raw)); ok {
				return s
			}
		}
		return ""
	}
	members, _ := jsonscan.Members(obj)
	for _, k := range keys {
		v := jsonscan.ValueOf(obj, members, k)
		switch jsonscan.Raw(v).First() {
		case '"':
			// Arguments are never written to: the target shares them.
			if s, ok := jsonscan.UnquoteShared(v); ok && strings.TrimSpace(s) != "" {
				return s
			}
		case '[':
			if s := listTarget(v, k == "command" || k == "cmd"); s != "" {
				return s
			}
		case '{':
			// Codex's local_shell action: {"type":"exec","command":[…]}.
			if s := argTarget(nil, v, keys); s != "" {
				return s
			}
		}
	}
	return ""
}

// listTarget reads a list argument: an argv when argv is set (["bash",
// "-lc", script] gives the script, other argvs are joined with spaces),
// else a list of paths or queries (the first).
func listTarget(v []byte, argv bool) string {
	elems, _ := jsonscan.Elements(v)
	var words []string
	for _, e := range elems {
		s, ok := jsonscan.UnquoteShared(v[e.Start:e.End])
		if !ok {
			break
		}
		words = append(words, s)
	}
	switch n := len(words); {
	case n == 0:
		return ""
	case !argv:
		return words[0]
	case n >= 3 && isShellProgram(words[0]) && strings.HasPrefix(words[n-2], "-") && strings.Contains(words[n-2], "c"):
		return words[n-1]
	}
	return strings.Join(words, " ")
}

func isShellProgram(s string) bool {
	switch progName(s) {
	case "bash", "sh", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd", "cmd.exe":
		return true
	}
	return false
}

func hasKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// firstURL returns the first http(s) URL in s, or s.
func firstURL(s string) string {
	k := strings.Index(s, "http://")
	if j := strings.Index(s, "https://"); j >= 0 && (k < 0 || j < k) {
		k = j
	}
	if k < 0 {
		return s
	}
	end := strings.IndexAny(s[k:], " \t\r\n\"'<>()[]")
	if end < 0 {
		return s[k:]
	}
	return s[k : k+end]
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Harness text. One list for every agent: a marker of one agent's harness
// never opens text a person or a model writes in another's, and files of
// the API formats hold any agent's messages.
//
// harnessMarkers open text an agent's harness injects in the user role;
// text that starts with one (after spaces) is the harness's, unless it
// also contains the marker's unless phrase.
var harnessMarkers = []struct{ prefix, unless string }{
	// Claude Code: slash commands and their output, ! commands, caveats
	// about local commands, prompt-submit hooks, interruption notes.
	{prefix: "<command-name>"}, {prefix: "<command-message>"}, {prefix: "<command-args>"},
	{prefix: "<command-contents>"}, {prefix: "<local-command-stdout>"}, {prefix: "<local-command-stderr>"},
	{prefix: "<local-command-caveat>"}, {prefix: "<bash-input>"}, {prefix: "<bash-stdout>"},
	{prefix: "<bash-stderr>"}, {prefix: "<user-prompt-submit-hook>"}, {prefix: "Caveat: "},
	{prefix: "[Request interrupted by user"},
	// Codex CLI: the environment and instruction blocks it sends first,
	// turn-abort notes, and the IDE extension's context block when it
	// carries no request of the person's.
	{prefix: "<environment_context>"}, {prefix: "<user_instructions>"}, {prefix: "# AGENTS.md instructions"},
	{prefix: "<turn_aborted>"}, {prefix: "<user_shell_command>"},
	{prefix: "# Context from my IDE setup:", unless: "## My request for Codex:"},
	// Gemini CLI: the session context it sends before the first request.
	{prefix: "This is the Gemini CLI. We are setting up the context for our chat."},
	// mini-swe-agent: its observation, format-error and timeout templates
	// (the command's output comes back as a user message).
	{prefix: "<returncode>"}, {prefix: "Please always provide EXACTLY ONE action in triple backticks"},
	{prefix: "The last command <command>"},
}

// systemReminder wraps the reminders Claude Code adds to user text; text
// made of nothing but reminders is the harness's.
const systemReminder = "<system-reminder>"

// harnessText reports whether s, user-role text, was written by an
// agent's harness rather than the person.
func harnessText(s string) bool {
	s = strings.TrimSpace(s)
	for _, m := range harnessMarkers {
		if strings.HasPrefix(s, m.prefix) {
			return m.unless == "" || !strings.Contains(s, m.unless)
		}
	}
	return onlySystemReminders(s)
}

// harnessOnly reports whether every non-blank text part of parts is
// harness text (and there is at least one).
func harnessOnly(parts []compact.Part) bool {
	seen := false
	for _, p := range parts {
		if p.Type != compact.PartText || strings.TrimSpace(p.Text) == "" {
			continue
		}
		if !harnessText(p.Text) {
			return false
		}
		seen = true
	}
	return seen
}

// onlySystemReminders reports whether s is nothing but <system-reminder>
// blocks (and whitespace).
func onlySystemReminders(s string) bool {
	const closing = "</system-reminder>"
	found := false
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return found
		}
		rest, ok := strings.CutPrefix(s, systemReminder)
		if !ok {
			return false
		}
		_, after, ok := strings.Cut(rest, closing)
		if !ok {
			return false
		}
		s, found = after, true
	}
}

// Tool outputs. Agents wrap a command's output in an envelope that carries
// its exit code; UnwrapOutput reads them all, so a result in any format
// (an OpenAI log of an OpenHands run, a Codex rollout) is judged alike.

// UnwrapOutput returns the output a tool result's text carries inside its
// agent's envelope, and the exit code the envelope reports (ok false when
// it reports none). Text in no known envelope is returned as it is. The
// envelopes:
//
//   - Codex's JSON: {"output": "…", "metadata": {"exit_code": N, …}} (and
//     {"output", "exit_code"});
//   - Codex's text forms: "Exit code: N\nWall time: …\nOutput:\n…" and
//     unified exec's "Chunk ID: …\nProcess exited with code N\n…Output:\n…";
//     a sandbox refusal "failed in sandbox … exit code: N, …";
//   - mini-swe-agent's "<returncode>N</returncode>" before "<output>…</output>";
//   - OpenHands' trailing "[The command completed with exit code N.]".
func UnwrapOutput(text string) (output string, exitCode int, ok bool) {
	return unwrapOutput(text, true)
}

// unwrapOutput is UnwrapOutput; without decode, it reads only the exit
// code (output is ""), which spares decoding a large JSON envelope.
func unwrapOutput(text string, decode bool) (output string, exitCode int, ok bool) {
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, `{"output"`) || strings.HasPrefix(t, `{"exit_code"`) || strings.HasPrefix(t, `{"metadata"`):
		members, _ := jsonscan.Members(t)
		out := jsonscan.ValueOf(t, members, "output")
		if len(out) == 0 || out[0] != '"' {
			break
		}
		if decode {
			output, _ = jsonscan.UnquotePrefix(out[1:])
		}
		code := jsonscan.ValueOf(t, members, "exit_code")
		if len(code) == 0 {
			code = jsonscan.Lookup(jsonscan.ValueOf(t, members, "metadata"), "exit_code")
		}
		if n, err := strconv.Atoi(code); err == nil {
			return output, n, true
		}
		return output, 0, false
	case strings.HasPrefix(t, "Exit code: "):
		line, rest, _ := strings.Cut(t, "\n")
		if n, err := strconv.Atoi(strings.TrimSpace(line[len("Exit code: "):])); err == nil {
			return afterOutputHeader(rest), n, true
		}
	case strings.HasPrefix(t, "Chunk ID: ") || strings.HasPrefix(t, "Wall time: "):
		head, _, _ := strings.Cut(t, "\nOutput:\n")
		for line := range strings.Lines(head) {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Process exited with code "); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					return afterOutputHeader(t), n, true
				}
			}
		}
		return afterOutputHeader(t), 0, false
	case strings.HasPrefix(t, "failed in sandbox "):
		if _, rest, ok := strings.Cut(t, "exit code: "); ok {
			digits, _, _ := strings.Cut(rest, ",")
			if n, err := strconv.Atoi(strings.TrimSpace(digits)); err == nil {
				return text, n, true
			}
		}
		return text, 1, true
	case strings.HasPrefix(t, "<returncode>"):
		end := strings.Index(t, "</returncode>")
		if end < 0 {
			break
		}
		body := strings.TrimSpace(t[end+len("</returncode>"):])
		if b, ok := strings.CutPrefix(body, "<output>"); ok {
			body, _, _ = strings.Cut(b, "</output>")
		}
		if n, err := strconv.Atoi(strings.TrimSpace(t[len("<returncode>"):end])); err == nil {
			return body, n, true
		}
		return body, 0, false
	}
	const done = "[The command completed with exit code "
	tail := max(0, len(t)-96)
	if k := strings.LastIndex(t[tail:], done); k >= 0 {
		k += tail
		digits, _, _ := strings.Cut(t[k+len(done):], ".")
		if n, err := strconv.Atoi(digits); err == nil {
			return strings.TrimSpace(t[:k]), n, true
		}
	}
	return text, 0, false
}

// afterOutputHeader returns what follows Codex's "Output:" line, or s.
func afterOutputHeader(s string) string {
	if strings.HasPrefix(s, "Output:\n") {
		return s[len("Output:\n"):]
	}
	if _, out, ok := strings.Cut(s, "\nOutput:\n"); ok {
		return out
	}
	return s
}

// outputFailed reports whether a tool output's envelope says it failed:
// a non-zero exit code.
func outputFailed(text string) bool {
	_, code, ok := unwrapOutput(text, false)
	return ok && code != 0
}
