package compactor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A Codex shell output is a JSON envelope on one line; shortening it as
// text would cut through its JSON. Its long values are shortened instead.
func TestShortenOutputKeepsJSONValid(t *testing.T) {
	pc := PruneConfig{}
	pc.fill()
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("src/pkg%03d/file.go:12: declared and not used: x%d <tag>", i, i))
	}
	env, _ := json.Marshal(map[string]any{"output": strings.Join(lines, "\n"), "metadata": map[string]any{"exit_code": 1, "duration_seconds": 0.4}})
	count := func(s string) int { return len(s) / 4 }

	got, ok := pc.shortenOutput(string(env), count)
	if !ok {
		t.Fatal("a 30 KB output was not shortened")
	}
	if !json.Valid([]byte(got)) {
		t.Fatalf("shortened envelope is not JSON: %.300s", got)
	}
	var v struct {
		Output   string         `json:"output"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	if v.Metadata["exit_code"] != float64(1) {
		t.Errorf("metadata lost: %v", v.Metadata)
	}
	if !strings.HasPrefix(v.Output, lines[0]+"\n") || !strings.HasSuffix(v.Output, lines[len(lines)-1]) ||
		!strings.Contains(v.Output, "lines omitted") {
		t.Errorf("output not cut to its first and last lines: %.200q … %.200q", v.Output, v.Output[max(0, len(v.Output)-200):])
	}
	if strings.Contains(got, `\u003c`) {
		t.Error("re-encoding escaped HTML characters the source did not")
	}
	if len(got) >= len(env)/4 {
		t.Errorf("shortened to %d of %d bytes", len(got), len(env))
	}

	// Text, and JSON-looking text that is not JSON, are shortened as text.
	text := strings.Join(lines, "\n")
	if short, ok := pc.shortenOutput(text, count); !ok || !strings.Contains(short, "lines omitted") {
		t.Error("plain text output not shortened")
	}
	broken := "{" + text
	if short, ok := pc.shortenOutput(broken, count); !ok || !strings.HasPrefix(short, "{src/") {
		t.Error("invalid JSON not shortened as text")
	}
}
