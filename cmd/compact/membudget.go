package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A compaction of a file holds the transcript it read, and the garbage
// collector lets the heap grow past what is live by oneShotGCPercent
// before it collects: 1.5× the live heap, whatever the file's size. The
// memory budget bounds that growth by the input instead: the heap may use
// up to budgetPerInputByte bytes per byte of the file before the collector
// works to stay under it (a soft limit, runtime/debug.SetMemoryLimit), so
// peak memory follows the input while most of it is garbage, at no cost
// where the heap stays under the budget anyway.
const (
	// budgetPerInputByte and budgetResident make the budget: issue 14's
	// goal for the peak RSS of a compaction, 2.5 bytes per input byte, less
	// what is resident besides the memory the runtime counts (the binary's
	// pages) and what the collector overshoots a soft limit by while it
	// runs: measured ~28 MB over the limit for a 100 MB file, ~52 MB for a
	// 1 GB one (scripts/perf-compact.sh).
	budgetPerInputByte = 2.3
	budgetResident     = 16 << 20
	// minMemoryBudget is the least budget: under it a collection at every
	// few MB would cost CPU for no memory anyone misses.
	minMemoryBudget = 64 << 20
	// budgetRoom is the least room above the live heap the budget keeps
	// after each collection: a fifth of the live heap, plus some. A
	// transcript whose live heap alone outgrows the budget then has the
	// collector run at every fifth of the live heap allocated (as GOGC=20
	// would), never continuously (what a fixed limit below the live heap
	// does: a death spiral the runtime only caps at half the CPU). A
	// fifth: the peak of such a compaction (an OpenAI Chat document, whose
	// decoded messages outweigh the file) is set by this room, and issue
	// 16 gives it up to 2x the time of a JSON load + dump. On 10M/30M-token
	// OpenAI files against a third (3 runs each, load ~9): a quarter took
	// 3%/5% less RSS for 4%/5% more CPU, a fifth 3%/10% less for 5%/12%
	// more, a sixth 6%/13% less for 6%/20% more.
	budgetRoomDiv   = 5
	budgetRoomExtra = 16 << 20
)

// memoryBudget is the soft memory limit of one run and what raises it.
type memoryBudget struct {
	mu      sync.Mutex
	limit   int64
	stopped bool
	live    []metrics.Sample
	// set applies a limit: debug.SetMemoryLimit.
	set func(int64) int64
}

// setMemoryBudget sets the memory budget of a compaction of a file of
// inputBytes bytes (budgetPerInputByte × inputBytes − budgetResident), unless the user chose how the
// collector runs ($GOGC or $GOMEMLIMIT set). It returns the budget, nil
// when none was set.
func setMemoryBudget(getenv func(string) string, inputBytes int64) *memoryBudget {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || inputBytes <= 0 {
		return nil
	}
	limit := max(int64(math.Min(float64(inputBytes)*budgetPerInputByte, math.MaxInt64/2))-budgetResident, minMemoryBudget)
	b := &memoryBudget{limit: limit, set: debug.SetMemoryLimit,
		live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	b.set(limit)
	afterEachGC(b.collected)
	return b
}

// collected runs after every collection: it raises the limit to keep
// budgetRoom above the live heap. It reports whether to go on.
func (b *memoryBudget) collected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	metrics.Read(b.live)
	if b.live[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	live := int64(min(b.live[0].Value.Uint64(), math.MaxInt64/2))
	if floor := live + live/budgetRoomDiv + budgetRoomExtra; floor > b.limit {
		b.limit = floor
		b.set(floor)
	}
	return true
}

// Limit returns the limit in force.
func (b *memoryBudget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// stop removes the limit (tests; a process simply exits).
func (b *memoryBudget) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.set(math.MaxInt64)
}

// afterEachGC calls fn after every garbage collection until it returns
// false: a finalizer on an object nothing references runs once per cycle
// and sets itself again.
func afterEachGC(fn func() bool) {
	type sentinel struct{ _ *int }
	var again func(*sentinel)
	again = func(s *sentinel) {
		if fn() {
			runtime.SetFinalizer(s, again)
		}
	}
	runtime.SetFinalizer(&sentinel{}, again)
}
