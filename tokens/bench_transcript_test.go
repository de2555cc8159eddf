package tokens

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

// corpusMessages reads every corpus transcript with package format and
// returns all their messages, in order.
func corpusMessages(b *testing.B) []compact.Message {
	var msgs []compact.Message
	for _, f := range loadCorpus(b, transcriptDir(b)) {
		t, err := format.Read(bytes.NewReader([]byte(f.raw)), filepath.Base(f.name), "")
		if err != nil {
			b.Fatalf("%s: %v", f.name, err)
		}
		msgs = append(msgs, t.Messages...)
	}
	return msgs
}

// BenchmarkCountTranscript measures re-counting a long transcript. cached:
// every message's count is in the cache, so the cost is hashing each
// message and a cache lookup (reported per message). grown: the transcript
// grew by one message since the last count, the compactor's case on every
// agent turn: one tokenization plus the cached rest.
func BenchmarkCountTranscript(b *testing.B) {
	msgs := corpusMessages(b)
	bytesTotal := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			bytesTotal += len(p.Text)
			if p.ToolCall != nil {
				bytesTotal += len(p.ToolCall.Arguments)
			}
		}
	}
	for _, model := range []string{"gpt-4o", "claude-sonnet-4-5"} {
		b.Run(model+"/uncached", func(b *testing.B) {
			c := mustCounter(b, model, WithCache(nil))
			t := compact.Transcript{Messages: msgs}
			b.SetBytes(int64(bytesTotal))
			for b.Loop() {
				c.Transcript(t)
			}
		})
		b.Run(model+"/cached", func(b *testing.B) {
			c := mustCounter(b, model, WithCache(NewCache(1<<16)))
			t := compact.Transcript{Messages: msgs}
			c.Transcript(t)
			b.ResetTimer()
			for b.Loop() {
				c.Transcript(t)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(msgs)), "ns/old-msg")
		})
		b.Run(model+"/grown", func(b *testing.B) {
			c := mustCounter(b, model, WithCache(NewCache(1<<16)))
			t := compact.Transcript{Messages: append(msgs[:len(msgs):len(msgs)], compact.Message{})}
			c.Transcript(compact.Transcript{Messages: msgs})
			b.ResetTimer()
			i := 0
			for b.Loop() {
				i++
				t.Messages[len(msgs)] = compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartText,
					Text: fmt.Sprintf("Turn %d: I ran the tests again and two of them still fail; next I will look at the parser.", i)}}}
				c.Transcript(t)
			}
			b.ReportMetric(float64(len(msgs)), "old-msgs")
		})
	}
}
