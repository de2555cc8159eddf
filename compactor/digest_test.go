package compactor

import (
	"testing"

	"github.com/compactkit/compact"
)

// TestDigestCoversSpans: the digest that proves a kept message verbatim
// covers its source when the reader kept spans of the file instead of
// records: a span moved, resized or with another checksum changes it.
func TestDigestCoversSpans(t *testing.T) {
	m := compact.Message{ID: "m1", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "hi"}},
		Source: compact.Source{Format: "openai", Spans: []compact.Span{{Offset: 10, Len: 5, Sum: 1}}}}
	base := digest(&m)
	for _, sp := range []compact.Span{{Offset: 11, Len: 5, Sum: 1}, {Offset: 10, Len: 6, Sum: 1}, {Offset: 10, Len: 5, Sum: 2}} {
		c := m
		c.Source.Spans = []compact.Span{sp}
		if digest(&c) == base {
			t.Errorf("span %+v: digest unchanged", sp)
		}
	}
	c := m
	c.Source.Spans = nil
	if digest(&c) == base {
		t.Error("spans dropped: digest unchanged")
	}
}
