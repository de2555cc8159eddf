package format

import (
	"strings"

	"github.com/compactkit/compact"
)

// Shell calls whose command is itself a read, a search, a listing or an
// edit take that kind (see the package doc, "Tags"). This file reads a
// command line far enough to tell: it splits it into simple commands the
// way a POSIX shell does (quotes, escapes, &&, ||, ;, |, newlines,
// redirections, heredocs), and classifies each by its program.

// shellWord is one word of a simple command, or an operator.
type shellWord struct {
	text string
	op   bool // an operator: && || ; | & newline, or a redirection (> >> < << 2> …)
}

// shellWords splits a command line into words and operators. Quotes are
// removed, escapes resolved; a heredoc's body is skipped (it is data, not
// commands) and its redirection kept as "<<". It never fails: an unclosed
// quote runs to the end.
func shellWords(cmd string) []shellWord {
	var out []shellWord
	var cur strings.Builder
	inWord := false
	var heredocs []string // terminators waiting for the end of the line
	flush := func() {
		if inWord {
			out = append(out, shellWord{text: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				cur.WriteString(cmd[i+1:])
				i = len(cmd)
				break
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			i += 1 + j
		case c == '"':
			inWord = true
			for i++; i < len(cmd) && cmd[i] != '"'; i++ {
				if cmd[i] == '\\' && i+1 < len(cmd) && strings.IndexByte("\"\\$`\n", cmd[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(cmd[i])
			}
		case c == '\\' && i+1 < len(cmd):
			i++
			if cmd[i] != '\n' {
				inWord = true
				cur.WriteByte(cmd[i])
			}
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			// A comment runs to the end of the line.
			for i+1 < len(cmd) && cmd[i+1] != '\n' {
				i++
			}
		case c == '\n':
			flush()
			out = append(out, shellWord{text: "\n", op: true})
			for _, term := range heredocs {
				i = skipHeredoc(cmd, i+1, term) - 1
			}
			heredocs = nil
		case c == '&' || c == '|' || c == ';':
			flush()
			op := string(c)
			if i+1 < len(cmd) && (cmd[i+1] == c || c == '|' && cmd[i+1] == '&') {
				op += string(cmd[i+1])
				i++
			}
			out = append(out, shellWord{text: op, op: true})
		case c == '>' || c == '<':
			// A redirection, with the file descriptor before it when the
			// word so far is one ("2>").
			fd := ""
			if inWord && isDigits(cur.String()) {
				fd = cur.String()
				cur.Reset()
				inWord = false
			}
			flush()
			op := fd + string(c)
			for i+1 < len(cmd) && (cmd[i+1] == c || cmd[i+1] == '&' || cmd[i+1] == '|' || c == '<' && cmd[i+1] == '-') {
				op += string(cmd[i+1])
				i++
			}
			out = append(out, shellWord{text: op, op: true})
			if strings.HasPrefix(op, "<<") && !strings.HasPrefix(op, "<<<") {
				// The next word is the terminator; the body starts on the
				// next line.
				j := i + 1
				for j < len(cmd) && (cmd[j] == ' ' || cmd[j] == '\t') {
					j++
				}
				k := j
				for k < len(cmd) && strings.IndexByte(" \t\n;&|<>", cmd[k]) < 0 {
					k++
				}
				term := strings.Trim(cmd[j:k], `'"\`)
				out = append(out, shellWord{text: term})
				heredocs = append(heredocs, term)
				i = k - 1
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// skipHeredoc returns the index just past the line that ends a heredoc
// (the terminator alone on its line, tabs allowed before it), or len(cmd).
func skipHeredoc(cmd string, i int, term string) int {
	for i < len(cmd) {
		end := strings.IndexByte(cmd[i:], '\n')
		line := cmd[i:]
		if end >= 0 {
			line = cmd[i : i+end]
		}
		if strings.TrimLeft(line, "\t") == term {
			if end < 0 {
				return len(cmd)
			}
			return i + end + 1
		}
		if end < 0 {
			return len(cmd)
		}
		i += end + 1
	}
	return len(cmd)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// simpleCommand is one program run: its words (environment assignments
// and wrappers like sudo removed) and the files its output is redirected
// to.
type simpleCommand struct {
	args []string
	out  []string // files written by > or >> (not /dev/null, not &N)
	in   bool     // reads a heredoc or a here-string
}

// pipeline is one or more simple commands joined by |.
type pipeline []simpleCommand

// shellPipelines splits words into the pipelines a command line runs in
// turn (joined by && || ; & or newlines).
func shellPipelines(words []shellWord) []pipeline {
	var out []pipeline
	var p pipeline
	var sc simpleCommand
	endCommand := func() {
		sc.args = stripWrappers(sc.args)
		if len(sc.args) > 0 || len(sc.out) > 0 {
			p = append(p, sc)
		}
		sc = simpleCommand{}
	}
	endPipeline := func() {
		endCommand()
		if len(p) > 0 {
			out = append(out, p)
		}
		p = nil
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !w.op {
			sc.args = append(sc.args, w.text)
			continue
		}
		switch t := strings.TrimLeft(w.text, "0123456789"); {
		case t == "|" || t == "|&":
			endCommand()
		case t == ">" || t == ">>" || t == ">|" || t == "&>" || t == "&>>":
			if i+1 < len(words) && !words[i+1].op {
				if f := words[i+1].text; f != "/dev/null" && f != "" {
					sc.out = append(sc.out, f)
				}
				i++
			}
		case t == ">&" || t == "<&" || t == "<":
			if i+1 < len(words) && !words[i+1].op {
				i++
			}
		case strings.HasPrefix(t, "<<"):
			sc.in = true
			if i+1 < len(words) && !words[i+1].op {
				i++
			}
		default: // && || ; & newline
			endPipeline()
		}
	}
	endPipeline()
	return out
}

// stripWrappers removes what runs a program rather than being one:
// environment assignments, sudo, env, time, nohup, command.
func stripWrappers(args []string) []string {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "sudo" || a == "env" || a == "time" || a == "nohup" || a == "command" || a == "exec":
			args = args[1:]
		case strings.Contains(a, "=") && !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "="):
			args = args[1:]
		default:
			return args
		}
	}
	return args
}

// commandKind classifies a shell command line: the kind of what it does
// when every program it runs does the same kind of thing (reading files,
// searching, listing, editing; changing directory and echoing a header
// between them count as nothing), and its target (the path, the pattern,
// the directory). Anything else is ToolShell, with no target: the caller
// uses the command.
func commandKind(cmd string) (compact.ToolKind, string) {
	cmd = strings.TrimSpace(cmd)
	if strings.HasPrefix(cmd, "apply_patch") || strings.HasPrefix(cmd, "applypatch") || strings.HasPrefix(cmd, "*** Begin Patch") {
		// Codex's patch tool, called through the shell.
		return compact.ToolWrite, patchTarget(cmd)
	}
	if first, _, _ := strings.Cut(cmd, "\n"); sweEditLine(first) {
		// SWE-agent's "edit N:M" (its replacement text follows up to
		// end_of_edit) edits the open file.
		return compact.ToolWrite, ""
	}
	kind, target := compact.ToolKind(""), ""
	for _, p := range shellPipelines(shellWords(cmd)) {
		k, t, ok := pipelineKind(p)
		switch {
		case !ok:
			return compact.ToolShell, ""
		case k == "":
			continue // cd, echo: nothing
		case kind == "":
			kind, target = k, t
		case kind != k:
			return compact.ToolShell, ""
		case target != t:
			target = "" // several files: the command says which
		}
	}
	if kind == "" {
		return compact.ToolShell, ""
	}
	return kind, target
}

// pipelineKind classifies a pipeline by its first command; the commands
// after it must only filter what it prints (head, grep, sort, …). ok is
// false when the pipeline runs something else.
func pipelineKind(p pipeline) (compact.ToolKind, string, bool) {
	k, t, ok := simpleKind(p[0])
	if !ok {
		return "", "", false
	}
	for _, sc := range p[1:] {
		name := ""
		if len(sc.args) > 0 {
			name = progName(sc.args[0])
		}
		switch {
		case name == "tee":
			// "… | tee file" writes what the pipeline prints.
			if ops := operands(sc.args[1:]); len(ops) > 0 {
				return compact.ToolWrite, ops[0], true
			}
		case !shellFilters[name]:
			return "", "", false
		case len(sc.out) > 0:
			return compact.ToolWrite, sc.out[0], true
		}
	}
	return k, t, true
}

// shellFilters are programs that only reshape what a pipeline prints.
var shellFilters = map[string]bool{
	"head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "sort": true,
	"uniq": true, "wc": true, "cut": true, "tr": true, "column": true, "nl": true, "less": true,
	"more": true, "cat": true, "awk": true, "sed": true, "jq": true, "fold": true, "fmt": true,
	"paste": true, "rev": true, "tac": true, "expand": true, "strings": true, "xxd": true,
}

// simpleKind classifies one program run. ok is false for a program that
// does something else (builds, tests, runs code); kind "" for one that
// does nothing a reader would count (cd, echo, true).
func simpleKind(sc simpleCommand) (compact.ToolKind, string, bool) {
	if len(sc.args) == 0 {
		if len(sc.out) > 0 { // "> file": truncates it
			return compact.ToolWrite, sc.out[0], true
		}
		return "", "", true
	}
	prog, args := progName(sc.args[0]), sc.args[1:]
	if len(sc.out) > 0 {
		// Output to a file: a write when the program only produces text
		// (a heredoc, an echo), a run otherwise (python x.py > out).
		switch prog {
		case "cat", "echo", "printf", "tee":
			return compact.ToolWrite, sc.out[0], true
		}
		return "", "", false
	}
	ops := operands(args)
	first := func() string {
		if len(ops) > 0 {
			return ops[0]
		}
		return ""
	}
	switch prog {
	case "cd", "pushd", "popd", "echo", "printf", "true", ":", "pwd", "clear", "export", "set", "source", ".":
		return "", "", true
	case "cat", "head", "tail", "less", "more", "nl", "bat", "batcat", "view":
		if len(ops) == 0 || prog == "tail" && hasFlag(args, "-f", "-F", "--follow") {
			return "", "", false // reads stdin, or follows a file: a run
		}
		return compact.ToolRead, first(), true
	case "sed":
		if hasFlagPrefix(args, "-i", "--in-place") {
			return compact.ToolWrite, last(ops), true
		}
		if len(ops) < 2 && !hasFlag(args, "-e", "-f") {
			return "", "", false // a filter over stdin
		}
		return compact.ToolRead, last(ops), true
	case "perl":
		if hasFlagPrefix(args, "-i", "-pi") {
			return compact.ToolWrite, last(ops), true
		}
		return "", "", false
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "ripgrep":
		return compact.ToolSearch, searchPattern(args), true
	case "git":
		switch first() {
		case "grep":
			return compact.ToolSearch, searchPattern(args[1:]), true
		case "ls-files":
			return compact.ToolList, second(ops), true
		case "apply":
			return compact.ToolWrite, second(ops), true
		}
		return "", "", false
	case "ls", "tree", "dir", "exa", "eza":
		return compact.ToolList, first(), true
	case "find", "fd", "fdfind", "locate":
		return compact.ToolList, first(), true
	case "touch", "mkdir", "rm", "rmdir", "unlink", "truncate":
		return compact.ToolWrite, first(), true
	case "cp", "mv", "install", "ln":
		return compact.ToolWrite, last(ops), true
	case "tee":
		return compact.ToolWrite, first(), true
	case "patch":
		return compact.ToolWrite, first(), true
	case "apply_patch", "applypatch":
		return compact.ToolWrite, "", true
	// SWE-agent's commands (its tools/ bundles), run in its shell.
	case "open", "goto", "scroll_up", "scroll_down":
		return compact.ToolRead, first(), true
	case "create":
		return compact.ToolWrite, first(), true
	case "search_dir", "search_file", "find_file":
		return compact.ToolSearch, first(), true
	}
	return "", "", false
}

// progName is a program's name without its directory.
func progName(s string) string {
	if k := strings.LastIndexByte(s, '/'); k >= 0 {
		return s[k+1:]
	}
	return s
}

// operands returns the arguments that are not options, nor the number an
// option takes ("-n 20"). Other option values are taken for operands;
// callers pick the operand they need by position where that matters.
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		if i > 0 && strings.HasPrefix(args[i-1], "-") && isDigits(a) {
			continue // an option's count ("-n 50", "-L 2")
		}
		out = append(out, a)
	}
	return out
}

func last(ops []string) string {
	if len(ops) == 0 {
		return ""
	}
	return ops[len(ops)-1]
}

func second(ops []string) string {
	if len(ops) < 2 {
		return ""
	}
	return ops[1]
}

func hasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if a == f {
				return true
			}
		}
	}
	return false
}

func hasFlagPrefix(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if strings.HasPrefix(a, f) {
				return true
			}
		}
	}
	return false
}

// searchPattern returns the pattern of a grep-like command: the value of
// -e (or --regexp), else its first operand.
func searchPattern(args []string) string {
	for i, a := range args {
		switch {
		case (a == "-e" || a == "--regexp") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--regexp="):
			return a[len("--regexp="):]
		}
	}
	// Options that take a value, so that value is not the pattern.
	valued := map[string]bool{"-A": true, "-B": true, "-C": true, "-m": true, "-g": true, "--glob": true,
		"-t": true, "--type": true, "--include": true, "--exclude": true, "-f": true, "--max-count": true,
		"--context": true, "-T": true, "--type-not": true, "-d": true, "--max-depth": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case valued[a]:
			i++
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			return a
		}
	}
	return ""
}

// sweEditLine recognises SWE-agent's "edit N:M" (and "edit N").
func sweEditLine(line string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "edit ")
	if !ok {
		return false
	}
	a, b, _ := strings.Cut(strings.TrimSpace(rest), ":")
	return isDigits(a) && (b == "" || isDigits(b))
}

// patchTarget returns the first file a patch in Codex's apply_patch
// format (or a unified diff) touches, or "".
func patchTarget(patch string) string {
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/", "+++ "} {
			if rest, ok := strings.CutPrefix(line, p); ok && rest != "/dev/null" {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}
