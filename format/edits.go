package format

import "strings"

// The edit tables: how each agent spells an edit to a file in a call's
// arguments, and how its tools answer with a file's contents. Layers above
// (fallback) ask these functions what an edit touched and never spell an
// agent's syntax themselves. edits_test.go has a test per table.

// FileOp is what an edit or an editor sub-command does to a file.
type FileOp uint8

// File operations. FileUnknown is the zero value: no table knows the edit.
const (
	FileUnknown FileOp = iota
	FileRead
	FileChanged
	FileCreated
	FileDeleted
)

// FileEdit is one file an edit names, with what the edit does to it.
type FileEdit struct {
	Path string
	Op   FileOp
}

// Patch is what a patch envelope holds: the files its headers name, in
// order, and its diff lines.
type Patch struct {
	Files []FileEdit
	// Added and Removed are the "+" and "-" lines of the patch, in order,
	// with the sign dropped and space trimmed ("+++" and "---" headers left
	// out); blank ones are kept, callers filter.
	Added, Removed []string
}

// patchBegin marks Codex's apply_patch envelope.
const patchBegin = "*** Begin Patch"

// patchHeaders is Codex's apply_patch envelope: each file header and what
// it does to the file. An example (invented):
//
//	*** Begin Patch
//	*** Update File: src/kettle.rs
//	@@ fn boil
//	-    heat(40)
//	+    heat(100)
//	*** Move to: src/boiler.rs
//	*** End Patch
var patchHeaders = []struct {
	prefix string
	op     FileOp
}{
	{"*** Add File: ", FileCreated},
	{"*** Update File: ", FileChanged},
	{"*** Delete File: ", FileDeleted},
	{"*** Move to: ", FileCreated},
}

// PatchOf reads text as a patch envelope (Codex's apply_patch, as a
// shell command's text or a tool's argument). ok is false when text is
// not one; a patch with no file header is ok with no Files.
func PatchOf(text string) (p Patch, ok bool) {
	if !strings.Contains(text, patchBegin) {
		return Patch{}, false
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++"):
			p.Added = append(p.Added, strings.TrimSpace(line[1:]))
		case strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---"):
			p.Removed = append(p.Removed, strings.TrimSpace(line[1:]))
		}
		line = strings.TrimSpace(line)
		for _, h := range patchHeaders {
			if strings.HasPrefix(line, h.prefix) {
				p.Files = append(p.Files, FileEdit{strings.TrimSpace(line[len(h.prefix):]), h.op})
			}
		}
	}
	return p, true
}

// SWE-agent's line editor: "edit 12:14" (or "edit 12"), the new lines,
// then lineEditEnd. An example (invented):
//
//	edit 7:8
//	    return celsius * 9 / 5 + 32
//	end_of_edit
const (
	lineEditVerb = "edit "
	lineEditEnd  = "end_of_edit"
)

// LineEditOf reads cmd as SWE-agent's line editor command and returns the
// lines it writes (as written, untrimmed). ok is false when cmd is not
// one. The command edits the open file, which the editor's answer names
// (OpenFileOf).
func LineEditOf(cmd string) (lines []string, ok bool) {
	first, body, ok := strings.Cut(strings.TrimSpace(cmd), "\n")
	if !ok || !strings.HasPrefix(first, lineEditVerb) || !lineRange(strings.TrimPrefix(first, lineEditVerb)) {
		return nil, false
	}
	body, _, _ = strings.Cut(body, lineEditEnd)
	return strings.Split(body, "\n"), true
}

// lineRange recognises "12:14" (and "12").
func lineRange(s string) bool {
	a, b, _ := strings.Cut(strings.TrimSpace(s), ":")
	return isDigits(a) && (b == "" || isDigits(b))
}

// openFileBanner opens SWE-agent's editor answer, naming the open file;
// an example (invented): "[File: /srv/kettle/temp.py (31 lines total)]".
const openFileBanner = "[File: "

