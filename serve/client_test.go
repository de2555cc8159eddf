package serve_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/compactkit/compact/serve/servetest"
	openai "github.com/sashabaranov/go-openai"
)

// go-openai, a real client, through the proxy: JSON and streamed answers
// arrive whole, and a long conversation reaches the upstream compacted.
func TestGoOpenAIClient(t *testing.T) {
	r := newRig(t)
	const answer = "The handler closed the body twice; fixed in handler_3.go."
	r.up.Script = func(servetest.API, []byte) servetest.Reply { return servetest.Reply{Text: answer} }
	const key = "sk-proj-Q7mZ2xK9vL3pT8nW4rY6bC1dF5gH0jA2sE7uI9oP3kM6qN8zX"
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = r.proxy.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)
	ctx := context.Background()

	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: systemPrompt}}
	for _, tn := range conversation(60, 8) {
		m := openai.ChatCompletionMessage{Role: string(tn.role), Content: tn.text, ToolCallID: tn.callID}
		for _, c := range tn.calls {
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		msgs = append(msgs, m)
	}
	req := openai.ChatCompletionRequest{Model: gptModel, Messages: msgs, Temperature: 0.2,
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]string{"type": "string"}}}}}}}

	resp, err := client.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != answer {
		t.Fatalf("answer %q", resp.Choices[0].Message.Content)
	}
	last := r.up.Last()
	tr := readForwarded(t, servetest.Chat, last.Body)
	if countHandoffs(tr) != 1 || len(tr.Orphans()) > 0 {
		t.Fatalf("forwarded: %d handoffs, orphans %v", countHandoffs(tr), tr.Orphans())
	}
	if got := last.Header.Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("upstream got Authorization %q", got)
	}

	// Streamed, one more turn: the stored prefix is reused.
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "user", Content: "Now run the tests."})
	stream, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(chunk.Choices) > 0 {
			b.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	stream.Close()
	if b.String() != answer {
		t.Fatalf("streamed answer %q", b.String())
	}
	tr = readForwarded(t, servetest.Chat, r.up.Last().Body)
	if n := len(tr.Messages); tr.Messages[n-1].Text() != "Now run the tests." || countHandoffs(tr) != 1 {
		t.Fatal("the streamed request did not go out as the prefix plus the new turn")
	}
	if r.summary.calls.Load() != 1 {
		t.Fatalf("%d summarizer calls, want 1 (the second request reuses the prefix)", r.summary.calls.Load())
	}
	if logs := r.waitLogs(t, `"compaction":"prefix"`); !strings.Contains(logs, `"compaction":"prefix"`) {
		t.Fatalf("log: %s", r.logs.String())
	}

	// Models pass through.
	models, err := client.ListModels(ctx)
	if err != nil || len(models.Models) != 1 {
		t.Fatalf("models through the proxy: %+v %v", models, err)
	}
}
