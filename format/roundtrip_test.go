package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"pgregory.net/rapid"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// writers are the formats compact can write.
var writers = []Name{OpenAIChat, OpenAIChatJSONL, Anthropic}

// content is what a round trip must keep of a message: everything but its
// ID, its Source and the tags a reader derives (they are not content).
type content struct {
	Role        compact.Role
	Name        string
	Parts       []compact.Part
	ToolCallIDs []string
	Synthetic   bool
	Summary     bool
}

func contentOf(t compact.Transcript) []content {
	out := make([]content, len(t.Messages))
	for i, m := range t.Messages {
		c := content{Role: m.Role, Name: m.Name, ToolCallIDs: m.ToolCallIDs, Synthetic: m.Synthetic, Summary: m.Summary}
		if len(c.ToolCallIDs) == 0 {
			c.ToolCallIDs = nil
		}
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				tc := *p.ToolCall
				tc.Arguments = compactJSON(tc.Arguments)
				tc.Kind, tc.Target = "", ""
				p.ToolCall = &tc
			}
			p.Failed, p.Harness = false, false
			c.Parts = append(c.Parts, p)
		}
		out[i] = c
	}
	return out
}

func sameContent(t tb, got, want compact.Transcript) {
	t.Helper()
	if g, w := contentOf(got), contentOf(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("content differs after the round trip:\n got:\n  %s\nwant:\n  %s",
			strings.Join(sigs(got), "\n  "), strings.Join(sigs(want), "\n  "))
	}
}

func writeTo(t tb, tr compact.Transcript, to Name) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, tr, to); err != nil {
		t.Fatalf("Write %s: %v", to, err)
	}
	return b.Bytes()
}

func readAs(t tb, data []byte, as Name) compact.Transcript {
	t.Helper()
	tr, err := Read(bytes.NewReader(data), "out", as)
	if err != nil {
		t.Fatalf("reading back %s: %v\n%s", as, err, data)
	}
	return tr
}

// testdataFiles lists every fixture of the API formats.
func testdataFiles(t *testing.T) []string {
	var files []string
	for _, dir := range []string{"openai", "anthropic", "responses"} {
		m, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json*"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	return files
}

// TestRoundTripSameFormat: read, write in the same format, read again: the
// same content, every message's record byte for byte, and writing again
// gives the same bytes.
func TestRoundTripSameFormat(t *testing.T) {
	for _, file := range testdataFiles(t) {
		in := readFile(t, file)
		f, _ := Lookup(Name(in.Format))
		if f.Write == nil {
			continue
		}
		t.Run(file, func(t *testing.T) {
			out := writeTo(t, in, f.Name)
			back := readAs(t, out, f.Name)
			sameContent(t, back, in)
			for i := range in.Messages {
				if !slices.EqualFunc(back.Messages[i].Source.Records, in.Messages[i].Source.Records, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
					t.Errorf("message %d: records changed:\n got %s\nwant %s", i, back.Messages[i].Source.Records, in.Messages[i].Source.Records)
				}
				if back.Messages[i].ID != in.Messages[i].ID {
					t.Errorf("message %d: ID %q, want %q", i, back.Messages[i].ID, in.Messages[i].ID)
				}
			}
			if !reflect.DeepEqual(back.Tools, in.Tools) {
				t.Errorf("tools changed: %+v, want %+v", back.Tools, in.Tools)
			}
			if in.Envelope != nil && !bytes.Equal(back.Envelope, in.Envelope) {
				t.Errorf("envelope changed:\n got %s\nwant %s", back.Envelope, in.Envelope)
			}
			if again := writeTo(t, back, f.Name); !bytes.Equal(again, out) {
				t.Errorf("writing the re-read transcript changed the bytes:\n%s\n---\n%s", again, out)
			}
		})
	}
}

// TestChangedMessageIsReencoded: a changed message is encoded anew (keeping
// its unchanged blocks as read); the others stay byte for byte.
func TestChangedMessageIsReencoded(t *testing.T) {
	cases := []struct {
		file  string
		index int
		keep  string // a source fragment the re-encoded message must still hold
	}{
		{"testdata/anthropic/request.json", 2, `"signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDrTKC"`},
		{"testdata/anthropic/request.json", 0, `"cache_control": {"type": "ephemeral"}`},
		{"testdata/anthropic/server_tools.json", 1, `"encrypted_content": "EqgfCioIARgBIiQ3"`},
		{"testdata/openai/parts.json", 1, `"input_audio": {"data": "UklGRg==", "format": "wav"}`},
		{"testdata/openai/request_tools.json", 3, ""},
		{"testdata/openai/session.jsonl", 2, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s#%d", c.file, c.index), func(t *testing.T) {
			in := readFile(t, c.file)
			changed := in.Clone()
			m := &changed.Messages[c.index]
			edit(m)
			if m.Unchanged() {
				t.Fatal("the edit went unnoticed")
			}
			out := writeTo(t, changed, Name(in.Format))
			// Reused blocks keep their content; encoding/json compacts them.
			keep := compactJSON([]byte("{" + c.keep + "}"))
			if c.keep != "" && !bytes.Contains(compactAll(out), keep[1:len(keep)-1]) {
				t.Errorf("the unchanged block %s was not kept:\n%s", c.keep, out)
			}
			back := readAs(t, out, Name(in.Format))
			sameContent(t, back, changed)
			for i := range in.Messages {
				if i == c.index {
					continue
				}
				if !bytes.Equal(back.Messages[i].Source.Records[0], in.Messages[i].Source.Records[0]) {
					t.Errorf("message %d was not written byte for byte", i)
				}
			}
		})
	}
}

