package sample

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// What the renderers share: ids, times, JSON as the agents write it, and
// each tool's text as a generic tool (the API formats) prints it.

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ids draws the identifiers of one rendering from the session's seed, so
// that each format's ids are stable whatever the other formats draw.
type ids struct{ r *rand.Rand }

func newIDs(s *Session, format string) ids {
	var h uint64 = 14695981039346656037
	for _, c := range format {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return ids{rand.New(rand.NewPCG(s.Seed, h))}
}

func (i ids) str(alphabet string, n int) string { return randString(i.r, alphabet, n) }

// uuid is a random (version 4) UUID.
func (i ids) uuid() string {
	b := make([]byte, 16)
	for k := range b {
		b[k] = byte(i.r.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// uuidV7 is a time-ordered (version 7) UUID, as Codex names sessions.
func (i ids) uuidV7(t time.Time) string {
	b := make([]byte, 16)
	ms := uint64(t.UnixMilli())
	for k := range 6 {
		b[k] = byte(ms >> (40 - 8*k))
	}
	for k := 6; k < 16; k++ {
		b[k] = byte(i.r.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// marshal encodes v as compact JSON without HTML escaping, as the agents
// write their files.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// indent encodes v as indented JSON without HTML escaping, with a final
// newline.
func indent(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// obj is a JSON object that keeps its keys in the order given, as the
// agents' own writers do.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(f.k))
		b.WriteByte(':')
		b.Write(marshal(f.v))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// numbered prints file lines as cat -n does, from line from.
func numbered(text string, from int, sep string, width int) string {
	if from == 0 {
		from = 1
	}
	var b strings.Builder
	for i, l := range splitLines(text) {
		fmt.Fprintf(&b, "%*d%s%s\n", width, from+i, sep, l)
	}
	return b.String()
}

// shellText is a shell call's output as a generic tool returns it: the
// output, and the exit status when it is not zero.
func shellText(c *Call) string {
	if c.Exit != 0 {
		return c.Output + fmt.Sprintf("[exit status %d]\n", c.Exit)
	}
	if c.Output == "" {
		return "(no output)\n"
	}
	return c.Output
}

// apiResult is a call's result text in the API formats' generic tools.
func apiResult(c *Call) string {
	switch c.Tool {
	case ToolShell:
		return shellText(c)
	case ToolRead:
		return numbered(c.Output, c.From, "\t", 6)
	case ToolEdit:
		return "Edited " + c.Path + ":\n" + Diff(c.Path, c.Hunks)
	case ToolWrite:
		return fmt.Sprintf("Created %s (%d lines).\n", c.Path, len(splitLines(c.Content)))
	case ToolSearch, ToolFind:
		if c.Output == "" {
			return "No matches.\n"
		}
		return c.Output
	case ToolFetch:
		return c.Output
	case ToolPlan:
		return c.Output
	}
	panic("sample: unknown tool")
}

// apiTool is a call's generic tool name and input in the API formats.
func apiTool(c *Call) (string, obj) {
	switch c.Tool {
	case ToolShell:
		return "bash", obj{{"command", c.Command}}
	case ToolRead:
		if c.From > 0 {
			return "read_file", obj{{"path", c.Path}, {"start_line", c.From}, {"end_line", c.From + c.Lines - 1}}
		}
		return "read_file", obj{{"path", c.Path}}
	case ToolEdit:
		return "edit_file", obj{{"path", c.Path}, {"old_string", c.Old}, {"new_string", c.New}}
	case ToolWrite:
		return "write_file", obj{{"path", c.Path}, {"content", c.Content}}
	case ToolSearch:
		return "search", obj{{"pattern", c.Pattern}, {"paths", c.Paths}}
	case ToolFind:
		return "find_files", obj{{"glob", c.Glob}}
	case ToolFetch:
		return "fetch_url", obj{{"url", c.URL}, {"question", c.Prompt}}
	case ToolPlan:
		var items []obj
		for _, p := range c.Plan {
			items = append(items, obj{{"step", p.Step}, {"status", p.Status}})
		}
		return "update_plan", obj{{"plan", items}}
	}
	panic("sample: unknown tool")
}

// apiTools are the generic tools' definitions: name, description and the
// JSON Schema of the input.
var apiTools = []struct {
	name, desc string
	schema     obj
}{
	{"bash", "Run a shell command in the repository and return its output.", schema(obj{{"command", strProp("The command to run.")}}, "command")},
	{"read_file", "Read a file of the repository, whole or a range of lines.", schema(obj{
		{"path", strProp("Path relative to the repository root.")},
		{"start_line", intProp("First line to read (1-based).")},
		{"end_line", intProp("Last line to read.")}}, "path")},
	{"edit_file", "Replace one exact occurrence of old_string with new_string in a file.", schema(obj{
		{"path", strProp("Path relative to the repository root.")},
		{"old_string", strProp("The text to replace; must occur exactly once.")},
		{"new_string", strProp("The replacement text.")}}, "path", "old_string", "new_string")},
	{"write_file", "Create a new file with the given content.", schema(obj{
		{"path", strProp("Path relative to the repository root.")},
		{"content", strProp("The file's content.")}}, "path", "content")},
	{"search", "Search file contents with a regular expression; prints path:line:text.", schema(obj{
		{"pattern", strProp("An extended regular expression.")},
		{"paths", obj{{"type", "array"}, {"items", obj{{"type", "string"}}}, {"description", "Files or directories to search."}}}}, "pattern")},
	{"find_files", "List the files matching a glob.", schema(obj{{"glob", strProp("A glob such as **/*.py.")}}, "glob")},
	{"fetch_url", "Fetch a web page and answer a question about it.", schema(obj{
		{"url", strProp("The page's URL.")},
		{"question", strProp("What to look for on the page.")}}, "url")},
	{"update_plan", "Replace the task plan.", schema(obj{{"plan", obj{{"type", "array"}, {"items", schema(obj{
		{"step", strProp("What to do.")},
		{"status", obj{{"type", "string"}, {"enum", []string{"pending", "in_progress", "completed"}}}}}, "step", "status")}}}}, "plan")},
}

func schema(props obj, required ...string) obj {
	return obj{{"type", "object"}, {"properties", props}, {"required", required}}
}
func strProp(desc string) obj { return obj{{"type", "string"}, {"description", desc}} }
func intProp(desc string) obj { return obj{{"type", "integer"}, {"description", desc}} }
