package sample

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// workspace is the project the session works on: its files, changed by the
// session's edits, so that every read, search and diff shows what the
// earlier calls made of them.
type workspace struct {
	files map[string]string
	orig  map[string]string // the files as the session found them (git's HEAD)
}

func newWorkspace(files map[string]string) *workspace {
	orig := make(map[string]string, len(files))
	for k, v := range files {
		orig[k] = v
	}
	return &workspace{files: files, orig: orig}
}

func (w *workspace) names() []string {
	names := make([]string, 0, len(w.files))
	for n := range w.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// read returns lines from..from+n-1 of a file (all of it when from is 0)
// and the file's number of lines.
func (w *workspace) read(name string, from, n int) (string, int) {
	body, ok := w.files[name]
	if !ok {
		panic("sample: read of a missing file " + name)
	}
	lines := splitLines(body)
	if from == 0 {
		return body, len(lines)
	}
	end := min(len(lines), from-1+n)
	return strings.Join(lines[from-1:end], "\n") + "\n", len(lines)
}

// edit replaces the one occurrence of old in a file with new and returns
// the file before and after and the change as hunks with three lines of
// context. An old that is missing or not unique is a bug of the story.
func (w *workspace) edit(name, old, new string) (before, after string, hunks []Hunk) {
	before = w.files[name]
	if strings.Count(before, old) != 1 {
		panic(fmt.Sprintf("sample: edit of %s: %d occurrences of %q", name, strings.Count(before, old), old))
	}
	after = strings.Replace(before, old, new, 1)
	w.files[name] = after
	return before, after, diffLines(before, after)
}

// write creates a file.
func (w *workspace) write(name, content string) []Hunk {
	if _, ok := w.files[name]; ok {
		panic("sample: write over an existing file " + name)
	}
	w.files[name] = content
	return diffLines("", content)
}

// search returns "path:line:text" for every line of the files under paths
// matching pattern, as rg -n prints them.
func (w *workspace) search(pattern string, paths []string) string {
	re := regexp.MustCompile(pattern)
	var b strings.Builder
	for _, name := range w.names() {
		if !under(name, paths) {
			continue
		}
		for i, l := range splitLines(w.files[name]) {
			if re.MatchString(l) {
				fmt.Fprintf(&b, "%s:%d:%s\n", name, i+1, l)
			}
		}
	}
	return b.String()
}

// find returns the files matching a glob ("**/" matches any directory
// prefix), one per line.
func (w *workspace) find(glob string) string {
	var b strings.Builder
	for _, name := range w.names() {
		ok, _ := path.Match(glob, name)
		if rest, found := strings.CutPrefix(glob, "**/"); found && !ok {
			ok, _ = path.Match(rest, path.Base(name))
		}
		if ok {
			b.WriteString(name + "\n")
		}
	}
	return b.String()
}

func under(name string, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, p := range paths {
		if name == p || strings.HasPrefix(name, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// splitLines splits a file into lines without their newlines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines returns the change from a to b as unified-diff hunks with
// three lines of context, from a longest-common-subsequence line diff (the
// files are small).
func diffLines(a, b string) []Hunk {
	al, bl := splitLines(a), splitLines(b)
	ops := lineOps(al, bl)
	var hunks []Hunk
	const context = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before the change to context lines
		// after the last change that is within 2*context of the next.
		start := max(0, i-context)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*context {
				break
			}
		}
		end = min(len(ops), end+1+context)
		h := Hunk{OldStart: ops[start].a + 1, NewStart: ops[start].b + 1}
		for _, o := range ops[start:end] {
			h.Lines = append(h.Lines, string(o.kind)+o.text)
			if o.kind != '+' {
				h.OldLines++
			}
			if o.kind != '-' {
				h.NewLines++
			}
		}
		if h.OldLines == 0 {
			h.OldStart--
		}
		if h.NewLines == 0 {
			h.NewStart--
		}
		hunks = append(hunks, h)
		i = end
	}
	return hunks
}

// lineOp is one line of a line diff: kept (' '), removed ('-') or added
// ('+'), with its index in a and b.
type lineOp struct {
	kind byte
	text string
	a, b int
}

func lineOps(a, b []string) []lineOp {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i], i, j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, lineOp{'-', a[i], i, j}) // git lists removals first
			i++
		default:
			ops = append(ops, lineOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}

// diffStat counts the lines added and removed from a to b.
func diffStat(a, b string) (ins, del int) {
	for _, o := range lineOps(splitLines(a), splitLines(b)) {
		switch o.kind {
		case '+':
			ins++
		case '-':
			del++
		}
	}
	return ins, del
}