// edit changes a message's first text (a text part if it has one), where
// every format can say it.
func edit(m *compact.Message) {
	k := slices.IndexFunc(m.Parts, func(p compact.Part) bool { return p.Type == compact.PartText })
	if k < 0 {
		k = slices.IndexFunc(m.Parts, func(p compact.Part) bool { return p.Text != "" })
	}
	m.Parts[k].Text += " [edited]"
}

// compactAll removes insignificant spaces from JSON or JSON lines.
func compactAll(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(b, []byte("\n")) {
		out.Write(line)
	}
	return compactJSON(out.Bytes())
}

// TestConvertGolden pins every fixture's conversion to every writer.
// Regenerate with go test ./format/ -update after checking the diff.
func TestConvertGolden(t *testing.T) {
	for _, file := range testdataFiles(t) {
		in := readFile(t, file)
		for _, to := range writers {
			ext := ".json"
			if to == OpenAIChatJSONL {
				ext = ".jsonl"
			}
			golden(t, filepath.Join(filepath.Dir(file), "golden", filepath.Base(file)+".to-"+string(to)+ext), writeTo(t, in, to))
		}
	}
}

// TestConvertKeepsToolPairs: converting any fixture to any writer keeps its
// calls, results and orphans, and loses no text.
func TestConvertKeepsToolPairs(t *testing.T) {
	for _, file := range testdataFiles(t) {
		in := readFile(t, file)
		for _, to := range writers {
			t.Run(filepath.Base(file)+"->"+string(to), func(t *testing.T) {
				checkConversion(t, in, to)
			})
		}
	}
}

// checkConversion writes in to format to, reads it back and checks what a
// conversion must keep. It returns the output.
func checkConversion(t tb, in compact.Transcript, to Name) []byte {
	t.Helper()
	out := writeTo(t, in, to)
	back := readAs(t, out, to)
	if g, w := orphanKinds(back), orphanKinds(in); g != w {
		t.Fatalf("orphans %s, want %s\n%s", g, w, out)
	}
	if g, w := callNames(back), callNames(in); g != w {
		t.Fatalf("calls %s, want %s\n%s", g, w, out)
	}
	if missing := missingTexts(in, back); len(missing) > 0 {
		t.Fatalf("texts lost: %q\n%s", missing, out)
	}
	return out
}

func orphanKinds(t compact.Transcript) string {
	var k []string
	for _, o := range t.Orphans() {
		k = append(k, string(o.Kind))
	}
	slices.Sort(k) // splitting a message may reorder orphans that shared it
	return fmt.Sprint(k)
}

func callNames(t compact.Transcript) string {
	var n []string
	for _, m := range t.Messages {
		for _, c := range m.ToolCalls() {
			n = append(n, c.Name)
		}
	}
	return fmt.Sprint(n)
}

