package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-39.4: an error whose message quotes its cause says the cause once
// ("the input changed since it was read: …" was printed twice).
func TestErrorSaysItsCauseOnce(t *testing.T) {
	lines := `{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/w"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello there"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}
`
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, f, err := readSpans(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !hasSpans(&tr) {
		t.Fatal("no spans kept")
	}
	if err := os.WriteFile(path, []byte(strings.Replace(lines, "hello there", "hello THERE", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	err = LoadSources(f, path, &tr)
	if err == nil {
		t.Fatal("LoadSources of a changed file: no error")
	}
	if n := strings.Count(err.Error(), ErrSourceChanged.Error()); n != 1 {
		t.Errorf("the cause is said %d times: %v", n, err)
	}
}
