package fallback

import (
	"encoding/json"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/jsonscan"
)

// fileOp is what a call did to a file, as far as the call says.
type fileOp uint8

// File operations, weakest first: a stronger one wins when a file is
// touched several ways.
const (
	opMention fileOp = iota // named in an argument or in text
	opRead
	opEdit
	opCreate
	opDelete
)

func (o fileOp) String() string {
	switch o {
	case opRead:
		return "read"
	case opEdit:
		return "edited"
	case opCreate:
		return "created"
	case opDelete:
		return "deleted"
	}
	return "mentioned"
}

// fileTouch is one file a call names, with what the call did to it.
type fileTouch struct {
	path string
	op   fileOp
}

// call is one tool call of the window with its result.
type call struct {
	msg  int // index of the message making the call; -1 for a result whose call is before the window
	name string
	// kind is the reader's tag (compact.ToolCall.Kind): what the call does
	// by its agent's conventions. An untagged call ("" kind) is read by
	// its arguments' shapes.
	kind compact.ToolKind
	// a holds the call's arguments while analyze describes the call, nil
	// after: a window's decoded arguments would otherwise stay in memory
	// to the end of Build. part is the index of the call's part in its
	// message, where they are read from.
	a *callArgs
	// key is the call's key argument for display: a command, a path, a URL,
	// a query.
	key string
	// target identifies what the call works on, to tell whether a later
	// call on the same thing succeeded: a path, or a command's first
	// pipeline stage.
	target string
	files  []fileTouch
	res    *result
	// errs caches errors(): the result's lines that report a failure; nil
	// until worked out.
	errs []errLine
	// words caches commandWords; nil until worked out.
	words []string
	// rare holds what few calls have (nil for most): a window holds a
	// call per tool call, so every word of call counts.
	rare    *callRare
	part    int32
	exec    bool // runs a command (as opposed to reading or editing a file directly)
	mutates bool // edits, creates or deletes files
	prose   bool // the key is prose (a question, a plan), not a name
}

// callRare is the part of a call that only edits and calls given a
// directory have.
type callRare struct {
	// argDir is the directory a workdir or cwd argument names (see dir).
	argDir  string
	added   []string
	removed []string // lines an edit took out, to tell changed lines from new ones
}

// more returns c.rare, made if need be.
func (c *call) more() *callRare {
	if c.rare == nil {
		c.rare = &callRare{}
	}
	return c.rare
}

// added returns the lines an edit added.
func (c *call) added() []string {
	if c.rare == nil {
		return nil
	}
	return c.rare.added
}

// removed returns the lines an edit took out.
func (c *call) removed() []string {
	if c.rare == nil {
		return nil
	}
	return c.rare.removed
}

// setLines sets the lines an edit added and took out.
func (c *call) setLines(added, removed []string) {
	if added == nil && removed == nil && c.rare == nil {
		return
	}
	r := c.more()
	r.added, r.removed = added, removed
}

// argDir returns the directory a workdir or cwd argument names.
func (c *call) argDir() string {
	if c.rare == nil {
		return ""
	}
	return c.rare.argDir
}

// callArgs are a call's arguments, decoded: args, or argRaw when they are
// not a JSON object.
type callArgs struct {
	args   map[string]any
	argRaw string
}

// result is a tool's answer to one call.
type result struct {
	msg     int
	text    string // without wrappers such as <returncode> or Codex's JSON envelope
	isError bool
	exit    int
	hasExit bool
	// ack marks an output the same tool gave word for word to other calls
	// too: an acknowledgement ("Todos have been modified successfully"),
	// not news about this call.
	ack bool
}

// failed reports whether the result says the call failed.
func (r *result) failed() bool {
	return r != nil && (r.isError || r.hasExit && r.exit != 0)
}

// Argument names, in the order they are preferred as a call's key argument.
var (
	commandKeys = []string{"command", "cmd", "commands", "script", "code", "shell_command"}
	pathKeys    = []string{"file_path", "path", "filePath", "filepath", "file", "filename", "notebook_path", "target_file", "absolute_path", "relative_path", "dir_path", "directory", "dir", "workdir", "cwd"}
	urlKeys     = []string{"url", "uri", "href"}
	queryKeys   = []string{"query", "pattern", "q", "search", "regex", "search_query", "glob", "keyword"}
	proseKeys   = []string{"question", "questions", "description", "prompt", "task", "message", "text", "title", "explanation"}
	editKeys    = []string{"new_string", "new_str", "content", "file_text", "contents", "new_content", "replacement", "insert_text", "code_edit", "edits", "input", "patch"}
)