// texts returns every text a reader sees (text parts and result texts), as
// a multiset.
func texts(t compact.Transcript) map[string]int {
	n := map[string]int{}
	for _, m := range t.Messages {
		for _, p := range m.Parts {
			if (p.Type == compact.PartText || p.Type == compact.PartToolResult) && p.Text != "" {
				n[p.Text]++
			}
		}
	}
	return n
}

func missingTexts(in, out compact.Transcript) []string {
	have := texts(out)
	var missing []string
	for s, k := range texts(in) {
		if have[s] < k {
			missing = append(missing, s)
		}
	}
	return missing
}

// TestRoundTripProperty: a random transcript of the shape each writable
// format's reader produces comes back equal through the writer and reader.
func TestRoundTripProperty(t *testing.T) {
	for _, f := range writers {
		t.Run(string(f), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				in := canonical(rt, f)
				out := writeTo(rt, in, f)
				back := readAs(rt, out, f)
				sameContent(rt, back, in)
				if again := writeTo(rt, back, f); !bytes.Equal(again, out) {
					rt.Fatalf("writing the re-read transcript changed the bytes:\n%s\n---\n%s", again, out)
				}
			})
		})
	}
}

// TestConvertProperty: any transcript, of any format's shape (calls and
// results in one message, id-less calls, several ids per result, roles
// without equivalent, thinking-only messages), written by any writer, reads
// back with the same calls, orphans and texts, and writing it again is
// stable.
func TestConvertProperty(t *testing.T) {
	for _, f := range writers {
		t.Run(string(f), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				in := arbitrary(rt)
				out := checkConversion(rt, in, f)
				back := readAs(rt, out, f)
				if again := writeTo(rt, back, f); !bytes.Equal(again, out) {
					rt.Fatalf("not stable:\n%s\n---\n%s", again, out)
				}
			})
		})
	}
}

// Generators.

func genText(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.StringMatching(`[a-zA-Z0-9 .,:!?'"<>&\\/\n\t{}\[\]-]{1,40}`),
		rapid.StringN(1, 20, -1),
	).Filter(func(s string) bool { return s != "" }).Draw(t, label)
}

func genImage(t *rapid.T) *compact.Image {
	if rapid.Bool().Draw(t, "inline") {
		return &compact.Image{MediaType: rapid.SampledFrom([]string{"image/png", "image/jpeg"}).Draw(t, "mt"),
			Data: rapid.StringMatching(`[A-Za-z0-9+/]{4,16}={0,2}`).Draw(t, "data")}
	}
	return &compact.Image{URL: "https://example.com/" + rapid.StringMatching(`[a-z]{1,8}\.png`).Draw(t, "url")}
}

// genArgs returns tool arguments: a JSON object, or (objectOnly false) any
// JSON value, a free-form string included.
func genArgs(t *rapid.T, objectOnly bool) json.RawMessage {
	obj := map[string]any{}
	for i, n := 0, rapid.IntRange(0, 3).Draw(t, "nargs"); i < n; i++ {
		obj[rapid.StringMatching(`[a-z]{1,6}`).Draw(t, "key")] = rapid.OneOf(
			rapid.Just[any](genText(t, "sval")), rapid.Just[any](float64(rapid.IntRange(-5, 5).Draw(t, "nval"))),
			rapid.Just[any](true), rapid.Just[any]([]any{"a", 1.0})).Draw(t, "val")
	}
	v := any(obj)
	if !objectOnly {
		switch rapid.IntRange(0, 3).Draw(t, "argkind") {
		case 1:
			v = genText(t, "freeform")
		case 2:
			v = []any{1.0, "x"}
		}
	}
	return jsonOf(v) // as the readers encode: no HTML escapes
}

var callSeq int

func genCall(t *rapid.T, idless bool, objectOnly bool) *compact.ToolCall {
	callSeq++
	id := fmt.Sprintf("call_%d", callSeq)
	if idless {
		id = ""
	}
	return &compact.ToolCall{ID: id, Name: rapid.SampledFrom([]string{"bash", "read_file", "edit", "web_search"}).Draw(t, "tool"), Arguments: genArgs(t, objectOnly)}
}

