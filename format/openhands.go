package format

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// OpenHands records a run as a stream of events, each an action (what a
// user or the agent did: "message", "run", "edit", "read", "think",
// "finish", ...) or an observation (what came back), with "source" user,
// agent or environment. Two files hold them:
//
//   - trajectories: a JSON array of events (saved trajectories, the
//     runtime's test trajectories);
//   - evaluation output: JSONL, one benchmark instance per line
//     ({"instance_id", "instruction", "history": [events], "metrics", ...}).
//
// Events map onto messages the way OpenHands' ConversationMemory builds the
// prompt:
//
//   - message actions are user or assistant text (an old event with no
//     source is the user's until the agent has acted); the system action is
//     the system prompt;
//   - an action with tool_call_metadata is an assistant tool call (id
//     tool_call_id, name function_name, arguments as the model sent them in
//     model_response, else the action's args), its "thought" the text
//     before it; consecutive actions from one model response are one
//     message; the observation that carries the same tool_call_id is the
//     tool message answering it (ToolCallIDs);
//   - older events have no tool metadata: an agent action that runs
//     something becomes a call with a derived id ("oh-<event id>", or for
//     an event with no id "oh-" and a hash of its bytes) and the
//     observation caused by it (or, with no cause, the next one of the same
//     kind) answers it, so pairs stay intact;
//   - other observations the model is shown (errors, recalled workspace
//     context) are Synthetic user messages;
//   - bookkeeping events (agent state changes, null observations, recall
//     requests) are records, Type "action:<kind>" or "observation:<kind>";
//   - a condensation action (OpenHands' own compaction, which every
//     LLMSummarizingCondenser run writes) forgets the events it names
//     (forgotten_event_ids, or forgotten_events_start_id to _end_id) as
//     OpenHands' View does: their messages become records where they stood,
//     so writing the file back keeps them, but they are no longer live
//     context. A call and its result go together (the prompt never holds
//     half a pair), and an observation answering a forgotten call later is
//     a record too. Its summary is a Summary message where the condensation
//     stands (OpenHands shows it at summary_offset among the kept events,
//     but the file's order is kept so the file is written back as read),
//     and an earlier condensation's summary, which the newest replaces, a
//     record. A condense observation (older condensers' summary) is a
//     Summary message too.
//
// An evaluation-output file holds several instances. Read returns the first
// one as the transcript and keeps every other line as a record of Type
// "instance" (before it: At 0; after it: At len(Messages)), so writing the
// transcript back rewrites that instance and copies the others.
// ReadOpenHandsInstance picks an instance by its instance_id the same way;
// ReadOpenHandsInstances returns them all, each on its own. The instance
// line around "history" (instance, metrics, test_result, ...) is the
// transcript's Envelope.

func init() {
	register(Format{
		Name:        OpenHands,
		Description: "OpenHands event trajectory (JSON array) or evaluation output (JSONL, one instance per line)",
		Sniff:       sniffOpenHands,
		read:        readOpenHands,
		Write:       writeOpenHands,
	})
}

// ErrInstanceNotFound is returned (wrapped) by ReadOpenHandsInstance when
// the file has no instance with the requested id.
var ErrInstanceNotFound = errors.New("instance not found")

// OpenHandsInstance is one instance of an OpenHands evaluation-output file.
type OpenHandsInstance struct {
	ID         string // instance_id; "" when the line has none
	Line       int    // 1-based line number in the file
	Transcript compact.Transcript
}

const ohInstance = "instance" // Record.Type of the other instances' lines

// ohRecordActions and ohRecordObservations are the V0 event kinds that
// are bookkeeping, never shown to the model: records.
var (
	ohRecordActions = map[string]bool{
		"recall": true, "change_agent_state": true, "null": true,
		"condensation_request": true, // CondensationRequestAction: asks for a condensation
	}
	ohRecordObservations = map[string]bool{
		"null": true, "agent_state_changed": true, "agent_condensation_request": true, "user_rejected_no_content": true,
	}
)

// V0 condensation event kinds.
const (
	ohCondensation = "condensation" // CondensationAction: forgets events, maybe with a summary
	ohCondense     = "condense"     // AgentCondensationObservation: a summary shown to the model
)

// ohCondensationArgs are a CondensationAction's args.
type ohCondensationArgs struct {
	ForgottenIDs []jsonscan.Raw `json:"forgotten_event_ids"`
	Start        jsonscan.Raw   `json:"forgotten_events_start_id"`
	End          jsonscan.Raw   `json:"forgotten_events_end_id"`
	Summary      *string        `json:"summary"`
}

