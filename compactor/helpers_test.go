package compactor

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// byteCounter counts a token per four bytes plus a per-message overhead:
// exact and predictable, so tests can reason about budgets.
type byteCounter struct{}

func (byteCounter) Text(s string) int { return (len(s) + 3) / 4 }

func (c byteCounter) Message(m compact.Message) int {
	n := 4
	for _, p := range m.Parts {
		n += c.Text(p.Text)
		if p.ToolCall != nil {
			n += c.Text(p.ToolCall.Name) + c.Text(string(p.ToolCall.Arguments))
		}
		if p.Image != nil {
			n += 85
		}
	}
	return n
}

func (c byteCounter) Transcript(t compact.Transcript) int {
	n := 3
	for _, d := range t.Tools {
		n += c.Text(d.Name) + c.Text(d.Description) + c.Text(string(d.Parameters))
	}
	for _, m := range t.Messages {
		n += c.Message(m)
	}
	return n
}

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var msgSeq int

func withID(m compact.Message) compact.Message {
	msgSeq++
	m.ID = fmt.Sprintf("m%d", msgSeq)
	m.Source = compact.Source{Format: "test", Records: []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"n":%d}`, msgSeq))}}
	m.Source.Fingerprint = m.Fingerprint()
	return m
}

func text(role compact.Role, s string) compact.Message {
	return withID(compact.Message{Role: role, Parts: []compact.Part{{Type: compact.PartText, Text: s}}})
}

func sys(s string) compact.Message  { return text(compact.RoleSystem, s) }
func user(s string) compact.Message { return text(compact.RoleUser, s) }
func asst(s string) compact.Message { return text(compact.RoleAssistant, s) }

// call is an assistant message making one call per id (parallel calls).
func call(name string, ids ...string) compact.Message {
	m := compact.Message{Role: compact.RoleAssistant}
	for _, id := range ids {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{"cmd":"ls ` + id + `"}`)}})
	}
	return withID(m)
}

// result is an OpenAI-style tool message answering id.
func result(id, out string) compact.Message {
	return withID(compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id},
		Parts: []compact.Part{{Type: compact.PartText, Text: out}}})
}

// userResults is an Anthropic-style user message answering ids in parts.
func userResults(out string, ids ...string) compact.Message {
	m := compact.Message{Role: compact.RoleUser}
	for _, id := range ids {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: id, Text: out + " " + id})
	}
	return withID(m)
}

func transcript(msgs ...compact.Message) compact.Transcript {
	return compact.Transcript{Format: "test", Messages: msgs}
}

// agentRun is a transcript of an agent working through n tool calls on one
// ask, each output about outBytes long.
func agentRun(n, outBytes int) compact.Transcript {
	msgs := []compact.Message{sys("You are a coding agent."), user("Fix the failing test in pkg/foo."), asst("Looking.")}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, call("bash", id), result(id, fmt.Sprintf("output %d\n", i)+strings.Repeat(fmt.Sprintf("line %d of a long output\n", i), outBytes/26)))
	}
	msgs = append(msgs, asst("Done: the test passes now."))
	return transcript(msgs...)
}

func newTestRedactor(t tb, values ...string) *redact.Redactor {
	t.Helper()
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		r.AddValue(v)
	}
	return r
}

// testConfig is a small-window configuration with exact counts.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Window, cfg.OutputReserve, cfg.Counter, cfg.Strategy = 10000, 1000, byteCounter{}, StrategyFallback
	return cfg
}

func mustNew(t tb, cfg Config) *Compactor {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkInvariants asserts every invariant of DESIGN.md that concerns one
// compaction of in into res.
func checkInvariants(t tb, in compact.Transcript, res Result) {
	t.Helper()
	out := res.Transcript
	// Pairs: no orphan in the output that the input did not have.
	inOrph := map[string]bool{}
	for _, o := range in.Orphans() {
		inOrph[string(o.Kind)+"\x00"+o.CallID+"\x00"+in.Messages[o.Index].ID] = true
	}
	for _, o := range out.Orphans() {
		if !inOrph[string(o.Kind)+"\x00"+o.CallID+"\x00"+out.Messages[o.Index].ID] {
			t.Fatalf("output message %d (%s) has a new orphan %s %q", o.Index, out.Messages[o.Index].ID, o.Kind, o.CallID)
		}
	}
	if !res.Changed() {
		if in.Hash() != out.Hash() || len(in.Messages) != len(out.Messages) {
			t.Fatalf("unchanged result differs from the input")
		}
		return
	}
	// Head and tail byte-identical, in order.
	p := res.Plan
	for i := 0; i < p.HeadEnd; i++ {
		sameMessage(t, in.Messages[i], out.Messages[i], "head", i)
	}
	tailLen := len(in.Messages) - p.TailStart
	for k := 0; k < tailLen; k++ {
		sameMessage(t, in.Messages[p.TailStart+k], out.Messages[len(out.Messages)-tailLen+k], "tail", k)
	}
	if res.Record.Method == compact.MethodPrune {
		if len(out.Messages) != len(in.Messages) {
			t.Fatalf("prune changed the message count: %d -> %d", len(in.Messages), len(out.Messages))
		}
		return
	}
	// Exactly one handoff, no nesting.
	summaries := 0
	for _, m := range out.Messages {
		if m.Summary {
			summaries++
			txt := m.Text()
			if !compact.VerifyHandoff(&m, nil) || strings.Count(txt, compact.HandoffBegin) != 1 || strings.Count(txt, "<<<compact:handoff-end") != 1 {
				t.Fatalf("handoff message is nested or malformed")
			}
			if _, err := compact.ParseHandoff(txt); err != nil {
				t.Fatalf("handoff does not parse: %v", err)
			}
		}
	}
	if summaries != 1 {
		t.Fatalf("%d summary messages in the output, want 1", summaries)
	}
	if got := len(out.Messages); got != p.HeadEnd+len(p.Pinned)+1+tailLen {
		t.Fatalf("output has %d messages, plan says %d", got, p.HeadEnd+len(p.Pinned)+1+tailLen)
	}
}

func sameMessage(t tb, a, b compact.Message, where string, i int) {
	t.Helper()
	if a.ID != b.ID || a.Fingerprint() != b.Fingerprint() || a.Source.Fingerprint != b.Source.Fingerprint ||
		len(a.Source.Records) != len(b.Source.Records) {
		t.Fatalf("%s message %d changed: %q -> %q", where, i, a.ID, b.ID)
	}
	for k := range a.Source.Records {
		if string(a.Source.Records[k]) != string(b.Source.Records[k]) {
			t.Fatalf("%s message %d: source record %d changed", where, i, k)
		}
	}
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