// canonical draws a transcript as the reader of format f produces one.
func canonical(t *rapid.T, f Name) compact.Transcript {
	tr := compact.Transcript{Format: string(f)}
	var open []string // ids of calls not answered yet
	text := func() compact.Part { return compact.Part{Type: compact.PartText, Text: genText(t, "text")} }
	switch f {
	case Anthropic:
		if rapid.Bool().Draw(t, "system") {
			m := compact.Message{Role: compact.RoleSystem}
			for i, n := 0, rapid.IntRange(1, 3).Draw(t, "sysparts"); i < n; i++ {
				m.Parts = append(m.Parts, text())
			}
			tr.Messages = append(tr.Messages, m)
		}
		for i, n := 0, rapid.IntRange(0, 8).Draw(t, "n"); i < n; i++ {
			if rapid.Bool().Draw(t, "assistant") {
				m := compact.Message{Role: compact.RoleAssistant}
				for j, k := 0, rapid.IntRange(0, 4).Draw(t, "parts"); j < k; j++ {
					switch rapid.IntRange(0, 2).Draw(t, "kind") {
					case 0:
						m.Parts = append(m.Parts, text())
					case 1:
						m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: genText(t, "think")})
					case 2:
						c := genCall(t, false, true)
						open = append(open, c.ID)
						m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: c})
					}
				}
				tr.Messages = append(tr.Messages, m)
				continue
			}
			m := compact.Message{Role: compact.RoleUser}
			for len(open) > 0 && rapid.Bool().Draw(t, "answer") {
				id := open[0]
				open = open[1:]
				isErr := rapid.Bool().Draw(t, "iserr")
				switch rapid.IntRange(0, 2).Draw(t, "resultkind") {
				case 0:
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: id, IsError: isErr})
				case 1:
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: id, IsError: isErr, Text: genText(t, "out")})
				case 2:
					m.Parts = append(m.Parts,
						compact.Part{Type: compact.PartToolResult, CallID: id, IsError: isErr, Text: genText(t, "out")},
						compact.Part{Type: compact.PartToolResult, CallID: id, IsError: isErr, Image: genImage(t)})
				}
			}
			for j, k := 0, rapid.IntRange(0, 3).Draw(t, "parts"); j < k; j++ {
				if rapid.Bool().Draw(t, "img") {
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartImage, Image: genImage(t)})
				} else {
					m.Parts = append(m.Parts, text())
				}
			}
			tr.Messages = append(tr.Messages, m)
		}
	default: // OpenAI Chat, JSON or JSONL
		legacy := false // an id-less call waits for its function message
		for i, n := 0, rapid.IntRange(0, 8).Draw(t, "n"); i < n; i++ {
			role := rapid.SampledFrom([]compact.Role{"system", "developer", "user", "assistant", "tool", "function", "tool"}).Draw(t, "role")
			m := compact.Message{Role: role}
			if role != compact.RoleTool && role != "function" && rapid.IntRange(0, 4).Draw(t, "named") == 0 {
				m.Name = rapid.StringMatching(`[a-z_]{1,8}`).Draw(t, "name")
			}
			content := func(images bool) {
				switch k := rapid.IntRange(0, 3).Draw(t, "content"); k {
				case 0:
				case 1:
					m.Parts = append(m.Parts, text())
				default:
					for j := 0; j < k; j++ {
						if images && rapid.Bool().Draw(t, "img") {
							m.Parts = append(m.Parts, compact.Part{Type: compact.PartImage, Image: genImage(t)})
						} else {
							m.Parts = append(m.Parts, text())
						}
					}
				}
			}
			switch role {
			case "assistant":
				if rapid.Bool().Draw(t, "reasoning") {
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: genText(t, "think")})
				}
				content(false)
				if !legacy && rapid.IntRange(0, 4).Draw(t, "legacy") == 0 {
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: genCall(t, true, false)})
					legacy = true
				} else {
					for j, k := 0, rapid.IntRange(0, 3).Draw(t, "calls"); j < k; j++ {
						c := genCall(t, false, false)
						open = append(open, c.ID)
						m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: c})
					}
				}
			case "tool":
				id := "call_orphan"
				if len(open) > 0 {
					id, open = open[0], open[1:]
				}
				m.ToolCallIDs = []string{id}
				content(false)
			case "function":
				m.Role, m.ToolCallIDs = compact.RoleTool, []string{""}
				m.Name = rapid.StringMatching(`[a-z_]{1,8}`).Draw(t, "fname")
				legacy = false
				content(false)
			default:
				content(role == "user")
			}
			tr.Messages = append(tr.Messages, m)
		}
	}
	if rapid.Bool().Draw(t, "tools") {
		tr.Tools = []compact.ToolDef{{Name: "bash", Description: "run a command", Parameters: json.RawMessage(`{"type":"object"}`)}}
	}
	return tr
}

