// Package tokens counts the tokens of text and transcripts: exactly for
// OpenAI's o200k_base and cl100k_base encodings, offline, and by a
// content-aware estimate for other models.
//
// CONTRACT (kept stable for compactor, fallback and cmd/compact): Model,
// LookupModel, Counter, ForModel, Counter.Text, Counter.Message and
// Counter.Transcript. The exact encoders are being built; until then every
// count is an estimate.
package tokens

import (
	"strings"

	"github.com/compactkit/compact"
)

// Model is what compact knows of a model: its tokenizer, its context window
// and the output it needs room for.
type Model struct {
	Name          string `json:"name"`
	Encoding      string `json:"encoding"` // "o200k_base", "cl100k_base", or "" for the estimator
	Window        int    `json:"window"`
	OutputReserve int    `json:"output_reserve"`
	// Estimated is true when counts for this model are estimates.
	Estimated bool `json:"estimated"`
}

// LookupModel returns the table entry for name (prefix matching, so
// "gpt-4o-2024-08-06" finds gpt-4o). ok is false for unknown models, which
// get an estimator entry.
func LookupModel(name string) (m Model, ok bool) {
	if strings.HasPrefix(name, "gpt-4o") {
		return Model{Name: "gpt-4o", Encoding: "o200k_base", Window: 128000, OutputReserve: 16384}, true
	}
	return Model{Name: name, Window: 128000, OutputReserve: 8192, Estimated: true}, false
}

// Counter counts tokens for one model. It is safe for concurrent use.
type Counter struct {
	model Model
}

// ForModel returns a counter for the named model.
func ForModel(name string) (*Counter, error) {
	m, _ := LookupModel(name)
	return &Counter{model: m}, nil
}

// Model returns the model the counter counts for.
func (c *Counter) Model() Model { return c.model }

// Text counts the tokens of s with no chat overhead.
func (c *Counter) Text(s string) int { return (len(s) + 3) / 4 }

// Message counts one message, chat overhead included.
func (c *Counter) Message(m compact.Message) int {
	n := 3
	for _, p := range m.Parts {
		n += c.Text(p.Text)
		if p.ToolCall != nil {
			n += c.Text(p.ToolCall.Name) + c.Text(string(p.ToolCall.Arguments))
		}
	}
	return n
}

// Transcript counts a whole prompt: every message, the tool definitions and
// the reply priming.
func (c *Counter) Transcript(t compact.Transcript) int {
	n := 3
	for _, m := range t.Messages {
		n += c.Message(m)
	}
	return n
}
