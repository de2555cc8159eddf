package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	"pgregory.net/rapid"
)

// Whatever a loop does to its lists between saves (append, change an entry
// anywhere, insert, delete, cut the transcript as a compaction does), each
// save stores exactly what it was given: a fresh store reads it back equal,
// every hash verifies, and a save writes what changed, not the lists.
func TestSaveAnyEditsProperty(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		s, _ := checkpoint.NewFileStore(dir, checkpoint.Options{Plain: true})
		c := storetest.NewSession("prop")
		next, inserted := 0, 0
		grow := func() { storetest.Grow(c, next); next++ }
		for range rapid.IntRange(0, 70).Draw(rt, "start") {
			grow()
		}
		parent := ""
		for round := range rapid.IntRange(1, 12).Draw(rt, "saves") {
			for range rapid.IntRange(0, 4).Draw(rt, "edits") {
				n := len(c.Steps)
				switch op := rapid.IntRange(0, 7).Draw(rt, "op"); {
				case op == 0 || n == 0:
					grow()
				case op == 1:
					i := rapid.IntRange(0, n-1).Draw(rt, "status at")
					c.Steps[i].Status = rapid.SampledFrom([]checkpoint.StepStatus{checkpoint.StepRunning, checkpoint.StepFailed, checkpoint.StepCompleted}).Draw(rt, "status")
				case op == 2:
					i := rapid.IntRange(0, n-1).Draw(rt, "delete at")
					c.Steps = append(c.Steps[:i:i], c.Steps[i+1:]...)
				case op == 3:
					i := rapid.IntRange(0, n).Draw(rt, "insert at")
					inserted++
					st := checkpoint.Step{ID: fmt.Sprint("inserted-", inserted), Status: checkpoint.StepPending}
					c.Steps = append(c.Steps[:i:i], append([]checkpoint.Step{st}, c.Steps[i:]...)...)
				case op == 4:
					msgs := c.Transcript.Messages
					i := rapid.IntRange(0, len(msgs)-1).Draw(rt, "message at")
					m := msgs[i].Clone()
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: fmt.Sprint("edited in round ", round)})
					msgs[i] = m
				case op == 5:
					msgs := c.Transcript.Messages
					keep := rapid.IntRange(1, len(msgs)).Draw(rt, "compact to")
					c.Transcript.Messages = append([]compact.Message{msgs[0]}, msgs[len(msgs)-keep+1:]...)
				case op == 6:
					for k := range c.ToolCache {
						if rapid.Bool().Draw(rt, "drop key") {
							delete(c.ToolCache, k)
						} else {
							c.ToolCache[k] = json.RawMessage(fmt.Sprint(round))
						}
						break
					}
				default:
					c.State = json.RawMessage(fmt.Sprintf(`{"round":%d}`, round))
				}
			}
			c.CurrentStep = ""
			if err := s.Save(ctx, c, parent); err != nil {
				rt.Fatalf("save %d: %v", round, err)
			}
			parent = c.ID
			fresh, _ := checkpoint.NewFileStore(dir, checkpoint.Options{Plain: true})
			got, err := fresh.Latest(ctx, "prop")
			if err != nil {
				rt.Fatalf("save %d: a fresh store: %v", round, err)
			}
			want := c.Clone()
			if len(want.ToolCache) == 0 {
				want.ToolCache = nil
			}
			if !reflect.DeepEqual(canon(rt, got), canon(rt, want)) {
				rt.Fatalf("save %d: read back differs", round)
			}
		}
		fresh, _ := checkpoint.NewFileStore(dir, checkpoint.Options{Plain: true})
		if n, problems, err := checkpoint.Verify(ctx, fresh); err != nil || len(problems) > 0 {
			rt.Fatalf("verify %d checkpoints: %v %+v", n, err, problems)
		}
	})
}

// canon is a checkpoint's JSON decoded generically, so that nil and empty
// lists and maps compare equal.
func canon(rt *rapid.T, c *checkpoint.Checkpoint) any {
	b, err := json.Marshal(c)
	if err != nil {
		rt.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	return v
}