// arbitrary draws a transcript of any format's shape, as the agent-format
// readers produce them.
func arbitrary(t *rapid.T) compact.Transcript {
	var tr compact.Transcript
	var open []string
	idlessOpen := 0
	text := func() compact.Part { return compact.Part{Type: compact.PartText, Text: genText(t, "text")} }
	for i, n := 0, rapid.IntRange(0, 10).Draw(t, "n"); i < n; i++ {
		role := rapid.SampledFrom([]compact.Role{"system", "developer", "user", "assistant", "tool", "exit"}).Draw(t, "role")
		m := compact.Message{Role: role, Synthetic: rapid.Bool().Draw(t, "synthetic"), Summary: rapid.Bool().Draw(t, "summary")}
		if rapid.IntRange(0, 5).Draw(t, "named") == 0 {
			m.Name = rapid.StringMatching(`[a-z]{1,6}`).Draw(t, "name")
		}
		switch role {
		case "assistant":
			switch rapid.IntRange(0, 4).Draw(t, "shape") {
			case 0: // OpenAI / Anthropic: thinking, text, calls
				if rapid.Bool().Draw(t, "think") {
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: genText(t, "think")})
				}
				if rapid.Bool().Draw(t, "text") {
					m.Parts = append(m.Parts, text())
				}
				for j, k := 0, rapid.IntRange(0, 3).Draw(t, "calls"); j < k; j++ {
					idless := rapid.IntRange(0, 3).Draw(t, "idless") == 0
					c := genCall(t, idless, false)
					if idless {
						idlessOpen++
					} else {
						open = append(open, c.ID)
					}
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: c})
				}
			case 1: // Gemini CLI: calls with their results inline
				for j, k := 0, rapid.IntRange(1, 3).Draw(t, "pairs"); j < k; j++ {
					if rapid.Bool().Draw(t, "text") {
						m.Parts = append(m.Parts, text())
					}
					c := genCall(t, false, false)
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: c},
						compact.Part{Type: compact.PartToolResult, CallID: c.ID, Text: genText(t, "out"), IsError: rapid.Bool().Draw(t, "err")})
				}
			case 4: // a result before its call, in one message
				c := genCall(t, false, false)
				m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: c.ID, Text: genText(t, "out")},
					text(), compact.Part{Type: compact.PartToolCall, ToolCall: c})
			case 2: // thinking only
				m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: genText(t, "think")})
			case 3: // empty
			}
		case "tool":
			k := rapid.IntRange(1, 2).Draw(t, "ids")
			for j := 0; j < k; j++ {
				switch {
				case idlessOpen > 0 && rapid.Bool().Draw(t, "answeridless"):
					idlessOpen--
					m.ToolCallIDs = append(m.ToolCallIDs, "")
				case len(open) > 0 && rapid.IntRange(0, 4).Draw(t, "orphan") > 0:
					m.ToolCallIDs = append(m.ToolCallIDs, open[0])
					open = open[1:]
				default:
					m.ToolCallIDs = append(m.ToolCallIDs, fmt.Sprintf("orphan_%d_%d", i, j))
				}
			}
			if rapid.Bool().Draw(t, "out") {
				m.Parts = append(m.Parts, text())
			}
		default:
			if rapid.IntRange(0, 6).Draw(t, "oddcall") == 0 {
				// A harness's odd message: a call (maybe id-less) and, maybe
				// before it, its result, in a non-assistant role.
				c := genCall(t, rapid.Bool().Draw(t, "oddidless"), false)
				call := compact.Part{Type: compact.PartToolCall, ToolCall: c}
				res := compact.Part{Type: compact.PartToolResult, CallID: c.ID, Text: genText(t, "out")}
				if rapid.Bool().Draw(t, "resultfirst") {
					m.Parts = append(m.Parts, res, call)
				} else {
					m.Parts = append(m.Parts, call, res)
				}
			}
			for len(open) > 0 && rapid.Bool().Draw(t, "answer") {
				m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: open[0], Text: genText(t, "out")})
				open = open[1:]
			}
			for j, k := 0, rapid.IntRange(0, 2).Draw(t, "parts"); j < k; j++ {
				if rapid.IntRange(0, 3).Draw(t, "img") == 0 {
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartImage, Image: genImage(t)})
				} else {
					m.Parts = append(m.Parts, text())
				}
			}
		}
		tr.Messages = append(tr.Messages, m)
	}
	return tr
}

