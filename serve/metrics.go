package serve

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are the proxy's counters, written in Prometheus' text exposition
// format (version 0.0.4) by hand: a handful of series do not need a client
// library.
type metrics struct {
	mu       sync.Mutex
	requests map[[2]string]uint64 // (api, compaction) -> requests
	statuses map[string]uint64    // status class (2xx, 4xx, ...) -> responses
	// fallbacks counts compactions whose handoff the fallback wrote in
	// place of the LLM summarizer, by cause.
	fallbacks map[string]uint64

	warnings        atomic.Uint64
	overflowRetries atomic.Uint64
	upstreamErrors  atomic.Uint64
	tooLarge        atomic.Uint64
	bodyTimeouts    atomic.Uint64
	storeErrors     atomic.Uint64
	storeSkipped    atomic.Uint64
	busy            atomic.Uint64
	unauthorized    atomic.Uint64
	tokensBefore    atomic.Uint64
	tokensAfter     atomic.Uint64
	prefixCompared  atomic.Uint64
	prefixStable    atomic.Uint64
	inFlight        atomic.Int64

	added histogram // latency the proxy adds before forwarding
}

// latencyBuckets are the added-latency histogram's upper bounds, seconds.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

type histogram struct {
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := sort.SearchFloat64s(latencyBuckets, s)
	h.mu.Lock()
	if h.counts == nil {
		h.counts = make([]uint64, len(latencyBuckets)+1)
	}
	h.counts[i]++
	h.sum += s
	h.n++
	h.mu.Unlock()
}

func newMetrics() *metrics {
	return &metrics{requests: map[[2]string]uint64{}, statuses: map[string]uint64{}, fallbacks: map[string]uint64{}}
}

func (m *metrics) fallback(cause string) {
	m.mu.Lock()
	m.fallbacks[cause]++
	m.mu.Unlock()
}

func (m *metrics) request(api, compaction string, status int) {
	m.mu.Lock()
	m.requests[[2]string{api, compaction}]++
	m.statuses[fmt.Sprintf("%dxx", status/100)]++
	m.mu.Unlock()
}

// stability is the share of compared requests whose prefix was the
// previous one's, 1 when none was compared.
func (m *metrics) stability() float64 {
	c := m.prefixCompared.Load()
	if c == 0 {
		return 1
	}
	return float64(m.prefixStable.Load()) / float64(c)
}

// write writes every series in the text exposition format.
func (m *metrics) write(w io.Writer, sessions int, bodyBytes int64) error {
	var b strings.Builder
	head := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	counter := func(name, help string, v uint64) {
		head(name, "counter", help)
		fmt.Fprintf(&b, "%s %d\n", name, v)
	}

	m.mu.Lock()
	head("compact_serve_requests_total", "counter", "Requests served, by API (passthrough for other paths) and what was done to the body.")
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	for _, k := range keys {
		fmt.Fprintf(&b, "compact_serve_requests_total{api=%q,compaction=%q} %d\n", k[0], k[1], m.requests[k])
	}
	head("compact_serve_responses_total", "counter", "Responses sent, by status class.")
	classes := make([]string, 0, len(m.statuses))
	for k := range m.statuses {
		classes = append(classes, k)
	}
	slices.Sort(classes)
	for _, k := range classes {
		fmt.Fprintf(&b, "compact_serve_responses_total{code=%q} %d\n", k, m.statuses[k])
	}
	head("compact_serve_summary_fallbacks_total", "counter", "Compactions whose handoff the deterministic fallback wrote because the LLM summarizer failed, by cause (timeout, circuit-open, summary-failed, invalid-handoff).")
	causes := make([]string, 0, len(m.fallbacks))
	for k := range m.fallbacks {
		causes = append(causes, k)
	}
	slices.Sort(causes)
	for _, k := range causes {
		fmt.Fprintf(&b, "compact_serve_summary_fallbacks_total{cause=%q} %d\n", k, m.fallbacks[k])
	}
	m.mu.Unlock()

	counter("compact_serve_warnings_total", "Requests forwarded as they came because compacting them failed.", m.warnings.Load())
	counter("compact_serve_overflow_retries_total", "Requests retried with a forced compaction after the upstream said the prompt was too long.", m.overflowRetries.Load())
	counter("compact_serve_upstream_errors_total", "Requests the upstream could not be reached for.", m.upstreamErrors.Load())
	counter("compact_serve_body_too_large_total", "Requests refused for a body over the limit.", m.tooLarge.Load())
	counter("compact_serve_body_timeouts_total", "Requests refused for a request body that stalled or took too long (408).", m.bodyTimeouts.Load())
	counter("compact_serve_busy_total", "Requests refused because the body bytes held in memory by all requests were at their limit (503).", m.busy.Load())
	counter("compact_serve_store_errors_total", "Store operations that failed (the request went on without the store).", m.storeErrors.Load())
	counter("compact_serve_store_skipped_total", "Store operations skipped while the store was unavailable.", m.storeSkipped.Load())
	counter("compact_serve_unauthorized_total", "Requests refused for a missing or wrong auth token.", m.unauthorized.Load())
	counter("compact_serve_tokens_before_total", "Prompt tokens of compactable requests as clients sent them.", m.tokensBefore.Load())
	counter("compact_serve_tokens_after_total", "Prompt tokens of compactable requests as forwarded.", m.tokensAfter.Load())
	counter("compact_serve_prefix_compared_total", "Requests forwarded with a compacted prefix whose previous request also had one.", m.prefixCompared.Load())
	counter("compact_serve_prefix_stable_total", "Of those, requests whose compacted prefix was byte for byte the previous one.", m.prefixStable.Load())
	head("compact_serve_prefix_stability", "gauge", "Share of compared requests whose compacted prefix equalled the previous one (1 when none was compared).")
	fmt.Fprintf(&b, "compact_serve_prefix_stability %g\n", m.stability())
	head("compact_serve_in_flight", "gauge", "Requests being served.")
	fmt.Fprintf(&b, "compact_serve_in_flight %d\n", m.inFlight.Load())
	head("compact_serve_body_bytes_in_flight", "gauge", "Request body bytes held in memory by the requests being served.")
	fmt.Fprintf(&b, "compact_serve_body_bytes_in_flight %d\n", bodyBytes)
	head("compact_serve_sessions", "gauge", "Conversations held in memory.")
	fmt.Fprintf(&b, "compact_serve_sessions %d\n", sessions)

	h := &m.added
	h.mu.Lock()
	head("compact_serve_added_latency_seconds", "histogram", "Time from the request's last body byte to forwarding it: reading, counting, compacting.")
	var cum uint64
	for i, le := range latencyBuckets {
		if h.counts != nil {
			cum += h.counts[i]
		}
		fmt.Fprintf(&b, "compact_serve_added_latency_seconds_bucket{le=\"%g\"} %d\n", le, cum)
	}
	fmt.Fprintf(&b, "compact_serve_added_latency_seconds_bucket{le=\"+Inf\"} %d\n", h.n)
	fmt.Fprintf(&b, "compact_serve_added_latency_seconds_sum %g\n", h.sum)
	fmt.Fprintf(&b, "compact_serve_added_latency_seconds_count %d\n", h.n)
	h.mu.Unlock()

	_, err := io.WriteString(w, b.String())
	return err
}