type ohEvent struct {
	ID          jsonscan.Raw `json:"id"`
	Source      string       `json:"source"`
	Message     string       `json:"message"`
	Action      string       `json:"action"`
	Observation string       `json:"observation"`
	Content     jsonscan.Raw `json:"content"`
	Cause       jsonscan.Raw `json:"cause"`
	Args        jsonscan.Raw `json:"args"`
	Thought     string       `json:"thought"`
	Extras      jsonscan.Raw `json:"extras"`
	Meta        *ohToolMeta  `json:"tool_call_metadata"`
}

// ohErrorPrefix opens the text of an observation an OpenHands tool reports
// as failed without an error observation (the editor's "ERROR: Invalid
// `path` parameter…").
const ohErrorPrefix = "ERROR:"

// ohFailed reports whether an observation says its action failed: an
// error observation, or a command's non-zero exit code (extras.exit_code,
// or extras.metadata.exit_code in newer events).
func ohFailed(e *ohEvent) bool {
	if e.Observation == "error" {
		return true
	}
	code := jsonscan.Lookup(e.Extras, "exit_code")
	if len(code) == 0 {
		code = jsonscan.Lookup(jsonscan.Lookup(e.Extras, "metadata"), "exit_code")
	}
	n, err := strconv.Atoi(string(code))
	return err == nil && n != 0
}

type ohToolMeta struct {
	FunctionName  string       `json:"function_name"`
	ToolCallID    string       `json:"tool_call_id"`
	ModelResponse jsonscan.Raw `json:"model_response"`
}

func sniffOpenHands(head []byte) int {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	events := func(list []byte) bool {
		for _, e := range headItems(list, 4) {
			if !jsonscan.HasKeys(e, "action") && !jsonscan.HasKeys(e, "observation") || jsonscan.HasKeys(e, "role") {
				continue // SWE-agent history entries carry "action" beside "role"
			}
			for _, k := range []string{"source", "id", "timestamp", "message", "args", "content", "thought", "extras", "cause"} {
				if jsonscan.HasKeys(e, k) {
					return true
				}
			}
		}
		return false
	}
	if t[0] == '[' {
		if events(t) {
			return 85
		}
		return 0
	}
	if recs := headRecords(head, 4); len(recs) >= 2 && ohIsV1(recs[0]) && jsonscan.HasKeys(recs[0], "source", "timestamp") {
		return 90 // V1 events as JSON lines
	}
	fields, _ := jsonscan.Members(t)
	if h := jsonscan.ValueOf(t, fields, "history"); len(h) > 0 && len(jsonscan.ValueOf(t, fields, "trajectory")) == 0 {
		if events(h) {
			return 90
		}
		// An evaluation instance whose history is empty, or holds V1
		// events of kinds this reader does not know.
		if len(jsonscan.ValueOf(t, fields, "instance_id")) > 0 {
			items := headItems(h, 4)
			if len(items) == 0 && bytes.HasPrefix(bytes.TrimSpace(h), []byte("[")) || len(items) > 0 && jsonscan.LookupString(items[0], "kind") != "" {
				return 80
			}
		}
	}
	return 0
}

func readOpenHands(r io.Reader, rs *readState) (compact.Transcript, error) {
	return readOpenHandsInstance(r, rs, rs.opts.Instance)
}

// ReadOpenHandsInstance reads an OpenHands file. For an evaluation-output
// file it returns the instance whose instance_id is id (the first instance
// when id is ""), keeping the other lines as records of Type "instance" so
// the file can be written back whole; a trajectory has one conversation and
// id must be "".
func ReadOpenHandsInstance(r io.Reader, name, id string) (compact.Transcript, error) {
	rs := newReadState(name, OpenHands, ReadOptions{Instance: id})
	t, err := readOpenHandsInstance(r, rs, id)
	if err != nil {
		return t, err
	}
	return rs.finish(t)
}