// decodeArgs parses a call's arguments: a JSON object becomes a map; any
// other value is kept as text.
func decodeArgs(raw json.RawMessage) (map[string]any, string) {
	if len(raw) == 0 {
		return nil, ""
	}
	// Shared: the arguments are never modified, and their strings are kept.
	v, err := jsonscan.DecodeShared(raw)
	if err != nil {
		return nil, string(raw)
	}
	switch x := v.(type) {
	case map[string]any:
		return x, ""
	case string:
		// Some formats double-encode arguments.
		if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") {
			if m, err := jsonscan.Decode(t); err == nil {
				if m, ok := m.(map[string]any); ok {
					return m, ""
				}
			}
		}
		return nil, x
	case nil:
		return nil, ""
	}
	return nil, string(raw)
}

func argString(args map[string]any, key string) string {
	switch v := args[key].(type) {
	case string:
		return v
	case []any:
		return joinCommand(v)
	}
	return ""
}

// joinCommand turns an argv array into a command line. Codex wraps shell
// commands as ["bash", "-lc", "…"]: the script is what the agent wrote.
func joinCommand(v []any) string {
	parts := make([]string, 0, len(v))
	for _, p := range v {
		s, ok := p.(string)
		if !ok {
			return ""
		}
		parts = append(parts, s)
	}
	if n := len(parts); n >= 3 && isShell(parts[0]) && (parts[n-2] == "-lc" || parts[n-2] == "-c" || parts[n-2] == "-l") {
		return parts[n-1]
	}
	return strings.Join(parts, " ")
}

func isShell(s string) bool {
	if k := strings.LastIndexByte(s, '/'); k >= 0 {
		s = s[k+1:]
	}
	switch s {
	case "bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell", "cmd", "cmd.exe":
		return true
	}
	return false
}

func firstArg(args map[string]any, keys []string) (string, string) {
	for _, k := range keys {
		if s := argString(args, k); strings.TrimSpace(s) != "" {
			return k, s
		}
	}
	return "", ""
}

// describe fills in the call's key argument, target and the files it
// touches, from its name and arguments.
func (c *call) describe() {
	lname := strings.ToLower(c.name)
	_, cmd := firstArg(c.a.args, commandKeys)
	_, path := firstArg(c.a.args, pathKeys[:len(pathKeys)-2]) // workdir and cwd are context, not targets
	_, url := firstArg(c.a.args, urlKeys)
	_, query := firstArg(c.a.args, queryKeys)

	// A "command" that is a single word next to a path is a sub-command of
	// an editor tool (format.EditorOp).
	if cmd != "" && path != "" && !strings.ContainsAny(strings.TrimSpace(cmd), " \n") {
		c.key = cmd + " " + path
		c.target = path
		op := c.kindOp()
		if c.kind == "" {
			op = editorOp(cmd, lname)
		}
		c.files = append(c.files, fileTouch{path, op})
		c.mutates = op >= opEdit
		c.setLines(addedLines(c.a.args), removedLines(c.a.args))
		return
	}
	switch {
	case cmd != "":
		c.exec = true
		c.key = cmd
		c.target = commandTarget(cmd)
		c.files = shellFiles(cmd)
		for _, f := range c.files {
			if f.op >= opEdit {
				c.mutates = true
			}
		}
		if p, ok := format.PatchOf(cmd); ok && len(p.Files) > 0 {
			c.mutates = true
			c.setLines(patchAdded(p), patchRemoved(p))
			c.target = p.Files[0].Path
		}
		c.lineEdit(cmd)
	case path != "":
		op := c.kindOp()
		if c.kind == "" {
			op = toolOp(lname, c.a.args)
		}
		c.key = path
		c.target = path
		if query != "" {
			c.key = strconv.Quote(query) + " in " + path
			op = opMention
		}
		c.files = append(c.files, fileTouch{path, op})
		c.mutates = op >= opEdit
		if c.mutates {
			c.setLines(addedLines(c.a.args), removedLines(c.a.args))
		}
	case url != "":
		c.key = url
		c.target = url
	case query != "":
		c.key = query
		c.target = lname + " " + query
	default:
		if c.patch(argString(c.a.args, "input")) || c.a.argRaw != "" && c.patch(c.a.argRaw) {
			break
		}
		c.key, c.prose = proseArg(c.a.args, c.a.argRaw), true
		if n, done := todoCounts(c.a.args); n > 0 {
			c.key, c.prose = strconv.Itoa(n)+" items, "+strconv.Itoa(done)+" done", false
		}
		c.target = lname + " " + c.key
	}
	// Other path-like arguments (a grep's search path, MultiEdit's edits)
	// are mentions.
	for _, k := range pathKeys {
		if k == "workdir" || k == "cwd" {
			continue
		}
		if p := argString(c.a.args, k); p != "" && p != path {
			c.files = append(c.files, fileTouch{p, opMention})
		}
	}
}

