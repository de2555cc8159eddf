package fallback

import (
	"fmt"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// Complete adds to h, a handoff written for window by someone else (an
// LLM), the highest-ranked names and files of the window's index that h
// does not mention, under Critical context and Relevant files, within
// cfg.MaxTokens: LLM summaries keep the story and drop the exact names a
// next turn reaches for. Items of h are never removed or changed; a
// handoff already at its budget is returned as it is. The window is read
// as Build reads it (redacted first unless cfg.Redacted).
func Complete(h compact.Handoff, window []compact.Message, cfg Config) (compact.Handoff, error) {
	lim, err := cfg.limits()
	if err != nil {
		return h, err
	}
	r := cfg.Redactor
	if r == nil {
		if r, err = redact.New(redact.Config{}); err != nil {
			return h, fmt.Errorf("fallback: redactor: %w", err)
		}
	}
	room := lim.max - lim.count(h.Render())
	if room <= 0 {
		return h, nil
	}
	w := analyze(redacted(window, r, cfg), r.String)
	w.kept = keptNames(cfg.Kept)
	idx := w.indexRefs()
	files := idx.paths()
	if w.root == "" {
		w.root = idx.root
	}
	d := &draft{}
	w.markEchoed(files)
	buildFiles(d, files, w.shortRoot())
	w.buildContext(d, idx)
	d.sanitize(r.String)
	said := h.Render()
	var added [nSecs][]entry
	for _, s := range []sec{secFiles, secContext} {
		es := d.secs[s]
		sort.SliceStable(es, func(i, j int) bool { return es[i].rank.cmp(es[j].rank) > 0 })
		for _, e := range es {
			if strings.Contains(said, mentionOf(s, e.text)) {
				continue
			}
			cost := lim.count(e.text) + 2
			if cost > room {
				continue
			}
			room -= cost
			said += "\n" + e.text
			added[s] = append(added[s], e)
		}
	}
	for _, e := range added[secFiles] {
		h.RelevantFiles = append(h.RelevantFiles, e.text)
	}
	sort.SliceStable(added[secContext], func(i, j int) bool { return added[secContext][i].order.before(added[secContext][j].order) })
	own := len(h.CriticalContext)
	h.CriticalContext = append(h.CriticalContext, packGroups(added[secContext])...)
	// The groups' labels were not counted: trim what no longer fits, from
	// the added items only.
	for len(h.CriticalContext) > own && lim.count(h.Render()) > lim.max {
		last := &h.CriticalContext[len(h.CriticalContext)-1]
		if k := strings.LastIndex(*last, ", "); k > 0 {
			*last = (*last)[:k]
		} else {
			h.CriticalContext = h.CriticalContext[:len(h.CriticalContext)-1]
		}
	}
	return h, nil
}

// mentionOf is what of an entry must appear in a handoff for it to count
// as mentioned: a file's path (not what is said of it), a name without the
// parentheses of a call.
func mentionOf(s sec, text string) string {
	if s == secFiles {
		if k := strings.Index(text, " ("); k > 0 {
			text = text[:k]
		}
		if k := strings.Index(text, ": "); k > 0 {
			text = text[:k]
		}
		if k := strings.LastIndexByte(text, ':'); k > 0 && allDigitsOrPunct(text[k+1:]) {
			text = text[:k] // path:12,40
		}
		return text
	}
	return strings.TrimSuffix(text, "()")
}
