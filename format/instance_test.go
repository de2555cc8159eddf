package format

import (
	"errors"
	"strings"
	"testing"
)

// QA-14 item 3: an evaluation output of several instances read without
// naming one is read as its first, with a warning that says so and how
// many there are; ReadOptions.Instance picks another; asking for an
// instance of a file without instances, or of one it does not hold, is
// ErrInstanceNotFound.
func TestReadInstanceOfSeveral(t *testing.T) {
	line := func(id, ask string) string {
		return `{"instance_id":"` + id + `","history":[{"id":0,"source":"user","action":"message","args":{"content":"` + ask + `"}},{"id":1,"source":"agent","action":"message","args":{"content":"done"}}]}` + "\n"
	}
	eval := line("django-1", "fix one") + line("safety-misconfig", "fix two") + line("flask-3", "fix three")
	var warned []Warning
	tr, err := ReadWith(strings.NewReader(eval), "output.jsonl", "", ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil || tr.Format != string(OpenHands) || !strings.Contains(tr.Messages[0].Text(), "fix one") {
		t.Fatalf("%v: %+v", err, tr.Messages)
	}
	if len(warned) != 1 || warned[0].Kind != WarnInstance || !strings.Contains(warned[0].Msg, `read instance 1 of 3 (django-1)`) {
		t.Errorf("warnings %v; want one saying instance 1 of 3 was read", warned)
	}
	warned = nil
	tr, err = ReadWith(strings.NewReader(eval), "output.jsonl", "", ReadOptions{Instance: "safety-misconfig", Warn: func(w Warning) { warned = append(warned, w) }})
	if err != nil || !strings.Contains(tr.Messages[0].Text(), "fix two") || len(warned) != 0 {
		t.Errorf("instance picked: %v, %+v, warnings %v", err, tr.Messages, warned)
	}
	if _, err := ReadWith(strings.NewReader(eval), "output.jsonl", "", ReadOptions{Instance: "nope"}); !errors.Is(err, ErrInstanceNotFound) ||
		!strings.Contains(err.Error(), "safety-misconfig") {
		t.Errorf("unknown instance: %v; want ErrInstanceNotFound listing the instances", err)
	}
	chat := `[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]`
	if _, err := ReadWith(strings.NewReader(chat), "chat.json", "", ReadOptions{Instance: "x"}); !errors.Is(err, ErrInstanceNotFound) {
		t.Errorf("instance of a chat: %v; want ErrInstanceNotFound", err)
	}
	// One instance: nothing to say.
	warned = nil
	if _, err := ReadWith(strings.NewReader(line("only", "fix")), "one.jsonl", "", ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }}); err != nil || len(warned) != 0 {
		t.Errorf("one instance: %v, warnings %v", err, warned)
	}
}