// patch describes a call whose argument text is a patch envelope
// (format.PatchOf): the files its headers name, the first its key and
// target, and its lines. It reports false, changing nothing, when text
// is not one.
func (c *call) patch(text string) bool {
	p, ok := format.PatchOf(text)
	if !ok {
		return false
	}
	c.files = patchFiles(p)
	c.setLines(patchAdded(p), patchRemoved(p))
	c.mutates = len(c.files) > 0
	if len(c.files) > 0 {
		c.key, c.target = c.files[0].path, c.files[0].path
	}
	return true
}

// lineEdit reads a line editor command (format.LineEditOf): it edits the
// open file, which the editor's answer names (format.OpenFileOf).
func (c *call) lineEdit(cmd string) {
	lines, ok := format.LineEditOf(cmd)
	if !ok {
		return
	}
	c.mutates = true
	for _, l := range lines {
		if t := strings.TrimSpace(l); meaningfulCode(t) && !contains(c.added(), t) {
			c.more().added = append(c.added(), t)
		}
	}
	if c.res == nil {
		return
	}
	if p, ok := format.OpenFileOf(c.res.text); ok {
		c.files = append(c.files, fileTouch{p, opEdit})
		c.target = p
	}
}

// kindOp is what a tagged call does to the file it works on: a read
// reads it; a write edits it when its arguments hold the text replaced (or
// a patch), else creates it (whole contents); a search, a listing or
// anything else only names it.
func (c *call) kindOp() fileOp {
	switch c.kind {
	case compact.ToolRead:
		return opRead
	case compact.ToolWrite:
		for _, k := range []string{"old_string", "old_str", "old_content", "search", "edits", "patch", "input"} {
			if _, ok := c.a.args[k]; ok {
				return opEdit
			}
		}
		return opCreate
	}
	return opMention
}

// editorOp maps an editor tool's sub-command to what it does to the file
// (format.EditorOp), else guesses from the tool's name.
func editorOp(sub, tool string) fileOp {
	if op := format.EditorOp(sub); op != format.FileUnknown {
		return opOf(op)
	}
	return toolOp(tool, nil)
}

// opOf is the fileOp of a format.FileOp.
func opOf(op format.FileOp) fileOp {
	switch op {
	case format.FileRead:
		return opRead
	case format.FileChanged:
		return opEdit
	case format.FileCreated:
		return opCreate
	case format.FileDeleted:
		return opDelete
	}
	return opMention
}

// toolOp guesses what a file tool does from its name (Read, Edit, Write,
// MultiEdit, NotebookEdit, read_file, write_to_file, …).
func toolOp(lname string, args map[string]any) fileOp {
	switch {
	case strings.Contains(lname, "delete") || strings.Contains(lname, "remove"):
		return opDelete
	case strings.Contains(lname, "edit") || strings.Contains(lname, "replace") || strings.Contains(lname, "patch") || strings.Contains(lname, "insert"):
		return opEdit
	case strings.Contains(lname, "write") || strings.Contains(lname, "create") || strings.Contains(lname, "save"):
		return opCreate
	case strings.Contains(lname, "read") || strings.Contains(lname, "view") || strings.Contains(lname, "open") || strings.Contains(lname, "cat"):
		return opRead
	}
	for _, k := range editKeys {
		if _, ok := args[k]; ok {
			return opEdit
		}
	}
	return opMention
}

