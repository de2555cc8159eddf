package compactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/compactkit/compact"
)

const propSecret = "pr0p-SECRET-a1b2c3d4e5f6"

// genTranscript draws an agent transcript: asks, replies, parallel tool
// calls answered in any order and in either style (tool messages or
// Anthropic-style result parts), calls of different groups interleaved,
// orphan results and calls, system notes mid-way, synthetic user messages,
// huge tool outputs, images, earlier handoffs, a secret in random places,
// and maybe a call still waiting at the end.
func genTranscript(t *rapid.T) compact.Transcript {
	var msgs []compact.Message
	seq := 0
	id := func() string { seq++; return fmt.Sprintf("call_%d", seq) }
	content := func(label string) string {
		size := rapid.SampledFrom([]int{10, 80, 400, 3000, 20000}).Draw(t, label+"-size")
		s := strings.Repeat(label+" text\n", size/10+1)
		if rapid.IntRange(0, 9).Draw(t, label+"-secret") == 0 {
			s = "token " + propSecret + "\n" + s
		}
		return s
	}
	if rapid.Bool().Draw(t, "system") {
		msgs = append(msgs, sys("You are an agent."))
	}
	msgs = append(msgs, user("Please fix the bug."))
	var pending []string // calls of an open group, answered later
	steps := rapid.IntRange(1, 40).Draw(t, "steps")
	for i := 0; i < steps; i++ {
		switch rapid.IntRange(0, 11).Draw(t, "kind") {
		case 0:
			msgs = append(msgs, user(content("ask")))
		case 1:
			msgs = append(msgs, asst(content("reply")))
		case 2, 3, 4:
			n := rapid.IntRange(1, 3).Draw(t, "parallel")
			ids := make([]string, n)
			for k := range ids {
				ids[k] = id()
			}
			msgs = append(msgs, call("bash", ids...))
			answered := rapid.Permutation(ids).Draw(t, "order")
			if rapid.Bool().Draw(t, "anthropic") {
				msgs = append(msgs, userResults(content("out"), answered...))
			} else {
				// Leave some results for later, so groups interleave.
				keep := rapid.IntRange(0, len(answered)).Draw(t, "answered-now")
				for _, c := range answered[:keep] {
					msgs = append(msgs, result(c, content("out")))
				}
				pending = append(pending, answered[keep:]...)
			}
		case 5:
			for _, c := range pending {
				msgs = append(msgs, result(c, content("late")))
			}
			pending = nil
		case 6:
			msgs = append(msgs, sys("note: "+content("note")))
		case 7:
			m := user(content("harness"))
			m.Synthetic = true
			msgs = append(msgs, withID(m))
		case 8:
			msgs = append(msgs, result("orphan_"+id(), content("orphan"))) // a result without a call
		case 9:
			msgs = append(msgs, call("bash", "lost_"+id())) // a call never answered
		case 10:
			msgs = append(msgs, handoffMsg("earlier "+id()))
		case 11:
			msgs = append(msgs, withID(compact.Message{Role: compact.RoleUser, Parts: []compact.Part{
				{Type: compact.PartText, Text: "see screenshot"},
				{Type: compact.PartImage, Image: &compact.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}}}}))
		}
	}
	for _, c := range pending {
		msgs = append(msgs, result(c, content("late")))
	}
	if rapid.Bool().Draw(t, "trailing-call") {
		msgs = append(msgs, call("bash", id()))
	}
	tr := transcript(msgs...)
	tr.Records = []compact.Record{{At: 0, Type: "session_meta", Raw: json.RawMessage(`{}`), State: true},
		{At: len(msgs) / 2, Type: "event_msg", Raw: json.RawMessage(`{}`)}, {At: len(msgs), Type: "event_msg", Raw: json.RawMessage(`{}`)}}
	return tr
}

func genConfig(t *rapid.T) Config {
	cfg := testConfig()
	cfg.Window = rapid.SampledFrom([]int{2000, 10000, 50000}).Draw(t, "window")
	cfg.OutputReserve = cfg.Window / 10
	cfg.Force = rapid.Bool().Draw(t, "force")
	cfg.KeepHead = rapid.SampledFrom([]int{0, 1, 2}).Draw(t, "keep-head")
	cfg.MinTailMessages = rapid.IntRange(0, 6).Draw(t, "min-tail")
	cfg.KeepTailTokens = rapid.SampledFrom([]int{0, 50, 2000}).Draw(t, "tail-tokens")
	cfg.SummarizeSystemNotes = rapid.Bool().Draw(t, "fold-notes")
	switch rapid.IntRange(0, 4).Draw(t, "summarizer") {
	case 0:
		cfg.Strategy = StrategyFallback
	case 1:
		cfg.Strategy = StrategyPrune
	case 2:
		cfg.Strategy, cfg.Summarizer = StrategyLLM, echoing{}
	case 3:
		cfg.Strategy, cfg.Summarizer = StrategyLLM, leaking{propSecret}
	case 4:
		// A provider whose error quotes the secret back.
		cfg.Strategy, cfg.Summarizer = StrategyLLM, failing{fmt.Errorf("HTTP 400: cannot process %q", propSecret)}
		cfg.AbortOnSummaryFailure = rapid.Bool().Draw(t, "abort")
	}
	return cfg
}

func TestCompactionInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genTranscript(t)
		cfg := genConfig(t)
		var logs strings.Builder
		cfg.Logger = newTextLogger(&logs)
		cfg.Redactor = newTestRedactor(t, propSecret)
		c := mustNew(t, cfg)
		inHash := in.Hash()
		res, err := c.Compact(context.Background(), in)
		if in.Hash() != inHash {
			t.Fatal("input modified")
		}
		if err != nil {
			if !cfg.AbortOnSummaryFailure || !errors.Is(err, ErrSummaryFailed) {
				t.Fatalf("compact: %v", err)
			}
			if strings.Contains(err.Error(), propSecret) || strings.Contains(logs.String(), propSecret) ||
				strings.Contains(res.Record.Reason, propSecret) {
				t.Fatal("secret in the error, a log line or the record")
			}
			if res.Changed() || res.Transcript.Hash() != inHash {
				t.Fatal("a failed compaction changed the transcript")
			}
			return
		}
		checkInvariants(t, in, res)
		if strings.Contains(logs.String(), propSecret) || strings.Contains(res.Record.Reason, propSecret) ||
			strings.Contains(strings.Join(res.Record.Warnings, "\n"), propSecret) {
			t.Fatal("secret in a log line or the record")
		}
		if res.Handoff != nil && strings.Contains(res.Handoff.Render(), propSecret) {
			t.Fatal("secret from the middle in the handoff")
		}
		if got := (byteCounter{}).Transcript(res.Transcript); got != res.Record.TokensAfter {
			t.Fatalf("record says %d tokens after, recount %d", res.Record.TokensAfter, got)
		}
		checkRecords(t, in, res)

		// Compacting again (forced) folds the handoff: still exactly one.
		cfg2 := cfg
		cfg2.Force = true
		cfg2.Logger = nil
		cfg2.AbortOnSummaryFailure = false
		again, err := mustNew(t, cfg2).Compact(context.Background(), res.Transcript)
		if err != nil {
			t.Fatalf("second compact: %v", err)
		}
		checkInvariants(t, res.Transcript, again)

		// The fallback is deterministic.
		if cfg.Strategy == StrategyFallback {
			twice, err := mustNew(t, cfg).Compact(context.Background(), in)
			if err != nil || twice.Transcript.Hash() != res.Transcript.Hash() || len(twice.Transcript.Messages) != len(res.Transcript.Messages) {
				t.Fatalf("fallback not deterministic (err %v)", err)
			}
			for i := range twice.Transcript.Messages {
				if twice.Transcript.Messages[i].ID != res.Transcript.Messages[i].ID {
					t.Fatalf("message %d id differs between runs", i)
				}
			}
		}
	})
}

// checkRecords verifies the non-message records: in range, in order, and
// every record of the head and tail still there.
func checkRecords(t *rapid.T, in compact.Transcript, res Result) {
	out := res.Transcript
	last := 0
	for _, r := range out.Records {
		if r.At < last || r.At > len(out.Messages) {
			t.Fatalf("record at %d out of order or range (%d messages)", r.At, len(out.Messages))
		}
		last = r.At
	}
	if !res.Changed() || res.Record.Method == compact.MethodPrune {
		if len(out.Records) != len(in.Records) {
			t.Fatal("records changed without a cut")
		}
		return
	}
	if len(out.Records) == 0 || out.Records[0].Type != "session_meta" || out.Records[len(out.Records)-1].At != len(out.Messages) {
		t.Fatalf("head or tail records lost: %+v", out.Records)
	}
}

// TestFreshAndUsedCompactorAgreeProperty (issue 18 part 3): compact(t) is
// the same for a fresh Compactor and for one that compacted another
// session, holding other secrets, first: masks are numbered by content,
// never by what the Compactor saw before.
func TestFreshAndUsedCompactorAgreeProperty(t *testing.T) {
	secrets := []string{"AKIAIOSFODNN7EXAMPLE", "https://admin:hunter2hunter2@db.internal/app",
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a", propSecret}
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		if cfg.Strategy != StrategyPrune {
			cfg.Strategy, cfg.Summarizer, cfg.AbortOnSummaryFailure = StrategyFallback, nil, false
		}
		if rapid.Bool().Draw(t, "shared-redactor") {
			cfg.Redactor = newTestRedactor(t, propSecret) // both Compactors redact with it
		}
		other := genTranscript(t)
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(secrets)-1), 1, 3).Draw(t, "other-secrets") {
			other.Messages = append(other.Messages, compact.UserMessage("use "+secrets[i]+" for the deploy"))
		}
		in := genTranscript(t)
		in.Messages = append(in.Messages, compact.UserMessage("the key is "+secrets[rapid.IntRange(0, len(secrets)-1).Draw(t, "secret")]))
		used := mustNew(t, cfg)
		if _, err := used.Compact(context.Background(), other); err != nil && !errors.Is(err, ErrSummaryFailed) {
			t.Fatal(err)
		}
		fresh, err := mustNew(t, cfg).Compact(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := used.Compact(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Transcript.Hash() != again.Transcript.Hash() {
			t.Fatalf("a used Compactor's output differs from a fresh one's (%s vs %s)", again.Record.Method, fresh.Record.Method)
		}
		if (fresh.Handoff == nil) != (again.Handoff == nil) || fresh.Handoff != nil && fresh.Handoff.Render() != again.Handoff.Render() {
			t.Fatal("a used Compactor's handoff differs from a fresh one's")
		}
	})
}
