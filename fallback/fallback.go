// Package fallback builds a compact.Handoff deterministically from the
// dropped turns of a transcript, with no network and no model.
//
// CONTRACT (kept stable for compactor and cmd/compact): Config and Build.
// The extraction is being built; until then only the task snapshot is set.
package fallback

import (
	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// Config bounds and equips a Build. The zero value works: default budget,
// built-in redaction, estimated token counts.
type Config struct {
	// MaxTokens caps the rendered handoff (default 2000).
	MaxTokens int
	// Redactor masks secrets in the window before anything is extracted;
	// nil means a Redactor with the built-in rules.
	Redactor *redact.Redactor
	// Count counts the tokens of a string; nil means an estimate.
	Count func(string) int
}

// Build turns window, the dropped middle of a transcript, into a handoff.
// The same window and config always give the same handoff.
func Build(window []compact.Message, cfg Config) (compact.Handoff, error) {
	var h compact.Handoff
	for i := len(window) - 1; i >= 0; i-- {
		if window[i].IsUserAsk() {
			h.TaskSnapshot = window[i].Text()
			break
		}
	}
	return h, nil
}