// TestConvertWithoutReuse runs checkConversion on every fixture again with
// each message marked changed, so nothing is reused from the source.
func TestConvertWithoutReuse(t *testing.T) {
	for _, file := range testdataFiles(t) {
		in := readFile(t, file)
		for i := range in.Messages {
			in.Messages[i].Source = compact.Source{}
		}
		in.Envelope = nil
		for _, to := range writers {
			t.Run(filepath.Base(file)+"->"+string(to), func(t *testing.T) {
				checkConversion(t, in, to)
			})
		}
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, compact.Transcript{}, "nope"); err == nil {
		t.Error("want an error for an unknown format")
	}
	if err := Write(&b, compact.Transcript{}, OpenAIResponses); err == nil || !strings.Contains(err.Error(), ErrNoWriter.Error()) {
		t.Errorf("Write responses = %v, want ErrNoWriter", err)
	}
}

// TestConvertToEveryWriterKeepsPairs: converting any sample to every format
// compact writes, agent formats included, keeps each call with its results
// and every text, and keeps a failed result failed where the format can say
// so (an error flag or an error response).
func TestConvertToEveryWriterKeepsPairs(t *testing.T) {
	carriesErrors := map[Name]bool{Anthropic: true, ClaudeCode: true, GeminiCLI: true, OpenHands: true}
	// The samples the repository ships: long agent sessions with records.
	sessions, _ := filepath.Glob(filepath.Join("..", "testdata", "sessions", "*.json*"))
	for _, file := range append(testdataFiles(t), sessions...) {
		in := readFile(t, file)
		for _, f := range Formats() {
			if f.Write == nil {
				continue
			}
			t.Run(filepath.Base(file)+"->"+string(f.Name), func(t *testing.T) {
				out := writeTo(t, in, f.Name)
				// Detected as the format written, with nothing left unread.
				var unread []Warning
				back, err := ReadWith(bytes.NewReader(out), "out", "", ReadOptions{Warn: func(w Warning) {
					if w.Kind == WarnUnread {
						unread = append(unread, w)
					}
				}})
				if err != nil || Name(back.Format) != family2(f.Name, back.Format) {
					t.Fatalf("read back as %s, %v\n%s", back.Format, err, out)
				}
				if len(unread) > 0 {
					t.Errorf("read back with unread records: %v", unread)
				}
				if g, w := orphanKinds(back), orphanKinds(in); g != w {
					t.Fatalf("orphans %s, want %s\n%s", g, w, out)
				}
				if g, w := callNames(back), callNames(in); g != w {
					t.Fatalf("calls %s, want %s\n%s", g, w, out)
				}
				// Formats with one text per message join a message's
				// texts: each must be found in some text read back.
				var all strings.Builder
				for s := range texts(back) {
					all.WriteString(s + "\x00")
				}
				for s := range texts(in) {
					if !strings.Contains(all.String(), s) {
						t.Errorf("text lost: %q\n%s", s, out)
					}
				}
				if carriesErrors[f.Name] {
					if g, w := failedResults(back), failedResults(in); g != w {
						t.Errorf("%d failed results read back, want %d\n%s", g, w, out)
					}
				}
			})
		}
	}
}

// family2 is the name a file written as to reads back as: OpenAI Chat
// JSON and JSONL are one family.
func family2(to Name, got string) Name {
	if family(string(to)) == family(got) {
		return Name(got)
	}
	return to
}

// failedResults counts the results marked failed: by content (IsError) or
// by the reader's tag (a format whose tool messages have no error flag).
func failedResults(t compact.Transcript) int {
	failed := map[string]bool{} // by call id: a result may span parts
	for _, m := range t.Messages {
		for _, p := range m.Parts {
			switch {
			case p.Type == compact.PartToolResult && (p.IsError || p.Failed):
				failed[p.CallID] = true
			case p.Type == compact.PartText && len(m.ToolCallIDs) > 0 && (p.IsError || p.Failed):
				failed[m.ToolCallIDs[0]] = true
			}
		}
	}
	return len(failed)
}
