// Package format reads and writes agent transcripts in the formats agents
// and APIs use, detecting the format from the content, never the file name.
//
// Readers return a compact.Transcript whose messages keep their source
// records, so that writing a transcript back in its own format reproduces
// every unchanged message byte for byte.
//
// # Tags
//
// Every reader tags what it reads with what its agent's conventions say,
// so that the layers above (fallback, compactor) never look at a tool's
// name or an output's wording. Tags are not content: Fingerprint leaves
// them out and writers never write them.
//
//   - ToolCall.Kind says what a call does (compact.ToolShell, ToolRead,
//     ToolWrite, ToolSearch, ToolList, ToolWeb, ToolPlan, ToolAgent, or
//     ToolOther for a tool that is none of these or that no table knows),
//     by the agent's tool table (tools.go: one table per agent, then one
//     of the names common frameworks use through the OpenAI, Anthropic and
//     Responses APIs).
//   - ToolCall.Target is what the call works on: the path for reads,
//     writes and listings (an editor tool's "path", a patch's first file),
//     the pattern or query for searches, the URL for fetches and the query
//     for web searches, the command for shell runs, the description for
//     subagents. SWE-agent's edits and scrolls work on the file its editor
//     has open: that file is their target. A target is at most 1 KB.
//   - A shell call whose command only reads, searches, lists or edits
//     files takes that kind: cat/head/tail/nl/sed -n read; grep/rg/ag/git
//     grep (and SWE-agent's search_dir, search_file, find_file) search;
//     ls/find/fd/tree list; sed -i, output redirected by cat/echo/printf
//     (heredoc writes), tee, rm/mv/cp/touch/mkdir, patch, git apply,
//     Codex's apply_patch and SWE-agent's "edit N:M" write. Changing
//     directory and echoing a header between such commands count as
//     nothing; a command that runs anything else (a build, a test, a
//     script), or mixes kinds, stays a shell run. Its target is the file,
//     pattern or directory when the command names one (the same one, if it
//     names several), and the command itself only when no better target
//     exists.
//   - Part.Failed marks a result that failed: IsError, a non-zero exit code
//     in the output's envelope (UnwrapOutput lists the envelopes), the
//     agent's own record of the failure (a Codex exec_command_end or
//     patch_apply_end event, an OpenHands error observation or exit code).
//     It is on tool-result parts, on the text of a tool message answering
//     by ToolCallIDs, and on a harness message reporting a command's
//     result (mini-swe-agent's observations).
//   - Part.Harness marks user-role text the agent's harness wrote
//     (reminders, caveats, slash-command wrappers, environment context,
//     observation templates), by one list of markers shared by every
//     reader (harnessMarkers), and every text part of a Synthetic message.
package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/compactkit/compact"
)

// Name identifies a transcript format.
type Name string

// The formats compact knows. Each is registered in formats.
const (
	OpenAIChat      Name = "openai"           // Chat Completions messages: a JSON array or {"messages": [...]}
	OpenAIChatJSONL Name = "openai-jsonl"     // Chat Completions messages, one per line
	OpenAIResponses Name = "openai-responses" // Responses API input/output items
	Anthropic       Name = "anthropic"        // Anthropic Messages request: {"system", "messages"}
	ClaudeCode      Name = "claude-code"      // Claude Code session JSONL (and its JSON exports)
	Codex           Name = "codex"            // Codex CLI rollout JSONL
	SWEAgent        Name = "swe-agent"        // SWE-agent .traj
	MiniSWEAgent    Name = "mini-swe-agent"   // mini-swe-agent .traj.json
	OpenHands       Name = "openhands"        // OpenHands event trajectories and evaluation output
	GeminiCLI       Name = "gemini-cli"       // Gemini CLI chat recordings
)

// Format is one transcript format: how to recognise it, read it and, where
// compact can, write it.
type Format struct {
	Name        Name
	Description string
	// Sniff scores how likely head, the first bytes of the input (up to
	// SniffSize), is in this format: 0 means no; a more specific match
	// scores higher. The highest score wins detection. Generic shapes score
	// low (a plain array of {role, content} is OpenAI Chat at 30, an
	// Anthropic request at 40-50); a format's own markers (a
	// "trajectory_format", a "session_meta" line) should score 60-100.
	Sniff func(head []byte) int
	// Read parses the whole input. name is used in error messages only.
	Read func(r io.Reader, name string) (compact.Transcript, error)
	// Write emits t in this format; nil when the format has no writer.
	Write func(w io.Writer, t compact.Transcript) error
}

// SniffSize is how many leading bytes detection looks at.
const SniffSize = 1 << 20

// ErrUnknownFormat is returned (wrapped) when no format recognises the input.
var ErrUnknownFormat = errors.New("unrecognised transcript format")

// ErrNoWriter is returned (wrapped) when a format cannot be written.
var ErrNoWriter = errors.New("format has no writer")

// registry holds every known format. Each reader's file registers its
// formats from an init function; detection picks the highest Sniff score, so
// registration order only breaks ties.
var registry []Format

func register(f Format) {
	if r := f.Read; r != nil {
		tables := []toolTable{formatTools[f.Name], genericTools}
		f.Read = func(in io.Reader, name string) (compact.Transcript, error) {
			t, err := r(in, name)
			if err == nil {
				tagTranscript(&t, tables...)
			}
			return t, err
		}
	}
	if w := f.Write; w != nil {
		f.Write = func(out io.Writer, t compact.Transcript) error {
			if err := checkRawJSON(&t); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
			return w(out, t)
		}
	}
	registry = append(registry, f)
}