func readOpenHandsInstance(r io.Reader, rs *readState, id string) (compact.Transcript, error) {
	name := rs.name
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	if ohIsTrajectory(br) {
		if id != "" {
			return compact.Transcript{}, fmt.Errorf("%s: %w: %q (a trajectory has no instances)", name, ErrInstanceNotFound, id)
		}
		return readOpenHandsTrajectory(br, rs)
	}
	if ohIsV1Lines(br) {
		if id != "" {
			return compact.Transcript{}, fmt.Errorf("%s: %w: %q (a conversation's events have no instances)", name, ErrInstanceNotFound, id)
		}
		return readOpenHandsV1Events(br, rs)
	}
	rs.instanced = true
	var t compact.Transcript
	var before, after []compact.Record
	found, foundID, foundAt := false, "", 0
	var ids []string
	err := rs.lines(br, func(line []byte, n int) error {
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		raw := bytes.Clone(line)
		iid, err := ohInstanceID(raw)
		if err != nil {
			return jsonError(name, OpenHands, n, err, `an OpenHands instance {"instance_id", "history": [events], ...}`)
		}
		ids = append(ids, iid)
		switch {
		case found:
			after = append(after, compact.Record{Type: ohInstance, Raw: raw})
		case id != "" && iid != id:
			before = append(before, compact.Record{Type: ohInstance, Raw: raw})
		default:
			found, foundID, foundAt = true, iid, len(ids)
			t, err = ohInstanceTranscript(raw, rs, n)
		}
		return err
	})
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return compact.Transcript{}, err
		}
		return compact.Transcript{}, &Error{File: name, Format: OpenHands, Offset: -1, Msg: "reading input", Err: err}
	}
	if !found {
		if id == "" {
			return compact.Transcript{}, &Error{File: name, Format: OpenHands, Offset: -1, Msg: "empty input, expected OpenHands instances"}
		}
		return compact.Transcript{}, fmt.Errorf("%s: %w: %q (instances: %s)", name, ErrInstanceNotFound, id, strings.Join(ids, ", "))
	}
	if len(t.Messages) == 0 {
		what := "no events"
		if len(t.Records) > 0 {
			what = fmt.Sprintf("no message among its %d events (%s)", len(t.Records), recordKinds(t.Records))
		}
		return compact.Transcript{}, &Error{File: name, Format: OpenHands, Offset: -1, Err: ErrNoMessages,
			Msg: fmt.Sprintf("instance %q has %s", cmpOr(foundID, "(no id)"), what)}
	}
	if id == "" && len(ids) > 1 {
		// The first of several: say so, or a user takes the file for it.
		rs.warn(Warning{Offset: -1, Kind: WarnInstance,
			Msg: fmt.Sprintf("read instance %d of %d (%s); the others are kept as records, unread", foundAt, len(ids), cmpOr(foundID, "no id"))})
	}
	for i := range after {
		after[i].At = len(t.Messages)
	}
	t.Records = append(append(before, t.Records...), after...)
	return t, nil
}

// ReadOpenHandsInstances reads every instance of an evaluation-output file
// (or the one conversation of a trajectory), each as its own transcript.
func ReadOpenHandsInstances(r io.Reader, name string) ([]OpenHandsInstance, error) {
	rs := newReadState(name, OpenHands, ReadOptions{})
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	if ohIsTrajectory(br) {
		t, err := readOpenHandsTrajectory(br, rs)
		if err == nil {
			t, err = rs.finish(t)
		}
		if err != nil {
			return nil, err
		}
		return []OpenHandsInstance{{Line: 1, Transcript: t}}, nil
	}
	var out []OpenHandsInstance
	err := rs.lines(br, func(line []byte, n int) error {
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		raw := bytes.Clone(line)
		iid, err := ohInstanceID(raw)
		if err != nil {
			return jsonError(name, OpenHands, n, err, `an OpenHands instance {"instance_id", "history": [events], ...}`)
		}
		t, err := ohInstanceTranscript(raw, rs, n)
		if err == nil {
			t, err = rs.finish(t)
		}
		if err != nil {
			return err
		}
		out = append(out, OpenHandsInstance{ID: iid, Line: n, Transcript: t})
		return nil
	})
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, &Error{File: name, Format: OpenHands, Offset: -1, Msg: "reading input", Err: err}
	}
	return out, nil
}

// ohIsTrajectory reports whether the input is a JSON array of events.
func ohIsTrajectory(br *bufio.Reader) bool {
	for n := 64; ; n *= 4 {
		head, err := br.Peek(min(n, br.Size()))
		t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
		if len(t) > 0 {
			return t[0] == '['
		}
		if err != nil || n >= br.Size() {
			return false
		}
	}
}

