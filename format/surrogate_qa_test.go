package format_test

import (
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-18 (issue 14 item 7 for escapes): a lone surrogate escape (\ud83d with
// no low half, as a JavaScript agent writes when it cuts a string inside an
// emoji) decodes to U+FFFD. Like raw invalid UTF-8, it must be warned about
// with its location, and be an error with StrictUTF8.
func TestQALoneSurrogateWarned(t *testing.T) {
	in := `{"parentUuid":null,"type":"user","message":{"role":"user","content":"emoji cut \ud83d end"},"uuid":"u1","sessionId":"s"}` + "\n" +
		`{"parentUuid":"u1","type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"ok"}]},"uuid":"u2","sessionId":"s"}` + "\n"
	var warned []format.Warning
	_, err := format.ReadWith(strings.NewReader(in), "s.jsonl", "", format.ReadOptions{Warn: func(w format.Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warned {
		t.Logf("warning: %v", w)
	}
	if len(warned) == 0 {
		t.Errorf("a lone surrogate escape was read as U+FFFD with no warning")
	}
	if _, err := format.ReadWith(strings.NewReader(in), "s.jsonl", "", format.ReadOptions{StrictUTF8: true}); err == nil {
		t.Errorf("StrictUTF8 accepts a lone surrogate escape")
	}
}