// ErrInvalidJSON is returned (wrapped) when a transcript to be written
// holds raw JSON that is not valid: tool-call arguments, tool parameters,
// an envelope or a kept record. Writers embed such values as they are, so
// they are checked before anything is written.
var ErrInvalidJSON = errors.New("invalid raw JSON in the transcript")

// checkRawJSON checks the raw JSON values a transcript built in code may
// carry. Source records are not checked: a writer copies them only while
// their message is unchanged, and a reader checked them.
func checkRawJSON(t *compact.Transcript) error {
	valid := func(raw json.RawMessage) bool { return len(raw) == 0 || json.Valid(raw) }
	if !valid(t.Envelope) {
		return fmt.Errorf("%w: the envelope", ErrInvalidJSON)
	}
	for i, r := range t.Records {
		if !valid(r.Raw) {
			return fmt.Errorf("%w: record %d (%s)", ErrInvalidJSON, i, r.Type)
		}
	}
	for _, d := range t.Tools {
		if !valid(d.Parameters) {
			return fmt.Errorf("%w: the parameters of tool %q", ErrInvalidJSON, d.Name)
		}
	}
	for i := range t.Messages {
		for _, p := range t.Messages[i].Parts {
			if p.ToolCall != nil && !valid(p.ToolCall.Arguments) {
				return fmt.Errorf("%w: message %d: the arguments of call %q (%s)", ErrInvalidJSON, i, p.ToolCall.ID, p.ToolCall.Name)
			}
		}
	}
	return nil
}

// Formats returns every known format, in detection order.
func Formats() []Format {
	return append([]Format(nil), registry...)
}

// Lookup returns the format called name.
func Lookup(name Name) (Format, bool) {
	for _, f := range registry {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// Detect returns the format of the input whose first bytes are head.
func Detect(head []byte) (Format, error) {
	var best Format
	bestScore := 0
	for _, f := range registry {
		if f.Sniff == nil {
			continue
		}
		if s := f.Sniff(head); s > bestScore {
			best, bestScore = f, s
		}
	}
	if bestScore == 0 {
		return Format{}, fmt.Errorf("%w (tried %s)", ErrUnknownFormat, triedNames())
	}
	return best, nil
}

func triedNames() string {
	names := make([]string, 0, len(registry))
	for _, f := range registry {
		names = append(names, string(f.Name))
	}
	return strings.Join(names, ", ")
}

// Read detects the format of r and reads it. as, when not empty, overrides
// detection. name labels errors (a file name, or "<stdin>").
func Read(r io.Reader, name string, as Name) (compact.Transcript, error) {
	f, ok := Lookup(as)
	if as != "" && !ok {
		return compact.Transcript{}, fmt.Errorf("%s: %w %q (known: %s)", name, ErrUnknownFormat, as, triedNames())
	}
	if as == "" {
		head, err := readHead(r, SniffSize)
		if err != nil {
			return compact.Transcript{}, fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(head)) == 0 {
			return compact.Transcript{}, &Error{File: name, Msg: "empty input, expected a transcript"}
		}
		if f, err = Detect(head); err != nil {
			return compact.Transcript{}, fmt.Errorf("%s: %w", name, err)
		}
		r = io.MultiReader(bytes.NewReader(head), r)
	}
	t, err := f.Read(r, name)
	if err != nil {
		return t, err
	}
	t.Format = string(f.Name)
	markHandoffs(&t)
	return t, nil
}

// markHandoffs flags compact's own handoff messages as summaries in formats
// that have no field for it (OpenAI, Anthropic, …), so every reader hands
// the compactor and inspect the same answer. A message read unchanged stays
// writable byte for byte: its fingerprint is taken again with the flag.
func markHandoffs(t *compact.Transcript) {
	for i := range t.Messages {
		m := &t.Messages[i]
		if m.Summary || m.Role != compact.RoleUser || !compact.IsHandoffText(m.Text()) {
			continue
		}
		unchanged := m.Unchanged()
		m.Summary = true
		if unchanged {
			m.Source.Fingerprint = m.Fingerprint()
		}
	}
}

// readHead reads up to n bytes of r, allocating only as much as r holds:
// detection needs the first SniffSize bytes, a small file should not cost
// that much.
func readHead(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, 64<<10))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// Write emits t in the format called to.
func Write(w io.Writer, t compact.Transcript, to Name) error {
	f, ok := Lookup(to)
	if !ok {
		return fmt.Errorf("%w %q (known: %s)", ErrUnknownFormat, to, triedNames())
	}
	if f.Write == nil {
		return fmt.Errorf("%s: %w", to, ErrNoWriter)
	}
	return f.Write(w, t)
}

// Convert reads r (detecting its format) and writes it to w in format to.
func Convert(w io.Writer, r io.Reader, name string, to Name) error {
	t, err := Read(r, name, "")
	if err != nil {
		return err
	}
	return Write(w, t, to)
}

// Error is a malformed-input error: which file, where, and what was
// expected.
type Error struct {
	File   string
	Format Name
	Line   int   // 1-based line, for line-oriented formats; 0 when unknown
	Offset int64 // byte offset, for JSON documents; -1 when unknown
	Msg    string
	Err    error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d", e.Line)
	case e.Offset > 0:
		fmt.Fprintf(&b, ": byte %d", e.Offset)
	}
	if e.Format != "" {
		fmt.Fprintf(&b, ": %s", e.Format)
	}
	b.WriteString(": " + e.Msg)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
