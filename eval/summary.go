package eval

// Summary is the micro-averaged total of a set of files: every needed fact
// of every row counts once, so a session with many needed facts weighs
// more than one with few.
type Summary struct {
	Files int `json:"files"`
	// Rows counts the measured cuts; Errors the cuts and files that could
	// not be measured, and the decay replays that stopped on an error (the
	// compactions they measured before it still count).
	Rows   int `json:"rows"`
	Errors int `json:"errors"`
	// OverWindow counts the measured rows whose compaction did not fit
	// its usable window (Row.OverWindow).
	OverWindow int `json:"over_window,omitempty"`

	Need     int `json:"need"`
	Kept     int `json:"kept"`
	Recency  int `json:"recency"`
	HeadTail int `json:"head_tail"`
	Prune    int `json:"prune"`

	Recall         float64 `json:"future_use_recall"`
	RecencyRecall  float64 `json:"recency_baseline"`
	HeadTailRecall float64 `json:"head_tail_baseline"`
	PruneRecall    float64 `json:"prune_baseline"`

	// MeanHandoffChars is the mean rendered handoff over the rows.
	MeanHandoffChars float64 `json:"mean_handoff_chars"`
	// TokensAfter and PruneTokens sum the outputs' sizes: the compaction's
	// and the prune strategy's.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	PruneTokens  int `json:"prune_tokens"`

	// Decay holds, for each compaction number, the recall of the sessions
	// the replay compacted that often.
	Decay []DecaySummary `json:"decay,omitempty"`
}

// DecaySummary is the decay replay's recall after one compaction number.
type DecaySummary struct {
	Compaction int     `json:"compaction"`
	Files      int     `json:"files"`
	Need       int     `json:"need"`
	Kept       int     `json:"kept"`
	Recall     float64 `json:"recall"`
	// FirstRecall is the recall of the same files after their first
	// compaction, so that decay compares like with like.
	FirstNeed   int     `json:"first_need"`
	FirstKept   int     `json:"first_kept"`
	FirstRecall float64 `json:"first_recall"`
}

// Summarize totals results.
func Summarize(results []FileResult) Summary {
	var s Summary
	chars := 0
	var decay []DecaySummary
	for _, f := range results {
		s.Files++
		if f.Error != "" {
			s.Errors++
			continue
		}
		for _, r := range f.Rows {
			if r.Error != "" {
				s.Errors++
				continue
			}
			s.Rows++
			if r.OverWindow {
				s.OverWindow++
			}
			s.Need += r.Need
			s.Kept += r.Kept
			s.Recency += r.Recency
			s.HeadTail += r.HeadTail
			s.Prune += r.Prune
			s.TokensBefore += r.TokensBefore
			s.TokensAfter += r.TokensAfter
			s.PruneTokens += r.PruneTokens
			chars += r.HandoffChars
		}
		if f.Decay != nil && f.Decay.Error != "" {
			s.Errors++
		}
		if f.Decay == nil || len(f.Decay.Points) == 0 {
			continue
		}
		first := f.Decay.Points[0]
		for _, p := range f.Decay.Points {
			for len(decay) < p.Compaction {
				decay = append(decay, DecaySummary{Compaction: len(decay) + 1})
			}
			d := &decay[p.Compaction-1]
			d.Files++
			d.Need += p.Need
			d.Kept += p.Kept
			d.FirstNeed += first.Need
			d.FirstKept += first.Kept
		}
	}
	s.Recall = share(s.Kept, s.Need)
	s.RecencyRecall = share(s.Recency, s.Need)
	s.HeadTailRecall = share(s.HeadTail, s.Need)
	s.PruneRecall = share(s.Prune, s.Need)
	if s.Rows > 0 {
		s.MeanHandoffChars = float64(chars) / float64(s.Rows)
	}
	for i := range decay {
		d := &decay[i]
		d.Recall = share(d.Kept, d.Need)
		d.FirstRecall = share(d.FirstKept, d.FirstNeed)
	}
	s.Decay = decay
	return s
}

// share is n/d rounded to four places, as the reference prints it; 0 when
// d is 0.
func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(int(float64(n)/float64(d)*10000+0.5)) / 10000
}
