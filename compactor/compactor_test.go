package compactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestPolicy(t *testing.T) {
	small := agentRun(5, 200)   // ~500 tokens
	medium := agentRun(20, 400) // ~2k tokens
	big := agentRun(60, 600)    // ~10k tokens, over the 7200 trigger
	bigOutputs := agentRun(20, 3000)
	tests := []struct {
		name       string
		cfg        func(*Config)
		in         compact.Transcript
		wantMethod compact.Method
		wantReason string
	}{
		{"below the trigger", nil, small, compact.MethodNone, "below the trigger"},
		{"over the trigger", nil, big, compact.MethodFallback, ""},
		{"force below the trigger", func(c *Config) { c.Force = true }, medium, compact.MethodFallback, ""},
		{"absolute trigger", func(c *Config) { c.TriggerTokens = 1000 }, medium, compact.MethodFallback, ""},
		{"threshold", func(c *Config) { c.Threshold = 1; c.Window = 20000 }, big, compact.MethodNone, "below the trigger"},
		{"window override", func(c *Config) { c.Window = 100000 }, big, compact.MethodNone, "below the trigger"},
		{"nothing eligible", func(c *Config) { c.Force = true },
			transcript(sys("s"), user("hi"), asst("hello"), user("bye"), asst("ciao")), compact.MethodNone, "nothing eligible",
		},
		{"ineffective", func(c *Config) { c.TriggerTokens = 100; c.HandoffTokens = 400 },
			agentRun(3, 100), compact.MethodNone, "ineffective"},
		{"prune", func(c *Config) { c.Strategy = StrategyPrune }, bigOutputs, compact.MethodPrune, "masked"},
		{"prune with nothing to prune", func(c *Config) { c.Strategy = StrategyPrune }, big, compact.MethodNone, "nothing to prune"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			res, err := mustNew(t, cfg).Compact(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Record.Method != tt.wantMethod {
				t.Fatalf("method %q, want %q (reason %q)", res.Record.Method, tt.wantMethod, res.Record.Reason)
			}
			if !strings.Contains(res.Record.Reason, tt.wantReason) {
				t.Fatalf("reason %q, want it to mention %q", res.Record.Reason, tt.wantReason)
			}
			checkInvariants(t, tt.in, res)
			if res.Changed() && res.Record.TokensAfter >= res.Record.TokensBefore {
				t.Fatalf("tokens %d -> %d", res.Record.TokensBefore, res.Record.TokensAfter)
			}
			if got := (byteCounter{}).Transcript(res.Transcript); got != res.Record.TokensAfter {
				t.Fatalf("record says %d tokens after, recount says %d", res.Record.TokensAfter, got)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	long := strings.Repeat("x", 4000) // 1000 tokens
	tests := []struct {
		name                string
		msgs                []compact.Message
		cfg                 func(*Config)
		headEnd, tailStart  int
		pinned              []int
		wantReasonSubstring string
	}{{
		name: "head is system plus first exchange with its tool group",
		msgs: []compact.Message{sys("s"), user("ask"), call("bash", "a"), result("a", long),
			asst(long), asst(long), asst(long), asst(long), asst(long), user("next"), asst("ok")},
		headEnd: 4, tailStart: 7, pinned: []int{},
	}, {
		name: "tail never splits parallel calls answered out of order",
		msgs: []compact.Message{sys("s"), user("ask"), asst("r"), asst(long), asst(long),
			call("bash", "a", "b"), result("b", long), result("a", long), asst("done"), user("thanks"), asst("bye")},
		cfg:     func(c *Config) { c.KeepTailTokens = 1100 },
		headEnd: 3, tailStart: 5, pinned: []int{},
	}, {
		name: "latest ask and system notes in the middle are pinned",
		msgs: []compact.Message{sys("s"), user("first"), asst("r"), asst(long), user("latest ask"), sys("note"),
			call("bash", "a"), result("a", long), asst(long), asst(long), asst(long), asst("end")},
		headEnd: 3, tailStart: 8, pinned: []int{4, 5},
	}, {
		name: "the tail reaches back to a latest ask within twice its budget",
		msgs: []compact.Message{sys("s"), user("first"), asst("r"), asst(long), asst(long), user("latest ask"),
			asst(long), asst("a"), asst("b"), asst("c")},
		headEnd: 3, tailStart: 5, pinned: []int{},
	}, {
		name: "system notes folded on request",
		msgs: []compact.Message{sys("s"), user("first"), asst("r"), asst(long), sys("note"), asst(long),
			asst(long), asst(long), asst(long), asst("end")},
		cfg:     func(c *Config) { c.SummarizeSystemNotes = true },
		headEnd: 3, tailStart: 6, pinned: []int{},
	}, {
		name: "an earlier handoff is never left in the tail",
		msgs: []compact.Message{sys("s"), user("first"), asst("r"), handoffMsg("old"), asst("a"), asst("b"),
			asst("c"), asst("d")},
		cfg:     func(c *Config) { c.MinTailMessages = 5 },
		headEnd: 3, tailStart: 4, pinned: []int{},
	}, {
		name: "a handoff its reader did not mark is still folded",
		msgs: []compact.Message{sys("s"), user("first"), asst("r"), user(compact.Handoff{TaskSnapshot: "old"}.Message().Text()),
			asst("a"), asst("b"), asst("c"), asst("d")},
		cfg:     func(c *Config) { c.MinTailMessages = 5 },
		headEnd: 3, tailStart: 4, pinned: []int{},
	}, {
		name: "an earlier handoff stops the head",
		msgs: []compact.Message{handoffMsg("old"), user("go on"), asst(long), asst(long), asst(long),
			asst(long), asst(long), asst("end")},
		headEnd: 0, tailStart: 4, pinned: []int{1},
	}, {
		name: "a trailing call still waiting stays in the tail",
		msgs: []compact.Message{sys("s"), user("ask"), asst("r"), asst(long), asst(long), asst(long),
			asst(long), call("bash", "pending")},
		headEnd: 3, tailStart: 4, pinned: []int{},
	}, {
		name: "tail keeps the last assistant reply however far back",
		msgs: []compact.Message{sys("s"), user("ask"), asst("r"), asst(long), asst(long), asst(long), asst(long),
			user(long), user(long), user(long), user(long), user(long)},
		headEnd: 3, tailStart: 6, pinned: []int{},
	}, {
		name:                "everything protected",
		msgs:                []compact.Message{sys("s"), user("ask"), asst("r"), user("u"), asst("a")},
		headEnd:             3,
		tailStart:           3,
		wantReasonSubstring: "nothing eligible",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Force = true
			cfg.KeepTailTokens = 1500
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			tr := transcript(tt.msgs...)
			p := mustNew(t, cfg).Plan(tr)
			if p.HeadEnd != tt.headEnd || p.TailStart != tt.tailStart || !slices.Equal(p.Pinned, tt.pinned) && len(p.Pinned)+len(tt.pinned) > 0 {
				t.Fatalf("plan head %d tail %d pinned %v, want %d %d %v (reason %q)",
					p.HeadEnd, p.TailStart, p.Pinned, tt.headEnd, tt.tailStart, tt.pinned, p.Reason)
			}
			if !strings.Contains(p.Reason, tt.wantReasonSubstring) {
				t.Fatalf("reason %q, want %q", p.Reason, tt.wantReasonSubstring)
			}
			if p.Reason == "" {
				res, err := mustNew(t, cfg).Compact(context.Background(), tr)
				if err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, tr, res)
			}
		})
	}
}

// handoffMsg is a handoff left by an earlier compaction.
func handoffMsg(task string) compact.Message {
	return withID(compact.Handoff{TaskSnapshot: task, CompletedActions: []string{"did " + task}}.Message())
}

func TestCompactFoldsEarlierHandoff(t *testing.T) {
	ctx := context.Background()
	c := mustNew(t, testConfig())
	in := agentRun(60, 600)
	first, err := c.Compact(ctx, in)
	if err != nil || first.Record.Method != compact.MethodFallback {
		t.Fatalf("first compaction: %v, %+v", err, first.Record)
	}
	// The agent carries on; the transcript grows past the trigger again.
	grown := first.Transcript
	grown.Messages = slices.Clone(grown.Messages)
	more := agentRun(60, 600)
	grown.Messages = append(grown.Messages, more.Messages[3:]...)
	second, err := c.Compact(ctx, grown)
	if err != nil || second.Record.Method != compact.MethodFallback {
		t.Fatalf("second compaction: %v, %+v", err, second.Record)
	}
	checkInvariants(t, grown, second)
	old := slices.IndexFunc(grown.Messages, func(m compact.Message) bool { return m.Summary })
	if old < second.Plan.HeadEnd || old >= second.Plan.TailStart {
		t.Fatalf("the earlier handoff (message %d) is outside the dropped middle [%d, %d)", old, second.Plan.HeadEnd, second.Plan.TailStart)
	}
}

func TestCompactIsDeterministicWithFallback(t *testing.T) {
	in := agentRun(60, 600)
	var outs []string
	for range 3 {
		res, err := mustNew(t, testConfig()).Compact(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		h := res.Transcript.Messages[res.Plan.HeadEnd+len(res.Plan.Pinned)]
		outs = append(outs, res.Transcript.Hash()+"|"+h.ID+"|"+fmt.Sprint(res.Record.DroppedIDs))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Fatalf("fallback compaction is not deterministic:\n%s", strings.Join(outs, "\n"))
	}
}

func TestCompactDoesNotModifyInput(t *testing.T) {
	in := agentRun(60, 600)
	before := in.Hash()
	var digests []string
	for i := range in.Messages {
		digests = append(digests, digest(&in.Messages[i]))
	}
	for _, st := range []Strategy{StrategyFallback, StrategyPrune} {
		cfg := testConfig()
		cfg.Strategy = st
		if _, err := mustNew(t, cfg).Compact(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if in.Hash() != before {
			t.Fatalf("%s changed the input transcript", st)
		}
		for i := range in.Messages {
			if digest(&in.Messages[i]) != digests[i] {
				t.Fatalf("%s changed input message %d", st, i)
			}
		}
	}
}

func TestRecordsFollowTheirMessages(t *testing.T) {
	in := agentRun(60, 600)
	n := len(in.Messages)
	in.Records = []compact.Record{
		{At: 0, Type: "session_meta", Raw: []byte(`{"type":"session_meta"}`), State: true},
		{At: 10, Type: "turn_context", Raw: []byte(`{"n":1}`), State: true},
		{At: 20, Type: "turn_context", Raw: []byte(`{"n":2}`), State: true},
		{At: 30, Type: "event_msg", Raw: []byte(`{}`)},
		{At: 40, Type: "compacted", Raw: []byte(`{}`), Marker: true},
		{At: n - 1, Type: "event_msg", Raw: []byte(`{"last":true}`)},
		{At: n, Type: "event_msg", Raw: []byte(`{"end":true}`)},
	}
	res, err := mustNew(t, testConfig()).Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	if p.TailStart >= n-1 || p.HeadEnd > 10 || p.TailStart <= 40 {
		t.Fatalf("test assumes records 1-4 in the middle; plan %+v", p)
	}
	out := res.Transcript
	handoff := slices.IndexFunc(out.Messages, func(m compact.Message) bool { return m.Summary })
	want := []compact.Record{in.Records[0], {At: handoff, Type: "turn_context", Raw: []byte(`{"n":2}`), State: true},
		{At: len(out.Messages) - 1, Type: "event_msg", Raw: []byte(`{"last":true}`)},
		{At: len(out.Messages), Type: "event_msg", Raw: []byte(`{"end":true}`)}}
	if len(out.Records) != len(want) {
		t.Fatalf("records %+v, want %+v", out.Records, want)
	}
	for i := range want {
		if out.Records[i].At != want[i].At || out.Records[i].Type != want[i].Type || string(out.Records[i].Raw) != string(want[i].Raw) {
			t.Fatalf("record %d = %+v, want %+v", i, out.Records[i], want[i])
		}
	}
	if string(out.Envelope) != string(in.Envelope) || out.Format != in.Format {
		t.Fatal("envelope or format lost")
	}
}

func TestPruneStrategy(t *testing.T) {
	in := agentRun(60, 3000)
	// A duplicate output and an image in the middle.
	in.Messages[10] = withID(compact.Message{Role: compact.RoleTool, ToolCallIDs: in.Messages[10].ToolCallIDs,
		Parts: []compact.Part{{Type: compact.PartText, Text: in.Messages[12].Text()}}})
	in.Messages[1] = withID(compact.Message{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "Fix it"},
		{Type: compact.PartImage, Image: &compact.Image{MediaType: "image/png", Data: "AAAA"}}}})
	in.Messages[20] = withID(compact.Message{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartImage, Image: &compact.Image{MediaType: "image/png", Data: "AAAA"}}}})
	cfg := testConfig()
	cfg.Strategy = StrategyPrune
	cfg.Window = 100000
	cfg.Force = true
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, in, res)
	if res.Record.Method != compact.MethodPrune || res.Handoff != nil {
		t.Fatalf("method %s, handoff %v", res.Record.Method, res.Handoff)
	}
	out := res.Transcript
	if got := out.Messages[10].Text(); got != duplicateMarker {
		t.Fatalf("duplicate output not replaced: %.80q", got)
	}
	if !strings.Contains(out.Messages[20].Text(), "image omitted (image/png)") {
		t.Fatalf("image not replaced: %+v", out.Messages[20].Parts)
	}
	if out.Messages[1].Parts[1].Type != compact.PartImage {
		t.Fatal("an image in the protected head was replaced")
	}
	mid := out.Messages[res.Plan.HeadEnd+1].Text()
	if !strings.Contains(mid, "lines omitted") || len(mid) > 8*cfg.Prune.MinTokens+200 && cfg.Prune.MinTokens > 0 {
		t.Fatalf("old output not shortened: %d bytes", len(mid))
	}
	if res.Record.Saved() < 0.5 {
		t.Fatalf("prune saved only %.0f%%", 100*res.Record.Saved())
	}
}

