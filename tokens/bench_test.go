package tokens

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/compactkit/compact/internal/cputime"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Run with: go test ./tokens -run '^$' -bench Count -benchmem -cpu 1
//
// BenchmarkCount compares counting throughput (MB/s) with tiktoken-go on
// the corpus text; BenchmarkCountInit compares the time to get an encoder
// ready from the compiled-in tables and count a first short text, and the
// heap it keeps (heap-MB). Start-up as a whole is a process's: see
// scripts/startup.sh.

var (
	benchOnce sync.Once
	benchText string
)

// corpusText is every string of the corpus transcripts, one per line.
func corpusText(b testing.TB) string {
	benchOnce.Do(func() {
		var sb strings.Builder
		for _, f := range loadCorpus(b, transcriptDir(b)) {
			for _, s := range f.strings {
				sb.WriteString(s)
				sb.WriteByte('\n')
			}
		}
		benchText = sb.String()
	})
	return benchText
}

func BenchmarkCount(b *testing.B) {
	text := corpusText(b)
	for _, name := range encodingNames {
		b.Run(name+"/ours", func(b *testing.B) {
			e := mustEncoding(b, name)
			measureThroughput(b, len(text), func() { e.Count(text) })
		})
		b.Run(name+"/tiktoken-go", func(b *testing.B) {
			o := oracle(b, name)
			measureThroughput(b, len(text), func() { o.EncodeOrdinary(text) })
		})
	}
}

func BenchmarkCountInit(b *testing.B) {
	// The rune class table both encodings share, built with the first.
	b.Run("classes", func(b *testing.B) {
		measureInit(b, func() any { return buildClassTable() })
	})
	for _, name := range encodingNames {
		b.Run(name+"/ours", func(b *testing.B) {
			data, next := o200kRanks, nextO200k
			if name == Cl100kBase {
				data, next = cl100kRanks, nextCL100k
			}
			measureInit(b, func() any {
				e, err := loadEncoding(name, data, next)
				if err != nil {
					b.Fatal(err)
				}
				e.Count("hello world!")
				return e
			})
		})
		b.Run(name+"/tiktoken-go", func(b *testing.B) {
			spec := oraclePatterns[name]
			measureInit(b, func() any {
				ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
				if err != nil {
					b.Fatal(err)
				}
				bpe, err := tiktoken.NewCoreBPE(ranks, spec.special, spec.pat)
				if err != nil {
					b.Fatal(err)
				}
				return bpe
			})
		})
	}
}

// measureThroughput runs count in the benchmark loop and reports, besides
// the wall-clock MB/s, the MB per second of the thread's CPU time.
func measureThroughput(b *testing.B, n int, count func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(n))
	b.ResetTimer()
	start := cputime.Thread()
	for b.Loop() {
		count()
	}
	if cpu := cputime.Thread() - start; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// measureInit times build and reports the heap its result keeps alive.
func measureInit(b *testing.B, build func() any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	runtime.KeepAlive(kept)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	start := cputime.Thread()
	for b.Loop() {
		kept = build()
	}
	cpu := cputime.Thread() - start
	b.StopTimer()
	runtime.KeepAlive(kept)
	b.ReportMetric(heap/(1<<20), "heap-MB")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/init")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/init")
	}
}

// oraclePatterns are tiktoken-go's split patterns and special tokens
// (encoding.go of github.com/pkoukk/tiktoken-go v0.1.8), which it does not
// export; its full initialisation is loading the ranks and NewCoreBPE.
var oraclePatterns = map[string]struct {
	pat     string
	special map[string]int
}{
	O200kBase: {
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
			`\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
	},
	Cl100kBase: {
		`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		map[string]int{"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
	},
}

// BenchmarkCountEstimate measures the estimator on the corpus text.
func BenchmarkCountEstimate(b *testing.B) {
	text := corpusText(b)
	measureThroughput(b, len(text), func() { Estimate(text) })
}
