package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/eval"
	"github.com/compactkit/compact/format"
)

// evalSession writes an OpenAI Chat session whose later turns reuse names
// that only its middle held.
func evalSession(t *testing.T, dir string) string {
	t.Helper()
	msgs := []compact.Message{{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "Fix the flaky retry test."}}}}
	pad := strings.Repeat("unremarkable output line\n", 80)
	for i := range 30 {
		id := fmt.Sprintf("c%d", i)
		path := fmt.Sprintf("internal/mod%d/retry_policy%d.go", i%10, i%10)
		args, _ := json.Marshal(map[string]string{"path": path})
		msgs = append(msgs,
			compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartText, Text: "Looking at " + path},
				{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: "read", Arguments: args}}}},
			compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: []compact.Part{{Type: compact.PartText,
				Text: fmt.Sprintf("func backoff_delay_%d() {}\n%s", i%10, pad)}}})
	}
	var b bytes.Buffer
	if err := format.Write(&b, compact.Transcript{Messages: msgs}, format.OpenAIChat); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "session.json")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestEvalTable(t *testing.T) {
	dir := t.TempDir()
	file := evalSession(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# not a transcript\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(t, "", nil, "eval", "-j", "1", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"session.json", "total (1 file measured, micro-averaged)", "future-use recall", "recency keeps", "skipped 1 file", "NOTES.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A file named on the command line is measured even when unreadable.
	// It fails the run: exit 1, as compact batch does.
	code, out, stderr = runCmd(t, "", nil, "eval", "--decay", "0", file, filepath.Join(dir, "NOTES.md"))
	if code != exitFailure || !strings.Contains(out, "1 measurement failed") || !strings.Contains(out, "NOTES.md") ||
		!strings.Contains(out, "future-use recall ") || !strings.Contains(stderr, "eval: 1 of ") {
		t.Errorf("exit %d:\n%s\nstderr: %s", code, out, stderr)
	}
}

// TestEvalAllFailed is QA-7: a run in which every measurement failed exits
// 1 and prints no recall (0/0 is not 0); an empty directory is an error of
// eval, not of batch.
func TestEvalAllFailed(t *testing.T) {
	dir := t.TempDir()
	nul := filepath.Join(dir, "nul.jsonl")
	if err := os.WriteFile(nul, []byte(`{"type":"user","message":{"role":"user","content":"a\u0000b"},"uuid":"1"}`+"\n"+`{"type":"user","message":{"role":"user","content":"a`+"\x00"+`b"},"uuid":"2"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{nul}, {empty, nul}, {"--json", empty}} {
		code, out, stderr := runCmd(t, "", nil, append([]string{"eval", "--quiet"}, args...)...)
		if code != exitFailure || !strings.Contains(stderr, "failed") {
			t.Errorf("eval %q: exit %d, want %d; stderr: %s", args, code, exitFailure, stderr)
		}
		if args[0] == "--json" {
			continue
		}
		if strings.Contains(out, "0.0000") || strings.Contains(out, "0/0") || !strings.Contains(out, "no measurement succeeded") {
			t.Errorf("eval %q prints a recall of nothing:\n%s", args, out)
		}
	}
	// Labelled mode too: a labels file whose transcript is missing.
	labels := filepath.Join(dir, "handoff")
	if err := os.MkdirAll(labels, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(labels, "x.labels.json"), []byte(`{"transcript":"missing.jsonl","must_keep":["abcdef"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(t, "", nil, "eval", "--quiet", "--labels", labels, "--transcripts", dir)
	if code != exitFailure || strings.Contains(out, "0.000") || !strings.Contains(out, "no transcript was scored") {
		t.Errorf("labels, all failed: exit %d:\n%s\nstderr: %s", code, out, stderr)
	}
	code, _, stderr = runCmd(t, "", nil, "eval", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "eval: no files under") || strings.Contains(stderr, "batch") {
		t.Errorf("empty directory: exit %d, stderr %q", code, stderr)
	}
}

func TestEvalJSON(t *testing.T) {
	file := evalSession(t, t.TempDir())
	code, out, stderr := runCmd(t, "", nil, "eval", "--json", "--missing", "--cuts", "0.6,0.9", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Files []struct {
			File string `json:"file"`
			Rows []struct {
				Cut  float64 `json:"cut"`
				Need int     `json:"need"`
			} `json:"rows"`
		} `json:"files"`
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(doc.Files) != 1 || len(doc.Files[0].Rows) != 2 || doc.Files[0].Rows[1].Cut != 0.9 {
		t.Errorf("files: %+v", doc.Files)
	}
	for _, k := range []string{"future_use_recall", "recency_baseline", "head_tail_baseline", "prune_baseline", "mean_handoff_chars"} {
		if _, ok := doc.Summary[k]; !ok {
			t.Errorf("summary lacks %q: %v", k, doc.Summary)
		}
	}
}

func TestEvalUsage(t *testing.T) {
	file := evalSession(t, t.TempDir())
	for _, args := range [][]string{
		{"eval"},
		{"eval", "--cuts", "0.5,1.5", file},
		{"eval", "--decay", "-1", file},
		{"eval", "-j", "0", file},
		{"eval", "--labels", t.TempDir()},
		{"eval", "--labels", t.TempDir(), file},
	} {
		if code, _, stderr := runCmd(t, "", nil, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
}

// TestEvalReadFlags is QA-21 (a): eval reads sessions as the read flags
// say: with --skip-bad-lines a damaged line is skipped, not a failure.
func TestEvalReadFlags(t *testing.T) {
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	damaged := strings.Join(lines[:39], "") + "{broken json\n" + strings.Join(lines[39:], "")
	file := filepath.Join(t.TempDir(), "dmg.jsonl")
	if err := os.WriteFile(file, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(t, "", nil, "eval", "--quiet", "--decay", "0", file)
	if code != exitFailure || !strings.Contains(out, "1 measurement failed") {
		t.Errorf("without --skip-bad-lines: exit %d:\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCmd(t, "", nil, "eval", "--quiet", "--decay", "0", "--skip-bad-lines", file)
	if code != exitOK || strings.Contains(out, "measurement failed") || !strings.Contains(stderr, "dmg.jsonl:40") {
		t.Errorf("--skip-bad-lines: exit %d, the file was not measured, or the skip not said:\n%s%s", code, out, stderr)
	}
}

// TestEvalCutsAndSkips is QA-21 (c) and the symlink case: a cut given
// twice is a usage error, and a link to a directory under a measured
// directory is skipped (as compact batch skips it), not a failure.
func TestEvalCutsAndSkips(t *testing.T) {
	dir := t.TempDir()
	file := evalSession(t, dir)
	if code, _, stderr := runCmd(t, "", nil, "eval", "--cuts", "0.5,0.5", file); code != exitUsage || !strings.Contains(stderr, "twice") {
		t.Errorf("--cuts 0.5,0.5: exit %d, %s", code, stderr)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "self")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	code, out, stderr := runCmd(t, "", nil, "eval", "--quiet", "--decay", "0", dir)
	if code != exitOK || strings.Contains(out, "failed") || !strings.Contains(out, "skipped 1 file") {
		t.Errorf("a link to a directory: exit %d:\n%s%s", code, out, stderr)
	}
}

// TestEvalOverWindow is QA-21 (b): a cut whose compaction does not fit its
// window is marked, and the table says how many there were.
func TestEvalOverWindow(t *testing.T) {
	file := "../../testdata/sessions/claudecode_invoicer.jsonl"
	code, out, stderr := runCmd(t, "", nil, "eval", "--quiet", "--decay", "0", "--window", "100", file)
	if code != exitOK || !strings.Contains(out, "3 cuts of 3 compacted over the usable window") {
		t.Errorf("exit %d:\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCmd(t, "", nil, "eval", "--quiet", "--decay", "0", "--json", "--window", "100", file)
	var doc struct {
		Files []struct {
			Rows []struct {
				OverWindow bool `json:"over_window"`
			} `json:"rows"`
		} `json:"files"`
		Summary struct {
			OverWindow int `json:"over_window"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v:\n%s%s", code, err, out, stderr)
	}
	if doc.Summary.OverWindow != 3 || len(doc.Files) != 1 || len(doc.Files[0].Rows) != 3 || !doc.Files[0].Rows[0].OverWindow {
		t.Errorf("over_window not marked: %+v", doc)
	}
}

// TestEvalStdin is QA-21: "-" measures the session on stdin.
func TestEvalStdin(t *testing.T) {
	src, err := os.ReadFile("../../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(t, string(src), nil, "eval", "--quiet", "--decay", "0", "-")
	if code != exitOK || !strings.Contains(out, "\n-  ") || !strings.Contains(out, "total (1 file measured") {
		t.Errorf("eval -: exit %d:\n%s%s", code, out, stderr)
	}
}

// QA-25: eval --summarizer llm with an LLM that fails (nothing listens)
// must not measure the deterministic fallback's handoffs as the LLM's:
// each such cut is a failed measurement naming the cause, the rows say
// which method wrote them, and eval exits 1.
func TestQAEvalSaysTheLLMFailed(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-qa-test"}
	args := []string{"eval", "--quiet", "--decay", "0", "--summarizer", "llm", "--base-url", "http://127.0.0.1:1/v1", "--retries", "0",
		"../../testdata/sessions/claudecode_invoicer.jsonl"}
	code, out, stderr := runCmd(t, "", env, args...)
	if code != exitFailure {
		t.Errorf("exit %d, want %d (every measurement failed)", code, exitFailure)
	}
	for _, want := range []string{"the LLM failed: ", "connection refused", "the handoff fell back to the deterministic one", "future-use recall: no measurement succeeded"} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("output lacks %q:\n%s%s", want, out, stderr)
		}
	}
	_, out, _ = runCmd(t, "", env, append([]string{args[0], "--json"}, args[1:]...)...)
	var res struct {
		Files []struct {
			Rows []struct {
				Method string `json:"method"`
				Error  string `json:"error"`
			} `json:"rows"`
		} `json:"files"`
		Summary struct {
			Rows   int `json:"rows"`
			Errors int `json:"errors"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(res.Files) != 1 || len(res.Files[0].Rows) == 0 || res.Summary.Rows != 0 || res.Summary.Errors != len(res.Files[0].Rows) {
		t.Fatalf("want every row failed, none totalled: %+v", res)
	}
	for _, r := range res.Files[0].Rows {
		if r.Method != "fallback" || !strings.Contains(r.Error, "the LLM failed") {
			t.Errorf("row method %q error %q: want method fallback and the LLM's failure", r.Method, r.Error)
		}
	}
}

// The table names the method that wrote each file's measured handoffs;
// a fallback asked for is measured as before.
func TestEvalTableShowsMethod(t *testing.T) {
	code, out, stderr := runCmd(t, "", nil, "eval", "--quiet", "--decay", "0", "../../testdata/sessions/claudecode_invoicer.jsonl")
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	header, row, _ := strings.Cut(out, "\n")
	if !strings.Contains(header, "method") || !strings.Contains(strings.SplitN(row, "\n", 2)[0], " fallback ") || strings.Contains(out, "failed") {
		t.Errorf("want a method column saying fallback, no failure:\n%s", out)
	}
}

// A decay replay that stopped on an error is listed among the failed
// measurements, and the run fails (as a failed cut does).
func TestEvalListsAFailedDecayReplay(t *testing.T) {
	files := []eval.FileResult{{File: "s.jsonl", Rows: []eval.Row{{Cut: 0.5, Need: 1, Kept: 1, Method: "fallback"}},
		Decay: &eval.Decay{Error: "compaction 1 at message 40: the LLM failed"}}}
	sum := eval.Summarize(files)
	var out bytes.Buffer
	writeEvalTable(&out, files, sum, false)
	if !strings.Contains(out.String(), "s.jsonl decay replay: compaction 1 at message 40: the LLM failed") {
		t.Fatalf("the failed replay is not listed:\n%s", out.String())
	}
	if err := measurementsFailed(sum.Errors, sum.Errors+sum.Rows); err == nil {
		t.Fatal("a run whose decay replay failed passed")
	}
}

// QA-39.2: the total says how many files were measured and how many
// failed (it said "3 files" over the one measured), and a failure names
// its file once ("empty.jsonl: empty.jsonl: empty input").
func TestEvalTotalCountsMeasuredAndFailed(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/sessions/openai_invoicer.json")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"good.json":   src,
		"empty.jsonl": nil,
		"nul.jsonl":   []byte(`{"type":"user","message":{"role":"user","content":"a` + "\x00" + `b"},"uuid":"1"}` + "\n"),
	}
	var args []string
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(dir, name))
	}
	code, out, stderr := runCmd(t, "", nil, append([]string{"eval", "--quiet"}, args...)...)
	if code != exitFailure {
		t.Errorf("exit %d, want %d: %s", code, exitFailure, stderr)
	}
	if !strings.Contains(out, "total (1 file measured, 2 failed, micro-averaged)") {
		t.Errorf("the total does not say 1 measured, 2 failed:\n%s", out)
	}
	for _, name := range []string{"empty.jsonl", "nul.jsonl"} {
		if n := strings.Count(out, name); n != 1 {
			t.Errorf("%s is named %d times, want once:\n%s", name, n, out)
		}
	}
}
