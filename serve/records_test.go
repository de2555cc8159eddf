package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

// TestCompactionRecordsBounded: a conversation compacted again and again
// by a long-running proxy keeps at most maxRecords compaction records in
// its checkpoint: the newest, in order, after one that stands for the
// older ones and counts them, so the total stays known.
func TestCompactionRecordsBounded(t *testing.T) {
	store, err := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := &Server{cfg: Config{StoreTimeout: time.Minute}, store: store}
	a := &api{name: "chat", path: "/v1/chat/completions"}
	ctx := context.Background()
	const n = 3*maxRecords + 5
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		np := &prefix{coveredHash: fmt.Sprintf("h%04d", i)}
		step := checkpoint.Step{ID: prefixStepID(np), Status: checkpoint.StepCompleted, InputHash: np.coveredHash}
		tr := compact.Transcript{Messages: []compact.Message{compact.UserMessage(fmt.Sprintf("turn %d", i))}}
		rec := compact.Compaction{SourceHash: fmt.Sprintf("src%d", i), Method: compact.MethodFallback,
			TokensBefore: 1000 + i, TokensAfter: 100 + i, At: t0.Add(time.Duration(i) * time.Minute)}
		if err := s.casPrefix(ctx, "conv", a, nil, np, step, tr, rec); err != nil {
			t.Fatal(err)
		}
	}
	c, err := store.Latest(ctx, "conv")
	if err != nil {
		t.Fatal(err)
	}
	recs := c.Compactions
	if len(recs) != maxRecords {
		t.Fatalf("%d compaction records after %d compactions, want %d", len(recs), n, maxRecords)
	}
	total := 0
	for _, r := range recs {
		total += foldedCount(r)
	}
	if total != n {
		t.Errorf("the records count %d compactions, want %d", total, n)
	}
	if f := recs[0]; f.TokensBefore != 1000 || f.Method != compact.MethodNone || f.Reason == "" {
		t.Errorf("the folded record %+v does not start where the conversation did", f)
	}
	for i, r := range recs[1:] {
		if want := n - (maxRecords - 1) + i; r.SourceHash != fmt.Sprintf("src%d", want) {
			t.Fatalf("record %d is %s, want src%d: the newest, in order", i+1, r.SourceHash, want)
		}
	}
}
