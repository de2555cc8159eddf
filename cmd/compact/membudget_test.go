package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/benchdata"
)

// TestMemoryBudgetSize: the budget is budgetPerInputByte per input byte,
// at least minMemoryBudget, and none when the user set $GOGC or
// $GOMEMLIMIT.
func TestMemoryBudgetSize(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	hundredMB := int64(100 << 20)
	for _, tc := range []struct {
		env  map[string]string
		size int64
		want int64
	}{
		{nil, hundredMB, int64(float64(hundredMB)*budgetPerInputByte) - budgetResident},
		{nil, 1 << 20, minMemoryBudget},
		{map[string]string{"GOGC": "100"}, 100 << 20, 0},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, 100 << 20, 0},
		{nil, 0, 0},
	} {
		b := setMemoryBudget(func(k string) string { return tc.env[k] }, tc.size)
		got := int64(0)
		if b != nil {
			got = b.Limit()
			if lim := debug.SetMemoryLimit(-1); lim != got {
				t.Errorf("%v %d: runtime limit %d, budget %d", tc.env, tc.size, lim, got)
			}
			b.stop()
		}
		if got != tc.want {
			t.Errorf("%v %d bytes: budget %d, want %d", tc.env, tc.size, got, tc.want)
		}
	}
}

// TestMemoryBudgetNoDeathSpiral: a live heap far above the budget does not
// make the collector run continuously: the limit rises after each
// collection to keep a share of the live heap free (budgetRoomDiv), so
// allocating N bytes costs about N / (live/budgetRoomDiv + budgetRoomExtra)
// collections, as GOGC=100/budgetRoomDiv would.
func TestMemoryBudgetNoDeathSpiral(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~300 MB")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(oneShotGCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	runtime.GC()
	const live = 48 << 20
	hold := make([][]byte, 0, live>>20)
	for range live >> 20 {
		hold = append(hold, make([]byte, 1<<20))
	}
	b := &memoryBudget{limit: 1 << 20, set: debug.SetMemoryLimit, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	b.set(b.limit) // far below the live heap
	afterEachGC(b.collected)
	defer b.stop()
	cycles := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	c0 := cycles()
	const churn = 256 << 20
	var sink []byte
	for range churn >> 16 {
		sink = make([]byte, 1<<16)
	}
	_ = sink
	n := cycles() - c0
	runtime.KeepAlive(hold)
	// With the room kept, churn/(live/budgetRoomDiv + budgetRoomExtra) ≈ 10
	// cycles; a fixed limit collects continuously (42 here, capped by the
	// runtime).
	if max := uint64(churn/(live/budgetRoomDiv+budgetRoomExtra) + 8); n > max {
		t.Errorf("%d collections to allocate %d MB over a %d MB live heap, want at most %d", n, churn>>20, live>>20, max)
	}
	// The budget is raised by a finalizer, which runs on its own goroutine:
	// on a loaded machine it may not have run yet when the churn ends.
	want := int64(live + live/budgetRoomDiv)
	for deadline := time.Now().Add(5 * time.Second); b.Limit() < want && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if lim := b.Limit(); lim < want {
		t.Errorf("limit %d MB after the churn, want at least the live heap and its room (%d MB)", lim>>20, (live+live/budgetRoomDiv)>>20)
	}
	t.Logf("%d collections; limit raised to %d MB", n, b.Limit()>>20)
}

// TestCompactSetsMemoryBudget: compacting a file asks for the budget of its
// size; reading stdin asks for none.
func TestCompactSetsMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := benchdata.Write(f, format.OpenAIChat, benchdata.Limits{Tokens: 20_000}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(in)
	data, _ := os.ReadFile(in)
	for _, tc := range []struct {
		args  []string
		stdin string
		want  int64
	}{
		{[]string{"--summarizer", "fallback", "--force", "-o", filepath.Join(dir, "out.json"), in}, "", st.Size()},
		{[]string{"--summarizer", "fallback", "--force", "-o", filepath.Join(dir, "out2.json"), "-"}, string(data), 0},
	} {
		var got int64
		e := &env{stdin: strings.NewReader(tc.stdin), stdout: io.Discard, stderr: io.Discard,
			getenv: func(string) string { return "" }, budget: func(n int64) { got = n }}
		if code := run(context.Background(), e, tc.args); code != 0 {
			t.Fatalf("%v: exit %d", tc.args, code)
		}
		if got != tc.want {
			t.Errorf("%v: budget asked for %d bytes, want %d", tc.args, got, tc.want)
		}
	}
}
