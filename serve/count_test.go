package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/elemgen"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
	"pgregory.net/rapid"
)

// unreadChecker holds the counting pass to the reader: whenever the pass
// counts a request, its count and its messages (what the counter reads of
// them) equal the reader's.
type unreadChecker struct {
	s                 *serve.Server
	accepted, checked int
}

func newUnreadChecker(t testing.TB) *unreadChecker {
	return &unreadChecker{s: newRig(t).srv}
}

// errorer is what check reports to: a testing.TB or a *rapid.T.
type errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

func (c *unreadChecker) check(t errorer, name, path, model string, body []byte) bool {
	t.Helper()
	u, err := serve.UnreadCount(c.s, path, model, body)
	c.checked++
	if err != nil {
		if u.Counted {
			t.Errorf("%s: the pass counted a request the reader refuses: %v", name, err)
		}
		return false
	}
	if u.PlainOK && u.Plain < u.Want {
		t.Errorf("%s: the byte bound is %d, under the reader's count %d", name, u.Plain, u.Want)
	}
	if !u.Counted {
		return false
	}
	c.accepted++
	for i, trigger := range u.Triggers {
		switch n := u.Bounds[i]; {
		case n < u.Want:
			t.Errorf("%s: under a threshold of %d the pass bounds the request by %d, the reader counts %d", name, trigger, n, u.Want)
		case u.Exact[i] && n != u.Want:
			t.Errorf("%s: the pass counted %d tokens (threshold %d), the reader %d", name, n, trigger, u.Want)
		case !u.Exact[i] && n >= trigger:
			t.Errorf("%s: the pass stopped counting at a bound of %d, not under its threshold %d", name, n, trigger)
		}
	}
	if !u.Exact[0] {
		t.Errorf("%s: at threshold 0 the pass did not count every message", name)
	}
	if len(u.Msgs) != len(u.ReaderMsgs) {
		t.Errorf("%s: the pass made %d messages of the list, the reader %d", name, len(u.Msgs), len(u.ReaderMsgs))
		return true
	}
	for i := range u.Msgs {
		if g, w := elemgen.Counted(u.Msgs[i]), elemgen.Counted(u.ReaderMsgs[i]); g != w {
			t.Errorf("%s: message %d:\npass   %s\nreader %s", name, i, g, w)
			return true
		}
	}
	return true
}

// wrap makes a request of a list written by format.Write (an array, or an
// object holding the list under key).
func wrap(written []byte, key, model string) []byte {
	list := bytes.TrimSpace(written)
	if len(list) > 0 && list[0] == '{' {
		var obj map[string]json.RawMessage
		if json.Unmarshal(list, &obj) != nil || obj[key] == nil {
			return nil
		}
		list = obj[key]
	}
	return fmt.Appendf(nil, `{"model":%q,%q:%s,"stream":false}`, model, key, list)
}

// responseItems returns the Responses API items a Codex rollout holds
// (the payloads of its response_item lines), nil for any other file.
func responseItems(raw []byte) [][]byte {
	var items [][]byte
	for line := range bytes.Lines(raw) {
		var rec struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "response_item" && len(rec.Payload) > 0 {
			items = append(items, rec.Payload)
		}
	}
	return items
}

