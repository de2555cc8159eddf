package format

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// chatJSONL builds an OpenAI Chat JSONL transcript of about size bytes: user
// asks, assistant calls and tool results with realistic lengths.
func chatJSONL(size int) []byte {
	var b bytes.Buffer
	out := bytes.Repeat([]byte("drwxr-xr-x  5 user staff  160 Jan  1 12:00 src\\n"), 40)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `{"role":"user","content":"step %d: list the files and explain what changed since the last build"}`+"\n", i)
		fmt.Fprintf(&b, `{"role":"assistant","content":"Listing.","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls -la src/\"}"}}]}`+"\n", i)
		fmt.Fprintf(&b, `{"role":"tool","tool_call_id":"call_%d","content":"%s"}`+"\n", i, out)
	}
	return b.Bytes()
}

// chatJSON is chatJSONL as one JSON array.
func chatJSON(size int) []byte {
	lines := bytes.Split(bytes.TrimSpace(chatJSONL(size)), []byte("\n"))
	return append(append([]byte("[\n"), bytes.Join(lines, []byte(",\n"))...), "\n]\n"...)
}

// BenchmarkReadOpenAI reads a 32 MB transcript. Besides MB/s it reports
// alloc/input (bytes allocated per input byte) and heap/input (live heap
// after the read, per input byte: what the transcript costs to hold).
func BenchmarkReadOpenAI(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
		as   Name
	}{
		{"jsonl", chatJSONL(32 << 20), OpenAIChatJSONL},
		{"json", chatJSON(32 << 20), OpenAIChat},
	} {
		b.Run(c.name, func(b *testing.B) {
			// The live heap a read transcript costs, measured once outside
			// the timed loop (forcing GCs inside it would be timed too).
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			t, err := Read(bytes.NewReader(c.data), c.name, "")
			if err != nil || t.Format != string(c.as) {
				b.Fatal(err, t.Format)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := after.HeapAlloc - before.HeapAlloc
			runtime.KeepAlive(t)
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Read(bytes.NewReader(c.data), c.name, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(heap)/float64(len(c.data)), "heap/input")
		})
	}
}

// BenchmarkWriteOpenAI writes a read transcript back (every record reused)
// and converted to Anthropic (every message encoded).
func BenchmarkWriteOpenAI(b *testing.B) {
	data := chatJSONL(32 << 20)
	t, err := Read(bytes.NewReader(data), "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, to := range []Name{OpenAIChatJSONL, Anthropic} {
		b.Run(string(to), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := Write(&out, t, to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