// ohInstanceID checks that a line is a JSON object and returns its
// instance_id.
func ohInstanceID(raw []byte) (string, error) {
	var head struct {
		InstanceID jsonscan.Raw `json:"instance_id"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			return "", err
		}
		return "", fmt.Errorf("not a JSON object: %w", err)
	}
	switch head.InstanceID.First() {
	case '"':
		var s string
		_ = json.Unmarshal(head.InstanceID, &s)
		return s, nil
	case 0, 'n':
		return "", nil
	}
	return string(head.InstanceID), nil
}

func ohInstanceTranscript(raw []byte, rs *readState, n int) (compact.Transcript, error) {
	d, ok := splitList(raw, "history")
	if !ok {
		return compact.Transcript{}, &Error{File: rs.name, Format: OpenHands, Line: n, Offset: -1,
			Msg: `expected an OpenHands instance with a "history" list of events`}
	}
	t, err := ohAnyEvents(d.elems, fmt.Sprintf("oh%d.", n), rs, n)
	if err != nil {
		return t, jsonError(rs.name, OpenHands, n, err, "an OpenHands V1 event")
	}
	t.Envelope = d.env
	return t, nil
}

// ohAnyEvents reads a list of events, V0 or V1 (by the first event).
func ohAnyEvents(elems [][]byte, pfx string, rs *readState, line int) (compact.Transcript, error) {
	if len(elems) > 0 && ohIsV1(elems[0]) {
		return ohV1Events(elems, pfx, rs, line)
	}
	return ohEvents(elems, pfx), nil
}

func readOpenHandsTrajectory(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	const expected = "an OpenHands trajectory (a JSON array of events)"
	doc, err := readWholeDoc(r, name, OpenHands, expected)
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.checkUTF8(doc, 0, 0); err != nil {
		return compact.Transcript{}, err
	}
	d, ok := splitList(doc, "")
	if !ok {
		return compact.Transcript{}, &Error{File: name, Format: OpenHands, Offset: -1, Msg: "expected " + expected}
	}
	t, err := ohAnyEvents(d.elems, "oh", rs, 0)
	if err != nil {
		return t, jsonError(name, OpenHands, 0, err, expected)
	}
	t.Envelope = d.env
	return t, nil
}

// ohReader turns events into messages and records.
type ohReader struct {
	t        compact.Transcript
	pfx      string
	acted    bool   // the agent has acted (for old events with no source)
	open     string // model response id of the assistant message still open, "" when none
	pending  []ohPending
	pendings map[string]int // event id -> index in pending
	// ids maps an event id to the message it is part of, for
	// condensations; forgotten holds the calls they forgot, whose results
	// are forgotten too; summaries are the condensation summaries read.
	ids       map[string]int
	forgotten map[string]bool
	summaries []int
	// derived counts the calls of events with no id by their bytes, for
	// derivedCallID.
	derived map[string]int
}

// derivedCallID names the call of an old-style event that has no id (the
// resolver's output) by its bytes, not its place: a compaction that drops
// events before it must not rename it when the file is read back. A repeat
// of the same event gets "-2", "-3", ….
func (o *ohReader) derivedCallID(raw []byte) string {
	sum := sha256.Sum256(raw)
	id := "oh-" + hex.EncodeToString(sum[:6])
	if o.derived == nil {
		o.derived = map[string]int{}
	}
	o.derived[id]++
	if n := o.derived[id]; n > 1 {
		id += "-" + strconv.Itoa(n)
	}
	return id
}

// ohPending is an old-style call (no tool metadata) waiting for its
// observation.
type ohPending struct {
	callID, eventID, kind string
	answered              bool
}

func ohEvents(elems [][]byte, pfx string) compact.Transcript {
	o := ohReader{pfx: pfx, pendings: map[string]int{}, ids: map[string]int{}, forgotten: map[string]bool{},
		t: compact.Transcript{Format: string(OpenHands)}}
	for i, raw := range elems {
		o.add(raw, i)
	}
	return o.t
}

func (o *ohReader) record(typ string, raw []byte) {
	o.open = ""
	o.t.Records = append(o.t.Records, compact.Record{At: len(o.t.Messages), Type: typ, Raw: raw})
}

func (o *ohReader) push(m compact.Message, raw []byte, idx int, openID string) {
	if id := ohScalar(jsonscan.Raw(jsonscan.Lookup(raw, "id"))); id != "" {
		o.ids[id] = len(o.t.Messages)
	}
	m.Source.Records = []json.RawMessage{raw}
	markHandoff(&m)
	stampMessage(&m, OpenHands, o.pfx, idx)
	o.t.Messages = append(o.t.Messages, m)
	o.open = openID
}

func (o *ohReader) add(raw []byte, idx int) {
	var e ohEvent
	if raw[0] != '{' || json.Unmarshal(raw, &e) != nil {
		o.record("invalid", raw)
		return
	}
	switch {
	case e.Action != "":
		o.action(&e, raw, idx)
	case e.Observation != "":
		o.observation(&e, raw, idx)
	default:
		o.record("unknown", raw)
	}
}

func (o *ohReader) action(e *ohEvent, raw []byte, idx int) {
	switch {
	case e.Action == "message":
		role := compact.RoleUser
		if e.Source == "agent" || (e.Source == "" && o.acted) {
			role = compact.RoleAssistant
		}
		parts := []compact.Part{{Type: compact.PartText, Text: ohText(e)}}
		for _, u := range ohImages(e, raw) {
			parts = append(parts, compact.Part{Type: compact.PartImage, Image: imageFromURL(u)})
		}
		o.push(compact.Message{Role: role, Parts: parts}, raw, idx, "")
	case e.Action == "system":
		o.push(compact.Message{Role: compact.RoleSystem, Parts: []compact.Part{{Type: compact.PartText, Text: ohText(e)}}}, raw, idx, "")
	case e.Action == ohCondensation:
		o.condense(e, raw, idx)
	case e.Meta != nil && e.Meta.ToolCallID != "":
		o.acted = true
		o.call(e, raw, idx, e.Meta.ToolCallID, e.Meta.FunctionName, ohModelArgs(e.Meta), jsonscan.LookupString(e.Meta.ModelResponse, "id"))
	case ohRecordActions[e.Action], e.Source == "user", e.Source == "environment":
		o.record("action:"+e.Action, raw)
	case e.Action == "finish":
		o.acted = true
		text := jsonscan.LookupString(e.Args, "final_thought")
		if text == "" {
			text = ohThought(e)
		}
		if text == "" {
			text = e.Message
		}
		o.push(compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}, raw, idx, "")
	default:
		// An old-style action: the agent ran something, with no tool call id.
		o.acted = true
		evID := ohEventID(e, idx)
		callID := "oh-" + evID
		if ohScalar(e.ID) == "" {
			callID = o.derivedCallID(raw)
		}
		o.pendings[evID] = len(o.pending)
		o.pending = append(o.pending, ohPending{callID: callID, eventID: evID, kind: e.Action})
		o.call(e, raw, idx, callID, e.Action, nil, "")
	}
}

// call adds an assistant tool call, joining the open assistant message
// when it came from the same model response.
func (o *ohReader) call(e *ohEvent, raw []byte, idx int, id, name string, args json.RawMessage, respID string) {
	if args == nil {
		args = ohArgs(e, raw)
	}
	var parts []compact.Part
	if th := ohThought(e); th != "" {
		parts = append(parts, compact.Part{Type: compact.PartText, Text: th})
	}
	parts = append(parts, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: args}})
	if respID != "" && respID == o.open && len(o.t.Messages) > 0 {
		last := &o.t.Messages[len(o.t.Messages)-1]
		last.Parts = append(last.Parts, parts...)
		last.Source.Records = append(last.Source.Records, raw)
		last.Source.Fingerprint = last.Fingerprint()
		if id := ohScalar(e.ID); id != "" {
			o.ids[id] = len(o.t.Messages) - 1
		}
		return
	}
	o.push(compact.Message{Role: compact.RoleAssistant, Parts: parts}, raw, idx, respID)
}

func (o *ohReader) observation(e *ohEvent, raw []byte, idx int) {
	text := ohText(e)
	if e.Meta != nil && o.forgotten[e.Meta.ToolCallID] {
		o.record("observation:"+e.Observation, raw) // answers a forgotten call
		return
	}
	if e.Observation == ohCondense && strings.TrimSpace(text) != "" {
		o.push(compact.Message{Role: compact.RoleUser, Summary: true, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}, raw, idx, "")
		return
	}
	// The editor reports its own failures as text ("ERROR: …").
	failed := ohFailed(e) || strings.HasPrefix(text, ohErrorPrefix)
	if e.Meta != nil && e.Meta.ToolCallID != "" {
		o.push(compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{e.Meta.ToolCallID},
			Parts: []compact.Part{{Type: compact.PartText, Text: text, Failed: failed}}}, raw, idx, "")
		return
	}
	if p := o.answers(e); p != nil {
		p.answered = true
		if o.forgotten[p.callID] {
			o.record("observation:"+e.Observation, raw)
			return
		}
		o.push(compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{p.callID},
			Parts: []compact.Part{{Type: compact.PartText, Text: text, Failed: failed}}}, raw, idx, "")
		return
	}
	if ohRecordObservations[e.Observation] {
		o.record("observation:"+e.Observation, raw)
		return
	}
	if strings.TrimSpace(text) == "" {
		o.record("observation:"+e.Observation, raw)
		return
	}
	// An error observation no call claims is the harness's complaint
	// about an action it could not run: a failed result all the same.
	o.push(compact.Message{Role: compact.RoleUser, Synthetic: true, Parts: []compact.Part{{Type: compact.PartText, Text: text, Failed: failed}}}, raw, idx, "")
}

// answers finds the old-style call an observation answers: the one its
// cause names, or else the oldest unanswered one of the same kind.
func (o *ohReader) answers(e *ohEvent) *ohPending {
	if cause := ohScalar(e.Cause); cause != "" {
		if k, ok := o.pendings[cause]; ok && !o.pending[k].answered {
			return &o.pending[k]
		}
		return nil
	}
	for k := range o.pending {
		if !o.pending[k].answered && o.pending[k].kind == e.Observation {
			return &o.pending[k]
		}
	}
	return nil
}

// ohText is an event's text: its args' content, its content, or its message.
func ohText(e *ohEvent) string {
	if s := jsonscan.LookupString(e.Args, "content"); s != "" {
		return s
	}
	if e.Content.First() == '"' {
		var s string
		if json.Unmarshal(e.Content, &s) == nil && s != "" {
			return s
		}
	}
	return e.Message
}

func ohThought(e *ohEvent) string {
	if s := jsonscan.LookupString(e.Args, "thought"); s != "" {
		return s
	}
	return e.Thought
}

// ohImages returns a message action's image URLs (args.image_urls, or the
// old top-level images_urls).
func ohImages(e *ohEvent, raw []byte) []string {
	list := jsonscan.Lookup(e.Args, "image_urls")
	if list == nil {
		list = jsonscan.Lookup(raw, "images_urls")
	}
	var urls []string
	if jsonscan.Raw(list).First() == '[' {
		_ = json.Unmarshal(list, &urls)
	}
	return urls
}

// ohModelArgs returns the arguments of the call as the model sent them, from
// the model response stored with the action.
func ohModelArgs(meta *ohToolMeta) json.RawMessage {
	var resp struct {
		Choices []struct {
			Message struct {
				ToolCalls []chatCall `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if meta.ModelResponse.First() != '{' || json.Unmarshal(meta.ModelResponse, &resp) != nil {
		return nil
	}
	for _, ch := range resp.Choices {
		for k := range ch.Message.ToolCalls {
			if tc := &ch.Message.ToolCalls[k]; tc.ID == meta.ToolCallID {
				return tc.part().ToolCall.Arguments
			}
		}
	}
	return nil
}

// ohSkipArgs are event fields that describe the event, not the call.
var ohSkipArgs = map[string]bool{
	"id": true, "timestamp": true, "source": true, "message": true, "action": true, "observation": true,
	"cause": true, "thought": true, "tool_call_metadata": true, "llm_metrics": true, "args": true,
	"is_confirmed": true, "confirmation_state": true, "action_risk": true, "security_risk": true,
	"keep_prompt": true, "kernel_init_code": true, "hidden": true, "blocking": true, "is_input": true,
	"impl_source": true, "translated_ipython_code": true, "timeout": true,
}

// ohArgs builds a call's arguments from the action's args (or, in old
// events, its top-level fields), leaving out bookkeeping fields.
func ohArgs(e *ohEvent, raw []byte) json.RawMessage {
	src := []byte(e.Args)
	if e.Args.First() != '{' {
		src = raw
	}
	fields, _ := jsonscan.Members(src)
	var o jsonObject
	for _, f := range fields {
		if ohSkipArgs[f.Key] || f.Value.End < 0 {
			continue
		}
		o.add(f.Key, json.RawMessage(src[f.Value.Start:f.Value.End]))
	}
	return o.bytes()
}

func ohEventID(e *ohEvent, idx int) string {
	if s := ohScalar(e.ID); s != "" {
		return s
	}
	return strconv.Itoa(idx)
}

// ohScalar renders an id or cause, which OpenHands writes as a number or a
// string, as a string.
func ohScalar(v jsonscan.Raw) string {
	switch v.First() {
	case 0, 'n':
		return ""
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	}
	return string(v)
}
