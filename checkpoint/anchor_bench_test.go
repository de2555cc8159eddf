package checkpoint_test

// The anchors of issue 16: the same checkpoint saved durably by the
// embedded databases a Go agent loop would otherwise use (bbolt; SQLite in
// WAL mode with synchronous=FULL, through the pure-Go modernc driver) and
// by the cheapest durable file replace, in the same run as FileStore. The
// anchors store the checkpoint's JSON, encoded once before the clock
// starts, so they pay for nothing but their own write path.
//
//	go test ./checkpoint -run '^$' -bench 'Save|Load|Growth' -benchmem -cpu 1 -count 5

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/cputime"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	bolt "go.etcd.io/bbolt"
	_ "modernc.org/sqlite"
)

// fullSize is the size of c's JSON: what a store that keeps full
// snapshots writes per save.
func fullSize(tb testing.TB, c *checkpoint.Checkpoint) int {
	b, err := json.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	return len(b)
}

// saver is one durable put of a session's new state.
type saver interface {
	put(session string, seq int, body []byte) error
	close() error
}

type boltSaver struct{ db *bolt.DB }

func openBolt(tb testing.TB) saver {
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "bolt.db"), 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return boltSaver{db}
}

func (s boltSaver) put(session string, seq int, body []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(session))
		if err != nil {
			return err
		}
		return b.Put([]byte(fmt.Sprintf("%08d", seq)), body)
	})
}

func (s boltSaver) close() error { return s.db.Close() }

type sqliteSaver struct {
	db  *sql.DB
	ins *sql.Stmt
}

