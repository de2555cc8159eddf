package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// QA-35: the latest tool result alone is over the window (a `cat` of a
// large log: the most common way an agent overflows). compact cannot drop
// it (it is in the verbatim tail), so it writes the transcript unchanged,
// says only "unchanged (ineffective: …)" and exits 0: neither the line nor
// the exit status says the output still overflows the window (the JSON
// report has fits:false). A script or agent loop that checks the exit
// status goes on and overflows. Want: an output that fits (the oversized
// tool output shortened, its call kept), or an exit status that is not 0
// and a line that says "over the window".
func TestOverWindowResultIsNotASilentSuccess(t *testing.T) {
	msgs := []map[string]any{
		{"role": "system", "content": "You are a coding agent."},
		{"role": "user", "content": "Find why the build fails."},
	}
	for i := 0; i < 12; i++ {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "bash", "arguments": fmt.Sprintf(`{"command":"step %d"}`, i)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat(fmt.Sprintf("output of step %d ", i), 40)})
	}
	msgs = append(msgs,
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "big", "type": "function",
			"function": map[string]any{"name": "bash", "arguments": `{"command":"cat build.log"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "big", "content": strings.Repeat("error: something failed at line 12\n", 3000)})
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "chat.json")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		args := []string{"--window", "8000", "--summarizer", "fallback", in, "-o", filepath.Join(dir, "out.json"), "--report", filepath.Join(dir, "r.json")}
		if force {
			args = append([]string{"--force"}, args...)
		}
		code, _, stderr := runCmd(t, "", nil, args...)
		var rep struct {
			Fits     bool     `json:"fits"`
			Warnings []string `json:"warnings"`
		}
		if rb, err := os.ReadFile(filepath.Join(dir, "r.json")); err == nil {
			_ = json.Unmarshal(rb, &rep)
		}
		if rep.Fits {
			continue // the output fits: nothing to say
		}
		if code == exitOK {
			t.Errorf("force=%v: the output does not fit the window (report fits:false), exit 0: %q", force, stderr)
		}
		if !strings.Contains(stderr, "over the window") {
			t.Errorf("force=%v: the line does not say the output is over the window: %q", force, stderr)
		}
		if code != exitOverWindow || strings.Count(stderr, "\n") != 1 {
			t.Errorf("force=%v: exit %d, stderr %q; want exit %d and the one line", force, code, stderr, exitOverWindow)
		}
		if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.HasPrefix(w, "over the window") }) {
			t.Errorf("force=%v: the report does not say over the window: %q", force, rep.Warnings)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.json")); err != nil {
			t.Errorf("force=%v: the output was not written: %v", force, err)
		}
		os.Remove(filepath.Join(dir, "out.json"))
	}
}

// QA-35, batch: a file written over the window is marked in the report
// (over_window, totals.over_window), listed in the summary, and the batch
// exits 3 as compact does; a batch that fits exits 0.
func TestBatchOverWindow(t *testing.T) {
	msgs := []map[string]any{{"role": "user", "content": "Find why the build fails."}}
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "bash", "arguments": fmt.Sprintf(`{"command":"step %d"}`, i)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat(fmt.Sprintf("output of step %d ", i), 40)})
	}
	msgs = append(msgs,
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "big", "type": "function",
			"function": map[string]any{"name": "bash", "arguments": `{"command":"cat build.log"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "big", "content": strings.Repeat("error: something failed at line 12\n", 3000)})
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "chat.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(dir, "report.json")
	code, stdout, stderr := runCmd(t, "", nil, "batch", in, "--out", filepath.Join(dir, "out"), "--report", rep,
		"--summarizer", "fallback", "--force", "--window", "8000")
	if code != exitOverWindow || !strings.Contains(stderr, "over the window") || !strings.Contains(stdout, "written over the window") {
		t.Errorf("exit %d, want %d; stdout %q; stderr %q", code, exitOverWindow, stdout, stderr)
	}
	var r struct {
		Totals batchTotals   `json:"totals"`
		Files  []*fileResult `json:"files"`
	}
	raw, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Totals.OverWindow != 1 || len(r.Files) != 1 || !r.Files[0].OverWindow || r.Files[0].Output == "" {
		t.Errorf("report: totals %+v, files %+v", r.Totals, r.Files)
	}
	// The same file in a window it fits: exit 0, nothing over.
	code, _, stderr = runCmd(t, "", nil, "batch", in, "--out", filepath.Join(dir, "out2"), "--report", rep,
		"--summarizer", "fallback", "--force", "--window", "128000", "--quiet")
	if code != exitOK {
		t.Errorf("a batch that fits: exit %d: %s", code, stderr)
	}
}
