package eval

import "testing"

// A decay replay that stopped on an error is a failed measurement: a gate
// on the totals must not pass it silently. The compactions it measured
// before the error still count.
func TestSummarizeCountsAFailedDecayReplay(t *testing.T) {
	ok := FileResult{File: "a", Rows: []Row{{Cut: 0.5, Need: 2, Kept: 1}},
		Decay: &Decay{Points: []DecayPoint{{Compaction: 1, Need: 3, Kept: 2}}}}
	stopped := FileResult{File: "b", Rows: []Row{{Cut: 0.5, Need: 1, Kept: 1}},
		Decay: &Decay{Points: []DecayPoint{{Compaction: 1, Need: 4, Kept: 4}}, Error: "compaction 2 at message 90: the LLM failed"}}
	s := Summarize([]FileResult{ok, stopped})
	if s.Errors != 1 {
		t.Fatalf("Errors = %d, want 1 (the stopped replay)", s.Errors)
	}
	if s.Rows != 2 || len(s.Decay) != 1 || s.Decay[0].Files != 2 || s.Decay[0].Need != 7 {
		t.Fatalf("measured parts lost: rows %d, decay %+v", s.Rows, s.Decay)
	}
}
