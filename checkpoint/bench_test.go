package checkpoint_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/cputime"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
)

// bigCheckpoint is a checkpoint of about 200 KB stored: a generated agent
// session (messages with raw source records, steps, cached results) on top
// of the sample's fields.
func bigCheckpoint(tb testing.TB, session string) *checkpoint.Checkpoint {
	c := storetest.Sample(session, 0)
	g := storetest.NewSession(session)
	for i := range 105 {
		storetest.Grow(g, i)
	}
	c.Transcript = g.Transcript
	for k, v := range g.ToolCache {
		c.ToolCache[k] = v
	}
	return c
}

// report records ops/s, the 99th percentile of per-op times and the
// checkpoint's size as full JSON (what a snapshot store writes per save).
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
	b.ReportMetric(float64(size), "checkpoint-B")
}

func benchSave(b *testing.B, s checkpoint.Store) {
	ctx := context.Background()
	c := bigCheckpoint(b, "bench-save")
	if err := s.Save(ctx, c, ""); err != nil {
		b.Fatal(err)
	}
	size := fullSize(b, c)
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(size))
	w0 := writtenBytes()
	b.ResetTimer()
	defer func() { b.ReportMetric(float64(writtenBytes()-w0)/float64(b.N), "written-B/op") }()
	defer cpuMetric(b, cputime.Process())
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
	size := fullSize(b, c)
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(size))
	b.ResetTimer()
	defer cpuMetric(b, cputime.Process())
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

// The benchmark's checkpoint survives a store round trip with its raw
// records byte for byte, and is about the size the benchmark says.
func TestBigCheckpointRoundTrip(t *testing.T) {
	s, _ := checkpoint.NewFileStore(t.TempDir(), checkpoint.Options{})
	c := bigCheckpoint(t, "real")
	if len(c.Transcript.Messages) < 20 || len(c.Transcript.ToolGroups()) < 5 {
		t.Fatalf("generated %d messages, %d tool groups", len(c.Transcript.Messages), len(c.Transcript.ToolGroups()))
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
		if len(m.Source.Records) == 0 {
			continue
		}
		if !m.Unchanged() || !bytes.Equal(m.Source.Records[0], c.Transcript.Messages[i].Source.Records[0]) {
			t.Fatalf("message %d: raw record changed", i)
		}
	}
	if size := fullSize(t, c); size < 150_000 || size > 260_000 {
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
