package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Problem is something that keeps the agent that wrote a file from
// resuming it whole. Agents resume a damaged file without a word and with
// part of its history gone (Claude Code, Codex and Gemini CLI all do), so
// Check is the only warning a user gets.
type Problem struct {
	Line int    `json:"line,omitempty"` // 1-based line, for line-oriented formats
	Kind string `json:"kind"`           // damaged_line, broken_chain, split_pair, split_turn, unreadable
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Kinds of problem.
const (
	ProblemDamagedLine = "damaged_line" // a line the agent cannot parse: it drops it, and what hangs on it
	ProblemBrokenChain = "broken_chain" // Claude Code: the parent chain from the last record misses live messages
	ProblemSplitPair   = "split_pair"   // a tool result without its call, or a call whose result is missing
	ProblemSplitTurn   = "split_turn"   // a model turn (reasoning, text, calls) cut apart
)

// Check reads data as a transcript (as, when not empty, names its format)
// and reports what would keep its agent from resuming it whole:
//
//   - a damaged line (the file is read past it, as the agent would);
//   - in a Claude Code session, a parent chain that, walked back from the
//     newest record the way Claude Code resumes, misses messages of the
//     live context (a gap left by a damaged or missing record);
//   - a tool result without its call, or a call with no result after which
//     the conversation went on (a call still running at the end is how a
//     live session ends; Codex answers unanswered calls itself);
//   - in a Codex or Responses transcript, a model turn cut apart: reasoning
//     with neither the text nor the calls it led to after it, which the
//     Responses API refuses.
//
// A file Check passes holds nothing the agent would drop. The transcript
// is the one read (damaged lines skipped). An error means the input could
// not be read as a transcript at all.
func Check(data []byte, name string, as Name) (compact.Transcript, []Problem, error) {
	t, problems, err := check(bytes.NewReader(data), int64(len(data)), name, as)
	// data holds the records already: they are slices of it, not copies.
	sliceSources(data, &t)
	return t, problems, err
}

// CheckFile is Check for the file at (size bytes long), which it reads
// twice (the transcript, then the lines the checks look at) instead of
// holding it whole. The messages of the transcript returned may hold
// spans of at instead of their records (see LoadSources).
func CheckFile(at io.ReaderAt, size int64, name string, as Name) (compact.Transcript, []Problem, error) {
	return check(at, size, name, as)
}

func check(at io.ReaderAt, size int64, name string, as Name) (compact.Transcript, []Problem, error) {
	var problems []Problem
	damaged := map[int]int{} // line -> its problem's index
	o := ReadOptions{SkipBadLines: true, Source: at, Warn: func(w Warning) {
		if w.Kind == WarnSkipped {
			damaged[w.Line] = len(problems)
			problems = append(problems, Problem{Line: w.Line, Kind: ProblemDamagedLine, Msg: strings.TrimPrefix(w.Msg, "line skipped: ")})
		}
	}}
	t, err := ReadWith(io.NewSectionReader(at, 0, size), name, as, o)
	if len(damaged) > 0 {
		err := rawLines(io.NewSectionReader(at, 0, size), func(line []byte, n int, _ int64) {
			if i, ok := damaged[n]; ok && bytes.Contains(line, []byte(`"type":"compacted"`)) {
				problems[i].Msg = "the compaction record is damaged; Codex cannot rebuild the history from it: " + problems[i].Msg
			}
		})
		if err != nil {
			return t, problems, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err != nil {
		return t, problems, err
	}
	if Name(t.Format) == ClaudeCode && len(t.Envelope) == 0 {
		chain, err := ccChainProblems(at, size, &t)
		if err != nil {
			return t, problems, fmt.Errorf("%s: %w", name, err)
		}
		problems = append(problems, chain...)
	}
	problems = append(problems, pairProblems(&t)...)
	if Name(t.Format) == Codex || Name(t.Format) == OpenAIResponses {
		// The Responses API refuses a reasoning item without the item
		// that follows it in its turn.
		problems = append(problems, turnProblems(&t)...)
	}
	return t, problems, nil
}

// rawLines hands fn each line of r as it is (without its newline), with
// its 1-based number, blank lines included, as bytes.Lines counts them,
// and its byte offset.
func rawLines(r io.Reader, fn func(line []byte, n int, off int64)) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var long []byte
	var pos int64
	for n := 1; ; n++ {
		off := pos
		line, err := br.ReadSlice('\n')
		pos += int64(len(line))
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				pos += int64(len(line))
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(line) > 0 {
			fn(bytes.TrimSuffix(line, []byte{'\n'}), n, off)
		}
		if err != nil {
			return nil
		}
	}
}

// ccChainProblems walks Claude Code's parent chain back from the newest
// record on the main chain, as claude --resume does, and reports the live
// messages the walk does not reach.
func ccChainProblems(at io.ReaderAt, size int64, t *compact.Transcript) ([]Problem, error) {
	parent := map[string]string{}
	lineOf := map[string]int{}
	results := map[string]bool{}  // records holding tool results
	msgIDs := map[string]string{} // record -> its API message's id
	var order []string
	last := ""
	// The uuid of each chain record by its offset, so that the messages'
	// records (spans) need not be read again to be told.
	uuidAt := map[int64]string{}
	n := 0
	err := rawLines(io.NewSectionReader(at, 0, size), func(line []byte, _ int, off int64) {
		n++
		for _, rec := range splitRecords(bytes.TrimSpace(line)) {
			uuid, p, chain := ccChainFields(rec)
			if !chain || uuid == "" {
				continue
			}
			if d, ok := within(rec, line); ok {
				uuidAt[off+int64(d)] = uuid
			}
			if _, dup := parent[uuid]; !dup {
				parent[uuid], lineOf[uuid] = p, n
				order = append(order, uuid)
				results[uuid] = bytes.Contains(rec, []byte(`"tool_result"`))
				msgIDs[uuid] = jsonscan.LookupString(jsonscan.Lookup(rec, "message"), "id")
			}
			last = uuid
		}
	})
	if err != nil {
		return nil, err
	}
	reached := map[string]bool{}
	var problems []Problem
	for u := last; u != ""; u = parent[u] {
		if reached[u] {
			// A record the walk has passed: the chain loops and never
			// reaches a root; claude --resume cannot walk it.
			problems = append(problems, Problem{Line: lineOf[u], Kind: ProblemBrokenChain,
				Msg: fmt.Sprintf("the parent chain loops: record %s (line %d) is its own ancestor", u, lineOf[u])})
			break
		}
		if _, ok := parent[u]; !ok {
			break // the chain leaves the file: where a slice of a session starts
		}
		reached[u] = true
	}
	// The records of one API message (parallel calls) and the results of
	// its calls hang off one another beside the chain: Claude Code takes
	// them back in with the message (by message.id) and its calls.
	ids := map[string]bool{}
	for u := range reached {
		if id := msgIDs[u]; id != "" {
			ids[id] = true
		}
	}
	for _, u := range order {
		if !reached[u] && (ids[msgIDs[u]] && msgIDs[u] != "" || reached[parent[u]] && results[u]) {
			reached[u] = true
		}
	}
	var missed []string
	firstLine := 0
	for i := range t.Messages {
		m := &t.Messages[i]
		if m.Summary && len(m.Source.Records) == 0 && len(m.Source.Spans) == 0 {
			continue
		}
		src := &m.Source
		for j := range len(src.Records) + len(src.Spans) {
			var uuid string
			var chain bool
			switch {
			case j < len(src.Records):
				uuid, _, chain = ccChainFields(src.Records[j])
			default:
				sp := src.Spans[j-len(src.Records)]
				if uuid, chain = uuidAt[sp.Offset]; !chain {
					b, err := loadSpan(at, sp)
					if err != nil {
						return nil, err
					}
					uuid, _, chain = ccChainFields(b)
				}
			}
			if chain && uuid != "" && !reached[uuid] {
				missed = append(missed, uuid)
				if firstLine == 0 {
					firstLine = lineOf[uuid]
				}
				break
			}
		}
	}
	if len(missed) == 0 {
		return problems, nil
	}
	// Where the walk stopped: the record whose parent is not in the file.
	stop, gap := "", ""
	seen := map[string]bool{}
	for u := last; u != "" && reached[u] && !seen[u]; u = parent[u] {
		seen[u] = true
		stop = u
	}
	if stop != "" {
		gap = parent[stop]
	}
	msg := fmt.Sprintf("the parent chain from the newest record misses %d live message(s) from line %d on", len(missed), firstLine)
	if gap != "" {
		msg += fmt.Sprintf(": the record at line %d names parent %s, which is not in the file", lineOf[stop], gap)
	}
	msg += "; claude --resume would continue without them"
	return append(problems, Problem{Line: firstLine, Kind: ProblemBrokenChain, Msg: msg}), nil
}

// pairProblems reports results without calls, and calls without results
// except in the last turn.
func pairProblems(t *compact.Transcript) []Problem {
	lastCall := -1
	for i := range t.Messages {
		if len(t.Messages[i].ToolCalls()) > 0 {
			lastCall = i
		}
	}
	var out []Problem
	for _, o := range t.Orphans() {
		switch {
		case o.Kind == compact.OrphanResult:
			out = append(out, Problem{Kind: ProblemSplitPair,
				Msg: fmt.Sprintf("message %d answers call %q, which no message makes", o.Index, o.CallID)})
		case Name(t.Format) == Codex:
			// Codex answers a call left without output itself ("aborted")
			// when it resumes.
		case o.Index < lastCall || laterMessages(t, o.Index):
			out = append(out, Problem{Kind: ProblemSplitPair,
				Msg: fmt.Sprintf("message %d makes call %q, which nothing answers", o.Index, o.CallID)})
		}
	}
	return out
}

// laterMessages reports whether the conversation went on after message i
// (an assistant message, or a person's ask): a call left unanswered in the
// middle of it, not one still running at its end.
func laterMessages(t *compact.Transcript, i int) bool {
	for _, m := range t.Messages[i+1:] {
		if m.Role == compact.RoleAssistant || m.IsUserAsk() {
			return true
		}
	}
	return false
}

// turnProblems reports reasoning cut off from its turn: an assistant
// message holding only thinking, followed by something other than the
// assistant's own continuation.
func turnProblems(t *compact.Transcript) []Problem {
	var out []Problem
	for i := 0; i+1 < len(t.Messages); i++ {
		m := &t.Messages[i]
		if m.Role != compact.RoleAssistant || len(m.Parts) == 0 ||
			slices.ContainsFunc(m.Parts, func(p compact.Part) bool { return p.Type != compact.PartThinking }) {
			continue
		}
		if next := &t.Messages[i+1]; next.Role != compact.RoleAssistant {
			out = append(out, Problem{Kind: ProblemSplitTurn,
				Msg: fmt.Sprintf("message %d is reasoning whose text or calls do not follow it (message %d is %s)", i, i+1, next.Role)})
		}
	}
	return out
}

// sliceSources puts in Source.Records, for each message of t read with
// spans of data, the slices of data the spans name: data holds the
// records already, so they are not copied.
func sliceSources(data []byte, t *compact.Transcript) {
	for i := range t.Messages {
		src := &t.Messages[i].Source
		if len(src.Spans) == 0 {
			continue
		}
		src.Records = make([]json.RawMessage, len(src.Spans))
		for j, sp := range src.Spans {
			end := sp.Offset + int64(sp.Len)
			src.Records[j] = data[sp.Offset:end:end]
		}
		src.Spans = nil
	}
}
