package fallback_test

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/compactkit/compact/internal/cputime"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/redact"
)

// windowBytes is the content size of a window: text, tool arguments and
// results.
func windowBytes(msgs []compact.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += len(p.Text)
			if p.ToolCall != nil {
				n += len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
			}
		}
	}
	return n
}

var (
	bigOnce   sync.Once
	bigWindow []compact.Message
	bigErr    error
)

// benchTranscripts are the shared corpus's transcripts the benchmarks'
// windows are made of: one or two of each agent's format.
var benchTranscripts = []string{
	"claudecode_agentcmd_full-session-two.jsonl",
	"claudecode_agenthistory_session_with_compaction.synthetic.jsonl",
	"codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
	"codex_agenthistory_session_with_compaction.synthetic.jsonl",
	"gemini_agentcmd_session-2025-10-27T19-55-981c87cb.json",
	"minisweagent_deepseek_chat_test_1-100_django__django-11099.traj.json",
	"openhands_traj_basic_gui_mode.json",
	"sweagent_ctf_web_i_got_id_demo.traj",
	"sweagent_gpt4_test-repo-i1.traj",
}

// realWindow returns a window of at least size bytes of content, made of
// the benchTranscripts repeated (call ids renamed per copy, so calls still
// pair with their own results). It skips tb where the shared corpus is
// missing.
func realWindow(tb testing.TB, size int) []compact.Message {
	tb.Helper()
	var base []compact.Message
	for _, name := range benchTranscripts {
		f := corpus.Path(tb, corpus.Transcripts, name)
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		tr, err := format.Read(bytes.NewReader(data), f, "")
		if err != nil {
			tb.Fatal(err)
		}
		base = append(base, tr.Messages...)
	}
	var out []compact.Message
	for copyN := 0; windowBytes(out) < size; copyN++ {
		suffix := "#" + strconv.Itoa(copyN)
		for _, m := range base {
			m = m.Clone()
			for i, p := range m.Parts {
				if p.ToolCall != nil {
					m.Parts[i].ToolCall.ID += suffix
				}
				if p.CallID != "" {
					m.Parts[i].CallID += suffix
				}
			}
			for i := range m.ToolCallIDs {
				m.ToolCallIDs[i] += suffix
			}
			out = append(out, m)
		}
	}
	return out
}

// benchBuild runs Build on window b.N times and reports CPU time per op
// beside the harness's wall time.
func benchBuild(b *testing.B, window []compact.Message, cfg fallback.Config) {
	b.SetBytes(int64(windowBytes(window)))
	b.ReportAllocs()
	b.ResetTimer()
	start, n := cputime.Process(), 0
	for b.Loop() {
		if _, err := fallback.Build(window, cfg); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cputime.Process()-start).Microseconds())/1000/float64(n), "cpu-ms/op")
}

func tenMB(b *testing.B) []compact.Message {
	corpus.Dir(b, corpus.Transcripts) // skip here, not inside the Once
	bigOnce.Do(func() { bigWindow = realWindow(b, 10<<20) })
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigWindow
}

// BenchmarkBuild10MB builds the handoff of a 10 MB window of real
// transcripts with the default config: built-in redaction and gpt-4o
// counts. Goal: < 200 ms on one core (go test -bench Build10MB -cpu 1
// -benchmem).
func BenchmarkBuild10MB(b *testing.B) {
	benchBuild(b, tenMB(b), fallback.Config{})
}

// BenchmarkExtract10MB is Build's extraction and bounding alone, with no
// redaction at all: the fallback's own share of BenchmarkBuild10MB.
func BenchmarkExtract10MB(b *testing.B) {
	window := tenMB(b)
	b.SetBytes(int64(windowBytes(window)))
	b.ReportAllocs()
	b.ResetTimer()
	start, n := cputime.Process(), 0
	for b.Loop() {
		if _, err := fallback.BuildUnredacted(window, fallback.Config{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cputime.Process()-start).Microseconds())/1000/float64(n), "cpu-ms/op")
}

// BenchmarkBuild10MBRedacted is Build on a window its caller has already
// redacted (Config.Redacted, the compactor's case): extraction, bounding
// and the redaction of every extracted item.
func BenchmarkBuild10MBRedacted(b *testing.B) {
	window := tenMB(b)
	r, err := redact.New(redact.Config{})
	if err != nil {
		b.Fatal(err)
	}
	red, _ := r.Transcript(compact.Transcript{Messages: window})
	benchBuild(b, red.Messages, fallback.Config{Redactor: r, Redacted: true})
}

// BenchmarkRedact10MB is the redaction Build starts with, alone.
func BenchmarkRedact10MB(b *testing.B) {
	window := tenMB(b)
	r, err := redact.New(redact.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(windowBytes(window)))
	b.ReportAllocs()
	b.ResetTimer()
	start, n := cputime.Process(), 0
	for b.Loop() {
		r.Transcript(compact.Transcript{Messages: window})
		n++
	}
	b.ReportMetric(float64((cputime.Process()-start).Microseconds())/1000/float64(n), "cpu-ms/op")
}

// BenchmarkBuild1MB shows how time and memory grow with the window
// (compare with the 10 MB figures: linear means ten times).
func BenchmarkBuild1MB(b *testing.B) {
	benchBuild(b, realWindow(b, 1<<20), fallback.Config{})
}
