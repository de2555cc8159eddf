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
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
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
	// Read parses the whole input with the default ReadOptions. name is
	// used in error messages only.
	Read func(r io.Reader, name string) (compact.Transcript, error)
	// read is the reader itself, which ReadWith calls with its options.
	read func(r io.Reader, rs *readState) (compact.Transcript, error)
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
	if f.read != nil {
		f.Read = func(in io.Reader, name string) (compact.Transcript, error) {
			return readFormat(f, in, name, ReadOptions{})
		}
	}
	if w := f.Write; w != nil {
		f.Write = func(out io.Writer, t compact.Transcript) error {
			if err := checkRawJSON(&t); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
			if err := checkLoaded(&t); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
			t = dropOpaque(t, f.Name)
			if t.Format != "" && !sameFamily(t.Format, f.Name) {
				// Another format's records (its metadata) have no place
				// here, and would make the output read as that format.
				t.Records = nil
			}
			if shape := writeShapes[f.Name]; shape != nil {
				t = shape(t, f.Name)
			}
			return w(out, t)
		}
	}
	registry = append(registry, f)
}

// dropOpaque leaves out of t the messages that hold nothing but another
// format's opaque content (a provider's compaction): no other API can read
// it, as no API accepts another's reasoning. In its own format it stays.
func dropOpaque(t compact.Transcript, to Name) compact.Transcript {
	keep := func(m *compact.Message) bool {
		if sameFamily(m.Source.Format, to) || m.Source.Format == "" && sameFamily(t.Format, to) {
			return true
		}
		for _, p := range m.Parts {
			if p.Type != compact.PartOpaque {
				return true
			}
		}
		return len(m.Parts) == 0
	}
	var msgs []compact.Message
	newAt := make([]int, len(t.Messages)+1) // old message index -> new
	for i := range t.Messages {
		newAt[i] = len(msgs)
		if keep(&t.Messages[i]) {
			msgs = append(msgs, t.Messages[i])
		}
	}
	if len(msgs) == len(t.Messages) {
		return t
	}
	newAt[len(t.Messages)] = len(msgs)
	t.Messages = msgs
	t.Records = slices.Clone(t.Records)
	for i := range t.Records {
		t.Records[i].At = newAt[min(max(t.Records[i].At, 0), len(newAt)-1)]
	}
	return t
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
	valid := func(raw json.RawMessage) bool { return len(raw) == 0 || jsonscan.Valid(raw) }
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
//
// A head that is the start of a JSON document cut short before anything
// telling is complete (a first message longer than SniffSize) is sniffed
// again closed where it was cut (closeCut), so the structure before the cut
// decides.
func Detect(head []byte) (Format, error) {
	best, bestScore := bestSniff(head)
	if bestScore == 0 {
		if closed, _, ok := closeCut(head); ok {
			best, bestScore = bestSniff(closed)
		}
	}
	if bestScore == 0 {
		return Format{}, fmt.Errorf("%w (tried %s)", ErrUnknownFormat, triedNames())
	}
	return best, nil
}

// bestSniff returns the format whose Sniff scores head highest, and the
// score (0: none).
func bestSniff(head []byte) (Format, int) {
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
	return best, bestScore
}

func triedNames() string {
	names := make([]string, 0, len(registry))
	for _, f := range registry {
		names = append(names, string(f.Name))
	}
	return strings.Join(names, ", ")
}

// Read detects the format of r and reads it. as, when not empty, overrides
// detection. name labels errors (a file name, or "<stdin>"). It reads with
// the default ReadOptions, dropping warnings: callers that show them use
// ReadWith.
func Read(r io.Reader, name string, as Name) (compact.Transcript, error) {
	return ReadWith(r, name, as, ReadOptions{})
}

// ReadOptions says how a reader treats damaged and doubtful input. The zero
// value fails on damage and warns on doubt.
type ReadOptions struct {
	// SkipBadLines reads past a damaged line of a JSONL file (or a record
	// of a known kind with a field of the wrong type), reporting each one
	// skipped as a WarnSkipped warning, instead of failing.
	SkipBadLines bool
	// StrictUTF8 makes invalid UTF-8 inside a string an error instead of a
	// WarnUTF8 warning. (JSON readers replace such bytes with U+FFFD, as
	// encoding/json does; a message read unchanged is still written back
	// with its bytes as they were.)
	StrictUTF8 bool
	// Instance picks one instance of a file holding several (an OpenHands
	// evaluation output: the instance whose instance_id it is). "" reads
	// the first, with a WarnInstance warning when there are others; with
	// a format that has no instances it is an error (ErrInstanceNotFound).
	Instance string
	// Warn receives each warning as it is found; nil drops them.
	Warn func(Warning)
	// Source, when set, is the input again, readable at any offset: the
	// file the reader passed to ReadWith reads from its first byte. Readers
	// that support it (Claude Code, Codex, OpenAI Chat and its JSONL) then keep each
	// message's source records as spans of it (compact.Source.Spans)
	// instead of their bytes, so a long transcript is not held twice;
	// LoadSources reads them back before the transcript is written.
	Source io.ReaderAt
}

// Warning is input a reader read past or read with doubt: nothing it says
// stops the read, but the transcript is not everything the file holds.
type Warning struct {
	File   string
	Format Name
	Line   int   // 1-based line for line-oriented formats; 0 when unknown
	Offset int64 // byte offset in the input; -1 when unknown
	Kind   WarningKind
	// Record is the kind of record concerned ("response_item:compaction",
	// "progress", …), for WarnUnread.
	Record string
	Msg    string
}

// WarningKind says what a warning is about.
type WarningKind string

// Kinds of warning.
const (
	// WarnUnread: a record the reader recognises as its format's but cannot
	// interpret; it is kept as a compact.Record, so writing the transcript
	// back keeps it, but it is not part of the conversation read.
	WarnUnread WarningKind = "unread"
	// WarnSkipped: a damaged line skipped under ReadOptions.SkipBadLines.
	WarnSkipped WarningKind = "skipped"
	// WarnSplitLine: a line holding several records with no newline between
	// them, read as several.
	WarnSplitLine WarningKind = "split_line"
	// WarnDuplicate: a record written twice, read once.
	WarnDuplicate WarningKind = "duplicate"
	// WarnInstance: a file of several instances was read as its first;
	// the others are kept as records, unread (ReadOptions.Instance picks
	// another).
	WarnInstance WarningKind = "instance"
	// WarnUTF8: invalid UTF-8 in a string, or a \u escape of half a
	// surrogate pair alone, read as U+FFFD.
	WarnUTF8 WarningKind = "invalid_utf8"
	// WarnRewound: the conversation was rewound (Claude Code's rewind or
	// prompt edit, Gemini CLI's /rewind, Codex's backtrack): the messages
	// it took back are not read; their records are kept, so writing the
	// transcript back keeps them.
	WarnRewound WarningKind = "rewound"
)

func (w Warning) String() string {
	var b strings.Builder
	b.WriteString(w.File)
	switch {
	case w.Line > 0:
		fmt.Fprintf(&b, ":%d", w.Line)
	case w.Offset >= 0:
		fmt.Fprintf(&b, ": byte %d", w.Offset)
	}
	if w.Format != "" {
		fmt.Fprintf(&b, ": %s", w.Format)
	}
	b.WriteString(": warning: " + w.Msg)
	return b.String()
}

// ErrNoMessages is returned (wrapped in an *Error) when a reader recognises
// its format in a non-empty input but reads no message from it.
var ErrNoMessages = errors.New("no message could be read")

// ReadWith is Read with options.
func ReadWith(r io.Reader, name string, as Name, o ReadOptions) (compact.Transcript, error) {
	f, r, err := resolve(r, name, as, true)
	if err != nil {
		return compact.Transcript{}, err
	}
	return readFormat(f, r, name, o)
}

// resolve returns the format as names (detected from r's head when as is
// empty) and a reader of the whole input, head included. With sized, that
// reader still tells the input's size, so a reader that takes the input
// whole allocates it once; streaming does not want that.
func resolve(r io.Reader, name string, as Name, sized bool) (Format, io.Reader, error) {
	f, ok := Lookup(as)
	if as != "" && !ok {
		return f, r, fmt.Errorf("%s: %w %q (known: %s)", name, ErrUnknownFormat, as, triedNames())
	}
	if as != "" {
		return f, r, nil
	}
	head, err := readHead(r, SniffSize)
	if err != nil {
		return f, r, fmt.Errorf("%s: %w", name, err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return f, r, &Error{File: name, Offset: -1, Msg: "empty input, expected a transcript"}
	}
	if f, err = Detect(head); err != nil {
		return f, r, detectError(name, head, err)
	}
	rest := sizeOf(r)
	r = io.MultiReader(bytes.NewReader(head), r)
	if sized && rest >= 0 {
		r = &sizedReader{r, rest + int64(len(head))}
	}
	return f, r, nil
}

// readFormat reads r in format f and applies what every reader shares: the
// handoff marks, the tags, the check that something was read.
func readFormat(f Format, r io.Reader, name string, o ReadOptions) (compact.Transcript, error) {
	rs := newReadState(name, f.Name, o)
	t, err := f.read(r, rs)
	if err != nil {
		return t, err
	}
	return rs.finish(t)
}

// finish applies what every reader shares to t: its format, the handoff
// marks, the tags, and the check that a non-empty input gave a message.
func (rs *readState) finish(t compact.Transcript) (compact.Transcript, error) {
	if err := rs.instanceRead(); err != nil {
		return compact.Transcript{}, err
	}
	t.Format = string(rs.format)
	markHandoffs(&t)
	tagTranscript(&t, formatTools[rs.format], genericTools)
	if len(t.Messages) == 0 && len(t.Records) > 0 {
		return compact.Transcript{}, &Error{File: rs.name, Format: rs.format, Offset: -1, Err: ErrNoMessages,
			Msg: fmt.Sprintf("%d records, none a message (%s)", len(t.Records), recordKinds(t.Records))}
	}
	return t, nil
}

// instanceRead says so when an instance was asked for and the input had
// none to pick from.
func (rs *readState) instanceRead() error {
	if rs.opts.Instance == "" || rs.instanced {
		return nil
	}
	return fmt.Errorf("%s: %w: %q (%s input has no instances)", rs.name, ErrInstanceNotFound, rs.opts.Instance, rs.format)
}

// recordKinds lists the kinds of records, with counts, for messages.
func recordKinds(recs []compact.Record) string {
	counts := map[string]int{}
	var kinds []string
	for _, r := range recs {
		if counts[r.Type] == 0 {
			kinds = append(kinds, r.Type)
		}
		counts[r.Type]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// readState is one read in progress: its options, and where its warnings go.
type readState struct {
	name   string
	format Name
	opts   ReadOptions
	unread map[string]int
	// sink, when set, receives the messages as they are read (Stream);
	// readers that stream hand them over instead of keeping them.
	sink    *Sink
	tagger  *tagger
	err     error // the sink's first error
	emitted int
	records int // records passed over while streaming
	// instanced is set by a reader that picked an instance (opts.Instance).
	instanced bool
	// line is the line rs.lines hands over, at byte lineOff of the input;
	// rec is the last record copyRecord copied, at recOff (see span.go).
	line    []byte
	lineOff int64
	rec     []byte
	recOff  int64
	// spanErr is the first failure to read a span back during the read.
	spanErr error
}

// Sink receives a transcript's messages as Stream reads them.
type Sink struct {
	// Message receives each message once it is final (nothing later in
	// the input changes it), in order. An error stops the read.
	Message func(m compact.Message) error
	// Reset is called when the agent's own compaction turns the messages
	// handed over so far out of the live context (a Claude Code compact
	// boundary, a Codex compacted line): keep says which of them stay,
	// by role and summary flag; nil keeps none. It may be nil when the
	// caller wants every message of the file.
	Reset func(keep func(role compact.Role, summary bool) bool)
	// Rewind is called when the conversation was rewound (the agent's
	// rewind or backtrack took messages back): of the messages the caller
	// holds (those the last Reset kept, then those handed over since),
	// only the first n stay. It may be nil when the caller wants every
	// message of the file.
	Rewind func(n int)
}

// Stream reads r as ReadWith does, but hands each message to sink as soon
// as it is final instead of returning the transcript, so that memory stays
// at what the messages still open need: the largest message, not the file.
// Claude Code, Codex and OpenAI JSONL are read so; the other formats are
// read whole and then handed over. It returns the transcript without its
// messages (its format, tool definitions, envelope; a streamed format's
// records are passed over, not kept).
func Stream(r io.Reader, name string, as Name, o ReadOptions, sink Sink) (compact.Transcript, error) {
	t, err := stream(r, name, as, o, sink)
	t.Messages = nil
	return t, err
}

func stream(r io.Reader, name string, as Name, o ReadOptions, sink Sink) (compact.Transcript, error) {
	f, r, err := resolve(r, name, as, false)
	if err != nil {
		return compact.Transcript{}, err
	}
	rs := newReadState(name, f.Name, o)
	rs.sink = &sink
	rs.tagger = &tagger{tables: []toolTable{formatTools[f.Name], genericTools}}
	t, err := f.read(r, rs)
	if err == nil {
		err = rs.err
	}
	t.Format = string(f.Name)
	if err != nil {
		return t, err
	}
	// What the reader kept (all of it, for readers that do not stream).
	for i := range t.Messages {
		if err := rs.emit(t.Messages[i]); err != nil {
			return t, err
		}
	}
	if rs.emitted == 0 && (len(t.Records) > 0 || rs.records > 0) {
		return t, &Error{File: name, Format: f.Name, Offset: -1, Err: ErrNoMessages,
			Msg: fmt.Sprintf("%d records, none a message (%s)", len(t.Records)+rs.records, recordKinds(t.Records))}
	}
	return t, nil
}

// streaming reports whether messages go to a sink as they are read.
func (rs *readState) streaming() bool { return rs.sink != nil }

// emit finishes m as readFormat finishes a transcript's messages (handoff
// mark, tags) and hands it to the sink.
func (rs *readState) emit(m compact.Message) error {
	if rs.err != nil {
		return rs.err
	}
	rs.emitted++
	markHandoffMessage(&m)
	rs.tagger.tag(&m)
	rs.err = rs.sink.Message(m)
	return rs.err
}

// rewind passes a rewind to the sink.
func (rs *readState) rewind(n int) {
	if rs.sink.Rewind != nil {
		rs.sink.Rewind(n)
	}
}

// reset passes a reset to the sink.
func (rs *readState) reset(keep func(role compact.Role, summary bool) bool) {
	if rs.sink.Reset != nil {
		rs.sink.Reset(keep)
	}
}

func newReadState(name string, f Name, o ReadOptions) *readState {
	return &readState{name: name, format: f, opts: o, unread: map[string]int{}}
}

// warn reports w, filling in the file and format.
func (rs *readState) warn(w Warning) {
	w.File, w.Format = rs.name, rs.format
	if rs.opts.Warn != nil {
		rs.opts.Warn(w)
	}
}

// checkUTF8 looks for invalid UTF-8 in b, a line (line > 0) or a stretch
// of a document starting at byte base: a warning names the first invalid
// byte, or with StrictUTF8 an error does.
func (rs *readState) checkUTF8(b []byte, line int, base int64) error {
	if utf8.Valid(b) {
		return rs.checkSurrogates(b, line, base)
	}
	i := 0
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	where := byteWhere(line, base, i)
	if rs.opts.StrictUTF8 {
		e := &Error{File: rs.name, Format: rs.format, Line: line, Offset: base + int64(i), Msg: "invalid UTF-8" + where + " (--strict-utf8)"}
		if line > 0 {
			e.Offset = -1
		}
		return e
	}
	rs.warn(Warning{Line: line, Offset: base + int64(i), Kind: WarnUTF8,
		Msg: "invalid UTF-8" + lineWhere(line, i) + ": read as U+FFFD; written back unchanged in this format, as U+FFFD in another"})
	return nil
}

// byteWhere is where byte i of a line (line > 0) or of a document (at
// base+i) is, for an error: " at byte K of the line"; in a document the
// error's location says the byte already, unless it is byte 0, which an
// Error does not show.
func byteWhere(line int, base int64, i int) string {
	if line <= 0 && base+int64(i) == 0 {
		return " at byte 0"
	}
	return lineWhere(line, i)
}

// lineWhere is where byte i of a line (line > 0) is, " at byte K of the
// line", for a warning; in a document the warning's location says the byte.
func lineWhere(line, i int) string {
	if line > 0 {
		return fmt.Sprintf(" at byte %d of the line", i+1)
	}
	return ""
}

// checkSurrogates looks for a \u escape of half a UTF-16 surrogate pair
// without its other half (what a JavaScript agent writes when it cuts a
// string inside an emoji): it decodes to U+FFFD like invalid UTF-8, so it
// is reported the same way.
func (rs *readState) checkSurrogates(b []byte, line int, base int64) error {
	i := jsonscan.LoneSurrogate(b)
	if i < 0 {
		return nil
	}
	esc := string(b[i:min(i+6, len(b))])
	where := byteWhere(line, base, i)
	if rs.opts.StrictUTF8 {
		e := &Error{File: rs.name, Format: rs.format, Line: line, Offset: base + int64(i),
			Msg: "a lone surrogate escape " + esc + where + " (--strict-utf8)"}
		if line > 0 {
			e.Offset = -1
		}
		return e
	}
	rs.warn(Warning{Line: line, Offset: base + int64(i), Kind: WarnUTF8,
		Msg: "a lone surrogate escape " + esc + lineWhere(line, i) + ": read as U+FFFD; written back unchanged in this format, as U+FFFD in another"})
	return nil
}

// unreadRecord warns of a record kept but not read (WarnUnread).
func (rs *readState) unreadRecord(line int, kind, why string) {
	rs.unread[kind]++
	msg := fmt.Sprintf("a %q record was not read (%s); it is kept as a record", kind, why)
	rs.warn(Warning{Line: line, Offset: -1, Kind: WarnUnread, Record: kind, Msg: msg})
}

// markHandoffs flags compact's own handoff messages as summaries in formats
// that have no field for it (OpenAI, Anthropic, …), so every reader hands
// the compactor and inspect the same answer. A message read unchanged stays
// writable byte for byte: its fingerprint is taken again with the flag.
func markHandoffs(t *compact.Transcript) {
	for i := range t.Messages {
		markHandoffMessage(&t.Messages[i])
	}
}

func markHandoffMessage(m *compact.Message) {
	if m.Summary || !IsHandoff(m) {
		return
	}
	unchanged := m.Unchanged()
	m.Summary = true
	if unchanged {
		m.Source.Fingerprint = m.Fingerprint()
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
	b.WriteString(": " + e.what())
	return b.String()
}

// what is the error without where (file, line or byte, format): for a
// message that says where already, such as a warning about the line.
func (e *Error) what() string {
	var typ *json.UnmarshalTypeError
	switch {
	case e.Err == nil:
	case errors.As(e.Err, &typ):
		// encoding/json names our own Go types ("Go struct field
		// codexItem.payload…"), which mean nothing to a user: say which
		// field holds what, once.
		if s := fmt.Sprintf("field %q has a %s", typ.Field, typ.Value); !strings.Contains(e.Msg, s) {
			return e.Msg + ": " + s
		}
	case strings.Contains(e.Msg, e.Err.Error()):
		// Msg quotes its cause already.
	default:
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }
