package eval

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
)

// TestLabelledMatchesScorer scores every labelled transcript of the shared
// corpus with Evaluator.Labelled, writes what it scored (the window's
// handoff, the compacted output, its handoff), and runs the corpus's own
// scorer, score_handoff.py, on each: shares, the ask and leaks must agree.
func TestLabelledMatchesScorer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3")
	}
	corpus := corpusDir(t)
	py := python(t)
	labelsDir := filepath.Join(corpus, "handoff")
	names, _ := filepath.Glob(filepath.Join(labelsDir, "*.labels.json"))
	if len(names) == 0 {
		t.Fatalf("no labels in %s", labelsDir)
	}
	ev, err := New(Options{Decay: -1, Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var results []LabelResult
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var window string
		summarize := func(_ context.Context, w []compact.Message) (compact.Handoff, error) {
			h, err := fallback.Build(w, fallback.Config{})
			window = h.Message().Text()
			return h, err
		}
		res := ev.Labelled(context.Background(), filepath.Base(name), data, os.DirFS(filepath.Join(corpus, "transcripts")), summarize)
		if res.Error != "" {
			t.Errorf("%s: %s", res.Name, res.Error)
			continue
		}
		results = append(results, res)
		for _, c := range []struct {
			what, text string
			got        LabelScore
		}{{"window handoff", window, res.Window}, {"compacted output", compactedText(t, ev, corpus, data), res.Compacted}} {
			file := filepath.Join(dir, res.Name+".txt")
			if err := os.WriteFile(file, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			want := scorer(t, py, filepath.Join(labelsDir, "score_handoff.py"), name, file)
			if want.Share != c.got.Share || want.Middle != c.got.MiddleShare || want.Leaks != c.got.Leaks {
				t.Errorf("%s, %s: Go share %.4f middle %.4f leaks %d; score_handoff.py share %.4f middle %.4f leaks %d",
					res.Name, c.what, c.got.Share, c.got.MiddleShare, c.got.Leaks, want.Share, want.Middle, want.Leaks)
			}
			if c.got.Ask != nil && (want.Ask == nil || *c.got.Ask != *want.Ask) {
				t.Errorf("%s, %s: latest ask present %v, score_handoff.py says %v", res.Name, c.what, *c.got.Ask, want.Ask)
			}
		}
		got := res.Window
		t.Logf("%-36s window handoff middle %2d/%2d  compacted output %2d/%2d  its handoff %2d/%2d  leaks %d",
			res.Name, got.MiddlePresent, got.MiddleTotal, res.Compacted.MiddlePresent, res.Compacted.MiddleTotal,
			res.CompactedHO.MiddlePresent, res.CompactedHO.MiddleTotal, got.Leaks+res.Compacted.Leaks)
	}
	s := SummarizeLabels(results)
	if s.WindowMiddle < windowFloor || s.CompactedMiddle < compactedFloor || s.Leaks > 0 ||
		s.WindowAsksKept < s.WindowAsks || s.CompactedAsksKept < s.CompactedAsks {
		t.Errorf("below the floors: window handoff %.3f (floor %.2f), compacted output %.3f (floor %.2f), asks %d/%d and %d/%d, leaks %d",
			s.WindowMiddle, windowFloor, s.CompactedMiddle, compactedFloor, s.WindowAsksKept, s.WindowAsks, s.CompactedAsksKept, s.CompactedAsks, s.Leaks)
	}
	t.Logf("mean middle share: window handoff %.3f, compacted output %.3f, its handoff %.3f; asks kept %d/%d (window), %d/%d (output); leaks %d",
		s.WindowMiddle, s.CompactedMiddle, s.CompactedHOMiddle, s.WindowAsksKept, s.WindowAsks, s.CompactedAsksKept, s.CompactedAsks, s.Leaks)
}

// Retention floors of the deterministic handoff on the labelled set, the
// mean middle shares last measured, rounded down: they guard against
// regressions (the goal, 0.90 for both, is the floor of the window
// handoff).
const (
	windowFloor    = 0.90
	compactedFloor = 0.92
)

// compactedText is the compacted output Labelled scored, made again.
func compactedText(t *testing.T, ev *Evaluator, corpus string, labels []byte) string {
	t.Helper()
	var l Labels
	if err := json.Unmarshal(labels, &l); err != nil {
		t.Fatal(err)
	}
	lt, err := readLabelled(os.DirFS(filepath.Join(corpus, "transcripts")), l.Transcript, &l)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ev.compactLabelled(context.Background(), lt.t)
	if err != nil {
		t.Fatal(err)
	}
	text, err := written(out.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

type scorerResult struct {
	Share  float64  `json:"must_keep_share"`
	Middle float64  `json:"must_keep_middle_share"`
	Ask    *bool    `json:"latest_user_ask_present"`
	Leaks  int      `json:"secrets_leaked"`
	Error  string   `json:"error"`
	Miss   []string `json:"missing_must_keep"`
}

func scorer(t *testing.T, py, script, labels, file string) scorerResult {
	t.Helper()
	out, err := exec.Command(py, script, labels, file, "--quiet").Output()
	if err != nil {
		t.Fatalf("score_handoff.py: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r scorerResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Error != "" {
		t.Fatalf("score_handoff.py: %v %s", err, r.Error)
	}
	return r
}
