package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSplitFigures measures the shared corpus (transcripts, wild,
// wild/entire) with the default compaction and the deterministic
// fallback, and logs the development subset, the held-out subset
// (testdata/heldout.txt) and the whole corpus apart. It runs with
// -eval.full; it asserts nothing beyond the measurement running: the
// figures are the report's.
func TestSplitFigures(t *testing.T) {
	if !*evalFull {
		t.Skip("the whole corpus: run with -eval.full")
	}
	corpus := corpusDir(t)
	data, err := os.ReadFile(filepath.Join("testdata", "heldout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, l := range strings.Fields(string(data)) {
		held[l] = true
	}
	ev, err := New(Options{Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	var dev, ho []FileResult
	for _, dir := range []string{"transcripts", "wild", "wild/entire"} {
		all, _ := filepath.Glob(filepath.Join(corpus, dir, "*"))
		for _, f := range all {
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() || strings.HasSuffix(f, ".md") {
				continue
			}
			in, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			r := ev.File(context.Background(), f, in)
			in.Close()
			if held[filepath.Base(f)] {
				ho = append(ho, r)
			} else {
				dev = append(dev, r)
			}
		}
	}
	for _, p := range []struct {
		name string
		res  []FileResult
	}{{"development", dev}, {"held out", ho}, {"all", append(append([]FileResult{}, dev...), ho...)}} {
		s := Summarize(p.res)
		t.Logf("%-11s %3d files %3d cuts: recall %4d/%4d = %.4f, recency %.4f, longer tail %.4f, prune %.4f, mean handoff %.0f chars",
			p.name, s.Files, s.Rows, s.Kept, s.Need, s.Recall, s.RecencyRecall, s.HeadTailRecall, s.PruneRecall, s.MeanHandoffChars)
		for _, d := range s.Decay {
			t.Logf("%-11s decay after compaction %d: %.4f over %d sessions (same sessions after their first: %.4f)", "", d.Compaction, d.Recall, d.Files, d.FirstRecall)
		}
	}
}
