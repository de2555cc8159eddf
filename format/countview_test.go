package format_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/elemgen"
	"github.com/compactkit/compact/internal/jsonscan"
	"pgregory.net/rapid"
)

// countViewChecker holds CountView to the reader, one element at a time:
// whenever the view builds a message of an element, the reader makes one
// message of a request holding only that element, and the token counter
// reads the same of both.
type countViewChecker struct {
	accepted, checked int
}

// errorer is what check reports to: a testing.TB or a *rapid.T.
type errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

func (c *countViewChecker) check(t errorer, name string, api format.Name, elem []byte) {
	t.Helper()
	if !utf8.Valid(elem) || !jsonscan.Valid(elem) {
		return // the caller's precondition
	}
	c.checked++
	cv := format.NewCountView()
	defer cv.Release()
	var m compact.Message
	var ok bool
	body := fmt.Appendf(nil, `{"model":"gpt-4o","messages":[%s]}`, elem)
	if api == format.OpenAIChat {
		m, ok = cv.ChatMessage(elem)
	} else {
		body = fmt.Appendf(nil, `{"model":"gpt-4.1","input":[%s]}`, elem)
		// Classifying reads only the item's kind: it may accept an item
		// that building declines, never the reverse.
		turn, classified := cv.ResponsesItem(elem, nil)
		var built bool
		built, ok = cv.ResponsesItem(elem, &m)
		if ok && (!classified || built != turn) {
			t.Errorf("%s: the view classifies the item (%t, turn %t) but builds it (turn %t)", name, classified, turn, built)
		}
		if ok && turn != (m.Role == compact.RoleAssistant) {
			t.Errorf("%s: a turn item (%t) made a message of role %q", name, turn, m.Role)
		}
	}
	if !ok {
		return
	}
	c.accepted++
	tr, err := format.Read(bytes.NewReader(body), "request", api)
	if err != nil {
		t.Errorf("%s: the view built a message of an element the reader refuses: %v", name, err)
		return
	}
	if len(tr.Messages) != 1 {
		t.Errorf("%s: the view built a message, the reader %d", name, len(tr.Messages))
		return
	}
	if g, w := elemgen.Counted(m), elemgen.Counted(tr.Messages[0]); g != w {
		t.Errorf("%s:\nview   %s\nreader %s", name, g, w)
	}
}

// TestCountViewMatchesReader: on every element of the corpus's request
// shapes (each transcript written as Chat Completions messages, the raw
// OpenAI Chat logs, the Responses items of Codex rollouts), CountView
// either declines or builds what the reader's message counts.
func TestCountViewMatchesReader(t *testing.T) {
	if !corpus.Available() {
		if corpus.Required() {
			t.Fatal("corpus missing and COMPACT_REQUIRE_CORPUS=1")
		}
		t.Skip("corpus not found: ../shared/corpus or $COMPACT_CORPUS")
	}
	var c countViewChecker
	files := corpus.AllTranscripts(t)
	if testing.Short() {
		files = files[:min(len(files), 20)]
	}
	elements := func(name string, list []byte, api format.Name) {
		list = bytes.TrimSpace(list)
		if len(list) > 0 && list[0] == '{' {
			var obj map[string]json.RawMessage
			if json.Unmarshal(list, &obj) != nil || obj["messages"] == nil {
				return
			}
			list = obj["messages"]
		}
		elems, ok := jsonscan.Elements(list)
		if !ok {
			return
		}
		for k, e := range elems {
			c.check(t, fmt.Sprintf("%s element %d", name, k), api, list[e.Start:e.End])
		}
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(f)
		if tr, err := format.Read(bytes.NewReader(raw), f, ""); err == nil {
			var w bytes.Buffer
			if format.Write(&w, tr, format.OpenAIChat) == nil {
				elements(base+" as Chat", w.Bytes(), format.OpenAIChat)
			}
		}
		if strings.HasPrefix(base, "openai") {
			elements(base, raw, format.OpenAIChat)
		}
		for line := range bytes.Lines(raw) {
			var rec struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Type == "response_item" && len(rec.Payload) > 0 {
				c.check(t, base+" Responses item", format.OpenAIResponses, rec.Payload)
			}
		}
	}
	t.Logf("%d corpus elements, %d built by the view", c.checked, c.accepted)
	if c.accepted < c.checked/4 {
		t.Errorf("the view built only %d of %d elements: it checks nothing", c.accepted, c.checked)
	}
}

// TestCountViewMatchesReaderRandom draws elements of both APIs from the
// shapes the view reads and from ones it must decline, with escapes,
// nulls, empty texts and odd keys.
func TestCountViewMatchesReaderRandom(t *testing.T) {
	var c countViewChecker
	rapid.Check(t, func(rt *rapid.T) {
		api := rapid.SampledFrom([]format.Name{format.OpenAIChat, format.OpenAIResponses}).Draw(rt, "api")
		elem := elemgen.Element(rt, api == format.OpenAIChat, "c1")
		c.check(rt, elem, api, []byte(elem))
	})
	t.Logf("%d random elements, %d built by the view", c.checked, c.accepted)
	if c.accepted == 0 {
		t.Error("the view built none of the random elements")
	}
}

// FuzzCountView: on any bytes, CountView never panics, and whatever element
// it builds a message of, the reader reads as one message that counts the
// same (countViewChecker). The seeds are one element of each shape the
// view builds or declines.
func FuzzCountView(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}]}`,
		`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"ok"}]}`,
		`{"role":"assistant","refusal":"no","reasoning_content":"think"}`,
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`,
		`{"type":"function_call","call_id":"c1","name":"shell","arguments":"{\"cmd\":\"ls\"}"}`,
		`{"type":"function_call_output","call_id":"c1","output":"a.go\n"}`,
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"plan"}]}`,
		`{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"}`,
		`{"role":"user","content":"lone \ud83d surrogate","role":"user"}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, elem []byte, chat bool) {
		var c countViewChecker
		api := format.OpenAIResponses
		if chat {
			api = format.OpenAIChat
		}
		c.check(t, "fuzz", api, elem)
	})
}