func TestShorten(t *testing.T) {
	pc := PruneConfig{}
	pc.fill()
	count := byteCounter{}.Text
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %02d %s\n", i, strings.Repeat("y", 30))
	}
	s := b.String()
	got, ok := pc.shorten(s, count)
	if !ok || !strings.HasPrefix(got, "line 00") || !strings.Contains(got, "line 19") || strings.Contains(got, "line 20") ||
		!strings.Contains(got, "[... compact: 70 lines omitted ...]") || !strings.Contains(got, "line 99") || strings.Contains(got, "line 89") {
		t.Fatalf("shorten by lines:\n%s", got)
	}
	one := strings.Repeat("é", 20000) // one long line of two-byte runes
	got, ok = pc.shorten(one, count)
	if !ok || len(got) > 8*pc.MinTokens+100 || !strings.Contains(got, "bytes omitted") || !utf8Valid(got) {
		t.Fatalf("shorten one long line: %d bytes, valid %v", len(got), utf8Valid(got))
	}
	if _, ok := pc.shorten("short", count); ok {
		t.Fatal("short output shortened")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestAbortLeavesTranscriptUnchanged(t *testing.T) {
	in := agentRun(60, 600)
	cfg := testConfig()
	cfg.Strategy = StrategyLLM
	cfg.Summarizer = failing{errors.New("provider down")}
	cfg.AbortOnSummaryFailure = true
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if !errors.Is(err, ErrSummaryFailed) {
		t.Fatalf("err = %v, want ErrSummaryFailed", err)
	}
	if res.Changed() || res.Transcript.Hash() != in.Hash() || !strings.Contains(res.Record.Reason, "provider down") {
		t.Fatalf("abort: %+v", res.Record)
	}
	cfg.AbortOnSummaryFailure = false
	res, err = mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodFallback || !strings.Contains(res.Record.Reason, "provider down") {
		t.Fatalf("fallback: %v %+v", err, res.Record)
	}
	checkInvariants(t, in, res)
}

func TestCancelledContext(t *testing.T) {
	in := agentRun(60, 600)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig()
	cfg.Summarizer = cancelling{cancel}
	cfg.Strategy = StrategyLLM
	res, err := mustNew(t, cfg).Compact(ctx, in)
	if !errors.Is(err, context.Canceled) || res.Changed() {
		t.Fatalf("err %v, changed %v", err, res.Changed())
	}
}

type failing struct{ err error }

func (f failing) Summarize(context.Context, compact.SummaryRequest) (compact.Summary, error) {
	return compact.Summary{Attempts: 2, Model: "broken"}, f.err
}

type cancelling struct{ cancel func() }

func (c cancelling) Summarize(ctx context.Context, _ compact.SummaryRequest) (compact.Summary, error) {
	c.cancel()
	return compact.Summary{}, ctx.Err()
}

// echoing is a summarizer that copies the start of every message of the
// window into the handoff, as a careless LLM might.
type echoing struct{}

func (echoing) Summarize(_ context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	var h compact.Handoff
	for _, m := range req.Window {
		s := m.Text() + m.ResultText()
		h.CompletedActions = append(h.CompletedActions, s[:min(len(s), 60)])
	}
	return compact.Summary{Handoff: h, Method: compact.MethodLLM, Model: "echo"}, nil
}

// leaking is a summarizer that writes a secret it should never have seen,
// and a nested handoff marker.
type leaking struct{ secret string }

func (l leaking) Summarize(context.Context, compact.SummaryRequest) (compact.Summary, error) {
	h := compact.Handoff{TaskSnapshot: "use " + l.secret, Decisions: []string{compact.HandoffBegin + " nested"}}
	return compact.Summary{Handoff: h, Method: compact.MethodLLM}, nil
}

func TestSecretsFromTheMiddleNeverReachTheHandoff(t *testing.T) {
	const secret = "s3cr3t-Value-9f8e7d6c5b4a"
	in := agentRun(60, 600)
	in.Messages[20] = result(in.Messages[20].ToolCallIDs[0], "export TOKEN="+secret+"\nok")
	in.Messages = slices.Insert(in.Messages, 31, user("please use "+secret+" for the deploy"))
	for _, s := range []compact.Summarizer{echoing{}, leaking{secret}, nil} {
		var logs strings.Builder
		cfg := testConfig()
		cfg.Redactor = newTestRedactor(t, secret)
		cfg.Logger = newTextLogger(&logs)
		cfg.Strategy = StrategyAuto
		cfg.Summarizer = s
		res, err := mustNew(t, cfg).Compact(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, in, res)
		if !res.Changed() {
			t.Fatalf("%T: nothing compacted: %s", s, res.Record.Reason)
		}
		h := res.Transcript.Messages[res.Plan.HeadEnd+len(res.Plan.Pinned)]
		if strings.Contains(h.Text(), secret) || strings.Contains(logs.String(), secret) {
			t.Fatalf("%T: secret leaked (handoff %v, logs %v)", s, strings.Contains(h.Text(), secret), strings.Contains(logs.String(), secret))
		}
		if strings.Count(h.Text(), compact.HandoffBegin) != 1 {
			t.Fatalf("%T: nested marker kept", s)
		}
	}
}

// splitting writes a secret split over two list items: no item holds it,
// but the rendered handoff does.
type splitting struct{ a, b string }

func (s splitting) Summarize(context.Context, compact.SummaryRequest) (compact.Summary, error) {
	return compact.Summary{Handoff: compact.Handoff{CompletedActions: []string{"x" + s.a, s.b + "y"}}, Method: compact.MethodLLM, Model: "m"}, nil
}

func TestInvalidLLMHandoffFallsBack(t *testing.T) {
	const secret = "k3y-part-one\n- part-two-k3y"
	in := agentRun(60, 600)
	in.Messages[20] = result(in.Messages[20].ToolCallIDs[0], "config:\n"+secret+"\n")
	cfg := testConfig()
	cfg.Strategy = StrategyLLM
	cfg.Summarizer = splitting{"k3y-part-one", "part-two-k3y"}
	cfg.Redactor = newTestRedactor(t, secret)
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodFallback || !strings.Contains(res.Record.Reason, "failed validation") {
		t.Fatalf("%v %+v", err, res.Record)
	}
	checkInvariants(t, in, res)
	if strings.Contains(res.Handoff.Render(), secret) {
		t.Fatal("secret in the handoff")
	}
	cfg.AbortOnSummaryFailure = true
	res, err = mustNew(t, cfg).Compact(context.Background(), in)
	if !errors.Is(err, ErrInvalidResult) || !errors.Is(err, ErrSummaryFailed) || res.Changed() || strings.Contains(err.Error(), "part-two") {
		t.Fatalf("abort: %v %+v", err, res.Record)
	}
}
