package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/benchdata"
	"github.com/compactkit/compact/internal/corpus"
)

// The compaction benchmarks run the whole "compact" command (read, count,
// plan, redact, summarize with the fallback, write) in process on long
// generated transcripts (package internal/benchdata, written into a
// temporary directory: nothing is committed), beside the anchor issue 16
// names: Python's json.load + json.dump of the same file (json.loads +
// json.dumps per line for JSON lines), run as a process in the same
// benchmark run. Besides the time they report peak-heap/input: the peak of
// the Go heap (live objects and garbage not yet swept, what the resident
// set follows) per input byte. Peak RSS of the command as a process is
// scripts/perf-compact.sh's.
//
//	go test ./cmd/compact -run '^$' -bench Compact -benchmem -cpu 1 -count 5
//	go test ./cmd/compact -run '^$' -bench Compact -cpu 1 -count 5 -long   (30M tokens, 1 GB JSONL)

var benchLong = flag.Bool("long", false, "also run the long compaction benchmarks (30M tokens, a 1 GB JSONL)")

type benchInput struct {
	name  string
	long  bool
	write func(tb testing.TB, path string)
}

func generated(f format.Name, lim benchdata.Limits) func(testing.TB, string) {
	return func(tb testing.TB, path string) {
		file, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer file.Close()
		if _, err := benchdata.Write(file, f, lim); err != nil {
			tb.Fatal(err)
		}
	}
}

// codexRollout is format's 100 MB Codex benchmark input (format/bench_test.go):
// a real rollout of the corpus repeated, call ids made unique per
// repetition.
func codexRollout(size int64) func(testing.TB, string) {
	return func(tb testing.TB, path string) {
		src := corpus.ReadFile(tb, corpus.Transcripts, benchCodexSource)
		file, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer file.Close()
		if _, err := benchdata.RepeatCodex(file, src, size); err != nil {
			tb.Fatal(err)
		}
	}
}

const benchCodexSource = "codex_agentcmd_rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"

var benchInputs = []benchInput{
	{"openai-0.1M-tokens.json", false, generated(format.OpenAIChat, benchdata.Limits{Tokens: 100_000})},
	{"openai-1M-tokens.json", false, generated(format.OpenAIChat, benchdata.Limits{Tokens: 1_000_000})},
	{"openai-10M-tokens.json", false, generated(format.OpenAIChat, benchdata.Limits{Tokens: 10_000_000})},
	{"openai-30M-tokens.json", true, generated(format.OpenAIChat, benchdata.Limits{Tokens: 30_000_000})},
	{"codex-100MB.jsonl", false, codexRollout(100 << 20)},
	{"claude-code-1GB.jsonl", true, generated(format.ClaudeCode, benchdata.Limits{Bytes: 1 << 30})},
}

// benchFiles are the generated inputs, written once per process.
var (
	benchDirOnce sync.Once
	benchDir     string
	benchFilesMu sync.Mutex
	benchFiles   = map[string]string{}
)

func benchFile(b *testing.B, in benchInput) (string, int64) {
	b.Helper()
	benchDirOnce.Do(func() {
		d, err := os.MkdirTemp("", "compact-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	})
	benchFilesMu.Lock()
	defer benchFilesMu.Unlock()
	path, ok := benchFiles[in.name]
	if !ok {
		path = filepath.Join(benchDir, in.name)
		in.write(b, path)
		benchFiles[in.name] = path
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func BenchmarkCompact(b *testing.B) {
	for _, in := range benchInputs {
		if in.long && !*benchLong {
			continue
		}
		b.Run(in.name+"/compact", func(b *testing.B) {
			path, size := benchFile(b, in)
			out := filepath.Join(b.TempDir(), "out")
			e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
				getenv: func(string) string { return "" }}
			args := []string{"--summarizer", "fallback", "-o", out, path}
			b.SetBytes(size)
			var peak uint64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				base := heapObjects()
				h := startHeapPeak()
				b.StartTimer()
				code := run(context.Background(), e, args)
				b.StopTimer()
				peak = max(peak, h.stop()-base)
				if code != 0 {
					b.Fatalf("compact exited %d", code)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(peak)/float64(size), "peak-heap/input")
		})
		b.Run(in.name+"/python-json", func(b *testing.B) {
			py, err := exec.LookPath("python3")
			if err != nil {
				b.Skip("no python3: the anchor needs it")
			}
			path, size := benchFile(b, in)
			out := filepath.Join(b.TempDir(), "out")
			b.SetBytes(size)
			for b.Loop() {
				if msg, err := exec.Command(py, "-c", pythonJSONAnchor, path, out).CombinedOutput(); err != nil {
					b.Fatalf("python: %v: %s", err, msg)
				}
			}
		})
	}
}

// pythonJSONAnchor loads and dumps a JSON document, or each line of a JSON
// lines file: the floor issue 16 measures compaction against.
const pythonJSONAnchor = `import json, sys
src, dst = sys.argv[1], sys.argv[2]
if src.endswith(".jsonl"):
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            if line.strip():
                g.write(json.dumps(json.loads(line)) + "\n")
else:
    with open(src) as f:
        d = json.load(f)
    with open(dst, "w") as g:
        json.dump(d, g)
`

// heapPeak samples the Go heap every half millisecond and keeps the peak.
type heapPeak struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapPeak() *heapPeak {
	h := &heapPeak{done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			h.peak = max(h.peak, heapObjects())
			select {
			case <-h.done:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapPeak) stop() uint64 {
	close(h.done)
	h.wg.Wait()
	return max(h.peak, heapObjects())
}
