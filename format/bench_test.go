package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// The Codex benchmarks read a 100 MB rollout built at benchmark time by
// repeating a real one (call ids made unique per repetition, so pairs stay
// pairs). They report, beside MB/s, the peak heap while reading and the
// heap the transcript keeps, both relative to the file size: the reader
// streams lines, keeping each line once (Source.Records) plus the decoded
// text, and should peak well under 2.5 times the file.

const benchCodexSource = "codex_agentcmd_rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"

// buildCodexRollout writes a rollout of at least size bytes to dir.
func buildCodexRollout(tb testing.TB, dir string, size int) (string, int64) {
	tb.Helper()
	src, err := os.ReadFile(corpusPath(tb, benchCodexSource))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-100mb.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var n int64
	for rep := 0; n < int64(size); rep++ {
		chunk := bytes.ReplaceAll(src, []byte(`"call_id":"call_`), []byte(fmt.Sprintf(`"call_id":"r%d_call_`, rep)))
		m, _ := w.Write(chunk)
		n += int64(m)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, n
}

// heapSampler records the peak of live heap objects while it runs.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			if v := heapNow(); v > h.peak {
				h.peak = v
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	h.done.Wait()
	if v := heapNow(); v > h.peak {
		h.peak = v
	}
	return h.peak
}

// BenchmarkReadCodex100MB detects and reads the rollout with format.Read.
func BenchmarkReadCodex100MB(b *testing.B) {
	path, size := buildCodexRollout(b, b.TempDir(), 100<<20)
	b.SetBytes(size)
	b.ReportAllocs()
	var peak, live, messages float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		base := heapNow()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h := startHeapSampler()
		b.StartTimer()
		tr, err := Read(f, path, "")
		b.StopTimer()
		p := h.finish()
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		kept := heapNow()
		runtime.KeepAlive(tr)
		peak = max(peak, float64(p-base)/float64(size))
		live = float64(kept-base) / float64(size)
		messages = float64(len(tr.Messages))
		if o := tr.Orphans(); len(o) != 0 {
			b.Fatalf("%d orphans", len(o))
		}
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak-heap/file")
	b.ReportMetric(live, "kept-heap/file")
	b.ReportMetric(messages, "messages")
}

// BenchmarkDecodeCodex100MBNaive is the anchor: decoding each line into a
// map, as a quick script would, keeping nothing.
func BenchmarkDecodeCodex100MBNaive(b *testing.B) {
	path, size := buildCodexRollout(b, b.TempDir(), 100<<20)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		err = lines(f, func(line []byte, _ int) error {
			var v map[string]any
			return json.Unmarshal(line, &v)
		})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