// OpenFileOf returns the file SWE-agent's editor says is open in its
// answer (a result), and false when the answer names none.
func OpenFileOf(result string) (string, bool) {
	k := strings.Index(result, openFileBanner)
	if k < 0 {
		return "", false
	}
	p := result[k+len(openFileBanner):]
	if e := strings.Index(p, " ("); e > 0 && e < 1024 {
		return p[:e], true
	}
	return "", false
}

// strReplaceEditor is the sub-commands of the str_replace_editor tool
// (OpenHands, SWE-agent, Anthropic's text editor), given as its "command"
// argument next to a "path". An example (invented):
// {"command": "insert", "path": "/srv/kettle/temp.py", "insert_line": 3, "new_str": "…"}.
var strReplaceEditor = map[string]FileOp{
	"view":        FileRead,
	"create":      FileCreated,
	"str_replace": FileChanged,
	"insert":      FileChanged,
	"undo_edit":   FileChanged,
}

// editorVerbs is sub-commands other editor tools take in the same shape
// (a one-word "command" next to a "path"): {"command": "append", "path": "notes.md", …}.
var editorVerbs = map[string]FileOp{
	"read": FileRead, "cat": FileRead, "show": FileRead, "open": FileRead,
	"write": FileCreated,
	"edit":  FileChanged, "replace": FileChanged, "append": FileChanged, "patch": FileChanged,
	"delete": FileDeleted, "remove": FileDeleted, "rm": FileDeleted,
}

// EditorOp maps an editor tool's sub-command (case-insensitive) to what it
// does to the file; FileUnknown when no table knows it.
func EditorOp(sub string) FileOp {
	sub = strings.ToLower(sub)
	if op, ok := strReplaceEditor[sub]; ok {
		return op
	}
	return editorVerbs[sub]
}

// listingBanners are first lines that announce a file's contents shown
// with line numbers: str_replace_editor's view (OpenHands, and Claude
// Code's and mini-swe-agent's sessions that use it), e.g. (invented)
// "Here's the result of running `cat -n` on /srv/kettle/temp.py:".
var listingBanners = []string{
	"result of running `cat -n`",
}

// ListingBanner reports whether line announces a numbered file listing.
func ListingBanner(line string) bool {
	for _, b := range listingBanners {
		if strings.Contains(line, b) {
			return true
		}
	}
	return false
}

// lineNumberMarks are what an agent's file reader writes between a line
// number and the line: Claude Code's Read tool, e.g. (invented)
// "    12→	return celsius * 9 / 5 + 32". (cat -n's tab is no agent's.)
var lineNumberMarks = []string{
	"→",
}

// LineNumberMark returns the length of the agent's line-number mark that s
// (the text right after a line number) opens with, and 0 when it opens
// with none.
func LineNumberMark(s string) int {
	for _, m := range lineNumberMarks {
		if strings.HasPrefix(s, m) {
			return len(m)
		}
	}
	return 0
}

// ShellCommand is what an agent's own command, run in its shell as a
// command line's first word, does.
type ShellCommand struct {
	// Op is what the command does to the files its operands name;
	// FileUnknown when it names none.
	Op FileOp
	// FirstOnly says only the first operand is a file (the rest are a
	// line number or a directory).
	FirstOnly bool
	// Shows says its output shows a file's lines or search hits.
	Shows bool
}

// sweAgentCommands are SWE-agent's windowed editor, viewer and search
// commands (its tools/ bundles) as they appear in its shell. Examples
// (invented): "open src/kettle.py 40", "scroll_down",
// "create notes/plan.md", "search_dir boil src".
var sweAgentCommands = map[string]ShellCommand{
	"open":        {Op: FileRead, FirstOnly: true, Shows: true},
	"create":      {Op: FileCreated},
	"goto":        {Shows: true},
	"scroll_up":   {Shows: true},
	"scroll_down": {Shows: true},
	"search_dir":  {Shows: true},
	"search_file": {Shows: true},
	"find_file":   {Shows: true},
}

// ShellCommandOf returns what an agent's own command prog (a command
// line's first word, without its directory) does, and false when no
// agent's table has it.
func ShellCommandOf(prog string) (ShellCommand, bool) {
	c, ok := sweAgentCommands[prog]
	return c, ok
}
