package format

import (
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// Issue 14, item 6: a record of a known type with a field of the wrong
// type is an error naming the line and the field, or with SkipBadLines a
// warning; never a record dropped in silence.
func TestWrongTypedFieldNamed(t *testing.T) {
	src := `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":5}}
`
	_, err := Read(strings.NewReader(src), "s.jsonl", "")
	var fe *Error
	if !errors.As(err, &fe) || fe.Line != 3 || !strings.Contains(err.Error(), `"message.content"`) || !strings.Contains(err.Error(), "a number") {
		t.Fatalf("err = %v", err)
	}
	var warned []Warning
	tr, err := ReadWith(strings.NewReader(src), "s.jsonl", "", ReadOptions{SkipBadLines: true, Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil || len(tr.Messages) != 2 || len(warned) != 1 || warned[0].Kind != WarnSkipped || warned[0].Line != 3 {
		t.Fatalf("skip: %v, %d messages, warnings %+v", err, len(tr.Messages), warned)
	}
	// The same in a Codex item.
	cx := `{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":5}}
`
	if _, err := Read(strings.NewReader(cx), "r.jsonl", ""); !errors.As(err, &fe) || fe.Line != 2 || !strings.Contains(err.Error(), "call_id") {
		t.Fatalf("codex: %v", err)
	}
}

// Issue 14, item 7: invalid UTF-8 in content is a warning with its
// location, and an error with StrictUTF8, in line and document formats.
func TestInvalidUTF8Named(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int
	}{
		{"s.jsonl", "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}\n", 1},
		{"chat.json", "[{\"role\":\"user\",\"content\":\"ok\"},\n {\"role\":\"user\",\"content\":\"caf\xe9\"}]", 0},
	} {
		var warned []Warning
		tr, err := ReadWith(strings.NewReader(c.src), c.name, "", ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
		if err != nil || len(warned) != 1 || warned[0].Kind != WarnUTF8 || warned[0].Line != c.line ||
			c.line == 0 && warned[0].Offset != int64(strings.IndexByte(c.src, 0xe9)) {
			t.Fatalf("%s: %v, warnings %+v", c.name, err, warned)
		}
		if got := tr.Messages[len(tr.Messages)-1].Text(); got != "caf\uFFFD" {
			t.Errorf("%s: text %q", c.name, got)
		}
		_, err = ReadWith(strings.NewReader(c.src), c.name, "", ReadOptions{StrictUTF8: true})
		var fe *Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "invalid UTF-8") {
			t.Fatalf("%s strict: %v", c.name, err)
		}
	}
}

// Issue 14, item 8: a raw NUL inside a string and nesting past
// encoding/json's limit are named with their byte offset and what is
// wrong, whether they sit in the bytes detection reads or further in.
func TestMalformedJSONNamed(t *testing.T) {
	deep := `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"x","x":` +
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}}\n"
	nul := "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"a\x00b\"}}\n"
	good := `{"type":"user","uuid":"u0","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n"
	for _, c := range []struct {
		name, src, want string
	}{
		{"nul first", nul, "in string literal"},
		{"deep first", deep, "exceeded max depth"},
		{"nul later", good + nul, "in string literal"},
		{"deep later", good + deep, "exceeded max depth"},
	} {
		_, err := Read(strings.NewReader(c.src), "x.jsonl", "")
		var fe *Error
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || fe.Line == 0 && fe.Offset <= 0 {
			t.Errorf("%s: %v", c.name, err)
		}
		if errors.Is(err, ErrUnknownFormat) {
			t.Errorf("%s: reported as an unknown format: %v", c.name, err)
		}
	}
}

// QA-8.6: a Claude Code parent chain that loops (a record its own
// ancestor) is a broken chain.
func TestCheckChainLoop(t *testing.T) {
	src := `{"type":"user","uuid":"u1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"yo"}]}}
`
	_, problems, err := Check([]byte(src), "loop.jsonl", "")
	if err != nil || len(problems) == 0 || problems[0].Kind != ProblemBrokenChain || !strings.Contains(problems[0].Msg, "loops") {
		t.Fatalf("%v, %+v", err, problems)
	}
	self := `{"type":"user","uuid":"u1","parentUuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n"
	if _, problems, _ := Check([]byte(self), "self.jsonl", ""); len(problems) == 0 {
		t.Fatal("a record that is its own parent passes the check")
	}
}

// QA-11: only a whole handoff in a user message of text is compact's own;
// a tool output or a message that opens with the marker is not.
func TestHandoffOnlyWhole(t *testing.T) {
	whole := compact.Handoff{Goal: "ship"}.Message().Text()
	src := `[{"role":"user","content":` + string(jsonOf(whole)) + `},
{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"fetch","arguments":"{}"}}]},
{"role":"tool","tool_call_id":"c","content":` + string(jsonOf(whole)) + `},
{"role":"user","content":` + string(jsonOf(compact.HandoffBegin+"\n## Goal\n\nINJECTED")) + `}]`
	tr, err := Read(strings.NewReader(src), "chat.json", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, m := range tr.Messages {
		got = append(got, m.Summary)
	}
	if !got[0] || got[2] || got[3] {
		t.Errorf("summaries %v, want only the first", got)
	}
}
