// Package redact finds secrets in text and transcripts and masks them with
// labelled, non-reusable placeholders such as [REDACTED:github-token].
//
// CONTRACT (kept stable for the packages built on it: fallback, compactor,
// checkpoint, cmd/compact): New, Config, Redactor.Redact, Redactor.String,
// Redactor.Transcript, Redactor.AddValue and Finding. The detection engine
// behind them is being built; until then only values registered with
// AddValue are masked.
package redact

import (
	"sort"
	"strings"
	"sync"

	"github.com/compactkit/compact"
)

// Config configures a Redactor. The zero value uses the built-in rules.
type Config struct{}

// Finding is one secret found: the rule that matched and where. It never
// holds the secret itself.
type Finding struct {
	Rule  string `json:"rule"`
	Start int    `json:"start"` // byte offsets into the text that was scanned
	End   int    `json:"end"`
	// Message and Part locate the finding in a transcript (Transcript only);
	// Field names what was scanned there: "text", "arguments" or "result".
	Message int    `json:"message,omitempty"`
	Part    int    `json:"part,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Redactor finds and masks secrets. It is safe for concurrent use; the
// numbering of masks is stable for its lifetime, so one secret gets the same
// mask wherever it appears.
type Redactor struct {
	mu     sync.Mutex
	values []string
}

// New returns a Redactor configured by cfg.
func New(cfg Config) (*Redactor, error) {
	return &Redactor{}, nil
}

// AddValue registers a literal that is always masked, wherever it appears.
func (r *Redactor) AddValue(secret string) {
	if secret == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values = append(r.values, secret)
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
}

// Redact returns s with every secret masked, and what was found.
func (r *Redactor) Redact(s string) (string, []Finding) {
	r.mu.Lock()
	values := r.values
	r.mu.Unlock()
	var found []Finding
	for _, v := range values {
		for i := strings.Index(s, v); i >= 0; i = strings.Index(s, v) {
			found = append(found, Finding{Rule: "value", Start: i, End: i + len(v)})
			s = s[:i] + "[REDACTED:value]" + s[i+len(v):]
		}
	}
	return s, found
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	out, _ := r.Redact(s)
	return out
}

// Transcript returns a copy of t with secrets masked in every text part,
// thinking part, tool call's arguments and tool result. t is not modified.
func (r *Redactor) Transcript(t compact.Transcript) (compact.Transcript, []Finding) {
	c := t.Clone()
	var all []Finding
	for i := range c.Messages {
		for j := range c.Messages[i].Parts {
			p := &c.Messages[i].Parts[j]
			var found []Finding
			p.Text, found = r.Redact(p.Text)
			for _, f := range found {
				f.Message, f.Part, f.Field = i, j, "text"
				all = append(all, f)
			}
		}
	}
	return c, all
}