// proseArg picks a display value for a call with no command, path, URL or
// query: a question, a description, or the first string argument in key
// order (sorted, so the choice never depends on map order).
func proseArg(args map[string]any, raw string) string {
	if raw != "" {
		return raw
	}
	for _, k := range proseKeys {
		switch v := args[k].(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return v
			}
		case []any:
			if s := firstString(v); s != "" {
				return s
			}
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s, ok := args[k].(string); ok && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// firstString finds the first string in a list of values or objects (for
// AskUserQuestion's questions: [{"question": …}]).
func firstString(v []any) string {
	for _, e := range v {
		switch x := e.(type) {
		case string:
			return x
		case map[string]any:
			for _, k := range proseKeys {
				if s, ok := x[k].(string); ok && s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// addedLines returns the lines an edit call writes that were not there
// before: new_string lines missing from old_string, or a written file's
// first lines. They show what an edit did, in the edit's own words.
func addedLines(args map[string]any) []string {
	_, newText := firstArg(args, editKeys)
	if newText == "" {
		if edits, ok := args["edits"].([]any); ok {
			var out []string
			for _, e := range edits {
				if m, ok := e.(map[string]any); ok {
					out = append(out, addedLines(m)...)
				}
			}
			return out
		}
		return nil
	}
	old := map[string]bool{}
	for _, k := range []string{"old_string", "old_str", "old_content", "search"} {
		for _, l := range strings.Split(argString(args, k), "\n") {
			old[strings.TrimSpace(l)] = true
		}
	}
	var out []string
	for _, l := range strings.Split(newText, "\n") {
		t := strings.TrimSpace(l)
		if old[t] || !meaningfulCode(t) {
			continue
		}
		old[t] = true // once
		out = append(out, t)
	}
	return out
}

// meaningfulCode rejects lines that say nothing on their own: blank lines,
// lone brackets, bare closing tags.
func meaningfulCode(t string) bool {
	if len(t) < 4 {
		return false
	}
	core := strings.Trim(t, "{}()[];,<>/ \t")
	return len(core) >= 3
}

// commandTarget is what a command works on, for matching a failure with a
// later success: its first pipeline stage without a leading "cd dir &&".
func commandTarget(cmd string) string {
	cmd = strings.TrimSpace(stripCD(cmd))
	if k := strings.IndexAny(cmd, "|;\n"); k >= 0 {
		cmd = cmd[:k]
	}
	if k := strings.Index(cmd, "&&"); k >= 0 {
		cmd = cmd[:k]
	}
	if k := strings.Index(cmd, " 2>"); k >= 0 {
		cmd = cmd[:k]
	}
	return strings.Join(strings.Fields(cmd), " ")
}

// stripCD removes a leading "cd <dir> &&": the working directory is noted
// once, not on every command.
func stripCD(cmd string) string {
	t := strings.TrimSpace(cmd)
	for strings.HasPrefix(t, "cd ") {
		k := strings.Index(t, "&&")
		nl := strings.IndexByte(t, '\n')
		if k < 0 || nl >= 0 && nl < k {
			break
		}
		t = strings.TrimSpace(t[k+2:])
	}
	return t
}

// cdDir returns the directory of a leading "cd <dir> &&", or "".
func cdDir(cmd string) string {
	t := strings.TrimSpace(cmd)
	if !strings.HasPrefix(t, "cd ") {
		return ""
	}
	k := strings.Index(t, "&&")
	if k < 0 {
		return ""
	}
	d := strings.TrimSpace(t[3:k])
	if strings.ContainsAny(d, " \n;|") {
		return ""
	}
	return d
}

// shellFiles reads a shell command for the files it reads, writes and
// removes: cat/head/sed -n read; sed -i edits; > and tee write; cp, mv,
// touch and mkdir create; rm deletes. Heredoc bodies are skipped. Anything
// else path-like in the command is a mention.
func shellFiles(cmd string) []fileTouch {
	var out []fileTouch
	add := func(p string, op fileOp) {
		p = strings.Trim(p, `"'`)
		if p == "" || p == "-" || p == "/dev/null" || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "$") {
			return
		}
		out = append(out, fileTouch{p, op})
	}
	shellSegments(cmd, func(seg string) {
		segmentFiles(shellWords(seg), add)
	})
	return out
}

// segmentFiles classifies the words of one simple command.
func segmentFiles(words []string, add func(string, fileOp)) {
	// Redirections first: "> f" and ">> f" write f.
	var args []string
	for j := 0; j < len(words); j++ {
		w := words[j]
		switch {
		case w == ">" || w == ">>" || w == "1>" || w == "&>":
			if j+1 < len(words) {
				add(words[j+1], map[bool]fileOp{true: opEdit, false: opCreate}[w == ">>"])
				j++
			}
		case strings.HasPrefix(w, ">>") && len(w) > 2:
			add(w[2:], opEdit)
		case strings.HasPrefix(w, ">") && len(w) > 1 && w[1] != '&':
			add(w[1:], opCreate)
		case w == "<" || w == "2>" || w == "2>>":
			j++
		case strings.HasPrefix(w, "<<") || strings.HasPrefix(w, "2>"):
		default:
			args = append(args, w)
		}
	}
	// Skip environment assignments and sudo.
	for len(args) > 0 && (strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "-") || args[0] == "sudo" || args[0] == "time" || args[0] == "env") {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	prog := args[0]
	if k := strings.LastIndexByte(prog, '/'); k >= 0 {
		prog = prog[k+1:]
	}
	operands := func() []string {
		var ops []string
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				ops = append(ops, a)
			}
		}
		return ops
	}
	pathish := func(a string) bool { return isPath(a) || strings.Contains(a, "/") || strings.Contains(a, ".") }
	if ac, ok := format.ShellCommandOf(prog); ok && ac.Op != format.FileUnknown {
		// An agent's own editor command (format.ShellCommandOf).
		ops := operands()
		if ac.FirstOnly {
			if len(ops) > 0 && pathish(ops[0]) {
				add(ops[0], opOf(ac.Op))
			}
			return
		}
		for _, a := range ops {
			add(a, opOf(ac.Op))
		}
		return
	}
	switch prog {
	case "cat", "head", "tail", "less", "more", "nl", "bat", "wc", "view", "type", "xxd", "hexdump", "stat", "file", "jq":
		for _, a := range operands() {
			if pathish(a) {
				add(a, opRead)
			}
		}
	case "sed", "perl":
		inPlace := false
		for _, a := range args[1:] {
			if a == "-i" || strings.HasPrefix(a, "-i") || a == "--in-place" || strings.HasPrefix(a, "-pi") {
				inPlace = true
			}
		}
		ops := operands()
		if len(ops) > 1 {
			op := opRead
			if inPlace {
				op = opEdit
			}
			for _, a := range ops[1:] {
				if pathish(a) {
					add(a, op)
				}
			}
		}
	case "tee":
		for _, a := range operands() {
			add(a, opCreate)
		}
	case "touch", "mkdir":
		for _, a := range operands() {
			add(a, opCreate)
		}
	case "cp", "install", "ln":
		if ops := operands(); len(ops) >= 2 {
			for _, a := range ops[:len(ops)-1] {
				add(a, opRead)
			}
			add(ops[len(ops)-1], opCreate)
		}
	case "mv":
		if ops := operands(); len(ops) >= 2 {
			for _, a := range ops[:len(ops)-1] {
				add(a, opDelete)
			}
			add(ops[len(ops)-1], opCreate)
		}
	case "rm", "rmdir", "unlink":
		for _, a := range operands() {
			add(a, opDelete)
		}
	case "grep", "egrep", "fgrep", "rg", "ag", "ack":
		// Searches: the first operand is the pattern ("db\.sql" is no
		// file), unless an option gave it; the rest are where to look.
		var ops []string
		given := false // the pattern came with an option
		for j := 1; j < len(args); j++ {
			switch a := args[j]; {
			case a == "-e" || a == "-f" || a == "--regexp" || a == "--file":
				given = true
				j++
			case strings.HasPrefix(a, "--regexp=") || strings.HasPrefix(a, "--file="):
				given = true
			case searchValueOption[a]:
				j++ // "-g '*.ts'", "-A 3": the option's value
			case !strings.HasPrefix(a, "-"):
				ops = append(ops, a)
			}
		}
		if len(ops) > 0 && !given {
			ops = ops[1:]
		}
		for _, a := range ops {
			if p, _, ok := pathRef(strings.Trim(a, `"'`)); ok {
				add(p, opMention)
			}
		}
	default:
		for _, a := range args[1:] {
			a = strings.TrimLeft(a, "-")
			if k := strings.IndexByte(a, '='); k >= 0 {
				a = a[k+1:]
			}
			if p, _, ok := pathRef(strings.Trim(a, `"'`)); ok {
				add(p, opMention)
			}
		}
	}
}

// searchValueOption lists the options of grep-like searches (grep, rg,
// ag, ack) whose value is the next word: context lines, globs, file
// types, counts. Example: rg -g '*.go' -A 3 NewClient internal/.
var searchValueOption = map[string]bool{
	"-A": true, "-B": true, "-C": true, "-m": true, "-g": true, "-t": true, "-T": true, "-d": true, "-D": true,
	"--glob": true, "--type": true, "--type-not": true, "--include": true, "--exclude": true, "--exclude-dir": true,
	"--max-count": true, "--context": true, "--after-context": true, "--before-context": true,
}

// heredocTerminator returns the word that ends a heredoc opened on line
// ("<<EOF", "<< 'EOF'", "<<-\"END\""), or "".
func heredocTerminator(line string) string {
	k := strings.Index(line, "<<")
	if k < 0 || strings.HasPrefix(line[k:], "<<<") {
		return ""
	}
	rest := strings.TrimLeft(line[k+2:], "-~ ")
	rest = strings.TrimLeft(rest, `'"`)
	end := 0
	for end < len(rest) && (isLetterOrDigit(rest[end]) || rest[end] == '_') {
		end++
	}
	return rest[:end]
}

// shellSegments calls fn with every simple command of a shell script:
// each line split at &&, ||, ; and | outside quotes, heredoc bodies
// skipped. It is the one walk over commands that both the files a command
// touches (shellFiles) and the tests and installs it runs (commandKinds)
// are read from.
func shellSegments(script string, fn func(segment string)) {
	lines := strings.Split(script, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if term := heredocTerminator(line); term != "" {
			// Skip the body up to its terminator.
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != term {
				i++
			}
			i++
		}
		for _, seg := range splitSegments(line) {
			fn(seg)
		}
	}
}

// splitSegments splits a command line at &&, ||, ; and |, outside quotes.
func splitSegments(line string) []string {
	var segs []string
	start := 0
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '|' || c == '&' && i+1 < len(line) && line[i+1] == '&':
			segs = append(segs, line[start:i])
			if i+1 < len(line) && (line[i+1] == '&' || line[i+1] == '|') {
				i++
			}
			start = i + 1
		}
	}
	return append(segs, line[start:])
}

// shellWords splits a simple command into words, honouring quotes. A
// word without quotes is a piece of s, not a copy.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	var quote byte
	start := -1     // where the current word starts
	copied := false // the word had quotes, so it is built in cur
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			if start < 0 {
				start = i
			}
			if !copied {
				cur.Reset()
				cur.WriteString(s[start:i])
				copied = true
			}
			quote = c
		case c == ' ' || c == '\t':
			if start >= 0 {
				if copied {
					words = append(words, cur.String())
				} else {
					words = append(words, s[start:i])
				}
				start, copied = -1, false
			}
		default:
			if start < 0 {
				start = i
			}
			if copied {
				cur.WriteByte(c)
			}
		}
	}
	if start >= 0 {
		if copied {
			words = append(words, cur.String())
		} else {
			words = append(words, s[start:])
		}
	}
	return words
}

