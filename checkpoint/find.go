package checkpoint

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"
)

// FindOptions tunes FindResumable. The zero value gives the defaults.
type FindOptions struct {
	// Threshold is the least Jaccard similarity a match needs; 0 means 0.3.
	Threshold float64
	// Window is how far back to look; 0 means 24 hours.
	Window time.Duration
}

// Match is a session FindResumable found, with its similarity to the task.
type Match struct {
	SessionInfo
	Score float64 `json:"score"`
}

// FindResumable returns the sessions worth resuming for task: failed or
// paused within the window, with at least one completed step, whose task is
// similar enough to this one by Jaccard similarity of their word sets.
// The best match comes first; ties go to the most recently updated.
func FindResumable(ctx context.Context, s Store, task string, opts FindOptions) ([]Match, error) {
	if opts.Threshold <= 0 {
		opts.Threshold = 0.3
	}
	if opts.Window <= 0 {
		opts.Window = 24 * time.Hour
	}
	infos, err := s.List(ctx, Filter{Status: []Status{StatusFailed, StatusPaused}, MaxAge: opts.Window})
	if err != nil {
		return nil, err
	}
	want := words(task)
	var out []Match
	for _, in := range infos {
		if in.CompletedSteps < 1 || in.Damaged != "" {
			continue
		}
		if score := jaccard(want, words(in.Task)); score >= opts.Threshold {
			out = append(out, Match{SessionInfo: in, Score: score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].UpdatedAt.After(out[j].UpdatedAt)
	})
	return out, nil
}

// words returns the set of lower-cased words (runs of letters and digits)
// of s.
func words(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		set[w] = true
	}
	return set
}

// jaccard is |a ∩ b| / |a ∪ b|; 0 when both are empty.
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
