package compactor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/sample"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// corpusCases names the shared corpus's transcripts the compaction is
// checked on: one or two in each agent's format, including both synthetic
// sessions that hold the agents' own compaction markers.
var corpusCases = []string{
	"claudecode_agentcmd_full-session-two.jsonl",
	"claudecode_agenthistory_session_with_compaction.synthetic.jsonl",
	"codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
	"codex_agenthistory_session_with_compaction.synthetic.jsonl",
	"gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json",
	"minisweagent_github_issue.traj.json",
	"openhands_traj_basic_gui_mode.json",
	"sweagent_gpt4_test-repo-i1.traj",
	"sweagent_marshmallow-1867_function_calling.traj",
}

// goldenConfig is the compaction of the golden and corpus tests: the
// deterministic fallback, forced, in gpt-4o's window, at a fixed time.
func goldenConfig() Config {
	cfg := DefaultConfig()
	cfg.Force, cfg.Strategy = true, StrategyFallback
	cfg.Now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	return cfg
}

// fallbackOutput is what a forced fallback compaction of a transcript
// produces: the compacted transcript written in its own format, the
// handoff, and the record with its plan.
type fallbackOutput struct {
	compacted, handoff, record []byte
}

// compactFallback compacts in with goldenConfig and checks the result: the
// invariants hold, the written output reads back in its format with no new
// orphan, and compacting it again folds the handoff.
func compactFallback(t *testing.T, in compact.Transcript, name string) fallbackOutput {
	t.Helper()
	cfg := goldenConfig()
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, in, res)
	var out bytes.Buffer
	if err := format.Write(&out, res.Transcript, format.Name(in.Format)); err != nil {
		t.Fatalf("write %s: %v", in.Format, err)
	}
	rec := res.Record
	rec.Duration = 0
	recJSON, _ := json.MarshalIndent(struct {
		Record compact.Compaction `json:"record"`
		Plan   Plan               `json:"plan"`
	}{rec, res.Plan}, "", "  ")
	handoff := ""
	if res.Handoff != nil {
		handoff = res.Handoff.Render()
	}

	back, err := format.Read(bytes.NewReader(out.Bytes()), name, "")
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	known := map[string]bool{}
	for _, o := range in.Orphans() {
		known[o.CallID] = true
	}
	for _, o := range back.Orphans() {
		if !known[o.CallID] {
			t.Fatalf("written output has a new orphan %s %q", o.Kind, o.CallID)
		}
	}
	if res.Handoff != nil {
		// The handoff survives the format's writer and reader signed, so
		// the next compaction folds it.
		verified := 0
		for i := range back.Messages {
			if compact.VerifyHandoff(&back.Messages[i], cfg.HandoffKey) {
				verified++
			}
		}
		if verified != 1 {
			t.Fatalf("read back, the output holds %d verified handoffs, want 1", verified)
		}
	}
	again, err := mustNew(t, cfg).Compact(context.Background(), back)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(again.Record.Warnings, "\n"); strings.Contains(w, "does not verify") {
		t.Fatalf("compacting the output again: %s", w)
	}
	if again.Changed() {
		checkInvariants(t, back, again)
	}
	return fallbackOutput{compacted: out.Bytes(), handoff: []byte(handoff), record: append(recJSON, '\n')}
}

// TestGoldenFallback compacts each of the repository's sample sessions
// (package internal/sample, one per format, as checked in under
// testdata/sessions) with the deterministic fallback, checks the result
// (compactFallback) and compares the compacted transcript, the handoff and
// the record with testdata/golden/NAME.*; go test ./compactor -update
// rewrites them.
func TestGoldenFallback(t *testing.T) {
	for _, f := range sample.Files(sample.DefaultSeed) {
		t.Run(f.Name, func(t *testing.T) {
			in, err := format.Read(bytes.NewReader(f.Data), f.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			out := compactFallback(t, in, f.Name)
			golden(t, f.Name+".compacted", out.compacted)
			golden(t, f.Name+".handoff.md", out.handoff)
			golden(t, f.Name+".record.json", out.record)
		})
	}
}

// TestCorpusFallback compacts each corpusCases transcript with the
// deterministic fallback and checks the result (compactFallback). Golden
// files are over the repository's own sample sessions: third-party text is
// not copied into the repository, not even as a golden file.
func TestCorpusFallback(t *testing.T) {
	corpus.Dir(t, corpus.Transcripts)
	for _, name := range corpusCases {
		t.Run(name, func(t *testing.T) {
			in := readTranscript(t, corpus.Path(t, corpus.Transcripts, name))
			compactFallback(t, in, name)
		})
	}
}

// readTranscript reads the transcript at path, failing t when its format
// has no writer (every format the tests name has one).
func readTranscript(t *testing.T, path string) compact.Transcript {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := format.Read(f, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if fm, _ := format.Lookup(format.Name(in.Format)); fm.Write == nil {
		t.Fatalf("no writer registered for %s", in.Format)
	}
	return in
}

// golden compares got with testdata/golden/name, or rewrites it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./compactor -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended):\n%s", name, firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\n- " + excerpt(w) + "\n+ " + excerpt(g)
		}
	}
	return "(equal lines, different bytes)"
}

func excerpt(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