// patchFiles returns the files a patch's headers name.
func patchFiles(p format.Patch) []fileTouch {
	var out []fileTouch
	for _, f := range p.Files {
		out = append(out, fileTouch{f.Path, opOf(f.Op)})
	}
	return out
}

// patchAdded returns the meaningful lines a patch adds, once each, leaving
// out lines it also removes (moved, not new).
func patchAdded(p format.Patch) []string {
	var out []string
	seen := map[string]bool{}
	removed := map[string]bool{}
	for _, t := range p.Removed {
		removed[t] = true
	}
	for _, t := range p.Added {
		if removed[t] || seen[t] || !meaningfulCode(t) {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// todoCounts counts the items of a todo list or plan argument and how many
// are done.
func todoCounts(args map[string]any) (n, done int) {
	for _, key := range []string{"todos", "plan", "steps", "tasks", "items"} {
		list, ok := args[key].([]any)
		if !ok {
			continue
		}
		for _, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if st, ok := m["status"].(string); ok {
				n++
				if st == "completed" || st == "done" || st == "complete" {
					done++
				}
			}
		}
		if n > 0 {
			return n, done
		}
	}
	return 0, 0
}

// removedLines returns the trimmed lines an edit replaces.
func removedLines(args map[string]any) []string {
	var out []string
	for _, k := range []string{"old_string", "old_str", "old_content", "search"} {
		for _, l := range strings.Split(argString(args, k), "\n") {
			if t := strings.TrimSpace(l); meaningfulCode(t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// patchRemoved returns the meaningful lines a patch removes.
func patchRemoved(p format.Patch) []string {
	var out []string
	for _, t := range p.Removed {
		if meaningfulCode(t) {
			out = append(out, t)
		}
	}
	return out
}

// pickAdded chooses up to n added lines to show, in their order: lines
// that change a removed line and declarations first, then lines with
// literals; imports and comments last.
func pickAdded(added, removed []string, n int) []string {
	if len(added) <= n {
		return added
	}
	type cand struct {
		line  string
		score int
		pos   int
	}
	cands := make([]cand, len(added))
	for i, l := range added {
		cands[i] = cand{l, addedScore(l, removed), i}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	cands = cands[:n]
	sort.Slice(cands, func(i, j int) bool { return cands[i].pos < cands[j].pos })
	out := make([]string, n)
	for i, c := range cands {
		out[i] = c.line
	}
	return out
}

func addedScore(l string, removed []string) int {
	score := 0
	for _, r := range removed {
		if similar(l, r) {
			score += 2
			break
		}
	}
	low := strings.ToLower(l)
	for _, p := range []string{"func ", "def ", "class ", "function ", "export ", "const ", "let ", "var ", "type ",
		"interface ", "fn ", "pub ", "impl ", "it(", "test(", "describe(", "public ", "private ", "static ", "async "} {
		if strings.HasPrefix(low, p) {
			score += 2
			break
		}
	}
	if strings.ContainsAny(l, "\"'`") {
		score++
	}
	for _, p := range []string{"import ", "from ", "#include", "require(", "use ", "package "} {
		if strings.HasPrefix(low, p) {
			score -= 2
			break
		}
	}
	if strings.HasPrefix(l, "//") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "*") || strings.HasPrefix(l, "/*") {
		score--
	}
	return score
}

// similar reports two lines that share a long common prefix: one is the
// other, edited.
func similar(a, b string) bool {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n >= 6 && n*5 >= min(len(a), len(b))*3
}

// dir returns the directory the call ran in: its workdir or cwd argument,
// or a leading "cd dir &&" of its command.
func (c *call) dir() string {
	if d := c.argDir(); d != "" {
		return d
	}
	if c.exec {
		return cdDir(c.key)
	}
	return ""
}

// dirArg returns the directory a workdir or cwd argument of the call
// names (workdir first).
func (c *call) dirArg() string {
	for _, k := range []string{"workdir", "cwd"} {
		if s := argString(c.a.args, k); s != "" {
			return s
		}
	}
	return ""
}

// resolve makes a relative path the call names absolute, against the
// directory the call ran in, so that the same file named from different
// directories is one file.
func (c *call) resolve(p string) string {
	d := c.dir()
	if d == "" || p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") ||
		len(p) > 1 && p[1] == ':' || !strings.HasPrefix(d, "/") {
		return p
	}
	return path.Join(d, p)
}
