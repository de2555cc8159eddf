package format

import "strings"

// ideAskMarkers are the headings an agent's IDE extension puts before the
// person's request when it wraps the request in editor context. Codex's
// IDE extension, e.g. (invented):
//
//	# Context from my IDE setup:
//	## Open tabs:
//	- kettle.rs: src/kettle.rs
//	## My request for Codex:
//	make boil() stop at 100 degrees
var ideAskMarkers = []string{
	"## My request for Codex:",
}

// SplitIDEAsk splits text at the last IDE ask marker: ide is the context
// before it, ask what follows it (both untrimmed). ok is false when text
// has no marker.
func SplitIDEAsk(text string) (ide, ask string, ok bool) {
	at, n := -1, 0
	for _, m := range ideAskMarkers {
		if k := strings.LastIndex(text, m); k > at {
			at, n = k, len(m)
		}
	}
	if at < 0 {
		return "", "", false
	}
	return text[:at], text[at+n:], true
}

// interruptionNotes open the note an agent's harness writes in the user
// role when the person stops the agent mid-turn. Claude Code, e.g.
// "[Request interrupted by user]" or "[Request interrupted by user for
// tool use]".
var interruptionNotes = []string{
	"[Request interrupted by user",
}

// Interruption reports whether text (spaces trimmed) is a harness's
// interruption note: a short bracketed note that opens with a table's note.
func Interruption(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasSuffix(t, "]") || len(t) >= 80 {
		return false
	}
	for _, n := range interruptionNotes {
		if strings.HasPrefix(t, n) {
			return true
		}
	}
	return false
}
