package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact"
)

// FuzzCheckAnswer feeds arbitrary model answers to the parser of LLM
// responses: it must never panic, never accept an answer missing a
// section, and never let a handoff marker through.
func FuzzCheckAnswer(f *testing.F) {
	f.Add(goodHandoff, "stop", "")
	f.Add("```markdown\n"+goodHandoff+"```", "stop", "")
	f.Add(compact.Handoff{TaskSnapshot: "x"}.Message().Text(), "stop", "")
	f.Add("## Task snapshot\n\nfix\n## Goal\n", "stop", "")
	f.Add("I'm sorry, I can't help.", "stop", "")
	f.Add("", "length", "")
	f.Add(goodHandoff, "content_filter", "")
	f.Add("", "stop", "no")
	f.Add("**1. Task snapshot:**\n"+strings.Repeat("- item\n", 3), "stop", "")
	f.Fuzz(func(t *testing.T, content, finish, refusal string) {
		resp := openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{
			Message:      openai.ChatCompletionMessage{Role: "assistant", Content: content, Refusal: refusal},
			FinishReason: openai.FinishReason(finish),
		}}}
		h, err := checkAnswer(resp, 100)
		if err != nil {
			return
		}
		text := h.Render()
		if _, err := compact.ParseHandoff(text); err != nil {
			t.Fatalf("accepted an answer whose handoff does not parse back: %v", err)
		}
		if strings.Contains(h.Message().Text()[len(compact.HandoffBegin):], compact.HandoffBegin) {
			t.Fatal("a handoff marker survived")
		}
	})
}

// FuzzRetryAfter checks the Retry-After parser on arbitrary headers: never
// negative, never a panic.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "0.5", "-3", "Wed, 21 Oct 2015 07:28:00 GMT", "", "NaN", "1e300", "+Inf"} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, raMs string) {
		h := http.Header{}
		h.Set("Retry-After", ra)
		h.Set("Retry-After-Ms", raMs)
		if d := parseRetryAfter(h, now); d < 0 {
			t.Fatalf("Retry-After %q / %q parsed as %s", ra, raMs, d)
		}
	})
}
