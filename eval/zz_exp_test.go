package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// go test ./eval -run TestExp -v -exp.noprune
func TestExp(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	corpus := corpusDir(t)
	cfg := fallbackConfig()
	if os.Getenv("NOPRUNE") != "" {
		cfg.Prune.MinTokens = 1 << 30
		cfg.Prune.MinDuplicateBytes = 1 << 30
	}
	ev, err := New(Options{Decay: -1, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ho := map[string]bool{}
	data, _ := os.ReadFile("testdata/heldout.txt")
	for _, l := range strings.Fields(string(data)) {
		ho[l] = true
	}
	var dev, held []FileResult
	for _, dir := range []string{"transcripts", "wild", "wild/entire"} {
		all, _ := filepath.Glob(filepath.Join(corpus, dir, "*"))
		for _, f := range all {
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() || strings.HasSuffix(f, ".md") {
				continue
			}
			in, _ := os.Open(f)
			r := ev.File(context.Background(), strings.TrimPrefix(f, corpus+"/"), in)
			in.Close()
			if ho[filepath.Base(f)] {
				held = append(held, r)
			} else {
				dev = append(dev, r)
			}
		}
	}
	for _, p := range []struct {
		n string
		r []FileResult
	}{{"dev", dev}, {"heldout", held}, {"all", append(append([]FileResult{}, dev...), held...)}} {
		s := Summarize(p.r)
		t.Logf("%-8s need %4d kept %4d recall %.4f recency %.4f headtail %.4f chars %.0f", p.n, s.Need, s.Kept, s.Recall, s.RecencyRecall, s.HeadTailRecall, s.MeanHandoffChars)
	}
	if dir := os.Getenv("EXPHO"); dir != "" {
		for _, f := range append(append([]FileResult{}, dev...), held...) {
			for _, r := range f.Rows {
				name := filepath.Join(dir, strings.ReplaceAll(f.File, "/", "_")+"."+strconv.FormatFloat(r.Cut, 'f', -1, 64)+".md")
				os.MkdirAll(dir, 0o755)
				os.WriteFile(name, []byte(r.Handoff), 0o644)
			}
		}
	}
	if out := os.Getenv("EXPOUT"); out != "" {
		type x struct {
			File    string
			Cut     float64
			Needed  []string
			Missing []Missing
			Handoff string
		}
		var xs []x
		for _, f := range dev {
			for _, r := range f.Rows {
				xs = append(xs, x{f.File, r.Cut, r.Needed, r.Missing, r.Handoff})
			}
		}
		b, _ := json.Marshal(xs)
		os.WriteFile(out, b, 0o644)
	}
}
