package checkpoint_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/redis/go-redis/v9"
)

// realTranscript reads a Claude Code session of the shared test corpus into a
// transcript: text, thinking, tool calls and results as parts, every line
// kept as the raw source record of its message. It is a small reader for
// test data, not the format package's.
func realTranscript(tb testing.TB, maxRaw int) compact.Transcript {
	tb.Helper()
	f, err := os.Open(corpus.Path(tb, corpus.Transcripts, "claudecode_agentcmd_full-session-four.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	t := compact.Transcript{Format: "claudecode"}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	raw := 0
	for sc.Scan() && raw < maxRaw {
		line := bytes.Clone(sc.Bytes())
		raw += len(line)
		var rec struct {
			Type    string `json:"type"`
			UUID    string `json:"uuid"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			tb.Fatal(err)
		}
		if rec.Type != "user" && rec.Type != "assistant" {
			t.Records = append(t.Records, compact.Record{At: len(t.Messages), Type: rec.Type, Raw: line})
			continue
		}
		m := compact.Message{ID: rec.UUID, Role: compact.Role(rec.Message.Role)}
		var s string
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(rec.Message.Content, &s) == nil {
			m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: s})
		} else if json.Unmarshal(rec.Message.Content, &blocks) == nil {
			for _, b := range blocks {
				switch b.Type {
				case "text":
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: b.Text})
				case "thinking":
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: b.Thinking})
				case "tool_use":
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input}})
				case "tool_result":
					var text string
					if json.Unmarshal(b.Content, &text) != nil {
						text = string(b.Content)
					}
					m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: b.ToolUseID, Text: text, IsError: b.IsError})
				}
			}
		}
		m.Source = compact.Source{Format: "claudecode", Records: []json.RawMessage{line}, Fingerprint: m.Fingerprint()}
		t.Messages = append(t.Messages, m)
	}
	return t
}

// bigCheckpoint is a checkpoint of about 200 KB stored: a real transcript
// with its raw records, plus the sample's steps, cache and records.
func bigCheckpoint(tb testing.TB, session string) *checkpoint.Checkpoint {
	c := storetest.Sample(session, 0)
	t := realTranscript(tb, 135_000)
	c.Transcript = &t
	return c
}

func storedSize(tb testing.TB, s checkpoint.Store, c *checkpoint.Checkpoint) int {
	h, err := s.History(context.Background(), c.Session)
	if err != nil {
		tb.Fatal(err)
	}
	return h[0].Size
}

// report records ops/s and the 99th percentile of per-op times.
func report(b *testing.B, times []time.Duration, size int) {
	b.StopTimer()
	var total time.Duration
	for _, d := range times {
		total += d
	}
	slices.Sort(times)
	p99 := times[max(0, (len(times)*99+99)/100-1)]
	b.ReportMetric(float64(len(times))/total.Seconds(), "ops/s")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(size), "stored-B")
}

func benchSave(b *testing.B, s checkpoint.Store) {
	ctx := context.Background()
	c := bigCheckpoint(b, "bench-save")
	if err := s.Save(ctx, c, ""); err != nil {
		b.Fatal(err)
	}
	size := storedSize(b, s, c)
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Every save is a state transition, so the event log is written too.
		if i%2 == 0 {
			c.Steps[3].Status = checkpoint.StepRunning
		} else {
			c.Steps[3].Status = checkpoint.StepPending
		}
		t0 := time.Now()
		if err := s.Save(ctx, c, c.ID); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	report(b, times, size)
}

func benchLoad(b *testing.B, s checkpoint.Store) {
	ctx := context.Background()
	c := bigCheckpoint(b, "bench-load")
	if err := s.Save(ctx, c, ""); err != nil {
		b.Fatal(err)
	}
	size := storedSize(b, s, c)
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		got, err := s.Latest(ctx, "bench-load")
		if err != nil || got.Hash != c.Hash {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	report(b, times, size)
}

func BenchmarkFileStore(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts checkpoint.Options
	}{
		{"plain", checkpoint.Options{}},
		{"aes-gcm", checkpoint.Options{Key: bytes.Repeat([]byte{1}, 32)}},
	} {
		b.Run("Save/"+bc.name, func(b *testing.B) {
			s, _ := checkpoint.NewFileStore(b.TempDir(), bc.opts)
			benchSave(b, s)
		})
		b.Run("Load/"+bc.name, func(b *testing.B) {
			s, _ := checkpoint.NewFileStore(b.TempDir(), bc.opts)
			benchLoad(b, s)
		})
	}
}

// BenchmarkFsyncFloor is the anchor for BenchmarkFileStore/Save: the
// cheapest durable replace of a file of the same size on the same disk
// (write, fsync, rename, directory fsync), run in the same process. A
// FileStore save does this twice (checkpoint and head), plus the event
// log's fsync.
func BenchmarkFsyncFloor(b *testing.B) {
	dir := b.TempDir()
	data := bytes.Repeat([]byte("x"), 200_000)
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		tmp := filepath.Join(dir, "tmp")
		f, err := os.Create(tmp)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(data)
		f.Sync()
		f.Close()
		os.Rename(tmp, filepath.Join(dir, "file"))
		d, _ := os.Open(dir)
		d.Sync()
		d.Close()
		times = append(times, time.Since(t0))
	}
	report(b, times, len(data))
}

func BenchmarkRedisStore(b *testing.B) {
	srv := startRedis(b)
	open := func(b *testing.B) checkpoint.Store {
		s, _ := checkpoint.NewRedisStore(redis.NewClient(&redis.Options{Addr: srv.Addr()}), checkpoint.Options{Prefix: fmt.Sprint("bench", prefixes.Add(1))})
		b.Cleanup(func() { s.Close() })
		return s
	}
	b.Run("Save", func(b *testing.B) { benchSave(b, open(b)) })
	b.Run("Load", func(b *testing.B) { benchLoad(b, open(b)) })
}

// The transcript read from testdata survives a store round trip with its
// raw records byte for byte.
func TestRealTranscriptRoundTrip(t *testing.T) {
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	c := bigCheckpoint(t, "real")
	if len(c.Transcript.Messages) < 20 || len(c.Transcript.ToolGroups()) < 5 {
		t.Fatalf("testdata read as %d messages, %d tool groups", len(c.Transcript.Messages), len(c.Transcript.ToolGroups()))
	}
	if err := s.Save(context.Background(), c, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Latest(context.Background(), "real")
	if err != nil {
		t.Fatal(err)
	}
	if got.Transcript.Hash() != c.Transcript.Hash() {
		t.Fatal("transcript hash changed")
	}
	for i, m := range got.Transcript.Messages {
		if !m.Unchanged() || !bytes.Equal(m.Source.Records[0], c.Transcript.Messages[i].Source.Records[0]) {
			t.Fatalf("message %d: raw record changed", i)
		}
	}
	if size := storedSize(t, s, c); size < 150_000 || size > 260_000 {
		t.Fatalf("benchmark checkpoint is %d bytes stored, want about 200 KB", size)
	}
}

// BenchmarkFileStoreNoDisk runs FileStore saves on a RAM file system
// (/dev/shm), where fsync costs nothing: the CPU part of a save (redaction
// off, JSON, hashes, header, syscalls). The difference from
// BenchmarkFileStore/Save is the disk's.
func BenchmarkFileStoreNoDisk(b *testing.B) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		b.Skip("no /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "ckpt-bench-")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	b.Run("Save", func(b *testing.B) {
		sub, _ := os.MkdirTemp(dir, "save-")
		s, _ := checkpoint.NewFileStore(sub, checkpoint.Options{})
		benchSave(b, s)
	})
	b.Run("Load", func(b *testing.B) {
		sub, _ := os.MkdirTemp(dir, "load-")
		s, _ := checkpoint.NewFileStore(sub, checkpoint.Options{})
		benchLoad(b, s)
	})
}
