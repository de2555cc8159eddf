package eval

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

var evalFull = flag.Bool("eval.full", false, "compare with future_use.py and score_handoff.py on the whole shared corpus, not a sample")

// corpusDir returns the shared corpus, as package internal/corpus finds
// it: $COMPACT_CORPUS, else ../shared/corpus beside the repository. Where it
// is missing the test is skipped, or fails under COMPACT_REQUIRE_CORPUS=1.
func corpusDir(t *testing.T) string {
	t.Helper()
	corpus.Dir(t, corpus.Transcripts)
	return corpus.Dir(t, ".")
}

// python returns python3, or skips (fails under COMPACT_REQUIRE_CORPUS=1).
func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if corpus.Required() {
			t.Fatal("python3 is needed to run the corpus's reference scorers")
		}
		t.Skip("no python3 to run the reference scorers")
	}
	return py
}

// referenceSample is the default run's sample: formats and sizes spread,
// about 90 needed facts.
var referenceSample = []string{
	"transcripts/codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
	"transcripts/claudecode_agentcmd_full-session.jsonl",
	"transcripts/gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json",
	"transcripts/sweagent_ctf_crypto_katy.traj",
	"wild/minisweagent_deepseek_bench1_django-11039.traj.json",
	"wild/codex_vct_codex_v0.39.jsonl",
	"wild/entire/6a_54c404f24f_0_full.jsonl",
}

// referenceRow is a row of future_use.py --json.
type referenceRow struct {
	Cut          float64  `json:"cut"`
	Need         int      `json:"need"`
	Kept         int      `json:"kept"`
	Recency      int      `json:"recency"`
	HandoffChars int      `json:"handoff_chars"`
	Missing      []string `json:"missing"`
	Error        string   `json:"error"`
}

// TestFutureUseMatchesReference runs the corpus's reference scorer,
// future_use.py, with a compact binary built from this tree, and Evaluator
// on the same files: every row must agree (needed facts, kept, recency,
// handoff size, the first missing facts), and so the totals within ±0.01.
// The default run measures a sample; -eval.full the whole corpus
// (transcripts, wild, wild/entire).
func TestFutureUseMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI and runs python3")
	}
	corpus := corpusDir(t)
	py := python(t)
	script := filepath.Join(corpus, "..", "eval", "future_use.py")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the reference scorer is not beside the corpus: %v", err)
	}
	var files []string
	if *evalFull {
		for _, dir := range []string{"transcripts", "wild", "wild/entire"} {
			all, _ := filepath.Glob(filepath.Join(corpus, dir, "*"))
			for _, f := range all {
				if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && filepath.Ext(f) != ".md" {
					files = append(files, f)
				}
			}
		}
	} else {
		for _, f := range referenceSample {
			files = append(files, filepath.Join(corpus, f))
		}
	}
	bin := filepath.Join(t.TempDir(), "compact")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/compact").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(py, append([]string{script, bin, "--json"}, files...)...).Output()
	if err != nil {
		t.Fatalf("future_use.py: %v", err)
	}
	var ref struct {
		Files   map[string]json.RawMessage `json:"files"`
		Summary struct {
			Recall  float64 `json:"future_use_recall"`
			Recency float64 `json:"recency_baseline"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("future_use.py printed no JSON: %v", err)
	}
	ev, err := New(Options{Decay: -1, Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	var results []FileResult
	var both []Row
	var refRows []referenceRow
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		res := ev.File(context.Background(), f, in)
		in.Close()
		results = append(results, res)
		var rows []referenceRow
		if json.Unmarshal(ref.Files[filepath.Base(f)], &rows) != nil {
			if res.Error == "" {
				t.Errorf("%s: the reference could not read it, Evaluator could", filepath.Base(f))
			}
			continue
		}
		both = append(both, compareRows(t, filepath.Base(f), res.Rows, rows)...)
		refRows = append(refRows, rows...)
	}
	// Totals over the rows both measured: Evaluator also measures cuts the
	// reference's CLI refuses (see compareRows).
	sum := Summarize([]FileResult{{Rows: both}})
	var need, kept, rec int
	for _, r := range refRows {
		if r.Error != "" {
			continue
		}
		need, kept, rec = need+r.Need, kept+r.Kept, rec+r.Recency
	}
	ref.Summary.Recall, ref.Summary.Recency = share(kept, need), share(rec, need)
	all := Summarize(results)
	t.Logf("%d files, %d cuts both measured: recall %.4f (reference %.4f), recency %.4f (reference %.4f)",
		len(files), sum.Rows, sum.Recall, ref.Summary.Recall, sum.RecencyRecall, ref.Summary.Recency)
	t.Logf("Evaluator alone, %d cuts: recall %.4f, recency %.4f, head+tail %.4f, prune %.4f, mean handoff %.0f chars",
		all.Rows, all.Recall, all.RecencyRecall, all.HeadTailRecall, all.PruneRecall, all.MeanHandoffChars)
	if math.Abs(sum.Recall-ref.Summary.Recall) > 0.01 || math.Abs(sum.RecencyRecall-ref.Summary.Recency) > 0.01 {
		t.Errorf("totals differ by more than 0.01: recall %.4f vs %.4f, recency %.4f vs %.4f",
			sum.Recall, ref.Summary.Recall, sum.RecencyRecall, ref.Summary.Recency)
	}
}

// compareRows compares Evaluator's rows with the reference's, cut by cut.
// A cut the reference could not measure (its CLI refused the window) is
// left out; Evaluator measures it with a scaled reserve.
func compareRows(t *testing.T, name string, got []Row, want []referenceRow) (matched []Row) {
	t.Helper()
	byCut := map[float64]Row{}
	for _, r := range got {
		byCut[r.Cut] = r
	}
	for _, w := range want {
		if w.Error != "" {
			t.Logf("%s cut %.2f: the reference failed: %s", name, w.Cut, w.Error)
			continue
		}
		g, ok := byCut[w.Cut]
		if !ok || g.Error != "" {
			t.Errorf("%s cut %.2f: the reference has a row, Evaluator none (%s)", name, w.Cut, g.Error)
			continue
		}
		var missing []string
		for _, m := range g.Missing {
			missing = append(missing, m.Fact)
		}
		if len(missing) > 10 {
			missing = missing[:10]
		}
		if g.Need != w.Need || g.Kept != w.Kept || g.Recency != w.Recency || g.HandoffChars != w.HandoffChars ||
			!slices.Equal(missing, w.Missing) && len(missing)+len(w.Missing) > 0 {
			t.Errorf("%s cut %.2f: need %d kept %d recency %d handoff %d missing %q; the reference: need %d kept %d recency %d handoff %d missing %q",
				name, w.Cut, g.Need, g.Kept, g.Recency, g.HandoffChars, missing, w.Need, w.Kept, w.Recency, w.HandoffChars, w.Missing)
		}
		matched = append(matched, g)
	}
	return matched
}