// TestCountUnreadMatchesReader: on every request shape of the corpus (each
// transcript written as a Chat Completions and as a Responses request, and
// the raw OpenAI Chat logs), of the test generators, and of random ones,
// the counting pass either declines or counts what the reader's messages
// count, message for message.
func TestCountUnreadMatchesReader(t *testing.T) {
	c := newUnreadChecker(t)
	for _, api := range []servetest.API{servetest.Chat, servetest.Responses} {
		for _, cold := range []bool{false, true} {
			body := apiBody(api, 100<<10, "x\"\\y\u00e9\n", cold)
			c.check(t, fmt.Sprintf("%s cold=%t", api, cold), apiPaths[api], "gpt-4o", body)
		}
	}
	if c.accepted != 4 {
		t.Errorf("the pass counted %d of the 4 benchmark requests", c.accepted)
	}
	if !corpus.Available() {
		if corpus.Required() {
			t.Fatal("corpus missing and COMPACT_REQUIRE_CORPUS=1")
		}
		t.Skip("corpus not found: ../shared/corpus or $COMPACT_CORPUS; the generated shapes were checked")
	}
	files := corpus.AllTranscripts(t)
	if testing.Short() {
		files = files[:min(len(files), 20)]
	}
	rollouts, counted := 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := format.Read(bytes.NewReader(raw), f, "")
		if err != nil {
			t.Logf("%s: %v", filepath.Base(f), err)
			continue
		}
		for _, to := range []struct {
			name  format.Name
			key   string
			api   servetest.API
			model string
		}{
			{format.OpenAIChat, "messages", servetest.Chat, "gpt-4o"},
			{format.OpenAIChat, "messages", servetest.Chat, "claude-sonnet-4-5"},
			{format.Anthropic, "messages", servetest.Messages, "claude-sonnet-4-5"},
			{format.Anthropic, "messages", servetest.Messages, "gpt-4o"},
		} {
			var w bytes.Buffer
			if err := format.Write(&w, tr, to.name); err != nil {
				t.Logf("%s as %s: %v", filepath.Base(f), to.name, err)
				continue
			}
			if body := wrap(w.Bytes(), to.key, to.model); body != nil {
				c.check(t, filepath.Base(f)+" as "+string(to.name), apiPaths[to.api], to.model, body)
			}
		}
		if items := responseItems(raw); items != nil {
			body := fmt.Appendf(nil, `{"model":"gpt-4.1","input":[%s],"store":false}`, bytes.Join(items, []byte(",")))
			rollouts++
			if c.check(t, filepath.Base(f)+" as Responses items", apiPaths[servetest.Responses], "gpt-4.1", body) {
				counted++
			}
		}
		if strings.HasPrefix(filepath.Base(f), "openai") {
			if body := wrap(raw, "messages", "gpt-4o"); body != nil {
				c.check(t, filepath.Base(f), apiPaths[servetest.Chat], "gpt-4o", body)
			}
		}
	}
	t.Logf("Codex rollouts as Responses requests: %d, %d counted by the pass", rollouts, counted)
	t.Logf("%d corpus and generated requests, %d counted by the pass", c.checked, c.accepted)
	if c.accepted < c.checked/4 {
		t.Errorf("the pass counted only %d of %d requests: it checks nothing", c.accepted, c.checked)
	}
}

// TestCountUnreadMatchesReaderRandom draws requests of both APIs from the
// elements the pass reads and from ones it must decline, with escapes,
// nulls, empty texts and odd keys.
func TestCountUnreadMatchesReaderRandom(t *testing.T) {
	c := newUnreadChecker(t)
	rapid.Check(t, func(rt *rapid.T) {
		api := rapid.SampledFrom([]servetest.API{servetest.Chat, servetest.Responses}).Draw(rt, "api")
		var elems []string
		for k := range rapid.IntRange(1, 5).Draw(rt, "elems") {
			elems = append(elems, elemgen.Element(rt, api == servetest.Chat, fmt.Sprintf("c%d", k)))
		}
		key, extra := "messages", `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
		if api == servetest.Responses {
			key, extra = "input", `"instructions":"Be brief.","tools":[{"type":"function","name":"f","parameters":{}}]`
		}
		body := fmt.Appendf(nil, `{"model":"gpt-4o",%q:[%s],%s}`, key, strings.Join(elems, ","), extra)
		c.check(rt, string(body), apiPaths[api], "gpt-4o", body)
	})
	t.Logf("%d random requests, %d counted by the pass", c.checked, c.accepted)
	if c.accepted == 0 {
		t.Error("the pass counted none of the random requests")
	}
}