func openSQLite(tb testing.TB) saver {
	dsn := "file:" + filepath.Join(tb.TempDir(), "ckpt.db") +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1) // SQLite has one writer; the pool queues the others
	if _, err := db.Exec(`CREATE TABLE ckpt (session TEXT, seq INTEGER, body BLOB, PRIMARY KEY (session, seq))`); err != nil {
		tb.Fatal(err)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		tb.Fatalf("journal mode %q, %v", mode, err)
	}
	ins, err := db.Prepare(`INSERT INTO ckpt (session, seq, body) VALUES (?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	return sqliteSaver{db, ins}
}

func (s sqliteSaver) put(session string, seq int, body []byte) error {
	_, err := s.ins.Exec(session, seq, body)
	return err
}

func (s sqliteSaver) close() error { return s.db.Close() }

// fsyncSaver replaces one file per session: write, fsync, rename,
// directory fsync.
type fsyncSaver struct{ dir string }

func (s fsyncSaver) put(session string, seq int, body []byte) error {
	tmp := filepath.Join(s.dir, session+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(body); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, session)); err != nil {
		return err
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (fsyncSaver) close() error { return nil }

func anchors(tb testing.TB) map[string]func() saver {
	return map[string]func() saver{
		"Bbolt":     func() saver { return openBolt(tb) },
		"SQLiteWAL": func() saver { return openSQLite(tb) },
		"FsyncLoop": func() saver { return fsyncSaver{tb.TempDir()} },
	}
}

// BenchmarkSave is one saver saving a 200 KB checkpoint over and over
// (issue 16, table 1): FileStore and the anchors.
func BenchmarkSave(b *testing.B) {
	b.Run("FileStore", func(b *testing.B) {
		s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
		benchSave(b, s)
	})
	for _, name := range []string{"FsyncLoop", "Bbolt", "SQLiteWAL"} {
		b.Run(name, func(b *testing.B) {
			s := anchors(b)[name]()
			defer s.close()
			body, _ := json.Marshal(bigCheckpoint(b, "bench-save"))
			times := make([]time.Duration, 0, b.N)
			b.SetBytes(int64(len(body)))
			w0 := writtenBytes()
			b.ResetTimer()
			defer func() { b.ReportMetric(float64(writtenBytes()-w0)/float64(b.N), "written-B/op") }()
			defer cpuMetric(b, cputime.Process())
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := s.put("bench-save", i, body); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			report(b, times, len(body))
		})
	}
}

// freshCheckpoint returns the n-th of a series of checkpoints shaped as
// bigCheckpoint's (about 200 KB: the sample's fields, 211 messages with
// raw source records, 106 cached results) that share no message and no
// cached result: what a store sees from a loop that saves after every
// compaction, or from a caller that saves unrelated transcripts. Nothing a
// content-addressed store keeps from the save before is of use.
func freshCheckpoint(tb testing.TB, session string, n int) *checkpoint.Checkpoint {
	c := storetest.Sample(session, 0)
	g := storetest.NewSession(session)
	for i := range 105 {
		storetest.Grow(g, (n+1)*1000+i)
	}
	c.Transcript = g.Transcript
	for k, v := range g.ToolCache {
		c.ToolCache[k] = v
	}
	return c
}

// BenchmarkSaveFresh is BenchmarkSave where every save is a new 200 KB
// transcript (freshCheckpoint): every store writes the whole checkpoint,
// ours as new elements, the anchors as they always do. The next
// checkpoint is built (and for the anchors encoded) with the clock
// stopped.
func BenchmarkSaveFresh(b *testing.B) {
	b.Run("FileStore", func(b *testing.B) {
		s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
		ctx := context.Background()
		c := freshCheckpoint(b, "bench-fresh", 0)
		if err := s.Save(ctx, c, ""); err != nil {
			b.Fatal(err)
		}
		size := fullSize(b, c)
		times := make([]time.Duration, 0, b.N)
		b.SetBytes(int64(size))
		var written int64
		var cpu time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			next := freshCheckpoint(b, "bench-fresh", i+1)
			w0, c0 := writtenBytes(), cputime.Process()
			b.StartTimer()
			t0 := time.Now()
			if err := s.Save(ctx, next, c.ID); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
			written += writtenBytes() - w0
			cpu += cputime.Process() - c0
			c = next
		}
		report(b, times, size)
		b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	})
	for _, name := range []string{"Bbolt", "SQLiteWAL"} {
		b.Run(name, func(b *testing.B) {
			s := anchors(b)[name]()
			defer s.close()
			body, _ := json.Marshal(freshCheckpoint(b, "bench-fresh", 0))
			times := make([]time.Duration, 0, b.N)
			b.SetBytes(int64(len(body)))
			var written int64
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				body, _ = json.Marshal(freshCheckpoint(b, "bench-fresh", i+1))
				w0, c0 := writtenBytes(), cputime.Process()
				b.StartTimer()
				t0 := time.Now()
				if err := s.put("bench-fresh", i, body); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
				written += writtenBytes() - w0
				cpu += cputime.Process() - c0
			}
			report(b, times, len(body))
			b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// parallelWorkers is how many goroutines BenchmarkSaveParallel runs.
const parallelWorkers = 8

// runParallel runs b.N saves on parallelWorkers goroutines, save(w, i)
// being worker w's save number i, and reports their p99 and the saves/s
// of all of them by the wall clock.
func runParallel(b *testing.B, save func(w, i int) error) {
	const workers = parallelWorkers
	times := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += workers {
				t0 := time.Now()
				if err := save(w, i); err != nil {
					errs <- err
					return
				}
				times[w] = append(times[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpuMetric(b, cpu0)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, t := range times {
		all = append(all, t...)
	}
	report(b, all, 0)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s") // wall clock, all workers
}

// BenchmarkSaveParallel is 8 goroutines each saving its own session's
// 200 KB checkpoint at once: saves/s counts all of them.
func BenchmarkSaveParallel(b *testing.B) {
	const workers = parallelWorkers
	b.Run("FileStore", func(b *testing.B) {
		s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
		ctx := context.Background()
		cps := make([]*checkpoint.Checkpoint, workers)
		for w := range cps {
			cps[w] = bigCheckpoint(b, fmt.Sprint("bench-par-", w))
			if err := s.Save(ctx, cps[w], ""); err != nil {
				b.Fatal(err)
			}
		}
		runParallel(b, func(w, i int) error {
			c := cps[w]
			if i%2 == 0 {
				c.Steps[3].Status = checkpoint.StepRunning
			} else {
				c.Steps[3].Status = checkpoint.StepPending
			}
			return s.Save(ctx, c, c.ID)
		})
	})
	for _, name := range []string{"Bbolt", "SQLiteWAL"} {
		b.Run(name, func(b *testing.B) {
			s := anchors(b)[name]()
			defer s.close()
			body, _ := json.Marshal(bigCheckpoint(b, "bench-par"))
			runParallel(b, func(w, i int) error { return s.put(fmt.Sprint("bench-par-", w), i, body) })
		})
	}
}

// BenchmarkSaveParallelFresh is BenchmarkSaveParallel where every save is
// a new 200 KB transcript (freshCheckpoint). The b.N checkpoints are built
// (and for the anchors encoded) before the clock starts.
func BenchmarkSaveParallelFresh(b *testing.B) {
	const workers = parallelWorkers
	b.Run("FileStore", func(b *testing.B) {
		s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
		ctx := context.Background()
		last := make([]string, workers)
		for w := range last {
			c := freshCheckpoint(b, fmt.Sprint("bench-parf-", w), -1-w)
			if err := s.Save(ctx, c, ""); err != nil {
				b.Fatal(err)
			}
			last[w] = c.ID
		}
		cps := make([]*checkpoint.Checkpoint, b.N)
		for i := range cps {
			cps[i] = freshCheckpoint(b, fmt.Sprint("bench-parf-", i%workers), i)
		}
		runParallel(b, func(w, i int) error {
			c := cps[i]
			cps[i] = nil // let the collector have it
			if err := s.Save(ctx, c, last[w]); err != nil {
				return err
			}
			last[w] = c.ID
			return nil
		})
	})
	for _, name := range []string{"Bbolt", "SQLiteWAL"} {
		b.Run(name, func(b *testing.B) {
			s := anchors(b)[name]()
			defer s.close()
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i], _ = json.Marshal(freshCheckpoint(b, fmt.Sprint("bench-parf-", i%workers), i))
			}
			runParallel(b, func(w, i int) error {
				body := bodies[i]
				bodies[i] = nil
				return s.put(fmt.Sprint("bench-parf-", w), i, body)
			})
		})
	}
}

// BenchmarkLoad loads the latest 200 KB checkpoint.
func BenchmarkLoad(b *testing.B) {
	b.Run("FileStore", func(b *testing.B) {
		s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
		benchLoad(b, s)
	})
}

// BenchmarkLoadOld loads, in turn, each of 40 checkpoints of all-new
// 200 KB content (freshCheckpoint) a session saved: 8 MB of elements, more
// than a store keeps decoded, so most loads read their elements back from
// the log (FileStore keeps where they lie, not their bytes). SQLite and
// bbolt read back the checkpoint's JSON and decode it, as a caller of
// theirs would.
func BenchmarkLoadOld(b *testing.B) {
	const kept = 40
	ctx := context.Background()
	b.Run("FileStore", func(b *testing.B) {
		s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
		var ids []string
		var hashes []string
		parent := ""
		for i := range kept {
			c := freshCheckpoint(b, "bench-old", i)
			if err := s.Save(ctx, c, parent); err != nil {
				b.Fatal(err)
			}
			parent = c.ID
			ids, hashes = append(ids, c.ID), append(hashes, c.Hash)
		}
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		defer cpuMetric(b, cputime.Process())
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			got, err := s.Load(ctx, "bench-old", ids[i%kept])
			if err != nil || got.Hash != hashes[i%kept] {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
		}
		report(b, times, 0)
	})
	b.Run("SQLiteWAL", func(b *testing.B) {
		s := openSQLite(b).(sqliteSaver)
		defer s.close()
		for i := range kept {
			body, _ := json.Marshal(freshCheckpoint(b, "bench-old", i))
			if err := s.put("bench-old", i, body); err != nil {
				b.Fatal(err)
			}
		}
		q, err := s.db.Prepare(`SELECT body FROM ckpt WHERE session = ? AND seq = ?`)
		if err != nil {
			b.Fatal(err)
		}
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		defer cpuMetric(b, cputime.Process())
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			var body []byte
			var c checkpoint.Checkpoint
			if err := q.QueryRow("bench-old", i%kept).Scan(&body); err != nil {
				b.Fatal(err)
			}
			if err := json.Unmarshal(body, &c); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
		}
		report(b, times, 0)
	})
}

// cpuMetric reports the CPU time (all of the process's threads: the
// collector's and the anchors' own included) per op since start. On a
// machine others load, wall-clock times of CPU-bound work stretch with
// the load while disk waits do not; this one stays comparable.
func cpuMetric(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64((cputime.Process()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// writtenBytes is what this process has passed to write(2) so far
// (Linux's /proc/self/io wchar), or -1 where that is not known.
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// BenchmarkGrowth is an agent loop that checkpoints every step of a
// session growing to 10, 100 and 1,000 steps (issue 18 part 5). Reported:
// the bytes written for the whole session, that over the final
// transcript's size, the mean time of a save and of the last ten saves.
func BenchmarkGrowth(b *testing.B) {
	for _, steps := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint("steps=", steps), func(b *testing.B) {
			ctx := context.Background()
			var written, final int64
			var total, late time.Duration
			for range b.N {
				b.StopTimer()
				s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
				c := storetest.NewSession("growth")
				w0 := writtenBytes()
				b.StartTimer()
				parent := ""
				for i := range steps {
					storetest.Grow(c, i)
					t0 := time.Now()
					if err := s.Save(ctx, c, parent); err != nil {
						b.Fatal(err)
					}
					d := time.Since(t0)
					total += d
					if i >= steps-10 {
						late += d
					}
					parent = c.ID
				}
				b.StopTimer()
				written += writtenBytes() - w0
				t, _ := json.Marshal(c.Transcript)
				final += int64(len(t))
			}
			n := float64(b.N)
			b.ReportMetric(float64(written)/n, "written-B")
			b.ReportMetric(float64(final)/n, "transcript-B")
			b.ReportMetric(float64(written)/float64(final), "written/transcript")
			b.ReportMetric(float64(total.Nanoseconds())/n/float64(steps), "ns/save")
			b.ReportMetric(float64(late.Nanoseconds())/n/10, "ns/late-save")
		})
	}
}

// BenchmarkSaveAt is the cost of one save of a session that already holds
// 10, 100 or 1,000 steps (4 elements each: two messages, a step, a cached
// result), the change being one step's status: what a loop pays per step
// once its transcript is long. Run it with TMPDIR=/dev/shm for the CPU
// part alone.
func BenchmarkSaveAt(b *testing.B) {
	for _, steps := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint("steps=", steps), func(b *testing.B) {
			ctx := context.Background()
			s, _ := checkpoint.NewFileStore(b.TempDir(), checkpoint.Options{})
			c := storetest.NewSession("at")
			for i := range steps {
				storetest.Grow(c, i)
			}
			if err := s.Save(ctx, c, ""); err != nil {
				b.Fatal(err)
			}
			times := make([]time.Duration, 0, b.N)
			w0 := writtenBytes()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := &c.Steps[steps/2]
				if i%2 == 0 {
					st.Status = checkpoint.StepRunning
				} else {
					st.Status = checkpoint.StepCompleted
				}
				t0 := time.Now()
				if err := s.Save(ctx, c, c.ID); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			report(b, times, fullSize(b, c))
			b.ReportMetric(float64(writtenBytes()-w0)/float64(b.N), "written-B/op")
		})
	}
}
