package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact/compactor"
)

func TestFileRowsAndBaselines(t *testing.T) {
	ev, err := New(Options{Decay: -1, Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	res := ev.File(context.Background(), "session.json", bytes.NewReader(agentSession(t, 40)))
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want one per default cut", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Error != "" {
			t.Fatalf("cut %.2f: %s", r.Cut, r.Error)
		}
		if r.Need == 0 || r.Kept > r.Need || r.Recency > r.Need || r.HeadTail > r.Need || r.Prune > r.Need {
			t.Errorf("cut %.2f: need %d kept %d recency %d head+tail %d prune %d", r.Cut, r.Need, r.Kept, r.Recency, r.HeadTail, r.Prune)
		}
		if r.HandoffChars == 0 || r.DroppedTo <= r.DroppedFrom || r.Window < 4000 {
			t.Errorf("cut %.2f: handoff %d chars, dropped [%d, %d), window %d", r.Cut, r.HandoffChars, r.DroppedFrom, r.DroppedTo, r.Window)
		}
		if len(r.Missing) != r.Need-r.Kept {
			t.Errorf("cut %.2f: %d missing facts listed for %d lost", r.Cut, len(r.Missing), r.Need-r.Kept)
		}
		for _, m := range r.Missing {
			if m.Kind == "" || m.Source == "" {
				t.Errorf("cut %.2f: missing fact %+v without kind or source", r.Cut, m)
			}
		}
	}
}

// TestFileNoRow follows the reference: a prefix under ten messages has no
// row.
func TestFileNoRow(t *testing.T) {
	ev, err := New(Options{Decay: -1, Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	res := ev.File(context.Background(), "small.json", bytes.NewReader(agentSession(t, 4)))
	if res.Error != "" || len(res.Rows) != 0 {
		t.Fatalf("error %q, %d rows; want no rows for a 10-message session", res.Error, len(res.Rows))
	}
}

func TestFileUnreadable(t *testing.T) {
	ev, err := New(Options{Decay: -1})
	if err != nil {
		t.Fatal(err)
	}
	res := ev.File(context.Background(), "notes.md", strings.NewReader("# notes\n\nnot a transcript\n"))
	if res.Error == "" || !res.Unrecognised {
		t.Fatalf("got %+v, want an unrecognised-format error", res)
	}
}

func TestDecay(t *testing.T) {
	ev, err := New(Options{Cuts: []float64{0.5}, Decay: 4, DecayWindow: 16000, Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	res := ev.File(context.Background(), "session.json", bytes.NewReader(agentSession(t, 120)))
	d := res.Decay
	if d == nil || d.Error != "" {
		t.Fatalf("decay: %+v", d)
	}
	if len(d.Points) != 4 {
		t.Fatalf("%d compactions, want 4: %+v", len(d.Points), d.Points)
	}
	for i, p := range d.Points {
		if p.Compaction != i+1 || i > 0 && p.At <= d.Points[i-1].At || p.Kept > p.Need || p.HandoffChars == 0 {
			t.Errorf("point %d: %+v", i, p)
		}
	}
	sum := Summarize([]FileResult{res})
	if len(sum.Decay) != 4 || sum.Decay[3].Files != 1 || sum.Decay[3].FirstNeed != d.Points[0].Need {
		t.Errorf("summary decay: %+v", sum.Decay)
	}
}

// TestDeterministic: the same session and options give the same figures.
func TestDeterministic(t *testing.T) {
	ev, err := New(Options{Decay: 2, DecayWindow: 16000, Config: fallbackConfig()})
	if err != nil {
		t.Fatal(err)
	}
	session := agentSession(t, 60)
	var first []byte
	for range 2 {
		res := ev.File(context.Background(), "session.json", bytes.NewReader(session))
		b, _ := json.Marshal(res)
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("two runs differ:\n%s\n%s", first, b)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, o := range []Options{
		{Cuts: []float64{0}}, {Cuts: []float64{1}}, {Cuts: []float64{0.5, 1.5}},
		{DecayWindow: -1},
		{Config: compactor.Config{Strategy: "nonsense"}},
	} {
		if _, err := New(o); !errors.Is(err, ErrOptions) {
			t.Errorf("New(%+v) = %v, want ErrOptions", o, err)
		}
	}
}

func TestSummarizeMicroAverages(t *testing.T) {
	s := Summarize([]FileResult{
		{Rows: []Row{{Need: 10, Kept: 9, Recency: 1, HandoffChars: 100}, {Need: 0, HandoffChars: 300}}},
		{Rows: []Row{{Need: 90, Kept: 9, Recency: 9, HandoffChars: 200}, {Error: "x"}}},
		{Error: "unreadable"},
	})
	if s.Need != 100 || s.Kept != 18 || s.Recall != 0.18 || s.RecencyRecall != 0.1 || s.Rows != 3 || s.Errors != 2 || s.MeanHandoffChars != 200 {
		t.Errorf("got %+v", s)
	}
}
